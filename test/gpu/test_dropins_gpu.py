"""The DeepGEMM 2.x and FlashInfer drop-ins on the GPU (ggc.deepgemm,
ggc.flashinfer), against an fp64 reference computed from the documented
semantics, and, where `import deep_gemm` works (DeepGEMM 2.6.1 built by
../shared/peers/setup-on-device.sh, /tmp/peers/DeepGEMM on PYTHONPATH),
against deep_gemm itself on the same inputs.

Fresh random inputs per test; ragged groups with empty ones; outputs
poisoned with NaN where ggc promises not to write (DeepGEMM leaves those
rows unspecified, so the comparisons with it read only the groups' rows).
"""

import pytest

torch = pytest.importorskip("torch")

import ggc.deepgemm as dg  # noqa: E402
from ggc import ops  # noqa: E402
from ggc.flashinfer import SegmentGEMMWrapper  # noqa: E402
from deep_gemm_peer import import_deep_gemm  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

F8 = torch.float8_e4m3fn
# f8 products with bf16 out, against fp64 of the dequantised inputs: the
# kernel's arithmetic (two-level f32 accumulation, under 1e-4) plus the
# output's rounding, which moves y by at most u = 2^-8 of |y| elementwise
# (so of ||y|| in norm). A 1-row group's 320 outputs measured 2.03e-3 once
# with its rounding alone: 2e-3 was a statistical bound, this is a rigorous
# one (as test_stress.py's).
TOL_F8 = 1e-4 + 2.0 ** -8
TOL_BF16 = 1e-2  # bf16 out rounding (2^-9 per element) on short groups
TOL_PEER = 3e-3  # ggc against deep_gemm: two bf16 roundings of nearly equal f32 sums


DEEP_GEMM, WHY_NOT = import_deep_gemm()
needs_deep_gemm = pytest.mark.skipif(DEEP_GEMM is None, reason=WHY_NOT)


# ---------------------------------------------------------------------------
# Inputs and references
# ---------------------------------------------------------------------------

def f8(*shape):
    return (torch.randn(*shape, device="cuda") * 2).to(F8)


def positive(*shape):
    return torch.rand(*shape, device="cuda") + 0.5


def per_k_block(s, k, dim=-1):
    """Scales per 128-wide K block, expanded to K."""
    return s.double().repeat_interleave(128, dim=dim).narrow(dim, 0, k)


