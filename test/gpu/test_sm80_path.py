"""The lowering for sm_80/sm_86/sm_89 (cp.async into the swizzled stages,
ldmatrix, mma.sync), run on the card in hand: kernels compiled for sm_80
are PTX the driver assembles for the device, so an H100 or H200 checks
them too. Same checks as test_grouped_matmul.py: fresh random inputs, an
fp64 reference by relative norm error, ragged groups (empty, 1 row, off
every tile boundary), NaN-poisoned outputs whose rows outside every group
must stay poisoned.

The whole GPU suite runs through this lowering with GGC_TARGET=sm_80
(benchmarks/device_sm80.sh); what the lowering does not take yet is
reported there as skipped, with the compiler's reason.
"""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

import test_grouped_matmul as gm  # noqa: E402


@pytest.fixture(autouse=True)
def sm80():
    ggc.set_target("sm_80")
    yield
    ggc.set_target(None)


def test_target_is_sm80_ptx():
    kernel = gm.cached_kernel(layout="contiguous", num_groups=2, n=128, k=64, dtype="bf16",
                              out_dtype="bf16")
    assert ".target sm_80" in kernel.asm["ptx"]
    assert "mma.sync.aligned.m16n8k16" in kernel.asm["ptx"]
    assert "wgmma" not in kernel.asm["ptx"]


@pytest.mark.parametrize("dtype, b_layout", [("bf16", "nk"), ("f16", "nk"), ("bf16", "kn"),
                                             ("f16", "kn")])
def test_contiguous_ragged(dtype, b_layout):
    gm.check_contiguous(gm.RAGGED, n=200, k=136, dtype=dtype, b_layout=b_layout)


def test_contiguous_decode_and_many_groups():
    gm.check_contiguous([0, 1, 2, 0, 5, 64, 3, 0, 1], n=256, k=256, dtype="bf16")
    gm.check_contiguous([1] * 40 + [0] * 30 + [77], n=64, k=72, dtype="bf16")


@pytest.mark.parametrize("block_m", [64, 128, 192, 256])
def test_contiguous_tile_heights(block_m):
    gm.check_contiguous(gm.RAGGED + [191, 257], n=128, k=200, dtype="bf16",
                        config=f"#gg.config<block = [{block_m}, 128, 64], stages = 0, "
                               "cluster = [1, 1], sms = 132>")


@pytest.mark.parametrize("dtype, b_layout", [("bf16", "nk"), ("f16", "kn")])
def test_masked(dtype, b_layout):
    gm.test_masked_uneven_counts(dtype, b_layout)


def test_masked_counts_beyond_m_max_are_clamped():
    gm.test_masked_counts_beyond_m_max_are_clamped()


@pytest.mark.parametrize("dtype, b_layout", [("bf16", "nk"), ("bf16", "kn")])
def test_padded_contiguous(dtype, b_layout):
    gm.test_padded_contiguous_skips_padding_rows(dtype, b_layout)


def test_tf32():
    gm.check_contiguous(gm.RAGGED, n=200, k=136, dtype="f32")


def test_true_fp32_within_1e4():
    """f32 without `tf32`: 3xTF32 on mma.sync (B K-major: ldmatrix does not
    transpose 32-bit elements)."""
    gm.check_fp32(gm.RAGGED, n=200, k=1000)


def test_f32_with_n_major_b():
    """An f32 B given [G, K, N] is transposed in shared memory, as on sm_90a."""
    gm.check_contiguous(gm.RAGGED, n=200, k=132, dtype="f32", b_layout="kn")
    gm.check_fp32(gm.RAGGED, n=200, k=1000, b_layout="kn")


@pytest.mark.parametrize("out_dtype, layout, dtype, out_layout", [
    ("f32", "kn", "bf16", "mn"), ("bf16", "nk", "f16", "mn"), ("f32", "kn", "f32", "mn"),
    ("f32", "kn", "bf16", "nm")])
def test_k_grouped_weight_gradient(out_dtype, layout, dtype, out_layout):
    """Groups split K: token-major operands (M-major A, read by ldmatrix
    .trans) or K-major ones, the K outside a group cleared in the stage."""
    gm.test_k_grouped_weight_gradient(out_dtype, layout, dtype, out_layout)


def test_epilogue_routing_bias_scalar_silu():
    gm.test_epilogue_routing_bias_scalar_silu()


def test_rows_past_the_last_offset_are_not_written():
    gm.test_contiguous_rows_past_the_last_offset_are_not_written()


