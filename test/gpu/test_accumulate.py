"""out += the product (`accumulate=True`) on the GPU, against fp64: weight
gradients accumulated over micro-batches (k_grouped, f32 and bf16, f8 with
1x128 scales) and row layouts, with empty and one-token groups; what no
group covers is left as it was, and the sum has the same bits every run."""

import pytest

torch = pytest.importorskip("torch")

from ggc import ops  # noqa: E402
from gpu_checks import offsets_of, rel_err  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("b_layout", ["kn", "nk"])
def test_weight_gradient_accumulates(out_dtype, b_layout):
    k_sizes = [0, 1, 70, 129, 304]  # 504 tokens: K-major rows of 16-byte multiples
    g, m, n = len(k_sizes), 136, 200
    dy = torch.randn(sum(k_sizes), m, device="cuda").bfloat16()
    x = torch.randn(sum(k_sizes), n, device="cuda").bfloat16()
    a, b = (dy, x) if b_layout == "kn" else (dy.T.contiguous(), x.T.contiguous())
    before = torch.randn(g, m, n, device="cuda").to(out_dtype) * 4
    dw = before.clone()
    got = ops.grouped_gemm(a, b, k_offsets=offsets_of(k_sizes), k_major=b_layout == "nk",
                           out=dw, accumulate=True)
    torch.cuda.synchronize()
    assert got is dw
    assert torch.equal(dw[0], before[0])  # no tokens: nothing added
    start = 0
    tol = 1e-5 if out_dtype == torch.float32 else 8e-3
    for gi, size in enumerate(k_sizes):
        if size:
            ref = before[gi].double() + dy[start:start + size].double().T @ \
                x[start:start + size].double()
            assert rel_err(dw[gi], ref) < tol, f"group {gi}"
        start += size
    again = before.clone()
    ops.grouped_gemm(a, b, k_offsets=offsets_of(k_sizes), k_major=b_layout == "nk",
                     out=again, accumulate=True)
    assert torch.equal(again, dw)  # the same bits on every run


def test_micro_batches_sum_to_the_whole_batch():
    """Two micro-batches accumulated into one f32 gradient equal the
    gradient of both at once, within f32 rounding."""
    sizes = [[40, 0, 90], [3, 64, 0]]
    m, n = 128, 64
    grad = torch.zeros(3, m, n, device="cuda")
    whole = torch.zeros(3, m, n, device="cuda", dtype=torch.float64)
    for batch in sizes:
        dy = torch.randn(sum(batch), m, device="cuda").bfloat16()
        x = torch.randn(sum(batch), n, device="cuda").bfloat16()
        ops.grouped_gemm(dy, x, k_offsets=offsets_of(batch), out=grad, accumulate=True)
        start = 0
        for gi, size in enumerate(batch):
            whole[gi] += dy[start:start + size].double().T @ x[start:start + size].double()
            start += size
    torch.cuda.synchronize()
    assert rel_err(grad, whole) < 1e-5


def test_fp8_weight_gradient_with_block_scales_accumulates():
    k_sizes = [0, 70, 129, 1]
    g, m, n, k = len(k_sizes), 64, 136, 208
    dy_t = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    x_t = (torch.randn(n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    kb = -(-k // 128)
    sa = torch.rand(kb, m, device="cuda") + 0.5
    sb = torch.rand(n, kb, device="cuda") + 0.5
    before = torch.randn(g, m, n, device="cuda") * 16
    dw = before.clone()
    ops.grouped_gemm(dy_t, x_t, k_offsets=offsets_of(k_sizes), k_major=True,
                     a_scale=sa.T, b_scale=sb, out=dw, accumulate=True)
    torch.cuda.synchronize()
    a_deq = dy_t.double() * sa.T.double().repeat_interleave(128, dim=1)[:, :k]
    b_deq = x_t.double() * sb.double().repeat_interleave(128, dim=1)[:, :k]
    assert torch.equal(dw[0], before[0])
    start = 0
    for gi, size in enumerate(k_sizes):
        if size:
            ref = before[gi].double() + a_deq[:, start:start + size] @ \
                b_deq[:, start:start + size].T
            assert rel_err(dw[gi], ref) < 2e-3, f"group {gi}"
        start += size


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("layout", ["contiguous", "masked"])
def test_row_layouts_accumulate_only_their_rows(layout, out_dtype):
    """bf16: per-thread read-add-write; f32: the TMA store pool's boxes
    reduce-added, a group's last tile in boxes of its valid rows only."""
    sizes = [0, 1, 127, 200]
    tol = 8e-3 if out_dtype == torch.bfloat16 else 1e-5
    g, n, k = len(sizes), 192, 256
    w = torch.randn(g, n, k, device="cuda").bfloat16() / 8
    if layout == "contiguous":
        rows = sum(sizes) + 37  # rows past the last group: no group's
        x = torch.randn(rows, k, device="cuda").bfloat16()
        before = torch.randn(rows, n, device="cuda").to(out_dtype)
        y = before.clone()
        ops.grouped_gemm(x, w, offsets=offsets_of(sizes), out=y, accumulate=True)
        torch.cuda.synchronize()
        start = 0
        for gi, size in enumerate(sizes):
            rows_g = slice(start, start + size)
            if size:
                ref = before[rows_g].double() + x[rows_g].double() @ w[gi].double().T
                assert rel_err(y[rows_g], ref) < tol, f"group {gi}"
            start += size
        assert torch.equal(y[start:], before[start:])
        return
    m_max = 256
    x = torch.randn(g, m_max, k, device="cuda").bfloat16()
    before = torch.randn(g, m_max, n, device="cuda").to(out_dtype)
    y = before.clone()
    masked = torch.tensor(sizes, dtype=torch.int32, device="cuda")
    ops.grouped_gemm(x, w, masked_m=masked, out=y, accumulate=True)
    torch.cuda.synchronize()
    for gi, size in enumerate(sizes):
        if size:
            ref = before[gi, :size].double() + x[gi, :size].double() @ w[gi].double().T
            assert rel_err(y[gi, :size], ref) < tol, f"group {gi}"
        assert torch.equal(y[gi, size:], before[gi, size:])
