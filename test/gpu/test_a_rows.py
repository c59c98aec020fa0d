"""Gathered rows of A (gg.grouped_matmul's `a_rows`): row r of the product
is row a_rows[r] of A, as a MoE layer reads its tokens in expert order
without writing a permuted copy. On sm_90a the producer warpgroup's every
thread copies A's rows by cp.async while its leader loads B by TMA; the
sm_80 path (run on the Hopper card) copies them as it copies any tile.

Fresh random inputs each check, an fp64 reference by relative norm error,
ragged groups (empty, 1 row, off every tile boundary), repeated and
out-of-range indices (which read zeros), NaN-poisoned outputs whose rows
outside every group must stay poisoned.
"""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

import test_grouped_matmul as gm  # noqa: E402


def offsets_of(sizes):
    return torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                        device="cuda")


def gathered(a, rows):
    """A's rows by the list, zeros where an index lies outside A (fp64)."""
    inside = (rows >= 0) & (rows < a.shape[0])
    picked = a.double()[rows.clamp(0, a.shape[0] - 1).long()]
    return picked * inside.unsqueeze(1)


def routes_of(m, tokens, outside=0):
    """An index list of m entries over `tokens` rows, each row repeated (a
    token's several experts), and `outside` entries pointing off A (-1 and
    past its end)."""
    rows = torch.randint(0, tokens, (m,), dtype=torch.int32, device="cuda")
    if outside:
        where = torch.randperm(m, device="cuda")[:outside]
        rows[where[::2]] = -1
        rows[where[1::2]] = tokens + 5
    return rows


