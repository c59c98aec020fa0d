"""Group metadata on the GPU: the opt-in check (validate=True /
GGC_VALIDATE=1) and the contract without it; launches on the tensors' GPU;
modules unloaded with their kernel."""

import gc

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import groups, ir, ops  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

N, K = 128, 256


def operands(m, g=3, dtype=torch.bfloat16, device="cuda"):
    a = (torch.randn(m, K, device=device) / 4).to(dtype)
    b = (torch.randn(g, N, K, device=device) / 4).to(dtype)
    return a, b


def poisoned(m, device="cuda"):
    return torch.full((m, N), float("nan"), dtype=torch.bfloat16, device=device)


def reference(a, b, offsets, m):
    out = torch.full((m, N), float("nan"), dtype=torch.float64, device=a.device)
    offsets = offsets.tolist()
    for g in range(b.shape[0]):
        lo, hi = max(0, min(offsets[g], m)), max(0, min(offsets[g + 1], m))
        if hi > lo:
            out[lo:hi] = a[lo:hi].double() @ b[g].double().T
    return out


def assert_matches(out, ref):
    valid = ~torch.isnan(ref[:, 0])
    assert torch.isnan(out[~valid].float()).all(), "a row outside every group was written"
    if valid.any():
        got, want = out[valid].double(), ref[valid]
        assert ((got - want).norm() / want.norm()).item() < 1e-2


@pytest.mark.parametrize("offsets, message", [
    ([0, 40, 20, 64], "offsets must not decrease"),
    ([0, 40, 50, 70], "is past M = 64"),
    ([-8, 40, 50, 64], "is negative"),
])
def test_validate_rejects_bad_offsets_before_launching(offsets, message):
    a, b = operands(64)
    out = poisoned(64)
    with pytest.raises(groups.GroupMetadataError, match=message):
        ops.grouped_gemm(a, b, offsets=torch.tensor(offsets, dtype=torch.int32,
                                                    device="cuda"), out=out, validate=True)
    torch.cuda.synchronize()
    assert torch.isnan(out.float()).all(), "the kernel ran although the check failed"


def test_validate_asks_an_allocated_output_to_be_covered():
    a, b = operands(64)
    short = torch.tensor([0, 10, 20, 60], dtype=torch.int32, device="cuda")
    with pytest.raises(groups.GroupMetadataError, match=r"cover rows \[0, 60\) of 64"):
        ops.grouped_gemm(a, b, offsets=short, validate=True)
    # With the caller's own output, rows past the last group keep its values.
    out = poisoned(64)
    ops.grouped_gemm(a, b, offsets=short, out=out, validate=True)
    assert_matches(out, reference(a, b, short, 64))


def test_ggc_validate_turns_the_check_on_for_every_call(monkeypatch):
    monkeypatch.setattr(groups, "VALIDATE_BY_DEFAULT", True)
    a, b = operands(64)
    with pytest.raises(groups.GroupMetadataError, match="must not decrease"):
        ops.grouped_gemm(a, b, offsets=torch.tensor([0, 9, 8, 64], dtype=torch.int32,
                                                    device="cuda"), out=poisoned(64))


def test_validate_rejects_masked_counts_past_m_max():
    g, m_max = 2, 64
    a = (torch.randn(g, m_max, K, device="cuda") / 4).bfloat16()
    _, b = operands(1, g=g)
    counts = torch.tensor([3, m_max + 1], dtype=torch.int32, device="cuda")
    with pytest.raises(groups.GroupMetadataError, match=r"masked_m\[1\] = 65 is outside"):
        ops.grouped_gemm(a, b, masked_m=counts, validate=True)
    # Without the check the count is cut to M_max, as documented.
    out = torch.full((g, m_max, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    ops.grouped_gemm(a, b, masked_m=counts, out=out)
    ref = a[1].double() @ b[1].double().T
    assert ((out[1].double() - ref).norm() / ref.norm()).item() < 1e-2
    assert torch.isnan(out[0, 3:].float()).all()


def test_validate_rejects_row_groups_that_straddle_a_tile():
    a, b = operands(256, g=2)
    m_indices = torch.zeros(256, dtype=torch.int32, device="cuda")
    m_indices[100:] = 1  # group 1 starts inside the first 128-row tile
    with pytest.raises(groups.GroupMetadataError, match="shares a"):
        ops.grouped_gemm(a, b, m_indices=m_indices, validate=True)


def test_int64_offsets_past_32_bits_clamp_to_m():
    a, b = operands(64)
    offsets = torch.tensor([0, 5, 2**32 + 5, 2**32 + 6], dtype=torch.int64, device="cuda")
    out = poisoned(64)
    ops.grouped_gemm(a, b, offsets=offsets, out=out)
    torch.cuda.synchronize()
    # Group 1 runs to M (not to 5, as a cut to 32 bits would make it).
    assert_matches(out, reference(a, b, offsets, 64))
    with pytest.raises(groups.GroupMetadataError, match="is past M = 64"):
        ops.grouped_gemm(a, b, offsets=offsets, out=out, validate=True)


def test_a_kernel_unloads_its_module_and_a_new_one_loads():
    text = ir.grouped_matmul("unload", layout="contiguous", num_groups=3, n=N, k=K)
    a, b = operands(64)
    offsets = torch.tensor([0, 20, 40, 64], dtype=torch.int32, device="cuda")
    for _ in range(3):
        kernel = ggc.Kernel(text)
        out = poisoned(64)
        kernel(a, b, offsets, out)
        torch.cuda.synchronize()
        assert_matches(out, reference(a, b, offsets, 64))
        del kernel
        gc.collect()


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_tensors_on_another_gpu_than_the_current_one():
    torch.cuda.set_device(0)
    a, b = operands(64, device="cuda:1")
    offsets = torch.tensor([0, 20, 40, 64], dtype=torch.int32, device="cuda:1")
    for _ in range(2):  # the first call loads the module, the second reuses it
        out = poisoned(64, device="cuda:1")
        ops.grouped_gemm(a, b, offsets=offsets, out=out)
        torch.cuda.synchronize(1)
        assert_matches(out, reference(a, b, offsets, 64))
    assert torch.cuda.current_device() == 0
    with pytest.raises(ValueError, match="one CUDA device"):
        ops.grouped_gemm(a, b.to("cuda:0"), offsets=offsets, out=poisoned(64, "cuda:1"))
