"""gg-select-config's rules for a card of narrow DRAM bandwidth
(`ggc.set_memory_gbps`, below 4,000 GB/s: an H100 SXM), run on whatever
sm_90a card is in hand: 16-bit contiguous groups of 512 expected rows on
128x256 tiles, short-K FP8 on 128x192 tiles with a ragged last column
tile.

Ragged groups (empty, one row, sizes off every tile boundary), fresh
random inputs, an fp64 reference by relative norm error, NaN-poisoned
outputs, and rows of A past the last group whose output rows must keep a
sentinel.
"""
import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import ir  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    # The rules are sm_90a's (setmaxnreg's wide tiles); ggc.Kernel compiles
    # for the device's own target.
    pytest.mark.skipif(torch.cuda.is_available() and ggc.get_target() != "sm_90a",
                       reason="the narrow-memory rules are sm_90a's"),
]

H100_SXM_GBPS = 3352
SIZES = [0, 1, 700, 129, 513, 0, 1030, 255]
PAST_THE_LAST_GROUP = 37
SENTINEL = 1234.0


@pytest.fixture
def narrow_memory():
    ggc.set_memory_gbps(H100_SXM_GBPS)
    yield
    ggc.set_memory_gbps(None)


def check(out, sizes, reference, tolerance):
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            got = out[start:start + size].double()
            assert torch.isfinite(got).all(), f"group {gi}: a valid row not written"
            ref = reference(gi, start, size)
            err = ((got - ref).norm() / ref.norm()).item()
            assert err < tolerance, f"group {gi} ({size} rows): rel err {err:.2e}"
        start += size
    assert (out[start:] == SENTINEL).all(), "a row past the last group was written"


def offsets_of(sizes):
    return torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                        device="cuda")


# K 2,048: above the short-K rule's 1,024, which takes 128x256 on any card.
BF16_K = 2048


def test_bf16_contiguous_takes_wide_tiles(narrow_memory):
    g, n, k = len(SIZES), 1024, BF16_K
    m = sum(SIZES) + PAST_THE_LAST_GROUP
    kern = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=g, n=n, k=k,
                                        dtype="bf16", expected_m=512))
    assert (kern.info["block_m"], kern.info["block_n"]) == (128, 256)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    out[sum(SIZES):] = SENTINEL
    kern(a, b, offsets_of(SIZES), out)
    torch.cuda.synchronize()
    check(out, SIZES, lambda gi, s, size: a[s:s + size].double() @ b[gi].double().T, 1e-2)


def test_fp8_short_k_takes_192_columns_whatever_n(narrow_memory):
    # N = 4,352 (from 4,096, no multiple of 192): 22 192-column tiles, half
    # of them straddling B's 128-column scale blocks, and a ragged one of 128.
    g, n, k = len(SIZES), 4352, 1024
    m = sum(SIZES) + PAST_THE_LAST_GROUP
    kern = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=g, n=n, k=k,
                                        dtype="f8E4M3FN", a_scale="block_mn",
                                        b_scale="block", expected_m=512))
    assert (kern.info["block_m"], kern.info["block_n"]) == (128, 192)
    a = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    kb = k // 128
    sa = torch.rand(kb, (m + 3) // 4 * 4, device="cuda") + 0.5
    sb = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    out[sum(SIZES):] = SENTINEL
    kern(a, b, offsets_of(SIZES), sa, sb, out)
    torch.cuda.synchronize()
    a_deq = a.double() * sa[:, :m].T.double().repeat_interleave(128, 1)
    b_deq = b.double() * sb.double().repeat_interleave(128, 1)[:, :n].repeat_interleave(128, 2)
    check(out, SIZES, lambda gi, s, size: a_deq[s:s + size] @ b_deq[gi].T, 2e-3)


def test_unknown_bandwidth_keeps_the_high_bandwidth_tiles():
    ggc.set_memory_gbps(0)
    try:
        kern = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=8, n=1024,
                                            k=BF16_K, dtype="bf16", expected_m=512))
    finally:
        ggc.set_memory_gbps(None)
    assert kern.info["block_n"] == 128