def weights_fp8(g, n, k):
    """w [G, N, K] e4m3, its 128x128 scales [G, ceil(N/128), ceil(K/128)],
    and w dequantised in fp64."""
    w, sw = f8(g, n, k), positive(g, -(-n // 128), -(-k // 128))
    full = sw.double().repeat_interleave(128, 1)[:, :n]
    return w, sw, w.double() * per_k_block(full, k)


def rel_err(out, ref):
    out = out.double()
    assert torch.isfinite(out).all(), "a group's row holds NaN/Inf: not written or wrong"
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def padded_m_indices(sizes, trailing=128):
    """DeepGEMM's contiguous layout: group g's rows, padded with -1 to a
    multiple of 128; a trailing all-padding block."""
    tags = []
    for g, size in enumerate(sizes):
        tags += [g] * size + [-1] * (-(-size // 128) * 128 - size)
    tags += [-1] * trailing
    return torch.tensor(tags, dtype=torch.int32, device="cuda")


def psum_ends(sizes):
    """DeepGEMM's psum layout: group g ends at align(end[g-1], 128) + size."""
    ends, end = [], 0
    for size in sizes:
        end = -(-end // 128) * 128 + size
        ends.append(end)
    return torch.tensor(ends, dtype=torch.int32, device="cuda")


def rows_of_psum(ends, m):
    tags = torch.full((m,), -1, dtype=torch.int32)
    start = 0
    for g, end in enumerate(ends.tolist()):
        tags[start:end] = g
        start = -(-end // 128) * 128
    return tags.cuda()


def check_rows(d, tags, x_deq, w_deq, tol):
    """Each group's rows against fp64; rows tagged -1 still NaN."""
    for g in range(w_deq.shape[0]):
        sel = tags == g
        if sel.any():
            err = rel_err(d[sel], x_deq[sel] @ w_deq[g].T)
            assert err < tol, f"group {g}: rel err {err:.2e}"
    assert torch.isnan(d[tags < 0]).all(), "rows outside every group were written"


SIZES = [0, 1, 127, 128, 129, 300]
N, K = 320, 640  # N ends inside a 128-column block of B's scales


def fp8_contiguous_inputs(tags, g, sfa_layout):
    m = tags.numel()
    x, sx = f8(m, K), positive(m, K // 128)
    w, sw, w_deq = weights_fp8(g, N, K)
    sx_arg = dg.get_mn_major_tma_aligned_tensor(sx) if sfa_layout == "mn_major" else sx
    return x, sx, sx_arg, w, sw, x.double() * per_k_block(sx, K), w_deq


# ---------------------------------------------------------------------------
# M-grouped FP8
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("sfa_layout", ["k_major", "mn_major"])
@pytest.mark.parametrize("sfb_layout", ["contiguous", "transposed"])
def test_fp8_contiguous_m_indices(sfa_layout, sfb_layout):
    tags = padded_m_indices(SIZES)
    x, sx, sx_arg, w, sw, x_deq, w_deq = fp8_contiguous_inputs(tags, len(SIZES), sfa_layout)
    sw_arg = sw if sfb_layout == "contiguous" else sw.mT.contiguous().mT
    d = torch.full((tags.numel(), N), float("nan"), dtype=torch.bfloat16, device="cuda")
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx_arg), (w, sw_arg), d, tags)
    torch.cuda.synchronize()
    check_rows(d, tags, x_deq, w_deq, TOL_F8)


@pytest.mark.parametrize("sfa_layout", ["k_major", "mn_major"])
def test_fp8_contiguous_repeated_calls_read_their_own_scales(sfa_layout):
    """Calls after the first of a signature take the fast path
    (ggc.deepgemm.fast), which for K-major scales of A copies each call's
    own into the MN-major layout: new values in the same tensors, and new
    tensors, must reach the kernel."""
    tags = padded_m_indices(SIZES)
    x, sx, sx_arg, w, sw, x_deq, w_deq = fp8_contiguous_inputs(tags, len(SIZES), sfa_layout)
    d = torch.empty((tags.numel(), N), dtype=torch.bfloat16, device="cuda")
    for round_ in range(3):
        if round_ == 1:  # the same tensors, new values
            sx.copy_(positive(*sx.shape))
            x.copy_(f8(*x.shape))
        elif round_ == 2:  # new tensors of the same signature
            x, sx, sx_arg, w, sw, x_deq, w_deq = fp8_contiguous_inputs(
                tags, len(SIZES), sfa_layout)
        if sfa_layout == "mn_major" and round_ == 1:
            sx_arg.copy_(sx)
        x_deq = x.double() * per_k_block(sx, K)
        d.fill_(float("nan"))
        dg.m_grouped_fp8_gemm_nt_contiguous((x, sx_arg), (w, sw), d, tags)
        torch.cuda.synchronize()
        check_rows(d, tags, x_deq, w_deq, TOL_F8)


@pytest.mark.parametrize("aligned", [True, False])
def test_ops_k_major_scales_of_a_any_alignment(aligned):
    """ggc.ops.grouped_gemm over DeepGEMM's padded layout with K-major scales
    of A (K = 1,024: rows of 8 K blocks, whole 16-byte units, which TMA
    boxes may carry), given as they are or as a view that does not start
    16-byte aligned (TMA's rule: copied, not refused), on repeated calls
    (the remembered plan's path) with new values each time."""
    k = 1024
    tags = padded_m_indices(SIZES)
    m, g = tags.numel(), len(SIZES)
    w, sw, w_deq = weights_fp8(g, N, k)
    x = f8(m, k)
    storage = positive(m * (k // 128) + 1)
    sx = (storage[:-1] if aligned else storage[1:]).view(m, k // 128)
    assert (sx.data_ptr() % 16 == 0) == aligned
    d = torch.empty((m, N), dtype=torch.bfloat16, device="cuda")
    for _ in range(3):
        sx.copy_(positive(*sx.shape))
        d.fill_(float("nan"))
        ops.grouped_gemm(x, w, m_indices=tags, a_scale=sx, a_scale_kind="block", b_scale=sw,
                         b_scale_kind="block", out=d)
        torch.cuda.synchronize()
        check_rows(d, tags, x.double() * per_k_block(sx, k), w_deq, TOL_F8)


def test_fp8_contiguous_psum_layout():
    sizes = [0, 5, 128, 129, 0, 77]
    ends = psum_ends(sizes)
    m = -(-ends[-1].item() // 128) * 128
    tags = rows_of_psum(ends, m)
    x, sx, _, w, sw, x_deq, w_deq = fp8_contiguous_inputs(tags, len(sizes), "k_major")
    d = torch.full((m, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d, ends, use_psum_layout=True,
                                        expected_m_for_psum_layout=100)
    torch.cuda.synchronize()
    check_rows(d, tags, x_deq, w_deq, TOL_F8)


def masked_fp8_inputs(g=4, m_max=256):
    x, sx = f8(g, m_max, K), positive(g, m_max, K // 128)
    w, sw, w_deq = weights_fp8(g, N, K)
    return x, sx, w, sw, x.double() * per_k_block(sx, K), w_deq


def check_masked(d, counts, x_deq, w_deq, tol):
    for g, count in enumerate(counts):
        if count:
            err = rel_err(d[g, :count], x_deq[g, :count] @ w_deq[g].T)
            assert err < tol, f"group {g}: rel err {err:.2e}"
        assert torch.isnan(d[g, count:]).all(), f"group {g}: rows past masked_m written"


@pytest.mark.parametrize("sfa_layout", ["k_major", "mn_major"])
def test_fp8_masked(sfa_layout):
    counts = [250, 0, 3, 130]  # M_max = 250: A's MN-major scales pad it to 252
    x, sx, w, sw, x_deq, w_deq = masked_fp8_inputs(m_max=250)
    sx_arg = dg.get_mn_major_tma_aligned_tensor(sx) if sfa_layout == "mn_major" else sx
    d = torch.full((4, 250, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    dg.m_grouped_fp8_gemm_nt_masked((x, sx_arg), (w, sw), d, masked_m, 97)
    torch.cuda.synchronize()
    check_masked(d, counts, x_deq, w_deq, TOL_F8)


def ue8m0_packed(*shape, gran_k, k, mn_major):
    """Random UE8M0 exponents (2^-7 .. 2^7) per row and gran_k block of K,
    packed four per int32 (byte 0 first), as DeepGEMM's sm100 takes them
    (MN-major when asked); and the factors expanded to K, in fp64."""
    blocks = -(-k // gran_k)
    e = torch.randint(120, 135, (*shape, -(-blocks // 4) * 4), dtype=torch.uint8,
                      device="cuda")
    words = e.view(torch.int32)
    if mn_major:
        words = words.mT.contiguous().mT
    factor = torch.exp2(e[..., :blocks].double() - 127)
    return words, factor.repeat_interleave(gran_k, dim=-1)[..., :k]


@pytest.mark.parametrize("gran_k", [32, 128])
def test_fp8_packed_ue8m0_masked_and_contiguous(gran_k):
    """sm100's packed UE8M0 scales, served as ggc's MX scales."""
    counts = [64, 5, 0]
    x, w = f8(3, 64, K), f8(3, N, K)
    sx, fx = ue8m0_packed(3, 64, gran_k=gran_k, k=K, mn_major=True)
    sw, fw = ue8m0_packed(3, N, gran_k=gran_k, k=K, mn_major=False)
    x_deq, w_deq = x.double() * fx, w.double() * fw
    d = torch.full((3, 64, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    dg.m_grouped_fp8_gemm_nt_masked((x, sx), (w, sw), d,
                                    torch.tensor(counts, dtype=torch.int32, device="cuda"),
                                    64, recipe=(1, 1, gran_k))
    torch.cuda.synchronize()
    check_masked(d, counts, x_deq, w_deq, TOL_F8)
    tags = padded_m_indices([64, 5, 0], trailing=0)
    rows = f8(tags.numel(), K)
    rows_sf, rows_f = ue8m0_packed(tags.numel(), gran_k=gran_k, k=K, mn_major=True)
    d2 = torch.full((tags.numel(), N), float("nan"), dtype=torch.bfloat16, device="cuda")
    dg.m_grouped_fp8_gemm_nt_contiguous((rows, rows_sf), (w, sw), d2, tags,
                                        recipe_a=(1, gran_k), recipe_b=(1, gran_k))
    torch.cuda.synchronize()
    check_rows(d2, tags, rows.double() * rows_f, w_deq, TOL_F8)


# ---------------------------------------------------------------------------
# M-grouped BF16
# ---------------------------------------------------------------------------

def bf16(*shape):
    return torch.randn(*shape, device="cuda").bfloat16()


@pytest.mark.parametrize("b_major", ["k", "mn"])
@pytest.mark.parametrize("psum", [False, True])
def test_bf16_contiguous(b_major, psum):
    if psum:
        ends = psum_ends(SIZES)
        m = -(-ends[-1].item() // 128) * 128
        tags, layout = rows_of_psum(ends, m), ends
    else:
        tags = padded_m_indices(SIZES)
        layout = tags
    a, b = bf16(tags.numel(), K), bf16(len(SIZES), N, K) / 8
    b_arg = b if b_major == "k" else b.mT.contiguous().mT
    d = torch.full((tags.numel(), N), float("nan"), dtype=torch.bfloat16, device="cuda")
    dg.m_grouped_bf16_gemm_nt_contiguous(a, b_arg, d, layout, use_psum_layout=psum)
    torch.cuda.synchronize()
    check_rows(d, tags, a.double(), b.double(), TOL_BF16)


def test_bf16_masked():
    counts = [256, 0, 3, 130]
    a, b = bf16(4, 256, K), bf16(4, N, K) / 8
    d = torch.full((4, 256, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    dg.m_grouped_bf16_gemm_nt_masked(a, b, d, torch.tensor(counts, dtype=torch.int32,
                                                           device="cuda"), 97)
    torch.cuda.synchronize()
    check_masked(d, counts, a.double(), b.double(), TOL_BF16)


# ---------------------------------------------------------------------------
# K-grouped (weight gradients)
# ---------------------------------------------------------------------------

KS = [0, 128, 384, 256, 128]  # multiples of 128, one group empty
M_W, N_W = 256, 192


def k_grouped_fp8_inputs():
    """tn operands: x [sum_k, M], y [sum_k, N] e4m3 with scales [sum_k/128,
    M or N]; the fp64 operands; and the nt form of the same values."""
    sum_k = sum(KS)
    x, y = f8(sum_k, M_W), f8(sum_k, N_W)
    sx, sy = positive(sum_k // 128, M_W), positive(sum_k // 128, N_W)
    x_deq, y_deq = x.double() * per_k_block(sx, sum_k, 0), y.double() * per_k_block(sy, sum_k, 0)

    def nt_blocks(t):  # per group, [rows, k_g] row-major, one after another
        starts = [sum(KS[:i]) for i in range(len(KS))]
        return torch.cat([t[s:s + k].T.float().flatten() for s, k in zip(starts, KS)]).to(F8)
    return (x, sx), (y, sy), (nt_blocks(x), sx.T), (nt_blocks(y), sy.T), x_deq, y_deq


def check_k_grouped(d, c, x_deq, y_deq, tol):
    start = 0
    for g, k in enumerate(KS):
        if k == 0:
            assert torch.equal(d[g], c[g]), f"group {g} has no tokens: d must be c"
        else:
            ref = x_deq[start:start + k].T @ y_deq[start:start + k]
            err = rel_err(d[g] - c[g], ref)
            assert err < tol, f"group {g}: rel err {err:.2e}"
        start += k


@pytest.mark.parametrize("form", ["tn", "nt"])
@pytest.mark.parametrize("c_is_d", [True, False])
def test_k_grouped_fp8(form, c_is_d):
    a_tn, b_tn, a_nt, b_nt, x_deq, y_deq = k_grouped_fp8_inputs()
    layout = torch.tensor(KS, dtype=torch.int32, device="cuda")
    c = torch.randn(len(KS), M_W, N_W, device="cuda") * 32
    c_orig = c.clone()
    d = c if c_is_d else torch.full_like(c, float("nan"))
    fn = dg.k_grouped_fp8_gemm_tn_contiguous if form == "tn" else \
        dg.k_grouped_fp8_gemm_nt_contiguous
    a, b = (a_tn, b_tn) if form == "tn" else (a_nt, b_nt)
    fn(a, b, d, KS, layout, c)
    torch.cuda.synchronize()
    check_k_grouped(d, c_orig, x_deq, y_deq, TOL_F8)


def test_k_grouped_bf16():
    sum_k = sum(KS)
    a, b = bf16(sum_k, M_W), bf16(sum_k, N_W)
    c = torch.randn(len(KS), M_W, N_W, device="cuda")
    c_orig = c.clone()
    dg.k_grouped_bf16_gemm_tn_contiguous(a, b, c, KS, torch.tensor(KS, dtype=torch.int32,
                                                                   device="cuda"), c)
    torch.cuda.synchronize()
    check_k_grouped(c, c_orig, a.double(), b.double(), 1e-3)  # f32 out


# ---------------------------------------------------------------------------
# FlashInfer's SegmentGEMMWrapper
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("column_major", [True, False])
@pytest.mark.parametrize("by", ["seg_lens", "seg_indptr"])
@pytest.mark.parametrize("indices", [None, "shuffled"])
def test_segment_gemm(column_major, by, indices):
    lens = [3, 0, 130, 1, 64]
    num_weights, d_in, d_out = 6, 256, 192
    x = torch.randn(sum(lens) + 5, d_in, device="cuda").half()  # 5 rows in no segment
    w = (torch.randn(num_weights, d_out, d_in, device="cuda") / 8).half()
    w_arg = w if column_major else w.transpose(1, 2).contiguous()
    seg_lens = torch.tensor(lens, dtype=torch.int64, device="cuda")
    seg_indptr = torch.cat([seg_lens.new_zeros(1), seg_lens.cumsum(0)])
    pick = [5, 0, 0, 2, 1] if indices else list(range(len(lens)))
    wrapper = SegmentGEMMWrapper(torch.empty(1 << 20, dtype=torch.int8, device="cuda"))
    kwargs = {by: seg_lens if by == "seg_lens" else seg_indptr}
    if indices:
        kwargs["weight_indices"] = torch.tensor(pick, dtype=torch.int64, device="cuda")
    y = wrapper.run(x, w_arg, len(lens), column_major, **kwargs)
    torch.cuda.synchronize()
    assert y.shape == (x.shape[0], d_out) and y.dtype == torch.float16
    start = 0
    for i, n in enumerate(lens):
        if n:
            ref = x[start:start + n].double() @ w[pick[i]].double().T
            assert rel_err(y[start:start + n], ref) < TOL_BF16, f"segment {i}"
        start += n
    assert (y[start:] == 0).all(), "rows in no segment must keep the zeros"
    out = torch.full_like(y, float("nan"))
    assert wrapper.run(x, w_arg, len(lens), column_major, out=out, **kwargs) is out
    torch.cuda.synchronize()
    assert torch.equal(out[:start], y[:start]) and torch.isnan(out[start:]).all()


# ---------------------------------------------------------------------------
# Against deep_gemm itself
# ---------------------------------------------------------------------------

def peer_err(ours, theirs, tags):
    sel = tags >= 0
    return rel_err(ours[sel], theirs[sel].double())


@needs_deep_gemm
@pytest.mark.parametrize("psum", [False, True])
def test_fp8_contiguous_matches_deep_gemm(psum):
    DEEP_GEMM.set_mk_alignment_for_contiguous_layout(128)
    if psum:
        ends = psum_ends([0, 5, 128, 129, 0, 77])
        m = -(-ends[-1].item() // 128) * 128
        tags, layout = rows_of_psum(ends, m), ends
    else:
        tags = padded_m_indices(SIZES)
        layout = tags
    g = layout.numel() if psum else len(SIZES)
    x, sx, _, w, sw, _, _ = fp8_contiguous_inputs(tags, g, "k_major")
    ours = torch.full((tags.numel(), N), float("nan"), dtype=torch.bfloat16, device="cuda")
    theirs = torch.empty_like(ours)
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), ours, layout, use_psum_layout=psum)
    DEEP_GEMM.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), theirs, layout,
                                               use_psum_layout=psum)
    torch.cuda.synchronize()
    assert peer_err(ours, theirs, tags) < TOL_PEER


@needs_deep_gemm
def test_fp8_masked_matches_deep_gemm():
    counts = [256, 0, 3, 130]
    x, sx, w, sw, _, _ = masked_fp8_inputs()
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    ours = torch.full((4, 256, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    theirs = torch.empty_like(ours)
    dg.m_grouped_fp8_gemm_nt_masked((x, sx), (w, sw), ours, masked_m, 97)
    DEEP_GEMM.m_grouped_fp8_gemm_nt_masked((x, sx), (w, sw), theirs, masked_m, 97)
    torch.cuda.synchronize()
    for g, count in enumerate(counts):
        if count:
            assert rel_err(ours[g, :count], theirs[g, :count].double()) < TOL_PEER


@needs_deep_gemm
def test_bf16_matches_deep_gemm():
    DEEP_GEMM.set_mk_alignment_for_contiguous_layout(128)
    tags = padded_m_indices(SIZES)
    a, b = bf16(tags.numel(), K), bf16(len(SIZES), N, K) / 8
    ours = torch.full((tags.numel(), N), float("nan"), dtype=torch.bfloat16, device="cuda")
    theirs = torch.empty_like(ours)
    dg.m_grouped_bf16_gemm_nt_contiguous(a, b, ours, tags)
    DEEP_GEMM.m_grouped_bf16_gemm_nt_contiguous(a, b, theirs, tags)
    counts = [256, 0, 3, 130]
    am = bf16(4, 256, K)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    ours_m = torch.full((4, 256, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    theirs_m = torch.empty_like(ours_m)
    dg.m_grouped_bf16_gemm_nt_masked(am, b[:4], ours_m, masked_m, 97)
    DEEP_GEMM.m_grouped_bf16_gemm_nt_masked(am, b[:4], theirs_m, masked_m, 97)
    torch.cuda.synchronize()
    assert peer_err(ours, theirs, tags) < 5e-3
    for g, count in enumerate(counts):
        if count:
            assert rel_err(ours_m[g, :count], theirs_m[g, :count].double()) < 5e-3


@needs_deep_gemm
def test_k_grouped_matches_deep_gemm():
    """DeepGEMM's FP8 weight gradient is the nt form on sm90 (tn is sm100's):
    ggc's tn and nt against it, on the same values."""
    DEEP_GEMM.set_mk_alignment_for_contiguous_layout(128)
    a_tn, b_tn, a_nt, b_nt, _, _ = k_grouped_fp8_inputs()
    layout = torch.tensor(KS, dtype=torch.int32, device="cuda")
    c = torch.randn(len(KS), M_W, N_W, device="cuda")
    theirs, ours_tn, ours_nt = c.clone(), c.clone(), c.clone()
    if torch.cuda.get_device_capability()[0] == 9:
        DEEP_GEMM.k_grouped_fp8_gemm_nt_contiguous(a_nt, b_nt, theirs, KS, layout, theirs)
    else:
        DEEP_GEMM.k_grouped_fp8_gemm_tn_contiguous(a_tn, b_tn, theirs, KS, layout, theirs)
    dg.k_grouped_fp8_gemm_tn_contiguous(a_tn, b_tn, ours_tn, KS, layout, ours_tn)
    dg.k_grouped_fp8_gemm_nt_contiguous(a_nt, b_nt, ours_nt, KS, layout, ours_nt)
    sum_k = sum(KS)
    xb, yb = bf16(sum_k, M_W), bf16(sum_k, N_W)
    theirs_bf16, ours_bf16 = c.clone(), c.clone()
    DEEP_GEMM.k_grouped_bf16_gemm_tn_contiguous(xb, yb, theirs_bf16, KS, layout, theirs_bf16)
    dg.k_grouped_bf16_gemm_tn_contiguous(xb, yb, ours_bf16, KS, layout, ours_bf16)
    torch.cuda.synchronize()
    for ours in (ours_tn, ours_nt):
        assert rel_err(ours - c, (theirs - c).double()) < TOL_PEER
    assert rel_err(ours_bf16 - c, (theirs_bf16 - c).double()) < 1e-4


@needs_deep_gemm
@pytest.mark.parametrize("num_groups", [None, 3])
def test_transform_sf_matches_deep_gemm(num_groups):
    lead = () if num_groups is None else (num_groups,)
    sf = positive(*lead, 4097, 7)
    ours = dg.transform_sf_into_required_layout(sf, 4097, 7 * 128, (1, 128, 128),
                                                num_groups, True)
    theirs = DEEP_GEMM.transform_sf_into_required_layout(sf, 4097, 7 * 128, (1, 128, 128),
                                                         num_groups, True)
    assert ours.stride() == theirs.stride() and torch.equal(ours, theirs)


# ---------------------------------------------------------------------------
# A's K-major scales to the M-major form, by ggc's kernel


# (3, 50000, 64): 9,384 tiles of 128 x 8 on a grid of at most 1,056 CTAs,
# so that every CTA loops.
@pytest.mark.parametrize("shape", [(4097, 56), (8, 16), (1, 5), (3, 250, 7), (2, 0, 16),
                                   (3, 50000, 64)])
def test_scales_transposed_by_ggc_kernel(shape):
    """gg.transpose_scales' kernel (the drop-in's copy of K-major sfa):
    every row's scales in their column of the storage, zeros in the TMA
    alignment's padding columns, over a storage poisoned with NaN; and
    DeepGEMM's helper returns the same values as a view of it."""
    from ggc.moe.quant_kernel import transposed_scales
    sf = torch.rand(*shape, device="cuda") + 0.5
    *batch, r, c = shape
    aligned = -(-r // 4) * 4
    storage = torch.full((*batch, c, aligned), float("nan"), device="cuda")
    assert transposed_scales(sf, aligned, out=storage) is storage
    torch.cuda.synchronize()
    assert torch.equal(storage[..., :r], sf.transpose(-1, -2))
    assert (storage[..., r:] == 0).all()
    view = dg.get_mn_major_tma_aligned_tensor(sf)
    assert torch.equal(view, sf)
    if r:  # torch gives a view without elements strides of its own
        assert view.stride()[-2:] == (1, aligned)


def test_scales_transposed_with_zero_rows_past_a_tile():
    """An `aligned` 300 rows past R (over three 128-row tiles): every row
    from R on is written 0, rows of both batches, over NaN; nothing past
    the storage is touched."""
    from ggc.moe.quant_kernel import transposed_scales
    sf = torch.rand(2, 37, 9, device="cuda") + 0.5
    memory = torch.full((2 * 9 * 337 + 4096,), float("nan"), device="cuda")
    storage = memory[:2 * 9 * 337].view(2, 9, 337)
    assert transposed_scales(sf, 337, out=storage) is storage
    torch.cuda.synchronize()
    assert torch.equal(storage[..., :37], sf.transpose(-1, -2))
    assert (storage[..., 37:] == 0).all()
    assert memory[2 * 9 * 337:].isnan().all()