def check(out, a, rows, b, sizes, tolerance=1e-2, epilogue=lambda p, start, size: p):
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            ref = gathered(a, rows[start:start + size]) @ b[gi].double().T
            ref = epilogue(ref, start, size)
            err = gm.rel_err(out[start:start + size], ref)
            assert err < tolerance, f"group {gi} ({size} rows): rel err {err:.2e}"
        start += size


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("n, k", [(256, 128), (200, 136), (1536, 2048)])
def test_gathered_rows(target, n, k):
    sizes = gm.RAGGED
    g, m, tokens = len(sizes), sum(sizes), 700
    kern = gm.kernel(target, layout="contiguous", num_groups=g, n=n, k=k, a_rows=True)
    a = gm.randn(tokens, k, dtype=torch.bfloat16)
    b = gm.randn(g, n, k, dtype=torch.bfloat16)
    rows = routes_of(m + 9, tokens, outside=24)
    out = torch.full((m + 9, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, rows, b, offsets_of(sizes), out)  # rows m.. belong to no group
    torch.cuda.synchronize()
    check(out, a, rows, b, sizes)
    assert torch.isnan(out[m:]).all(), "rows past the last offset were written"
    # Zero rows where the index lies off A: no memory outside it read.
    off = ((rows[:m] < 0) | (rows[:m] >= tokens)).nonzero().flatten()
    assert off.numel() > 0 and (out[off] == 0).all()


def test_gathered_rows_column_halves_with_route_weights():
    """The permute-free up projection and the down projection's weighting:
    SwiGLU over column halves, times a per-row weight, rows by the list."""
    sizes, k, n = [3, 0, 130, 1, 64, 257], 256, 384
    g, m, tokens = len(sizes), sum(sizes), 120
    epilogue = """%s = gg.silu %acc0 : f32
%h = arith.mulf %s, %acc1 : f32
%r = arith.mulf %h, %r0 : f32
gg.yield %r : f32"""
    kern = gm.kernel("sm_90a", layout="contiguous", num_groups=g, n=n, k=k, a_rows=True,
                     rows=("f32",), column_halves=True, epilogue=epilogue)
    a = gm.randn(tokens, k, dtype=torch.bfloat16)
    b = gm.randn(g, n, k, dtype=torch.bfloat16)
    rows = routes_of(m, tokens)
    weight = torch.rand(m, device="cuda") + 0.5
    out = torch.full((m, n // 2), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, rows, b, offsets_of(sizes), weight, out)
    torch.cuda.synchronize()

    def swiglu_weighted(product, start, size):
        gate, up = product.chunk(2, dim=-1)
        return gate * torch.sigmoid(gate) * up * weight[start:start + size, None].double()

    check(out, a, rows, b, sizes, epilogue=swiglu_weighted)


@ggc.jit
def up_gathered(x: gl.Rows, source: gl.RowIndices, w: gl.Weights, m_indptr: gl.Offsets,
                h: gl.Out, EXPECTED_M: gl.constexpr = None):
    gl.store(h, gl.grouped_dot(x, w, m_indptr, a_rows=source, expected_m=EXPECTED_M))


@pytest.mark.parametrize("expected_m", [None, 8, 256])
def test_jit_a_rows_equals_gather_then_gemm(expected_m):
    """@ggc.jit's a_rows against the gathered copy and the plain GEMM, with
    the decode (64x64) and prefill tiles that expected_m picks, for two
    token counts through one kernel (T is a run-time size)."""
    sizes, k, n = gm.RAGGED, 256, 320
    g, m = len(sizes), sum(sizes)
    w = gm.randn(g, n, k, dtype=torch.bfloat16)
    for tokens in (37, 900):
        x = gm.randn(tokens, k, dtype=torch.bfloat16)
        source = routes_of(m, tokens)
        h = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        up_gathered(x, source, w, offsets_of(sizes), h, EXPECTED_M=expected_m)
        plain = ggc.ops.grouped_gemm(x.index_select(0, source.long()), w,
                                     offsets=offsets_of(sizes), expected_m=expected_m)
        torch.cuda.synchronize()
        check(h, x, source, w, sizes)
        assert torch.equal(h, plain), "gathered rows differ from the gathered copy's GEMM"


@ggc.jit
def up_gathered_fp8(x: gl.Rows, source: gl.RowIndices, w: gl.Weights, m_indptr: gl.Offsets,
                    x_scale: gl.Scale, w_scale: gl.Scale, h: gl.Out,
                    EXPECTED_M: gl.constexpr = None):
    gl.store(h, gl.grouped_dot(x, w, m_indptr, a_rows=source, a_scale=x_scale,
                               b_scale=w_scale, a_scale_kind="block_mn", b_scale_kind="block",
                               expected_m=EXPECTED_M))


@pytest.mark.parametrize("expected_m", [None, 8, 256])
@pytest.mark.parametrize("n, k", [(256, 256), (1536, 2048), (384, 640)])
def test_fp8_gathered_rows_with_the_sorted_rows_scales(n, k, expected_m):
    """FP8 rows by the list with their 1x128 scales gathered to the
    product's rows (M-major): against fp64 of the dequantised operands,
    and bit-equal to the scaled GEMM on the gathered copy (the same
    products and promotions), rows past the last offset untouched."""
    from ggc.moe.quant import as_row_view, dequantize_weights, mn_major, quantize_rows
    from ggc.moe.quant import quantize_weights
    sizes = gm.RAGGED
    g, m, tokens = len(sizes), sum(sizes), 500
    x, x_scale = quantize_rows(gm.randn(tokens, k, dtype=torch.bfloat16), "x")
    w, w_scale = quantize_weights(gm.randn(g, n, k, dtype=torch.bfloat16), "w")
    source = routes_of(m + 5, tokens)
    rows_scale = mn_major(x_scale, source)
    h = torch.full((m + 5, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    up_gathered_fp8(x, source, w, offsets_of(sizes), rows_scale, w_scale, h,
                    EXPECTED_M=expected_m)
    copy = ggc.ops.grouped_gemm(x.index_select(0, source.long()), w,
                                offsets=offsets_of(sizes),
                                a_scale=as_row_view(rows_scale, m + 5), b_scale=w_scale,
                                expected_m=expected_m, validate=False)
    torch.cuda.synchronize()
    x_full = x.double() * x_scale.double().repeat_interleave(128, dim=1)[:, :k]
    check(h, x_full, source, dequantize_weights(w, w_scale).double(), sizes)
    assert torch.isnan(h[m:]).all(), "rows past the last offset were written"
    assert torch.equal(h[:m], copy[:m]), "gathered rows differ from the gathered copy's GEMM"
