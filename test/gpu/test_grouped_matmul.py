"""Numerics of ggc's grouped GEMM kernels on the GPU.

Every check draws fresh random inputs, poisons the output with NaN, and
compares each group's valid rows with an fp64 reference by relative norm
error; rows outside every group must still hold the poison.
"""

import functools
import re

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import ir  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

TORCH_TYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
TOLERANCE = {"bf16": 1e-2, "f16": 1e-2, "f32": 1e-3}  # f32 runs as tf32
RAGGED = [0, 1, 7, 63, 64, 65, 127, 128, 129, 1100]


@functools.lru_cache(maxsize=None)
def kernel(target, **spec):
    return ggc.Kernel(ir.grouped_matmul("k", **spec), target=target)


def cached_kernel(**spec):
    """The kernel for ggc's current target (test_sm80_path.py sets sm_80)."""
    return kernel(ggc.get_target(),
                  **{k: (tuple(map(tuple, v)) if k == "cols" else
                         tuple(v) if isinstance(v, list) else v)
                     for k, v in spec.items()})


def randn(*shape, dtype):
    # Scaled so that products stay well inside bf16/f16 range for any K.
    return (torch.randn(*shape, device="cuda") / 4).to(dtype)


def rel_err(out, ref):
    out = out.double()
    assert torch.isfinite(out).all(), "a valid row holds NaN/Inf: not written or wrong"
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def weights(g, n, k, dtype, b_layout):
    """B as the kernel takes it, and as [G, N, K] for the reference."""
    if b_layout == "nk":
        b = randn(g, n, k, dtype=dtype)
        return b, b
    b = randn(g, k, n, dtype=dtype)
    return b, b.transpose(1, 2)


def check_contiguous(sizes, n, k, dtype, offsets_dtype="i32", b_layout="nk",
                     direct_stores=False, config=None, fp32=False, **plan):
    """`fp32`: f32 operands without `tf32`, to f32 accuracy (3xTF32),
    within 1e-4 of fp64 where one TF32 product is off by ~1e-3."""
    g = len(sizes)
    m = sum(sizes)
    tolerance = 1e-4 if fp32 else TOLERANCE[dtype]
    kern = cached_kernel(layout="contiguous", num_groups=g, n=n, k=k, dtype=dtype,
                         out_dtype=dtype, tf32=dtype == "f32" and not fp32,
                         offsets_dtype=offsets_dtype,
                         b_layout=b_layout, direct_stores=direct_stores, config=config,
                         **plan)
    t = TORCH_TYPES[dtype]
    a = randn(m + 3, k, dtype=t)[:m]  # rows past M exist in memory, never read
    a = a.contiguous()
    b_arg, b = weights(g, n, k, t, b_layout)
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)),
                           dtype=torch.int32 if offsets_dtype == "i32" else torch.int64,
                           device="cuda")
    out = torch.full((m, n), float("nan"), dtype=t, device="cuda")
    kern(a, b_arg, offsets, out)
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            ref = a[start:start + size].double() @ b[gi].double().T
            err = rel_err(out[start:start + size], ref)
            assert err < tolerance, f"group {gi} ({size} rows): rel err {err:.2e}"
        start += size


def check_fp32(sizes, n, k, b_layout="nk"):
    check_contiguous(sizes, n, k, "f32", b_layout=b_layout, fp32=True)


@pytest.mark.parametrize("b_layout", ["nk", "kn"])
def test_true_fp32_within_1e4(b_layout):
    check_fp32(RAGGED, n=200, k=1000, b_layout=b_layout)


# tf32 wgmma reads B only along K: with B as [G, K, N], f32 runs on a
# transposed copy made in shared memory.
LAYOUT_CASES = [("bf16", "nk"), ("f16", "nk"), ("f32", "nk"), ("bf16", "kn"),
                ("f16", "kn"), ("f32", "kn")]


@pytest.mark.parametrize("dtype, b_layout", LAYOUT_CASES)
def test_contiguous_ragged_groups(dtype, b_layout):
    check_contiguous(RAGGED, n=200, k=136 if dtype != "f32" else 132, dtype=dtype,
                     b_layout=b_layout)