def test_fp8_is_refused_by_name_on_sm80():
    with pytest.raises(ggc.CompilationError, match="cannot be lowered for sm_80: its operands "
                                                   "are f8E4M3FN; FP8 mma.sync takes sm_89"):
        gm.cached_kernel(layout="masked", num_groups=2, m=64, n=128, k=128, dtype="f8E4M3FN",
                         out_dtype="bf16")


def test_one_warp_column_as_a_user_plan():
    """gg-plan-kernel lays the warps out 2 x 2 for mma.sync; a user's plan
    with warp_columns = 1 (wgmma's fragment layout) is as exact."""
    gm.check_contiguous(gm.RAGGED, n=256, k=136, dtype="bf16",
                        kernel_plan="#gg.kernel_plan<promotion = serial, scales = none, "
                                    "registers = [168, 168], staging = none>")
    gm.check_contiguous(gm.RAGGED, n=256, k=136, dtype="f16", b_layout="kn",
                        kernel_plan="#gg.kernel_plan<promotion = serial, scales = none, "
                                    "registers = [168, 168], staging = none, warp_columns = 2>")


@pytest.mark.parametrize("layout, dtype, b_layout, block", [
    ("warp_columns = 4, release_lag = 0", "bf16", "nk", [128, 128]),
    ("warp_columns = 4", "f16", "kn", [64, 256]),
    ("warp_columns = 2, release_lag = 1", "bf16", "kn", [128, 128]),
    ("release_lag = 0", "f16", "nk", [64, 128])])
def test_warp_layouts_and_release_lags_as_user_plans(layout, dtype, b_layout, block):
    """Four warp columns (warps of 64 rows side by side) and either
    release lag (a stage handed back as its mma.sync is issued, or a K
    block later as for wgmma) give the same exact results. Every thread
    keeps the CTA's share of registers (no setmaxnreg): 168 of 384 threads,
    256 of 256."""
    regs = 168 if block[0] == 128 else 256
    gm.check_contiguous(gm.RAGGED + [191, 257], n=320, k=200, dtype=dtype, b_layout=b_layout,
                        config=f"#gg.config<block = [{block[0]}, {block[1]}, 64], stages = 0, "
                               "cluster = [1, 1], sms = 132>",
                        kernel_plan="#gg.kernel_plan<promotion = serial, scales = none, "
                                    f"registers = [{regs}, {regs}], staging = none, {layout}>")


@pytest.mark.parametrize("fields, dtype, b_layout, block", [
    ("warp_columns = 4, release_lag = 0", "bf16", "nk", [128, 256]),
    ("warp_columns = 2, release_lag = 0", "f16", "kn", [128, 128]),
    ("warp_columns = 4", "bf16", "kn", [64, 256]),
    ("release_lag = 0", "f16", "nk", [64, 128])])
def test_no_producer_as_user_plans(fields, dtype, b_layout, block):
    """Without a producer warpgroup the consumers copy each stage stages -
    1 K blocks ahead in their own K loop (idle ones too): the same exact
    results on ragged groups with empty and 1-row ones, B either major,
    every thread keeping 256 registers."""
    gm.check_contiguous(gm.RAGGED + [191, 257], n=320, k=200, dtype=dtype, b_layout=b_layout,
                        config=f"#gg.config<block = [{block[0]}, {block[1]}, 64], stages = 0, "
                               "cluster = [1, 1], sms = 132>",
                        kernel_plan="#gg.kernel_plan<promotion = serial, scales = none, "
                                    f"registers = [256, 256], staging = none, {fields}, "
                                    "producer = none>")


NO_PRODUCER = ("#gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], "
               "staging = none, warp_columns = 2, release_lag = 0, producer = none>")
# 64x64 warps whose quads exchange their pairs and store 16 bytes a thread.
QUADS = ("#gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], "
         "staging = none, warp_columns = 4, release_lag = 0, producer = none, "
         "store_columns = 8>")
WIDE = "#gg.config<block = [128, 256, 64], stages = 0, cluster = [1, 1], sms = 132>"


@pytest.mark.parametrize("dtype, b_layout, n", [("bf16", "nk", 280), ("f16", "kn", 264),
                                                ("bf16", "kn", 8)])
def test_quad_stores(dtype, b_layout, n):
    """store_columns = 8 on ragged groups (empty, 1-row, off every tile
    boundary): N = 280, 264 and 8 leave the last N block 24, 8 and 8 valid
    columns, so that a quad stores some of its blocks and not others."""
    gm.check_contiguous(gm.RAGGED + [191, 257], n=n, k=200, dtype=dtype, b_layout=b_layout,
                        config=WIDE, kernel_plan=QUADS)


