"""FP8 grouped GEMM on the GPU: every lowered scale kind on ragged groups.

The reference is computed in fp64 from the dequantised inputs (f8 value
times its scale); fresh random inputs and scales each check, NaN-poisoned
outputs, relative norm error under 2e-3.
"""

import functools

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import ir  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

F8 = {"f8E4M3FN": torch.float8_e4m3fn, "f8E5M2": torch.float8_e5m2}
TOLERANCE = 2e-3
RAGGED = [0, 1, 3, 4, 5, 127, 128, 129, 1030]


def kernel(**spec):
    """The kernel for ggc's current target (test_sm80_path.py sets sm_89)."""
    return _kernel(ggc.get_target(), **spec)


@functools.lru_cache(maxsize=None)
def _kernel(target, **spec):
    return ggc.Kernel(ir.grouped_matmul("k", **spec), target=target)


def f8(*shape, dtype):
    return (torch.randn(*shape, device="cuda") * 2).to(F8[dtype])


def positive(*shape):
    return torch.rand(*shape, device="cuda") + 0.5


def scales_a(kind, layout, g, m, k):
    """A's scale tensor as the kernel takes it, and as a [.., M, K] factor."""
    kb = -(-k // 128)
    lead = [g] if layout == "masked" else []
    if kind is None:
        return None, 1.0
    if kind == "tensor":
        s = positive(g)
        return s, s  # per group: expanded by the caller
    if kind == "channel":
        s = positive(*lead, m)
        return s, s[..., None]
    if kind == "block":
        s = positive(*lead, m, kb)
        return s, s.repeat_interleave(128, dim=-1)[..., :k]
    s = positive(*lead, kb, (m + 3) // 4 * 4)  # block_mn: M-major, 4-aligned
    return s, s[..., :m].transpose(-1, -2).repeat_interleave(128, dim=-1)[..., :k]


def scales_b(kind, g, n, k):
    """B's scale tensor as the kernel takes it, and as a [G, N, K] factor."""
    kb, nb = -(-k // 128), -(-n // 128)
    if kind is None:
        return None, torch.ones(g, 1, 1, device="cuda")
    if kind == "tensor":
        s = positive(g)
        return s, s[:, None, None]
    if kind == "channel":
        s = positive(g, n)
        return s, s[:, :, None]
    if kind == "block1x128":  # per column and K block
        s = positive(g, n, kb)
        return s, s.repeat_interleave(128, dim=2)[:, :, :k]
    if kind == "block1x128_mn":
        s = positive(g, kb, n)
        return s, s.transpose(1, 2).repeat_interleave(128, dim=2)[:, :, :k]
    if kind == "block":
        s = positive(g, nb, kb)
        full = s
    else:
        s = positive(g, kb, nb)
        full = s.transpose(1, 2)
    full = full.repeat_interleave(128, dim=1)[:, :n].repeat_interleave(128, dim=2)[:, :, :k]
    return s, full


def rel_err(out, ref):
    out = out.double()
    assert torch.isfinite(out).all(), "a valid row holds NaN/Inf: not written or wrong"
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def run_contiguous(sizes, n, k, a_scale, b_scale, a_dtype="f8E4M3FN", b_dtype="f8E4M3FN",
                   **plan):  # plan: config, idle_warpgroups, ...
    g, m = len(sizes), sum(sizes)
    kern = kernel(layout="contiguous", num_groups=g, n=n, k=k, dtype=b_dtype,
                  a_dtype=a_dtype, a_scale=a_scale, b_scale=b_scale, **plan)
    a = f8(m, k, dtype=a_dtype)
    b = f8(g, n, k, dtype=b_dtype)
    sa, fa = scales_a(a_scale, "contiguous", g, m, k)
    sb, fb = scales_b(b_scale, g, n, k)
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    args = [a, b, offsets] + [s for s in (sa, sb) if s is not None] + [out]
    kern(*args)
    torch.cuda.synchronize()
    b_deq = b.double() * fb.double()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            rows = a[start:start + size].double()
            if a_scale == "tensor":
                rows = rows * fa[gi].double()
            elif a_scale is not None:
                rows = rows * fa[start:start + size].double()
            ref = rows @ b_deq[gi].T
            err = rel_err(out[start:start + size], ref)
            assert err < TOLERANCE, f"group {gi} ({size} rows): rel err {err:.2e}"
        start += size


@pytest.mark.parametrize("a_scale, b_scale", [
    (None, None), ("tensor", "tensor"), ("channel", "channel"), ("block", "block"),
    ("block_mn", "block"), ("block_mn", "block_mn"), ("block", None), (None, "block"),
    ("channel", "block"), ("block_mn", "block1x128"), ("block", "block1x128_mn"),
])
def test_contiguous_scale_kinds(a_scale, b_scale):
    # K = 400 ends inside a 128-wide scale block; N = 2112 inside a 128-column one.
    run_contiguous(RAGGED, n=2112, k=400, a_scale=a_scale, b_scale=b_scale)


def test_contiguous_long_k_keeps_precision():
    # Two-level accumulation: K = 7168 stays under 2e-3 in f32 promotion.
    run_contiguous([300, 0, 777], n=256, k=7168, a_scale="block_mn", b_scale="block")


def test_contiguous_split_n_column_scales():
    # split_n = 2 with per-column 1x128 scales of B: each warpgroup stages
    # its own half of the columns.
    run_contiguous(RAGGED, n=2112, k=400, a_scale="block_mn", b_scale="block1x128",
                   config="#gg.config<block = [64, 256, 128], stages = 0, cluster = [1, 1], "
                          "sms = 132, split_n = 2>")


# Tiles narrower than 128 columns (gg-select-config's wave heuristic picks
# 112 or 96): a tile's columns may straddle two 128x128 scale blocks of B.
NARROW_112 = "#gg.config<block = [128, 112, 128], stages = 0, cluster = [1, 1], sms = 132>"
NARROW_96 = "#gg.config<block = [128, 96, 128], stages = 0, cluster = [1, 1], sms = 132>"
# DeepGEMM's FP8 tile: 192 columns per warpgroup, starting 0 or 64 columns
# into a 128-column scale block of B.
WIDE_192 = "#gg.config<block = [128, 192, 128], stages = 0, cluster = [1, 1], sms = 132>"
SPLIT_224 = ("#gg.config<block = [64, 224, 128], stages = 0, cluster = [1, 1], "
             "sms = 132, split_n = 2>")


@pytest.mark.parametrize("config", [NARROW_112, NARROW_96, WIDE_192])
def test_contiguous_narrow_tiles_straddle_b_blocks(config):
    # N = 2112: 112-wide tiles start at 112 i, so most straddle a 128-column
    # scale block of B; the last tile is 96 (or 0) columns.
    run_contiguous(RAGGED, n=2112, k=400, a_scale="block_mn", b_scale="block",
                   config=config)


@pytest.mark.parametrize("kernel_plan", [
    None,  # gg-plan-kernel's: the scales in the stages, serial promotion
    "#gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], "
    "staging = swizzled>"])
def test_contiguous_192_columns_straddle_b_blocks(kernel_plan):
    # N = 2176: eleven 192-column tiles, those at odd indices starting 64
    # columns into a scale block, then one of 64; K = 7168 keeps the
    # two-level accumulation's precision across 56 promotions.
    run_contiguous(RAGGED, n=2176, k=7168, a_scale="block_mn", b_scale="block",
                   config=WIDE_192, kernel_plan=kernel_plan)


CONSTANT_STAGES = ("#gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], "
                   "staging = swizzled, ring_stages = constant>")
WIDE_192_4 = "#gg.config<block = [128, 192, 128], stages = 4, cluster = [1, 1], sms = 132>"
PAIRED_192_4 = "#gg.config<block = [128, 192, 128], stages = 4, cluster = [2, 1], sms = 132>"


@pytest.mark.parametrize("config", [WIDE_192_4, PAIRED_192_4])
@pytest.mark.parametrize("k", [512, 640, 2048, 2304])
def test_constant_ring_stages(config, k):
    """ring_stages = constant: the serial K loop a turn of the ring (4
    stages) at a time, each block's stage a constant; 4 and 16 K blocks
    (whole turns), 5 and 18 (each tile's last turn ends on 3 and 2 stages
    passed on empty), ragged groups (empty, one row, off every tile
    boundary), alone and in clusters of two."""
    run_contiguous(RAGGED, n=2176, k=k, a_scale="block_mn", b_scale="block",
                   config=config, kernel_plan=CONSTANT_STAGES)


PIPELINED_CONSTANT = ("#gg.kernel_plan<promotion = pipelined, scales = stages, "
                      "registers = [24, 240], staging = swizzled, ring_stages = constant>")
SQUARE_5 = "#gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>"


@pytest.mark.parametrize("k", [128, 640, 768, 2304, 7168])
def test_pipelined_constant_ring_stages(k):
    """Pipelined promotion over constant stages (5): block 0 beside the
    overlap, (K blocks - 1) % 5 straight, then whole turns; 1, 5, 6, 18 and
    56 K blocks (last turns ending on 4, 0, 4, 2 and 4 stages passed on
    empty), ragged groups, the deferred epilogue between tiles."""
    run_contiguous(RAGGED, n=2176, k=k, a_scale="block_mn", b_scale="block",
                   config=SQUARE_5, kernel_plan=PIPELINED_CONSTANT)


@pytest.mark.parametrize("k", [640, 2304])
def test_pipelined_constant_ring_stages_slot_scales(k):
    # Scales through each warp's slots (A's 1x128 scales K-major),
    # prefetched two K blocks ahead of the chain's promotions.
    run_contiguous(RAGGED, n=2176, k=k, a_scale="block", b_scale="block", config=SQUARE_5,
                   kernel_plan=PIPELINED_CONSTANT.replace("scales = stages", "scales = slots"))


def test_pipelined_constant_ring_stages_masked():
    run_masked("block_mn", "block", k=2304, config=SQUARE_5, kernel_plan=PIPELINED_CONSTANT)


def test_long_k_wide_tile_chosen():
    # gg-select-config's choice with a row hint: 128x192 past K 3,072 (N a
    # multiple of 192), constant stages, 33 K blocks over 4 stages.
    run_contiguous(RAGGED, n=384, k=4224, a_scale="block_mn", b_scale="block",
                   expected_m=256)


def test_constant_ring_stages_masked():
    run_masked("block_mn", "block", k=1024, config=PAIRED_192_4, kernel_plan=CONSTANT_STAGES)


def test_constant_ring_stages_masked_partial_turn():
    # gg-select-config's paired masked tiles: 5 stages, per-thread stores;
    # 9 K blocks, so each tile's last turn ends on 1 empty stage.
    run_masked("block_mn", "block", k=1152, direct_stores=True,
               config=PAIRED_192_4.replace("stages = 4", "stages = 5"),
               kernel_plan=CONSTANT_STAGES.replace("staging = swizzled",
                                                   "staging = none, store_columns = 8"))


def test_contiguous_idle_warpgroups_skip():
    # gg-eliminate-padding's skip in the two-level f8 kernel (192-row tiles,
    # three consumers): warpgroups whose rows are all past the group's end
    # only pass the buffers back.
    run_contiguous(RAGGED, n=2112, k=400, a_scale="block_mn", b_scale="block",
                   idle_warpgroups="skip")


@pytest.mark.parametrize("a_dtype, b_dtype", [("f8E5M2", "f8E5M2"), ("f8E4M3FN", "f8E5M2"),
                                              ("f8E5M2", "f8E4M3FN")])
def test_contiguous_e5m2_and_mixed_pairs(a_dtype, b_dtype):
    run_contiguous([64, 129, 5], n=256, k=256, a_scale="block_mn", b_scale="block",
                   a_dtype=a_dtype, b_dtype=b_dtype)


SPLIT_DECODE = ("#gg.config<block = [64, 256, 128], stages = 0, cluster = [1, 1], "
                "sms = 132, split_n = 2>")


@pytest.mark.parametrize("a_scale, b_scale, config", [
    ("block_mn", "block", None), ("block", "block_mn", None), ("channel", "channel", None),
    ("tensor", "tensor", None), ("block_mn", "block", SPLIT_DECODE),
    ("channel", "channel", SPLIT_DECODE), ("block_mn", "block", NARROW_112),
    ("block", "block_mn", NARROW_96), ("block_mn", "block", SPLIT_224)])
def test_masked_deepgemm_layout(a_scale, b_scale, config):
    """Also with 64-row tiles and two consumer warpgroups splitting the
    columns (split_n = 2), the decode configuration."""
    run_masked(a_scale, b_scale, config=config)


@pytest.mark.parametrize("layout", ["masked", "contiguous"])
@pytest.mark.parametrize("promotion, scales, registers", [
    ("serial", "stages", "[40, 232]"), ("serial", "slots", "[40, 232]"),
    ("pipelined", "stages", "[24, 240]"), ("pipelined", "slots", "[24, 240]")])
def test_scale_placement_follows_the_plan(layout, promotion, scales, registers):
    """DeepGEMM's scales in the stages or in each warp's slots, with either
    promotion schedule (ggk-place-scales, ggk-pipeline-promotion)."""
    plan = (f"#gg.kernel_plan<promotion = {promotion}, scales = {scales}, "
            f"registers = {registers}, staging = swizzled>")
    if layout == "masked":
        run_masked("block_mn", "block", kernel_plan=plan)
    else:
        run_contiguous(RAGGED, n=2112, k=400, a_scale="block_mn", b_scale="block",
                       kernel_plan=plan)


@pytest.mark.parametrize("layout", ["masked", "contiguous"])
@pytest.mark.parametrize("promotion, registers, epilogue_blocks", [
    ("serial", "[40, 232]", 0), ("serial", "[40, 232]", 1), ("pipelined", "[24, 240]", 1)])
def test_warpgroups_store_their_own_rows(layout, promotion, registers, epilogue_blocks):
    """store_issuers = warpgroup: each consumer warpgroup of a 128-row tile
    stages and stores its own 64 rows (ragged groups: tiles whose second
    warpgroup holds no valid row, or some); with serial promotion, the
    epilogue at the tile's end or beside the next tile's first wgmma."""
    plan = (f"#gg.kernel_plan<promotion = {promotion}, scales = stages, "
            f"registers = {registers}, staging = swizzled, "
            f"epilogue_blocks = {epilogue_blocks}, store_issuers = warpgroup>")
    config = "#gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>"
    if layout == "masked":
        run_masked("block_mn", "block", config=config, kernel_plan=plan)
    else:
        run_contiguous(RAGGED, n=2112, k=400, a_scale="block_mn", b_scale="block",
                       config=config, kernel_plan=plan)


TWO_EPILOGUE_BLOCKS = ("#gg.kernel_plan<promotion = pipelined, scales = stages, "
                       "registers = [24, 240], staging = swizzled, epilogue_blocks = 2>")


@pytest.mark.parametrize("k", [128, 256, 384, 400, 640])
def test_two_epilogue_blocks(k):
    """epilogue_blocks = 2: K blocks 0 and 1 issued before the previous
    tile's epilogue; 1, 2, 3, 4 and 5 K blocks (the one-block fallback,
    the pair loop with and without its tail, K ending inside a block)."""
    run_contiguous(RAGGED, n=2112, k=k, a_scale="block_mn", b_scale="block",
                   kernel_plan=TWO_EPILOGUE_BLOCKS)


def test_two_epilogue_blocks_masked():
    run_masked("block_mn", "block", kernel_plan=TWO_EPILOGUE_BLOCKS)


# Masked counts beyond four waves of 128x128 tiles on 132 SMs at N 2,560
# (16 groups, 1,152 row blocks of 64): empty, 1-row and full groups, and
# counts either side of 64-, 128- and 192-row boundaries.
WIDE_COUNTS = [0, 1, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 383, 384]


def test_masked_beyond_four_waves_default():
    """gg-select-config's default for a masked batch beyond four waves of
    128x128 tiles: 64x256 split tiles with five stages and per-thread
    stores (fifty-first session), every valid row right, none past a
    group's count written."""
    kern = run_masked("block", "block", k=512, g=16, m_max=384, n=2560,
                      counts=WIDE_COUNTS, expected_m=sum(WIDE_COUNTS) // 16)
    assert (kern.info["block_m"], kern.info["block_n"]) == (64, 256)


def run_masked(a_scale, b_scale, k=640, g=4, m_max=256, n=2112, counts=(256, 0, 129, 3),
               expected_m=97, **plan):  # plan: config, kernel_plan, ...
    kern = kernel(layout="masked", num_groups=g, n=n, k=k, m=m_max, dtype="f8E4M3FN",
                  expected_m=expected_m, a_scale=a_scale, b_scale=b_scale, **plan)
    a = f8(g, m_max, k, dtype="f8E4M3FN")
    b = f8(g, n, k, dtype="f8E4M3FN")
    sa, fa = scales_a(a_scale, "masked", g, m_max, k)
    sb, fb = scales_b(b_scale, g, n, k)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    out = torch.full((g, m_max, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, masked_m, sa, sb, out)
    torch.cuda.synchronize()
    a_deq = a.double() * (fa[:, None, None].double() if a_scale == "tensor" else fa.double())
    b_deq = b.double() * fb.double()
    for gi, count in enumerate(counts):
        if count:
            ref = a_deq[gi, :count] @ b_deq[gi].T
            err = rel_err(out[gi, :count], ref)
            assert err < TOLERANCE, f"group {gi}: rel err {err:.2e}"
        assert torch.isnan(out[gi, count:]).all(), f"group {gi}: rows past masked_m written"
    return kern


def k_grouped_scale(kind, x, g):
    """A k_grouped operand's scale tensor (None without), the operand
    dequantised in fp64 ([rows, K]), and its per-group factor ([G]). Blocks
    are 1x128 ("block", "block1x128", "*_mn" for the transposed storage) or
    128x128 ("block128x128", B's "block")."""
    rows, k = x.shape
    kb = -(-k // 128)
    x_deq, group = x.double(), torch.ones(g, device="cuda", dtype=torch.float64)
    per_k_block = lambda s: s.repeat_interleave(128, dim=1)[:, :k].double()  # noqa: E731
    if kind is None:
        return None, x_deq, group
    if kind == "tensor":
        s = positive(g)
        return s, x_deq, group * s.double()
    if kind == "channel":
        s = positive(rows)
        return s, x_deq * s.double()[:, None], group
    shapes = {"block": (rows, kb), "block1x128": (rows, kb), "block_mn": (kb, rows),
              "block1x128_mn": (kb, rows), "block128x128": (-(-rows // 128), kb)}
    s = positive(*shapes[kind])
    factor = s.T if kind.endswith("_mn") else s
    if kind == "block128x128":
        factor = factor.repeat_interleave(128, dim=0)[:rows]
    return s, x_deq * per_k_block(factor), group


# Tokens per group for the weight gradient: empty, tiny, across 128-token
# scale blocks; 1440 in all, so K-major rows are whole 16-byte units.
K_SIZES = [0, 1, 3, 4, 5, 127, 128, 129, 1043]


@pytest.mark.parametrize("a_scale, b_scale", [
    ("block", "block1x128"), ("block_mn", "block1x128_mn"), ("block", "block"),
    ("tensor", "tensor"), ("channel", "channel"), (None, "block1x128"), ("block", None)])
def test_k_grouped_scaled_weight_gradient(a_scale, b_scale):
    """FP8 dW[g] = dY_g^T X_g over each group's tokens (K), with scales in
    128-token blocks of the concatenated K (a group may start mid-block)."""
    g, m, n = len(K_SIZES), 200, 136
    k = sum(K_SIZES)
    kern = kernel(layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
                  dtype="f8E4M3FN", out_dtype="f32", a_scale=a_scale, b_scale=b_scale)
    a = f8(m, k, dtype="f8E4M3FN")  # dY^T, K-major
    b = f8(n, k, dtype="f8E4M3FN")  # X^T, K-major
    sa, a_deq, a_group = k_grouped_scale(a_scale, a, g)
    sb, b_deq, b_group = k_grouped_scale("block128x128" if b_scale == "block" else b_scale,
                                         b, g)
    group_factor = a_group * b_group
    offsets = torch.tensor([0] + list(torch.tensor(K_SIZES).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    out = torch.full((g, m, n), float("nan"), device="cuda")
    kern(*([a, b, offsets] + [x for x in (sa, sb) if x is not None] + [out]))
    torch.cuda.synchronize()
    check_weight_gradient(out, a_deq, b_deq, group_factor)


K_GROUPED_CONSTANT_PLAN = ("#gg.kernel_plan<promotion = serial, scales = stages, "
                           "registers = [24, 240], staging = none, "
                           "column_scale_reads = at_issue, ring_stages = constant>")


@pytest.mark.parametrize("out_dtype", ["f32", "bf16"])
def test_k_grouped_constant_ring_stages(out_dtype):
    """ring_stages = constant over each group's K blocks, counted at run
    time: a tile's last turn ends on the stages the producer passes on
    empty (K_SIZES: 0 to 9 blocks over 4 stages, groups starting
    mid-block, an empty group's dW all zeros)."""
    g, m, n = len(K_SIZES), 200, 288
    k = sum(K_SIZES)
    kern = kernel(layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
                  dtype="f8E4M3FN", out_dtype=out_dtype, a_scale="block_mn",
                  b_scale="block1x128_mn", direct_stores=True,
                  config="#gg.config<block = [128, 144, 128], stages = 4, cluster = [1, 1], "
                         "sms = 132>",
                  kernel_plan=K_GROUPED_CONSTANT_PLAN)
    a = f8(m, k, dtype="f8E4M3FN")
    b = f8(n, k, dtype="f8E4M3FN")
    sa, a_deq, _ = k_grouped_scale("block_mn", a, g)
    sb, b_deq, _ = k_grouped_scale("block1x128_mn", b, g)
    offsets = torch.tensor([0] + list(torch.tensor(K_SIZES).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    out = torch.full((g, m, n), float("nan"), device="cuda",
                     dtype=torch.float32 if out_dtype == "f32" else torch.bfloat16)
    kern(a, b, offsets, sa, sb, out)
    torch.cuda.synchronize()
    check_weight_gradient(out, a_deq, b_deq)


def check_weight_gradient(out, a_deq, b_deq, group_factor=None):
    """dW[g] against the fp64 product over group g's tokens (K_SIZES); an
    empty group's dW must be all zeros."""
    start = 0
    for gi, size in enumerate(K_SIZES):
        if size == 0:
            assert (out[gi] == 0).all(), f"group {gi} has no tokens: dW must be zero"
        else:
            ref = a_deq[:, start:start + size] @ b_deq[:, start:start + size].T
            if group_factor is not None:
                ref = ref * group_factor[gi]
            err = rel_err(out[gi], ref)
            assert err < TOLERANCE, f"group {gi} ({size} tokens): rel err {err:.2e}"
        start += size


def test_k_grouped_scale_shape_names_k_blocks():
    kern = kernel(layout="k_grouped", num_groups=2, n=136, k=None, m=200, b_layout="nk",
                  dtype="f8E4M3FN", out_dtype="f32", a_scale="block", b_scale="block1x128")
    k = 272
    offsets = torch.tensor([0, 100, k], dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match=r"argument 4 \(b_scale\) dimension 1 must be "
                                         r"ceil\(K/128\) = 3 \(K = 272"):
        kern(f8(200, k, dtype="f8E4M3FN"), f8(136, k, dtype="f8E4M3FN"), offsets,
             positive(200, 3), positive(136, 2), torch.empty(2, 200, 136, device="cuda"))


def a_scale_window(kern):
    """The box of the A-scale tensor map where the stages carry A's scales
    (None where the warps copy them into slots)."""
    maps = [p["box"] for p in kern.info["params"]
            if p["kind"] == "tensor_map" and p["operand"] == "a_scale"]
    return maps[0] if maps else None


STAGED_K_MAJOR = "#gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>"


@pytest.mark.parametrize("k, kernel_plan", [(7168, None), (1024, STAGED_K_MAJOR)])
def test_k_major_a_scales_ride_the_stages_contiguous(k, kernel_plan):
    """K-major 1x128 scales of A whose rows are whole 16-byte units (56 K
    blocks by default, 8 where the plan says so) ride the stages as boxes
    four K blocks wide, each K block reading its own word (scales differ
    per block: a wrong word is a large error); ragged groups, empty and
    one-row ones, tails off every tile."""
    kern = kernel(layout="contiguous", num_groups=len(RAGGED), n=2112, k=k,
                  dtype="f8E4M3FN", a_dtype="f8E4M3FN", a_scale="block", b_scale="block",
                  kernel_plan=kernel_plan)
    assert a_scale_window(kern)[:2] == [4, 132]
    run_contiguous(RAGGED, n=2112, k=k, a_scale="block", b_scale="block",
                   kernel_plan=kernel_plan)


@pytest.mark.parametrize("k, kernel_plan", [(4096, None), (512, STAGED_K_MAJOR)])
def test_k_major_a_scales_ride_the_stages_masked(k, kernel_plan):
    run_masked("block", "block", k=k, kernel_plan=kernel_plan)


@pytest.mark.parametrize("a_scale, k, expected_m, gap", [
    ("block_mn", 400, None, False), ("block", 7168, None, False), ("block", 1024, None, False),
    ("block", 640, None, False), ("block_mn", 400, 1024, False), ("block_mn", 400, None, True)])
def test_padded_contiguous_deepgemm_layout(a_scale, k, expected_m, gap):
    """DeepGEMM's layout with A's scales M-major, K-major riding the stages
    (56 K blocks a row) and K-major in the warps' slots (8 K blocks: short
    rows, gg-plan-kernel's rule; 5: not whole 16-byte units), and walked N
    first (a hint of 1,024 rows on small FP8 weights); padding rows never
    written. With `gap`, a padding row in the middle of group 1's tile: its
    rows lead no more, and the tile is stored by thread, not through the
    TMA store pool the others take."""
    g, n, align = 3, 2112, 128
    sizes = [5, 128, 130]
    tags = []
    for gi, size in enumerate(sizes):
        tags += [gi] * size + [-1] * (-(-size // align) * align - size)
    if gap:
        tags[128 + 60] = -1
    m = len(tags)
    kern = kernel(layout="padded_contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
                  a_scale=a_scale, b_scale="block", expected_m=expected_m)
    rides = a_scale == "block_mn" or k == 7168
    assert (a_scale_window(kern) is not None) == rides
    assert "store_pool = array<i64: 128," in kern.asm["gg-config"]
    assert ("order = n_fastest" in kern.asm["gg-config"]) == (expected_m is not None)
    a = f8(m, k, dtype="f8E4M3FN")
    b = f8(g, n, k, dtype="f8E4M3FN")
    sa, fa = scales_a(a_scale, "padded_contiguous", g, m, k)
    sb, fb = scales_b("block", g, n, k)
    m_indices = torch.tensor(tags, dtype=torch.int32, device="cuda")
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, m_indices, sa, sb, out)
    torch.cuda.synchronize()
    tags_t = torch.tensor(tags, device="cuda")
    assert torch.isnan(out[tags_t < 0]).all(), "padding rows were written"
    a_deq = a.double() * fa.double()
    for gi in range(g):
        sel = tags_t == gi
        err = rel_err(out[sel], a_deq[sel] @ (b.double() * fb.double())[gi].T)
        assert err < TOLERANCE, f"group {gi}: rel err {err:.2e}"


def test_scale_shape_errors_name_the_argument():
    kern = kernel(layout="contiguous", num_groups=2, n=256, k=256, dtype="f8E4M3FN",
                  a_scale="block_mn", b_scale="block")
    a = f8(10, 256, dtype="f8E4M3FN")
    b = f8(2, 256, 256, dtype="f8E4M3FN")
    offsets = torch.tensor([0, 4, 10], dtype=torch.int32, device="cuda")
    out = torch.empty(10, 256, dtype=torch.bfloat16, device="cuda")
    sb = positive(2, 2, 2)
    with pytest.raises(ValueError, match=r"argument 3 \(a_scale\) dimension 1 must be "
                                         r"align4\(M\) = 12"):
        kern(a, b, offsets, positive(2, 10), sb, out)


def ue8m0(*shape):
    """Random UE8M0 exponents (scales 2^-7 .. 2^7) as uint8."""
    return torch.randint(120, 135, shape, dtype=torch.uint8, device="cuda")


def pack(exponents):
    """Four exponents per int32 along the last dimension, byte 0 first."""
    *lead, blocks = exponents.shape
    words = -(-blocks // 4)
    padded = torch.zeros(*lead, words * 4, dtype=torch.uint8, device="cuda")
    padded[..., :blocks] = exponents
    return padded.view(torch.int32)


def expand(exponents, bk, k):
    return torch.exp2(exponents.double() - 127).repeat_interleave(bk, dim=-1)[..., :k]


@pytest.mark.parametrize("bk", [32, 128])
def test_flashinfer_mxfp8_zero_padding(bk):
    """FlashInfer's moe_gemm_mxfp8_nt_groupwise: token-packed groups of any
    size (down to 1 row), A's scale rows padded to 4 per group."""
    from ggc import flashinfer
    sizes = [0, 1, 3, 4, 5, 127, 130]
    g, n, k = len(sizes), 256, 320
    cum_m = sum(sizes)
    a, b = f8(cum_m, k, dtype="f8E4M3FN"), f8(g, n, k, dtype="f8E4M3FN")
    blocks = -(-k // bk)
    m_padded = (cum_m + 3 * g) // 4 * 4
    ea = ue8m0(m_padded, blocks)
    eb = ue8m0(g, n, blocks)
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    # f32 out: the check measures the kernel's arithmetic, not bf16 rounding
    # (2^-9 per element), which alone nears 2e-3 on a group of 4 rows.
    out = flashinfer.moe_gemm_mxfp8_nt_groupwise(a, b, pack(ea), pack(eb), offsets,
                                                 scale_granularity_mnk=(1, 1, bk),
                                                 out_dtype=torch.float32)
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            base = (start + 3 * gi) // 4 * 4  # the group's first scale row
            rows = a[start:start + size].double() * expand(ea[base:base + size], bk, k)
            ref = rows @ (b[gi].double() * expand(eb[gi], bk, k)).T
            err = rel_err(out[start:start + size], ref)
            assert err < TOLERANCE, f"group {gi} ({size} rows): rel err {err:.2e}"
        start += size


@pytest.mark.parametrize("config", [None, SPLIT_DECODE])
def test_mx_masked(config):
    g, m_max, n, k = 3, 64, 128, 256
    counts = [64, 5, 0]
    kern = kernel(layout="masked", num_groups=g, n=n, k=k, m=m_max, dtype="f8E4M3FN",
                  a_scale="mx32", b_scale="mx32", out_dtype="f32", config=config)
    a, b = f8(g, m_max, k, dtype="f8E4M3FN"), f8(g, n, k, dtype="f8E4M3FN")
    ea, eb = ue8m0(g, m_max, k // 32), ue8m0(g, n, k // 32)
    out = torch.full((g, m_max, n), float("nan"), dtype=torch.float32, device="cuda")
    kern(a, b, torch.tensor(counts, dtype=torch.int32, device="cuda"), pack(ea), pack(eb),
         out)
    torch.cuda.synchronize()
    for gi, count in enumerate(counts):
        if count:
            ref = (a[gi, :count].double() * expand(ea[gi, :count], 32, k)) @ \
                  (b[gi].double() * expand(eb[gi], 32, k)).T
            assert rel_err(out[gi, :count], ref) < TOLERANCE
        assert torch.isnan(out[gi, count:]).all()


@pytest.mark.parametrize("bk", [32, 128])
def test_k_grouped_mx_weight_gradient(bk):
    """MX scales on the weight gradient: UE8M0 exponents per row of A and per
    column of B over the concatenated tokens (K), four per i32; groups start
    anywhere, so a 32- or 128-token block (and its word) may span two."""
    g, m, n = len(K_SIZES), 200, 136
    k = sum(K_SIZES)
    kern = kernel(layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
                  dtype="f8E4M3FN", out_dtype="f32", a_scale=f"mx{bk}", b_scale=f"mx{bk}")
    a, b = f8(m, k, dtype="f8E4M3FN"), f8(n, k, dtype="f8E4M3FN")
    ea, eb = ue8m0(m, -(-k // bk)), ue8m0(n, -(-k // bk))
    offsets = torch.tensor([0] + list(torch.tensor(K_SIZES).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    out = torch.full((g, m, n), float("nan"), device="cuda")
    kern(a, b, offsets, pack(ea), pack(eb), out)
    torch.cuda.synchronize()
    check_weight_gradient(out, a.double() * expand(ea, bk, k), b.double() * expand(eb, bk, k))
    from ggc import ops
    via_ops = ops.grouped_gemm(a, b, k_offsets=offsets, k_major=True, a_scale=pack(ea),
                               b_scale=pack(eb), a_scale_kind=f"mx{bk}",
                               b_scale_kind=f"mx{bk}")
    assert torch.equal(via_ops, out)


def test_flashinfer_rejects_other_granularities():
    from ggc import flashinfer
    with pytest.raises(ValueError, match=r"scale_granularity_mnk must be \(1, 1, 32\) or "
                                         r"\(1, 1, 128\)"):
        flashinfer.moe_gemm_mxfp8_nt_groupwise(None, None, None, None, None,
                                               scale_granularity_mnk=(1, 1, 64))
