"""Epilogues over column pairs (gg.grouped_matmul's `column_pairs`): each
pair of adjacent product columns (2j, 2j+1) becomes output column j, as a
gated activation with gate and up rows of B interleaved, on both
lowerings (sm_90a's wgmma, and sm_80's mma.sync, whose PTX the driver
assembles for the card in hand). Fresh random inputs each check, an fp64
reference by relative norm error, ragged groups (empty, 1 row, off every
tile boundary), NaN-poisoned outputs whose rows outside every group must
stay poisoned.
"""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

import test_fp8 as f8  # noqa: E402
import test_grouped_matmul as gm  # noqa: E402

TARGETS = ["sm_90a", "sm_80"]
SWIGLU = """%s = gg.silu %acc0 : f32
%r = arith.mulf %s, %acc1 : f32
gg.yield %r : f32"""


def swiglu(product):
    """The reference of SWIGLU on an fp64 product of 2N columns."""
    gate, up = product[..., 0::2], product[..., 1::2]
    return gate * torch.sigmoid(gate) * up


def pair_kernel(target, **spec):
    return gm.kernel(target, column_pairs=True, **spec)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype, b_layout", [("bf16", "nk"), ("f16", "kn")])
def test_contiguous_swiglu(target, dtype, b_layout):
    sizes, n, k = gm.RAGGED, 200, 136  # 100 outputs: the last N tile is ragged
    g, m = len(sizes), sum(sizes)
    kern = pair_kernel(target, layout="contiguous", num_groups=g, n=n, k=k, dtype=dtype,
                       out_dtype=dtype, b_layout=b_layout, epilogue=SWIGLU)
    t = gm.TORCH_TYPES[dtype]
    a = gm.randn(m + 9, k, dtype=t)
    b_arg, b = gm.weights(g, n, k, t, b_layout)
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    out = torch.full((m + 9, n // 2), float("nan"), dtype=t, device="cuda")
    kern(a, b_arg, offsets, out)  # rows m.. belong to no group
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            ref = swiglu(a[start:start + size].double() @ b[gi].double().T)
            err = gm.rel_err(out[start:start + size], ref)
            assert err < gm.TOLERANCE[dtype], f"group {gi} ({size} rows): rel err {err:.2e}"
        start += size
    assert torch.isnan(out[m:]).all(), "rows past the last offset were written"


@pytest.mark.parametrize("target", TARGETS)
def test_masked_swiglu_with_row_weights_and_group_scalars(target):
    """The pair's epilogue also takes per-row vectors and group scalars."""
    g, m_max, n, k = 5, 200, 384, 200
    counts = [0, 1, 64, 129, 200]
    epilogue = """%s = gg.silu %acc0 : f32
%h = arith.mulf %s, %acc1 : f32
%w = arith.mulf %h, %r0 : f32
%r = arith.addf %w, %s0 : f32
gg.yield %r : f32"""
    kern = pair_kernel(target, layout="masked", num_groups=g, n=n, k=k, m=m_max,
                       rows=("f32",), group_scalars=1, epilogue=epilogue)
    a = gm.randn(g, m_max, k, dtype=torch.bfloat16)
    b = gm.randn(g, n, k, dtype=torch.bfloat16)
    weight = torch.rand(g, m_max, device="cuda") + 0.5
    bias = torch.randn(g, device="cuda")
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    out = torch.full((g, m_max, n // 2), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, masked_m, weight, bias, out)
    torch.cuda.synchronize()
    for gi, count in enumerate(counts):
        if count:
            ref = (swiglu(a[gi, :count].double() @ b[gi].double().T)
                   * weight[gi, :count, None].double() + bias[gi].double())
            err = gm.rel_err(out[gi, :count], ref)
            assert err < 1e-2, f"group {gi}: rel err {err:.2e}"
        assert torch.isnan(out[gi, count:]).all(), f"group {gi}: rows past masked_m written"


def test_fp8_block_scaled_swiglu():
    """Two-level FP8 (1x128 scales of A, 128x128 of B) on sm_90a: the pair
    is combined after the scales are applied."""
    sizes, n, k = f8.RAGGED, 512, 384
    g, m = len(sizes), sum(sizes)
    kern = pair_kernel("sm_90a", layout="contiguous", num_groups=g, n=n, k=k,
                       dtype="f8E4M3FN", a_scale="block", b_scale="block", epilogue=SWIGLU)
    a = f8.f8(m, k, dtype="f8E4M3FN")
    b = f8.f8(g, n, k, dtype="f8E4M3FN")
    sa, fa = f8.scales_a("block", "contiguous", g, m, k)
    sb, fb = f8.scales_b("block", g, n, k)
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    out = torch.full((m, n // 2), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, offsets, sa, sb, out)
    torch.cuda.synchronize()
    a_deq, b_deq = a.double() * fa.double(), b.double() * fb.double()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            ref = swiglu(a_deq[start:start + size] @ b_deq[gi].T)
            err = gm.rel_err(out[start:start + size], ref)
            assert err < 1e-2, f"group {gi} ({size} rows): rel err {err:.2e}"
        start += size


@pytest.mark.parametrize("out_dtype, config", [
    # BN/2 = 32 bf16 (64-byte rows): the staged tile is dense, not swizzled.
    ("bf16", "#gg.config<block = [128, 64, 64], stages = 0, cluster = [1, 1], sms = 132>"),
    # f32 outputs (BN/2 = 64 f32, two 128-byte chunks a row).
    ("f32", None),
])
def test_contiguous_pool_variants(out_dtype, config):
    sizes, n, k = gm.RAGGED, 256, 200
    g, m = len(sizes), sum(sizes)
    kern = pair_kernel("sm_90a", layout="contiguous", num_groups=g, n=n, k=k,
                       out_dtype=out_dtype, config=config, epilogue=SWIGLU)
    a = gm.randn(m + 5, k, dtype=torch.bfloat16)
    b = gm.randn(g, n, k, dtype=torch.bfloat16)
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    out = torch.full((m + 5, n // 2), float("nan"), dtype=gm.TORCH_TYPES[out_dtype],
                     device="cuda")
    kern(a, b, offsets, out)
    torch.cuda.synchronize()
    assert "store_pool = array<i64: 128" in kern.asm["gg-config"]
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            ref = swiglu(a[start:start + size].double() @ b[gi].double().T)
            err = gm.rel_err(out[start:start + size], ref)
            assert err < (1e-3 if out_dtype == "f32" else 1e-2), f"group {gi}: rel err {err:.2e}"
        start += size
    assert torch.isnan(out[m:]).all(), "rows past the last offset were written"


def test_fp8_decode_split_columns():
    """FP8 masked decode takes 64x256 tiles split between two consumer
    warpgroups (split_n = 2): each stages its half of the BN/2 outputs."""
    g, m_max, n, k = 4, 32, 512, 256
    counts = [0, 1, 17, 32]
    kern = pair_kernel("sm_90a", layout="masked", num_groups=g, n=n, k=k, m=m_max,
                       expected_m=32, dtype="f8E4M3FN", a_scale="block_mn", b_scale="block",
                       epilogue=SWIGLU)
    assert "split_n = 2" in kern.asm["gg-config"]
    a = f8.f8(g, m_max, k, dtype="f8E4M3FN")
    b = f8.f8(g, n, k, dtype="f8E4M3FN")
    sa, fa = f8.scales_a("block_mn", "masked", g, m_max, k)
    sb, fb = f8.scales_b("block", g, n, k)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    out = torch.full((g, m_max, n // 2), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, masked_m, sa, sb, out)
    torch.cuda.synchronize()
    a_deq, b_deq = a.double() * fa.double(), b.double() * fb.double()
    for gi, count in enumerate(counts):
        if count:
            ref = swiglu(a_deq[gi, :count] @ b_deq[gi].T)
            err = gm.rel_err(out[gi, :count], ref)
            assert err < 1e-2, f"group {gi}: rel err {err:.2e}"
        assert torch.isnan(out[gi, count:]).all(), f"group {gi}: rows past masked_m written"


def test_output_of_the_wrong_width_is_rejected_before_launch():
    kern = pair_kernel(ggc.get_target(), layout="contiguous", num_groups=2, n=256, k=64,
                       epilogue=SWIGLU)
    a = gm.randn(10, 64, dtype=torch.bfloat16)
    b = gm.randn(2, 256, 64, dtype=torch.bfloat16)
    offsets = torch.tensor([0, 4, 10], dtype=torch.int32, device="cuda")
    with pytest.raises((ValueError, RuntimeError), match="out"):
        kern(a, b, offsets, torch.empty(10, 256, dtype=torch.bfloat16, device="cuda"))


@ggc.jit
def swiglu_up(x: gl.Rows, w13: gl.Weights, m_indptr: gl.Offsets, route: gl.RowVector,
              h: gl.Out):
    gate, up = gl.column_pairs(gl.grouped_dot(x, w13, m_indptr))
    gl.store(h, gl.silu(gate) * up * route)


def test_jit_column_pairs_matches_the_unfused_layer():
    """@ggc.jit's gl.column_pairs against the GEMM of all 2I columns, then
    SwiGLU, with w13's gate and up rows interleaved for the fused kernel."""
    sizes, hidden, inter = gm.RAGGED, 256, 200
    g, m = len(sizes), sum(sizes)
    x = gm.randn(m, hidden, dtype=torch.bfloat16)
    w13 = gm.randn(g, 2 * inter, hidden, dtype=torch.bfloat16)
    w13i = torch.stack((w13[:, :inter], w13[:, inter:]), dim=2).reshape(g, 2 * inter, hidden)
    route = torch.rand(m, device="cuda") + 0.5
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    h = torch.full((m, inter), float("nan"), dtype=torch.bfloat16, device="cuda")
    swiglu_up(x, w13i, offsets, route, h)
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            full = x[start:start + size].double() @ w13[gi].double().T
            ref = (torch.nn.functional.silu(full[:, :inter]) * full[:, inter:]
                   * route[start:start + size, None].double())
            err = gm.rel_err(h[start:start + size], ref)
            assert err < 1e-2, f"group {gi} ({size} rows): rel err {err:.2e}"
        start += size