# Three and four consumer warpgroups: setmaxnreg must ask for no more
# registers than the CTA holds (a larger request hangs), and with block M
# 192 the store pool halves from 128, so residual rows are still exact.
@pytest.mark.parametrize("block_m, direct_stores", [(192, False), (192, True), (256, False)])
def test_contiguous_three_and_four_consumer_warpgroups(block_m, direct_stores):
    sizes = RAGGED + [191, 192, 193, 255, 256, 257, 383]
    check_contiguous(sizes, n=200, k=136, dtype="bf16", direct_stores=direct_stores,
                     config=f"#gg.config<block = [{block_m}, 128, 64], stages = 0, "
                            "cluster = [1, 1], sms = 132>")


# The other choices of gg-schedule-groups (N blocks first) and
# gg-eliminate-padding (warpgroups with only padding rows skip their wgmma,
# the default here, where K is short, or every warpgroup computes) are as
# exact as the defaults, at 2, 3 and 4 consumer warpgroups.
# gg-plan-overfetch's whole-tile loads and coarser granules of partial
# A loads, too.
@pytest.mark.parametrize("tile_order, idle_warpgroups, block_m, overfetch_rows",
                         [("n_fastest", None, 128, None), (None, "skip", 128, None),
                          (None, "skip", 192, None), ("n_fastest", "skip", 256, None),
                          (None, None, 128, 127), (None, None, 192, 191),
                          (None, "skip", 256, 31), (None, "compute", 128, None)])
def test_contiguous_schedule_and_padding_choices(tile_order, idle_warpgroups, block_m,
                                                 overfetch_rows):
    sizes = RAGGED + [191, 193, 255, 257]
    check_contiguous(sizes, n=200, k=136, dtype="bf16", tile_order=tile_order,
                     idle_warpgroups=idle_warpgroups, overfetch_rows=overfetch_rows,
                     config=f"#gg.config<block = [{block_m}, 128, 64], stages = 0, "
                            "cluster = [1, 1], sms = 132>")


# gg-schedule-groups' M bands: a group taller than the band is walked band
# by band, the last band shorter when the band does not divide the group's
# M blocks; clusters of two band units of two M blocks. A tile skipped
# leaves NaN rows; every tile must be computed.
@pytest.mark.parametrize("m_band, cluster", [(1, 1), (2, 1), (3, 1), (5, 1), (12, 1),
                                             (3, 2), (1, 2)])
def test_contiguous_m_bands(m_band, cluster):
    sizes = RAGGED + [2000, 1537, 640, 1]
    check_contiguous(sizes, n=520, k=136, dtype="bf16", m_band=m_band,
                     config="#gg.config<block = [128, 128, 64], stages = 0, "
                            f"cluster = [{cluster}, 1], sms = 132>")


# expected_m of 2,048 rows or more: gg-select-config keeps 128x256 tiles
# for contiguous groups, walked in bands of 19 M blocks; tall and ragged
# groups, empty and 1-row ones among them.
def test_contiguous_tall_group_hint():
    check_contiguous([0, 1, 2047, 2049, 4500, 130, 7, 0], n=512, k=136, dtype="bf16",
                     expected_m=2048)


# expected_m of at most 64 rows (a MoE decode step): 64x64 tiles over
# groups of a few rows, some empty, some past the hint.
def test_contiguous_decode_hint():
    check_contiguous([0, 1, 3, 0, 64, 65, 2, 0, 130], n=576, k=136, dtype="bf16",
                     expected_m=4)


# split_n = 2: two consumer warpgroups per 64 rows, each on half of the
# columns (64-row tiles keep two warpgroups on the tensor cores).
@pytest.mark.parametrize("block, direct_stores, b_layout", [
    ((64, 256, 64), False, "nk"), ((64, 256, 64), True, "kn"), ((128, 128, 64), False, "nk")])
def test_contiguous_split_n(block, direct_stores, b_layout):
    bm, bn, bk = block
    check_contiguous(RAGGED + [191, 257], n=200 if bn == 128 else 512, k=136, dtype="bf16",
                     direct_stores=direct_stores, b_layout=b_layout,
                     config=f"#gg.config<block = [{bm}, {bn}, {bk}], stages = 0, "
                            "cluster = [1, 1], sms = 132, split_n = 2>")


