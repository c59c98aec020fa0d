"""gg's out_scale: the output quantised to FP8 e4m3 in 1x128 blocks in the
epilogue, its scales stored M-major (block_mn). Checked against an fp64
product quantised by the same rule: the scales, the dequantised output,
the e4m3 bytes, and that rows outside every group and the scales' padding
keep their poison."""

import functools

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from gpu_checks import group_slices, offsets_of  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

# Empty groups, a 1-row group, sizes off every tile boundary; 2 rows past
# the last group belong to none, and M = 907 leaves the scales one
# column of padding (align4(M) = 908).
RAGGED = [0, 1, 3, 127, 128, 129, 0, 517]
TRAILING = 2
POISON_BYTE = 0x7F  # e4m3fn NaN


@functools.lru_cache(maxsize=None)
def kernel(**spec):
    return ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", out_dtype="f8E4M3FN",
                                        out_scale=True, **spec))


def quantized_reference(values):
    """values [R, C] (fp64) quantised as the kernel does: per row and
    128-column block, a = max(amax, 1e-12), scale a / 448."""
    rows, cols = values.shape
    blocks = -(-cols // 128)
    padded = torch.nn.functional.pad(values, (0, blocks * 128 - cols))
    amax = padded.abs().reshape(rows, blocks, 128).amax(-1).clamp_min(1e-12)
    return amax / 448.0


def check(out, scales, ref, sizes, n_out):
    """Every group's rows against `ref` (fp64 [M, n_out]); the rows past
    the last group and the scales' columns past M untouched."""
    m = out.shape[0]
    deq_scale = scales[:, :m].t().repeat_interleave(128, dim=1)[:, :n_out].double()
    bytes_ = out.view(torch.uint8)
    for gi, rows in group_slices(sizes):
        want = quantized_reference(ref[rows])
        got = scales[:, rows].t().double()
        assert torch.isfinite(got).all(), f"group {gi}: a scale not written"
        # (FP8 wgmma adds with fewer bits than f32: an amax may be off by
        # 1e-4; a wrong block or row is off by far more.)
        assert torch.allclose(got, want, rtol=2e-3, atol=0), \
            f"group {gi}: scales off by {((got - want).abs() / want).max():.2e}"
        assert (bytes_[rows] != POISON_BYTE).all(), f"group {gi}: an output not written"
        deq = out[rows].double() * deq_scale[rows]
        err = ((deq - ref[rows]).norm() / ref[rows].norm()).item()
        # e4m3 keeps 3 bits of mantissa: about 3% RMS.
        assert err < 0.05, f"group {gi}: dequantised rel err {err:.3e}"
        # The bytes: the reference quantised with the kernel's own scales.
        # The kernel's sums differ from fp64 in their last bits, which may
        # round a value to the neighbouring e4m3 now and then, never
        # further, where the value is at least 1/16 of its block's amax.
        # (Below that, FP8 wgmma's coarser sums, whose error follows the
        # block's magnitude, may move it more: an H100 measured 5 steps on
        # a value of a 3-row group.) Clamped: the kernel saturates, torch's
        # cast would give NaN.
        expect = (ref[rows] / deq_scale[rows]).clamp(-448, 448).float().to(torch.float8_e4m3fn)
        steps = (e4m3_order(expect) - e4m3_order(out[rows])).abs()
        large = expect.float().abs() >= 448 / 16
        assert steps[large].max().item() <= 1, \
            f"group {gi}: an e4m3 value off by {steps[large].max()} steps"
        differ = (steps > 0).float().mean().item()
        assert differ < 0.05, f"group {gi}: {differ:.2%} of the e4m3 values differ"
    last = sum(sizes)
    assert (bytes_[last:] == POISON_BYTE).all(), "a row outside every group was written"
    assert torch.isnan(scales[:, last:]).all(), "a scale outside every group was written"


def e4m3_order(values):
    """e4m3 values as integers in the order of their values (adjacent
    values one apart; +0 and -0 both 0)."""
    bits = values.view(torch.uint8).to(torch.int32)
    magnitude = bits & 0x7F
    return torch.where(bits >= 0x80, -magnitude, magnitude)


def poisoned(m, n_out):
    out = torch.full((m, n_out), POISON_BYTE, dtype=torch.uint8, device="cuda")
    scales = torch.full((-(-n_out // 128), (m + 3) // 4 * 4), float("nan"), device="cuda")
    return out.view(torch.float8_e4m3fn), scales


@pytest.mark.parametrize("n, config", [
    (640, None),  # gg-select-config's tile: 128 columns
    (2176, None),  # 17 blocks: a ragged last tile of the wave
    (640, "#gg.config<block = [64, 256, 128], stages = 0, cluster = [1, 1], sms = 132, "
          "split_n = 2>"),  # two warpgroups side by side, 128 columns each
])
def test_fp8_product_quantised(n, config):
    k, g = 400, len(RAGGED)
    m = sum(RAGGED) + TRAILING
    a = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    kb = -(-k // 128)
    sa = torch.rand(kb, (m + 3) // 4 * 4, device="cuda") + 0.5
    sb = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
    out, scales = poisoned(m, n)
    kern = kernel(num_groups=g, n=n, k=k, dtype="f8E4M3FN", a_scale="block_mn",
                  b_scale="block", config=config)
    kern(a, b, offsets_of(RAGGED), sa, sb, out, scales)
    torch.cuda.synchronize()
    fa = sa[:, :m].t().repeat_interleave(128, dim=1)[:, :k].double()
    fb = sb.repeat_interleave(128, dim=1)[:, :n].repeat_interleave(128, dim=2)[:, :, :k].double()
    ref = torch.zeros(m, n, dtype=torch.float64, device="cuda")
    for gi, rows in group_slices(RAGGED):
        ref[rows] = (a[rows].double() * fa[rows]) @ (b[gi].double() * fb[gi]).T
    check(out, scales, ref, RAGGED, n)


SWIGLU = """
%s = gg.silu %acc0 : f32
%r = arith.mulf %s, %acc1 : f32
gg.yield %r : f32
"""


@pytest.mark.parametrize("combine", ["column_pairs", "column_halves"])
def test_bf16_swiglu_quantised(combine):
    """A SwiGLU up projection whose FP8 output the down projection reads:
    I = 320 (a partial last scale block), gate and up interleaved
    (column_pairs) or in halves (column_halves)."""
    i, k, g = 320, 256, len(RAGGED)
    n = 2 * i
    m = sum(RAGGED) + TRAILING
    a = torch.randn(m, k, device="cuda").bfloat16()
    b = (torch.randn(g, n, k, device="cuda") / 8).bfloat16()
    out, scales = poisoned(m, i)
    kern = kernel(num_groups=g, n=n, k=k, dtype="bf16", epilogue=SWIGLU, **{combine: True})
    kern(a, b, offsets_of(RAGGED), out, scales)
    torch.cuda.synchronize()
    ref = torch.zeros(m, i, dtype=torch.float64, device="cuda")
    for gi, rows in group_slices(RAGGED):
        h = a[rows].double() @ b[gi].double().T
        gate, up = (h[:, 0::2], h[:, 1::2]) if combine == "column_pairs" else (h[:, :i], h[:, i:])
        ref[rows] = torch.nn.functional.silu(gate) * up
    check(out, scales, ref, RAGGED, i)


def test_dsl_store_scale_matches_the_reference_backend():
    """gl.store(..., scale=...) on the GPU against the same kernel on the
    CPU reference backend: the scales within f32 summation order, the
    e4m3 bytes but for a value rounding across a tie now and then."""
    import ggc.language as gl

    @ggc.jit
    def swiglu_up_fp8(x: gl.Rows, w13: gl.Weights, m_indptr: gl.Offsets,
                      h: gl.Out, h_scale: gl.OutScale):
        gate, up = gl.column_halves(gl.grouped_dot(x, w13, m_indptr))
        gl.store(h, gl.silu(gate) * up, scale=h_scale)

    i, k, g = 384, 512, len(RAGGED)
    m = sum(RAGGED) + TRAILING
    x = torch.randn(m, k, device="cuda").bfloat16()
    w13 = (torch.randn(g, 2 * i, k, device="cuda") / 8).bfloat16()
    offsets = offsets_of(RAGGED)
    h, h_scale = poisoned(m, i)
    swiglu_up_fp8(x, w13, offsets, h, h_scale)
    torch.cuda.synchronize()
    h_cpu = torch.full((m, i), POISON_BYTE, dtype=torch.uint8).view(torch.float8_e4m3fn)
    s_cpu = torch.full(tuple(h_scale.shape), float("nan"))
    swiglu_up_fp8(x.cpu(), w13.cpu(), offsets.cpu(), h_cpu, s_cpu)
    last = sum(RAGGED)
    assert torch.allclose(h_scale.cpu()[:, :last], s_cpu[:, :last], rtol=1e-4, atol=0)
    steps = (e4m3_order(h.cpu()[:last]) - e4m3_order(h_cpu[:last])).abs()
    assert steps.max().item() <= 1 and (steps > 0).float().mean().item() < 0.01
    assert (h.view(torch.uint8)[last:] == POISON_BYTE).all()
    assert torch.isnan(h_scale[:, last:]).all()


def fp8_operands(m, n, k, g):
    """Fresh e4m3 A [m, k] and B [g, n, k] with 1x128 / 128x128 scales,
    and their fp64 values dequantised."""
    a = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    kb = -(-k // 128)
    sa = torch.rand(kb, (m + 3) // 4 * 4, device="cuda") + 0.5
    sb = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
    fa = sa[:, :m].t().repeat_interleave(128, dim=1)[:, :k].double()
    fb = sb.repeat_interleave(128, dim=1)[:, :n].repeat_interleave(128, dim=2)[:, :, :k].double()
    return (a, b, sa, sb), a.double() * fa, b.double() * fb


@pytest.mark.parametrize("combine", ["column_pairs", "column_halves"])
@pytest.mark.parametrize("config", [
    None,  # gg-select-config's: 64x256, two warpgroups a block (split_n = 2)
    "#gg.config<block = [64, 256, 128], stages = 3, cluster = [1, 1], sms = 7, "
    "split_n = 2>",  # few CTAs: each runs many tiles through the amax buffer
])
def test_fp8_swiglu_quantised(combine, config):
    """FP8 operands and SwiGLU into an FP8 out: a warpgroup's accumulators
    hold 64 outputs of a row's 128-column block, and the two warpgroups
    sharing the rows exchange their halves' amax. I = 512, K 400 (a
    partial K block)."""
    i, k, g = 512, 400, len(RAGGED)
    n, m = 2 * i, sum(RAGGED) + TRAILING
    operands, a, b = fp8_operands(m, n, k, g)
    out, scales = poisoned(m, i)
    kern = kernel(num_groups=g, n=n, k=k, dtype="f8E4M3FN", a_scale="block_mn",
                  b_scale="block", epilogue=SWIGLU, config=config, **{combine: True})
    if config is None:
        assert "split_n = 2" in kern.asm["gg-config"]
    kern(operands[0], operands[1], offsets_of(RAGGED), operands[2], operands[3], out, scales)
    torch.cuda.synchronize()
    ref = torch.zeros(m, i, dtype=torch.float64, device="cuda")
    for gi, rows in group_slices(RAGGED):
        h = a[rows] @ b[gi].T
        gate, up = (h[:, 0::2], h[:, 1::2]) if combine == "column_pairs" else (h[:, :i], h[:, i:])
        ref[rows] = torch.nn.functional.silu(gate) * up
    check(out, scales, ref, RAGGED, i)


def test_fp8_column_halves_split_between_warpgroups():
    """column_halves on a split_n = 2 tile into a bf16 out: each warpgroup
    loads its share of the gate rows and of the up rows (half_shares) and
    writes its 64 of the tile's 128 outputs; rows outside every group
    untouched."""
    i, k, g = 384, 256, len(RAGGED)
    n, m = 2 * i, sum(RAGGED) + TRAILING
    operands, a, b = fp8_operands(m, n, k, g)
    out = torch.full((m, i), float("nan"), device="cuda").bfloat16()
    kern = ggc.Kernel(ir.grouped_matmul(
        "k", layout="contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
        a_scale="block_mn", b_scale="block", out_dtype="bf16", epilogue=SWIGLU,
        column_halves=True,
        config="#gg.config<block = [64, 256, 128], stages = 0, cluster = [1, 1], "
               "sms = 132, split_n = 2>"))
    kern(operands[0], operands[1], offsets_of(RAGGED), operands[2], operands[3], out)
    torch.cuda.synchronize()
    for gi, rows in group_slices(RAGGED):
        h = a[rows] @ b[gi].T
        want = torch.nn.functional.silu(h[:, :i]) * h[:, i:]
        got = out[rows].double()
        assert torch.isfinite(got).all(), f"group {gi}: an output not written"
        err = ((got - want).norm() / want.norm()).item()
        assert err < 1e-2, f"group {gi}: rel err {err:.3e}"
    assert torch.isnan(out[sum(RAGGED):].float()).all(), "a row outside every group was written"
