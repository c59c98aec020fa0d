"""ggc.deepgemm's dense GEMMs and the m-grouped `nn` form on the GPU, with
DeepGEMM's own test shapes (its tests/generators.py: M of 1, 128 and 4096
over its (N, K) list), against fp64 and, where `import deep_gemm` works
(../shared/peers/setup-on-device.sh), against deep_gemm on the same
inputs."""

import pytest

torch = pytest.importorskip("torch")

import ggc.deepgemm as dg  # noqa: E402
from deep_gemm_peer import import_deep_gemm  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


DEEP_GEMM, WHY_NOT = import_deep_gemm()
BF16 = torch.bfloat16
# DeepGEMM's tests' (N, K) with bf16 outputs, and with f32 outputs.
NK_BF16 = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384),
           (4096, 7168), (7168, 2048)]
NK_F32 = [(256, 7168)]
MS = [1, 128, 4096]
FORMS = {"nt": (True, True), "nn": (True, False), "tn": (False, False), "tt": (False, True)}


def peer(name, *args, **kwargs):
    """deep_gemm's `name` on these arguments, or None (with a warning) where
    it is not built or rejects them: a peer's limits are not ggc's failures."""
    if DEEP_GEMM is None:
        return None
    try:
        getattr(DEEP_GEMM, name)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - reported, not failed
        import warnings
        warnings.warn(f"deep_gemm.{name} raised {type(e).__name__}: {e}")
        return None
    return True


def rel(out, ref):
    out = out.double()
    assert torch.isfinite(out).all(), "NaN/Inf in the output: a row not written"
    return ((out - ref).norm() / ref.norm()).item()


def shapes():
    for m in MS:
        for n, k in NK_BF16:
            yield m, n, k, BF16
        for n, k in NK_F32:
            yield m, n, k, torch.float32


@pytest.mark.parametrize("m,n,k,out_dtype", list(shapes()))
@pytest.mark.parametrize("form", sorted(FORMS))
def test_bf16_forms(m, n, k, out_dtype, form):
    if form != "nt" and (m, n) not in ((128, 2112), (4096, 7168), (1, 576)):
        pytest.skip("the transposed forms on three shapes (each layout path)")
    a = torch.randn(m, k, device="cuda", dtype=BF16)
    b = torch.randn(n, k, device="cuda", dtype=BF16)
    accumulate = out_dtype == BF16 and m == 128
    c = (torch.randn(m, n, device="cuda") * 32).to(out_dtype) if accumulate else None
    ref = a.double() @ b.double().t() + (c.double() if accumulate else 0)
    a_k, b_k = FORMS[form]
    args = (a if a_k else a.t().contiguous(), b if b_k else b.t().contiguous())
    d = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype)
    getattr(dg, f"bf16_gemm_{form}")(*args, d, c=c)
    assert rel(d, ref) < (5e-3 if out_dtype == BF16 else 1e-5)
    theirs = torch.empty_like(d)
    if peer(f"bf16_gemm_{form}", *args, theirs, c=c):
        assert rel(d, theirs.double()) < (5e-3 if out_dtype == BF16 else 1e-5)


@pytest.mark.parametrize("m,n,k", [(m, n, k) for m in MS for n, k in NK_BF16])
def test_fp8_gemm_nt(m, n, k):
    x, sx = dg.per_token_cast_to_fp8(torch.randn(m, k, device="cuda"), False)
    w, sw = dg.per_block_cast_to_fp8(torch.randn(n, k, device="cuda"), False)
    ref = ((x.double() * sx.double().repeat_interleave(128, 1)[:, :k])
           @ (w.double() * sw.double().repeat_interleave(128, 0)[:n]
              .repeat_interleave(128, 1)[:, :k]).t())
    sx_mn = dg.get_mn_major_tma_aligned_tensor(sx)  # as DeepGEMM's callers pass it
    d = torch.full((m, n), float("nan"), device="cuda", dtype=BF16)
    dg.fp8_gemm_nt((x, sx_mn), (w, sw), d)
    assert rel(d, ref) < 5e-3
    theirs = torch.empty_like(d)
    if peer("fp8_gemm_nt", (x, sx_mn), (w, sw), theirs):
        assert rel(d, theirs.double()) < 5e-3