def test_contiguous_per_thread_stores():
    # The store pool is the default; per-thread stores stay correct too.
    check_contiguous(RAGGED, n=200, k=136, dtype="bf16", direct_stores=True)


def test_contiguous_kn_model_shape():
    check_contiguous([700, 0, 1, 3000], n=2048, k=1024, dtype="bf16", b_layout="kn")


def test_contiguous_single_group_and_i64_offsets():
    check_contiguous([1000], n=256, k=512, dtype="bf16", offsets_dtype="i64")


def test_contiguous_many_groups_with_empty_ones():
    gen = torch.Generator().manual_seed(1)
    sizes = torch.randint(0, 40, (256,), generator=gen)
    sizes[::7] = 0
    check_contiguous(sizes.tolist(), n=128, k=64, dtype="bf16")


def test_contiguous_model_shape():
    gen = torch.Generator().manual_seed(2)
    sizes = torch.multinomial(torch.ones(8), 4096, replacement=True, generator=gen)
    check_contiguous(torch.bincount(sizes, minlength=8).tolist(), n=4096, k=7168,
                     dtype="bf16")


def test_contiguous_rows_past_the_last_offset_are_not_written():
    sizes = [5, 0, 70]
    g, n, k = 3, 64, 64
    kern = cached_kernel(layout="contiguous", num_groups=g, n=n, k=k)
    m = 100  # 25 rows after offsets[-1] = 75 belong to no group
    a = randn(m, k, dtype=torch.bfloat16)
    b = randn(g, n, k, dtype=torch.bfloat16)
    offsets = torch.tensor([0, 5, 5, 75], dtype=torch.int32, device="cuda")
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, offsets, out)
    torch.cuda.synchronize()
    assert torch.isnan(out[75:]).all()
    assert torch.isfinite(out[:75]).all()


@pytest.mark.parametrize("dtype, b_layout", LAYOUT_CASES)
def test_masked_uneven_counts(dtype, b_layout):
    g, m_max, n, k = 6, 300, 200, 136 if dtype != "f32" else 132
    counts = [0, 1, 64, 129, 300, 257]
    kern = cached_kernel(layout="masked", num_groups=g, n=n, k=k, m=m_max, dtype=dtype,
                         out_dtype=dtype, tf32=dtype == "f32", b_layout=b_layout)
    t = TORCH_TYPES[dtype]
    a = randn(g, m_max, k, dtype=t)
    b_arg, b = weights(g, n, k, t, b_layout)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    out = torch.full((g, m_max, n), float("nan"), dtype=t, device="cuda")
    kern(a, b_arg, masked_m, out)
    torch.cuda.synchronize()
    for gi, count in enumerate(counts):
        if count:
            ref = a[gi, :count].double() @ b[gi].double().T
            err = rel_err(out[gi, :count], ref)
            assert err < TOLERANCE[dtype], f"group {gi}: rel err {err:.2e}"
        assert torch.isnan(out[gi, count:]).all(), f"group {gi}: rows past masked_m written"


# gg's group_reads = shared: the walk reads the counts or offsets from a
# table the CTA fills at its entry. More groups than the CTA has threads
# (each thread copies two entries or one), empty, 1-row and ragged groups,
# counts past M clamped; a tile skipped or a row past a count written
# shows as NaN.
@pytest.mark.parametrize("offsets_dtype", ["i32", "i64"])
def test_contiguous_group_table(offsets_dtype):
    gen = torch.Generator().manual_seed(3)
    sizes = torch.randint(0, 300, (500,), generator=gen)
    sizes[::7] = 0
    sizes[1::11] = 1
    check_contiguous(sizes.tolist(), n=200, k=136, dtype="bf16",
                     offsets_dtype=offsets_dtype, group_reads="shared")


