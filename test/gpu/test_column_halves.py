"""Epilogues over column halves (gg.grouped_matmul's `column_halves`):
product columns j and j + N/2 become output column j, a gated activation
with B's gate rows first and its up rows after them (vLLM's and most
checkpoints' layout), on sm_90a. Fresh random inputs each check, an fp64
reference by relative norm error, ragged groups (empty, 1 row, off every
tile boundary), N/2 off the tile's half, NaN-poisoned outputs whose rows
outside every group must stay poisoned.
"""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

import test_grouped_matmul as gm  # noqa: E402

SWIGLU = """%s = gg.silu %acc0 : f32
%r = arith.mulf %s, %acc1 : f32
gg.yield %r : f32"""


def swiglu(product):
    """The reference of SWIGLU on an fp64 product of 2I columns, gate first."""
    gate, up = product.chunk(2, dim=-1)
    return gate * torch.sigmoid(gate) * up


def offsets_of(sizes):
    return torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                        device="cuda")


def check_groups(out, a, b, sizes, tolerance=1e-2):
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            ref = swiglu(a[start:start + size].double() @ b[gi].double().T)
            err = gm.rel_err(out[start:start + size], ref)
            assert err < tolerance, f"group {gi} ({size} rows): rel err {err:.2e}"
        start += size


@pytest.mark.parametrize("n, config", [
    (200, None),  # 100 outputs: each half's last tile is ragged
    (1536, None),  # Qwen3-30B-A3B's 2I
    (512, "#gg.config<block = [128, 256, 64], stages = 0, cluster = [1, 1], sms = 132>"),
    (384, "#gg.config<block = [128, 64, 64], stages = 0, cluster = [1, 1], sms = 132>"),
])
def test_contiguous_swiglu(n, config):
    sizes, k = gm.RAGGED, 136
    g, m = len(sizes), sum(sizes)
    kern = gm.kernel("sm_90a", layout="contiguous", num_groups=g, n=n, k=k,
                     column_halves=True, config=config, epilogue=SWIGLU)
    a = gm.randn(m + 9, k, dtype=torch.bfloat16)
    b = gm.randn(g, n, k, dtype=torch.bfloat16)
    out = torch.full((m + 9, n // 2), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, offsets_of(sizes), out)  # rows m.. belong to no group
    torch.cuda.synchronize()
    check_groups(out, a, b, sizes)
    assert torch.isnan(out[m:]).all(), "rows past the last offset were written"


def test_masked_with_row_weights():
    g, m_max, n, k = 5, 200, 384, 200
    counts = [0, 1, 64, 129, 200]
    epilogue = """%s = gg.silu %acc0 : f32
%h = arith.mulf %s, %acc1 : f32
%r = arith.mulf %h, %r0 : f32
gg.yield %r : f32"""
    kern = gm.kernel("sm_90a", layout="masked", num_groups=g, n=n, k=k, m=m_max,
                     rows=("f32",), column_halves=True, epilogue=epilogue)
    a = gm.randn(g, m_max, k, dtype=torch.bfloat16)
    b = gm.randn(g, n, k, dtype=torch.bfloat16)
    weight = torch.rand(g, m_max, device="cuda") + 0.5
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    out = torch.full((g, m_max, n // 2), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, masked_m, weight, out)
    torch.cuda.synchronize()
    for gi, count in enumerate(counts):
        if count:
            ref = swiglu(a[gi, :count].double() @ b[gi].double().T) * weight[gi, :count, None]
            err = gm.rel_err(out[gi, :count], ref)
            assert err < 1e-2, f"group {gi}: rel err {err:.2e}"
        assert torch.isnan(out[gi, count:]).all(), f"group {gi}: rows past masked_m written"


@ggc.jit
def swiglu_halves(x: gl.Rows, w13: gl.Weights, m_indptr: gl.Offsets, h: gl.Out,
                  EXPECTED_M: gl.constexpr = None):
    gate, up = gl.column_halves(gl.grouped_dot(x, w13, m_indptr, expected_m=EXPECTED_M))
    gl.store(h, gl.silu(gate) * up)


@pytest.mark.parametrize("expected_m", [None, 8, 256])
def test_jit_column_halves_equals_the_unfused_layer(expected_m):
    """@ggc.jit's gl.column_halves on w13 as stored (gate rows, then up
    rows) against the GEMM of all 2I columns and SwiGLU, with the decode
    (64x64) and prefill tiles that expected_m picks."""
    sizes, hidden, inter = gm.RAGGED, 256, 200
    g, m = len(sizes), sum(sizes)
    x = gm.randn(m, hidden, dtype=torch.bfloat16)
    w13 = gm.randn(g, 2 * inter, hidden, dtype=torch.bfloat16)
    h = torch.full((m, inter), float("nan"), dtype=torch.bfloat16, device="cuda")
    swiglu_halves(x, w13, offsets_of(sizes), h, EXPECTED_M=expected_m)
    torch.cuda.synchronize()
    check_groups(h, x, w13, sizes)


@pytest.mark.parametrize("inter, k, a_scale, plan", [
    (128, 400, "block_mn", None),  # one tile of each half; K ends inside a scale block
    (768, 2048, "block_mn", None),  # Qwen3-30B-A3B's up projection
    (384, 256, "block",  # the serial plan, scales in the warps' slots
     "#gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], "
     "staging = swizzled>"),
])
def test_fp8_block_scales(inter, k, a_scale, plan):
    """FP8 with 128x128 block scales of B on w13 as an FP8 checkpoint stores
    it (gate rows, then up rows, each half its own scale blocks): each half
    of a tile takes its own block's scale. fp64 reference on the
    dequantised operands, ragged groups, poisoned rows."""
    import test_fp8 as f8t
    sizes, n = gm.RAGGED, 2 * inter
    g, m = len(sizes), sum(sizes)
    kern = f8t.kernel(layout="contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
                      a_scale=a_scale, b_scale="block", column_halves=True,
                      epilogue=SWIGLU, kernel_plan=plan)
    a = f8t.f8(m + 5, k, dtype="f8E4M3FN")
    b = f8t.f8(g, n, k, dtype="f8E4M3FN")
    sa, fa = f8t.scales_a(a_scale, "contiguous", g, m + 5, k)
    sb, fb = f8t.scales_b("block", g, n, k)
    out = torch.full((m + 5, inter), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, offsets_of(sizes), sa, sb, out)
    torch.cuda.synchronize()
    a_deq, b_deq = a.double() * fa.double(), b.double() * fb.double()
    check_groups(out, a_deq, b_deq, sizes, tolerance=f8t.TOLERANCE * 2)
    assert torch.isnan(out[m:]).all(), "rows past the last offset were written"