def test_m_grouped_bf16_nn_contiguous():
    sizes, n, k = [0, 1, 127, 300], 4096, 2048
    tags = []
    for g, size in enumerate(sizes):
        tags += [g] * size + [-1] * (-(-size // 128) * 128 - size)
    tags = torch.tensor(tags, dtype=torch.int32, device="cuda")
    a = torch.randn(tags.numel(), k, device="cuda", dtype=BF16)
    b_kn = torch.randn(len(sizes), k, n, device="cuda", dtype=BF16)
    d = torch.full((tags.numel(), n), float("nan"), device="cuda", dtype=BF16)
    dg.m_grouped_bf16_gemm_nn_contiguous(a, b_kn, d, tags)
    for g in range(len(sizes)):
        rows = tags == g
        if rows.any():
            assert rel(d[rows], a[rows].double() @ b_kn[g].double()) < 5e-3
    assert torch.isnan(d[tags < 0].float()).all()
    theirs = torch.empty_like(d)
    if peer("m_grouped_bf16_gemm_nn_contiguous", a, b_kn, theirs, tags):
        rows = tags >= 0
        assert rel(d[rows], theirs[rows].double()) < 5e-3


def test_num_sms_limits_the_grid_and_keeps_results():
    a = torch.randn(4096, 2048, device="cuda", dtype=BF16)
    b = torch.randn(4096, 2048, device="cuda", dtype=BF16)
    full, part = (torch.empty(4096, 4096, device="cuda", dtype=BF16) for _ in range(2))
    before = dg.get_num_sms()
    dg.bf16_gemm_nt(a, b, full)
    try:
        dg.set_num_sms(66)
        dg.bf16_gemm_nt(a, b, part)
    finally:
        dg.set_num_sms(before)
    assert rel(part, full.double()) < 5e-3
    if DEEP_GEMM is not None:
        assert DEEP_GEMM.get_num_sms() >= before


def test_repeated_calls_take_the_remembered_launch_with_their_own_tensors():
    """The second call of a signature skips the checks (ggc.deepgemm.fast)
    and must still read its own tensors."""
    from ggc.deepgemm import fast
    m, n, k = 256, 512, 1024
    tags = torch.arange(2, device="cuda", dtype=torch.int32).repeat_interleave(m // 2)
    for round_ in range(3):
        a = torch.randn(m, k, device="cuda", dtype=BF16)
        b = torch.randn(n, k, device="cuda", dtype=BF16)
        d = torch.full((m, n), float("nan"), device="cuda", dtype=BF16)
        dg.bf16_gemm_nt(a, b, d)
        assert rel(d, a.double() @ b.double().t()) < 5e-3, round_
        x, sx = dg.per_token_cast_to_fp8(a.float(), False)
        w, sw = dg.per_block_cast_to_fp8(b.float(), False)
        d8 = torch.full((m, n), float("nan"), device="cuda", dtype=BF16)
        dg.fp8_gemm_nt((x, sx), (w, sw), d8)
        assert rel(d8, a.double() @ b.double().t()) < 5e-2, round_
        bg = torch.randn(2, n, k, device="cuda", dtype=BF16)
        dgr = torch.full((m, n), float("nan"), device="cuda", dtype=BF16)
        dg.m_grouped_bf16_gemm_nt_contiguous(a, bg, dgr, tags)
        for g in range(2):
            rows = tags == g
            assert rel(dgr[rows], a[rows].double() @ bg[g].double().t()) < 5e-3, round_
    kinds = {key[0] if isinstance(key[0], str) else key[0][0] for key in fast._LAUNCHES}
    assert {"bf16", "fp8", "bf16 contiguous"} <= kinds, kinds