def test_masked_group_table():
    g, m_max, n, k = 450, 130, 72, 64
    counts = torch.randint(0, m_max + 1, (g,))
    counts[::5] = 0
    counts[1::9] = 1
    counts[2] = 1000  # clamped to M
    kern = cached_kernel(layout="masked", num_groups=g, n=n, k=k, m=m_max,
                         group_reads="shared")
    a = randn(g, m_max, k, dtype=torch.bfloat16)
    b = randn(g, n, k, dtype=torch.bfloat16)
    out = torch.full((g, m_max, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, counts.to(torch.int32).cuda(), out)
    torch.cuda.synchronize()
    for gi, count in enumerate(counts.clamp(max=m_max).tolist()):
        if count:
            err = rel_err(out[gi, :count], a[gi, :count].double() @ b[gi].double().T)
            assert err < TOLERANCE["bf16"], f"group {gi}: rel err {err:.2e}"
        assert torch.isnan(out[gi, count:]).all(), f"group {gi}: rows past masked_m written"


def test_masked_counts_beyond_m_max_are_clamped():
    g, m_max, n, k = 2, 64, 64, 64
    kern = cached_kernel(layout="masked", num_groups=g, n=n, k=k, m=m_max)
    a = randn(g, m_max, k, dtype=torch.bfloat16)
    b = randn(g, n, k, dtype=torch.bfloat16)
    masked_m = torch.tensor([1000, -5], dtype=torch.int32, device="cuda")
    guard = torch.full((3, m_max, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    out = guard[:2]
    kern(a, b, masked_m, out)
    torch.cuda.synchronize()
    assert rel_err(out[0], a[0].double() @ b[0].double().T) < 1e-2
    assert torch.isnan(out[1]).all() and torch.isnan(guard[2]).all()


@pytest.mark.parametrize("dtype, b_layout", LAYOUT_CASES)
def test_padded_contiguous_skips_padding_rows(dtype, b_layout):
    check_padded_contiguous([3, 0, 200, 128], dtype, b_layout)


# M bands over A's whole row space (padded_contiguous has no per-group
# walk): 15 M blocks in bands of 4, the last one of 3.
def test_padded_contiguous_m_bands():
    check_padded_contiguous([3, 0, 200, 128, 1300], "bf16", "nk", m_band=4)


# A tile stores its group's rows through the TMA store pool where they are
# its leading rows, else each by its thread (ggk.store_tile's `tagged`): a
# tile with a gap in its group's rows, one whose later rows are another
# group's, tiles of leading rows and a last partial tile, both ways.
@pytest.mark.parametrize("dtype, direct_stores", [
    ("bf16", False), ("bf16", True), ("f32", False)])
def test_padded_contiguous_rows_not_a_prefix(dtype, direct_stores):
    g, n, k = 4, 264, 136 if dtype != "f32" else 132
    tags = ([0] * 10 + [-1] * 5 + [0] * 20 + [-1] * 29 + [0] * 3 + [-1] * 61
            + [1] * 128 + [2] * 70 + [-1] * 58 + [1] * 5 + [3] * 123
            + [3] * 64 + [2] * 1 + [-1] * 20 + [2] * 7)
    kern = cached_kernel(layout="padded_contiguous", num_groups=g, n=n, k=k,
                         dtype=dtype, out_dtype=dtype, tf32=dtype == "f32",
                         direct_stores=direct_stores)
    assert ("store_pool = array<i64>" in kern.asm["gg-config"]) == direct_stores
    block_m = int(re.search(r"block = \[(\d+)", kern.asm["gg-config"]).group(1))
    m, t = len(tags), TORCH_TYPES[dtype]
    a = randn(m, k, dtype=t)
    b = randn(g, n, k, dtype=t)
    out = torch.full((m, n), float("nan"), dtype=t, device="cuda")
    kern(a, b, torch.tensor(tags, dtype=torch.int32, device="cuda"), out)
    torch.cuda.synchronize()
    # A row is stored where its tag is its tile's group (its first row's).
    tile_group = [tags[r - r % block_m] for r in range(m)]
    stored = torch.tensor([tag >= 0 and tag == tile_group[r] for r, tag in enumerate(tags)],
                          device="cuda")
    assert torch.isnan(out[~stored]).all(), "rows outside their tile's group were written"
    tags_t = torch.tensor(tags, device="cuda")
    for gi in range(g):
        sel = stored & (tags_t == gi)
        err = rel_err(out[sel], a[sel].double() @ b[gi].double().T)
        assert err < TOLERANCE[dtype], f"group {gi}: rel err {err:.2e}"


def check_padded_contiguous(sizes, dtype, b_layout, **plan):
    g, n, k, align = len(sizes), 200, 136 if dtype != "f32" else 132, 128
    tags = []
    for gi, size in enumerate(sizes):
        padded = -(-size // align) * align
        tags += [gi] * size + [-1] * (padded - size)
    m = len(tags)
    kern = cached_kernel(layout="padded_contiguous", num_groups=g, n=n, k=k,
                         b_layout=b_layout, dtype=dtype, out_dtype=dtype,
                         tf32=dtype == "f32", **plan)
    t = TORCH_TYPES[dtype]
    a = randn(m, k, dtype=t)
    b_arg, b = weights(g, n, k, t, b_layout)
    m_indices = torch.tensor(tags, dtype=torch.int32, device="cuda")
    out = torch.full((m, n), float("nan"), dtype=t, device="cuda")
    kern(a, b_arg, m_indices, out)
    torch.cuda.synchronize()
    tags_t = torch.tensor(tags, device="cuda")
    assert torch.isnan(out[tags_t < 0]).all(), "padding rows were written"
    for gi in range(g):
        sel = tags_t == gi
        if sel.any():
            err = rel_err(out[sel], a[sel].double() @ b[gi].double().T)
            assert err < TOLERANCE[dtype], f"group {gi}: rel err {err:.2e}"


def test_epilogue_routing_bias_scalar_silu():
    sizes = [0, 33, 130, 1]
    g, n, k = len(sizes), 96, 128
    m = sum(sizes)
    kern = cached_kernel(
        layout="contiguous", num_groups=g, n=n, k=k, rows=["f32"], cols=[[g, n]],
        group_scalars=1, epilogue="""
            %x = arith.mulf %acc, %r0 : f32
            %y = arith.addf %x, %c0 : f32
            %z = gg.silu %y : f32
            %w = arith.mulf %z, %s0 : f32
            gg.yield %w : f32""")
    a = randn(m, k, dtype=torch.bfloat16)
    b = randn(g, n, k, dtype=torch.bfloat16)
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    weights = torch.rand(m, device="cuda")
    bias = torch.randn(g, n, device="cuda")
    scale = torch.rand(g, device="cuda") + 0.5
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, offsets, weights, bias, scale, out)
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            acc = a[start:start + size].double() @ b[gi].double().T
            y = acc * weights[start:start + size, None].double() + bias[gi].double()
            ref = torch.nn.functional.silu(y) * scale[gi].double()
            err = rel_err(out[start:start + size], ref)
            assert err < 1e-2, f"group {gi}: rel err {err:.2e}"
        start += size


def test_bad_arguments_are_rejected_before_launch():
    kern = cached_kernel(layout="contiguous", num_groups=2, n=64, k=64)
    a = randn(10, 64, dtype=torch.bfloat16)
    b = randn(2, 64, 64, dtype=torch.bfloat16)
    offsets = torch.tensor([0, 4, 10], dtype=torch.int32, device="cuda")
    out = torch.empty(10, 64, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(TypeError, match=r"argument 1 \(b\) must have dtype bf16"):
        kern(a, b.half(), offsets, out)
    with pytest.raises(ValueError, match=r"argument 3 \(out\) dimension 0 must be M = 10 "
                                         r"\(M = 10, set by argument 0 \(a\)\), got 9"):
        kern(a, b, offsets, out[:9])
    with pytest.raises(ValueError, match=r"argument 1 \(b\) must have shape \[2, 64, 64\]"):
        kern(a, b[:, :32], offsets, out)
    with pytest.raises(ValueError, match="must be contiguous"):
        kern(a, b.transpose(1, 2), offsets, out)
    with pytest.raises(ValueError, match="must be on a CUDA device, but is on cpu"):
        kern(a.cpu(), b, offsets, out)


@pytest.mark.parametrize("out_dtype, layout, dtype, out_layout", [
    ("f32", "kn", "bf16", "mn"), ("bf16", "kn", "bf16", "mn"), ("f32", "nk", "bf16", "mn"),
    ("bf16", "nk", "f16", "mn"), ("f16", "kn", "f16", "mn"), ("f32", "nk", "f32", "mn"),
    ("f32", "kn", "f32", "mn"), ("f32", "nk", "f8E4M3FN", "mn"),
    ("f32", "kn", "bf16", "nm"), ("bf16", "nk", "f16", "nm"), ("f32", "nk", "f8E4M3FN", "nm")])
def test_k_grouped_weight_gradient(out_dtype, layout, dtype, out_layout):
    """dW[g] = dY_g^T X_g with groups splitting the tokens (K); empty groups
    give zeros, and each group's last K block ends mid-tile. Token-major
    operands ("kn") lose whole rows past the group, K-major ones ("nk", the
    only form f8 has) the swizzled chunks past it; tf32 token-major tiles
    are transposed in shared memory for wgmma."""
    # 1696 tokens in all: K-major rows of K elements must be 16-byte
    # multiples for TMA (f8: K a multiple of 16).
    k_sizes = [0, 1, 7, 63, 64, 65, 127, 128, 129, 1112]
    g, m, n = len(k_sizes), 200, 136
    kern = cached_kernel(layout="k_grouped", num_groups=g, n=n, k=None, m=m,
                         b_layout=layout, out_dtype=out_dtype, dtype=dtype,
                         tf32=dtype == "f32", out_layout=out_layout)
    k_total = sum(k_sizes)
    if dtype == "f8E4M3FN":
        dy = (torch.randn(k_total, m, device="cuda") * 2).to(torch.float8_e4m3fn)
        x = (torch.randn(k_total, n, device="cuda") * 2).to(torch.float8_e4m3fn)
    else:
        dy = randn(k_total, m, dtype=TORCH_TYPES[dtype])
        x = randn(k_total, n, dtype=TORCH_TYPES[dtype])
    offsets = torch.tensor([0] + list(torch.tensor(k_sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    shape = (g, m, n) if out_layout == "mn" else (g, n, m)
    out = torch.full(shape, float("nan"), dtype=TORCH_TYPES[out_dtype], device="cuda")
    if layout == "kn":
        kern(dy, x, offsets, out)
    else:  # K-major: [M, K] and [N, K]
        kern(dy.T.contiguous(), x.T.contiguous(), offsets, out)
    torch.cuda.synchronize()
    if out_layout == "nm":  # [G, N, M]: compare as [G, M, N]
        out = out.transpose(1, 2)
    start = 0
    for gi, size in enumerate(k_sizes):
        if size == 0:
            assert (out[gi] == 0).all(), f"group {gi} has no tokens: dW must be zero"
        else:
            ref = dy[start:start + size].double().T @ x[start:start + size].double()
            err = rel_err(out[gi], ref)
            bound = TOLERANCE.get(dtype, 1e-2)
            assert err < bound, f"group {gi} ({size} tokens): rel err {err:.2e}"
        start += size


def test_rows_tma_cannot_read_are_rejected_before_launch():
    kern = cached_kernel(layout="k_grouped", num_groups=2, n=136, k=None, m=200,
                         b_layout="nk", out_dtype="f32", dtype="bf16")
    offsets = torch.tensor([0, 3, 1684], dtype=torch.int32, device="cuda")
    out = torch.empty(2, 200, 136, device="cuda")
    with pytest.raises(ValueError, match=r"argument 0 \(a\) has rows of 3368 bytes; "
                                         r"(TMA|cp.async) needs a multiple of 16"):
        kern(randn(200, 1684, dtype=torch.bfloat16), randn(136, 1684, dtype=torch.bfloat16),
             offsets, out)


CLUSTER = "#gg.config<block = [128, {bn}, {bk}], stages = {stages}, cluster = [2, 1], sms = 132>"


@pytest.mark.parametrize("odd_block_a", [None, "multicast"])
@pytest.mark.parametrize("b_layout", ["nk", "kn"])
@pytest.mark.parametrize("n,bn", [(512, 256), (384, 128)])
def test_cluster_pairs_share_b_by_multicast(b_layout, n, bn, odd_block_a):
    """Clusters of 2 CTAs: each loads half of the B tile and multicasts it;
    ragged groups give odd M-block counts, whose last M block the pair
    walks two N blocks at a time, each CTA loading its own B (with 3 N
    blocks, the last such unit pairs a tile with one that has no rows);
    with odd_block_a = multicast rank 0 loads that M block's rows of A
    into both CTAs."""
    sizes = [0, 1, 129, 300, 64, 1100]
    g, k = len(sizes), 192
    m = sum(sizes)
    kern = cached_kernel(layout="contiguous", num_groups=g, n=n, k=k, b_layout=b_layout,
                         config=CLUSTER.format(bn=bn, bk=64, stages=3),
                         odd_block_a=odd_block_a)
    assert kern.info["cluster"] == 2
    a = randn(m, k, dtype=torch.bfloat16)
    b_arg, b = weights(g, n, k, torch.bfloat16, b_layout)
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                           device="cuda")
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b_arg, offsets, out)
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            err = rel_err(out[start:start + size], a[start:start + size].double()
                          @ b[gi].double().T)
            assert err < 1e-2, f"group {gi}: rel err {err:.2e}"
        start += size


@pytest.mark.parametrize("config,n,schedule", [
    (CLUSTER.format(bn=128, bk=128, stages=4), 512, {}),
    # 64-row tiles split between two warpgroups, paired along M (decode).
    ("#gg.config<block = [64, 256, 128], stages = 0, cluster = [2, 1], sms = 132, "
     "split_n = 2>", 512, {}),
    # Odd N blocks (3): the last unit of an odd M block pairs a tile with
    # one past the group's end.
    (CLUSTER.format(bn=128, bk=128, stages=4), 384, {}),
    # 192-column tiles, the last of 3 ragged (64 columns): five stages and
    # per-thread stores (gg-tma-store-pool's maskedF8KeepsStages)...
    (CLUSTER.format(bn=192, bk=128, stages=0), 448, {}),
    # ... and with four stages, which leave room for the staged tile, the
    # TMA store pool.
    (CLUSTER.format(bn=192, bk=128, stages=4), 448, {}),
    # 192-column tiles with the counts read from a table in shared memory.
    (CLUSTER.format(bn=192, bk=128, stages=0), 448, {"group_reads": "shared"}),
    # A group's odd last M block's rows loaded once, by rank 0, for both
    # CTAs (odd_block_a = multicast), on whole and partial tiles, and with
    # odd N blocks.
    (CLUSTER.format(bn=192, bk=128, stages=0), 448, {"odd_block_a": "multicast"}),
    (CLUSTER.format(bn=128, bk=128, stages=4), 384, {"odd_block_a": "multicast"})])
def test_cluster_masked_fp8_block_scaled(config, n, schedule):
    """Pairs walk M blocks two by two (sharing B) and a group's odd last M
    block two N blocks at a time (each loading its own B): counts of 1, 2
    and 3 M blocks, an empty group, a full one."""
    g, m_max, k = 6, 384, 512
    counts = [256, 129, 0, 3, 384, 300]
    kern = cached_kernel(layout="masked", num_groups=g, n=n, k=k, m=m_max, dtype="f8E4M3FN",
                         a_scale="block_mn", b_scale="block", config=config,
                         **schedule)
    a = (torch.randn(g, m_max, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    sa = torch.rand(g, k // 128, m_max, device="cuda") + 0.5
    sb = torch.rand(g, -(-n // 128), k // 128, device="cuda") + 0.5
    out = torch.full((g, m_max, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern(a, b, torch.tensor(counts, dtype=torch.int32, device="cuda"), sa, sb, out)
    torch.cuda.synchronize()
    a_deq = a.double() * sa.transpose(1, 2).double().repeat_interleave(128, dim=2)
    b_deq = b.double() * sb.double().repeat_interleave(128, 1)[:, :n].repeat_interleave(128, 2)
    for gi, c in enumerate(counts):
        if c:
            assert rel_err(out[gi, :c], a_deq[gi, :c] @ b_deq[gi].T) < 2e-3
        assert torch.isnan(out[gi, c:]).all()