@pytest.mark.parametrize("kernel_plan", [None, QUADS])
def test_quad_stores_padded_contiguous(kernel_plan):
    """Padding rows (tagged -1) inside a quad's tile stay unwritten, as
    with pairs; the 128x256 kernel the H200's shared memory gets stores by
    quads."""
    ptx = gm.cached_kernel(layout="padded_contiguous", num_groups=5, n=200, k=136,
                           b_layout="nk", dtype="bf16", out_dtype="bf16", config=WIDE,
                           kernel_plan=kernel_plan).asm["ptx"]
    assert "st.global.v4" in ptx, "the kernel does not store by quads"
    gm.check_padded_contiguous([3, 0, 200, 128, 1], "bf16", "nk", config=WIDE,
                               kernel_plan=kernel_plan)


@pytest.mark.parametrize("block, kernel_plan", [([128, 128], NO_PRODUCER), ([128, 256], QUADS)])
def test_no_producer_masked(block, kernel_plan):
    """Without a producer, masked groups: rows past each group's count
    are zero-filled by the consumers' copies and never stored, by pairs or
    by quads."""
    g, m_max, n, k = 5, 300, 200, 136
    counts = [0, 1, 129, 300, 257]
    kern = gm.cached_kernel(layout="masked", num_groups=g, n=n, k=k, m=m_max, dtype="bf16",
                            out_dtype="bf16", kernel_plan=kernel_plan,
                            config=f"#gg.config<block = [{block[0]}, {block[1]}, 64], "
                                   "stages = 0, cluster = [1, 1], sms = 132>")
    a = gm.randn(g, m_max, k, dtype=torch.bfloat16)
    b = gm.randn(g, n, k, dtype=torch.bfloat16)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    out = torch.full((g, m_max, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, masked_m, out)
    torch.cuda.synchronize()
    for gi, count in enumerate(counts):
        if count:
            err = gm.rel_err(out[gi, :count], a[gi, :count].double() @ b[gi].double().T)
            assert err < gm.TOLERANCE["bf16"], f"group {gi}: rel err {err:.2e}"
        assert torch.isnan(out[gi, count:]).all(), f"group {gi}: rows past masked_m written"


def test_no_producer_k_grouped():
    """Without a producer, k-grouped weight gradients: groups end mid K
    block, and the K clears of ggk-prepare-operands run on the stages the
    same threads copied."""
    k_sizes = [0, 1, 63, 65, 129, 700]
    g, m, n = len(k_sizes), 200, 136
    kern = gm.cached_kernel(layout="k_grouped", num_groups=g, n=n, k=None, m=m,
                            b_layout="kn", out_dtype="f32", dtype="bf16",
                            kernel_plan=NO_PRODUCER)
    total = sum(k_sizes)
    dy = gm.randn(total, m, dtype=torch.bfloat16)
    x = gm.randn(total, n, dtype=torch.bfloat16)
    offsets = torch.tensor([0] + list(torch.tensor(k_sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    out = torch.full((g, m, n), float("nan"), dtype=torch.float32, device="cuda")
    kern(dy, x, offsets, out)
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(k_sizes):
        ref = dy[start:start + size].double().T @ x[start:start + size].double()
        if size == 0:
            assert (out[gi] == 0).all()
        else:
            assert gm.rel_err(out[gi], ref) < 1e-2, f"group {gi}"
        start += size


# FP8 on sm_89's lowering: mma.sync m16n8k32 on the same fragments, the
# scales in each warp's slots (cp.async), two-level accumulation.
import test_fp8 as f8  # noqa: E402


@pytest.fixture
def sm89():
    ggc.set_target("sm_89")
    yield
    ggc.set_target("sm_80")


@pytest.mark.parametrize("a_scale, b_scale", [("block", "block"), ("block_mn", "block"),
                                              ("tensor", "tensor"), ("channel", "channel")])
def test_sm89_fp8_contiguous(sm89, a_scale, b_scale):
    f8.test_contiguous_scale_kinds(a_scale, b_scale)
    assert ggc.get_target() == "sm_89"


def test_sm89_fp8_k_grouped(sm89):
    gm.test_k_grouped_weight_gradient("f32", "nk", "f8E4M3FN", "mn")


def test_sm89_fp8_masked_and_e5m2(sm89):
    f8.run_masked("block_mn", "block")
    f8.test_contiguous_e5m2_and_mixed_pairs("f8E4M3FN", "f8E5M2")


def test_sm89_fp8_ptx(sm89):
    kernel = f8.kernel(layout="masked", num_groups=2, m=64, n=128, k=256, dtype="f8E4M3FN",
                       out_dtype="bf16", a_scale="block_mn", b_scale="block")
    assert ".target sm_89" in kernel.asm["ptx"]
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32" in kernel.asm["ptx"]
