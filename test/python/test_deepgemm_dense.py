"""ggc.deepgemm's dense GEMMs, num_sms and `deep_gemm` aliasing on the CPU:
the real host code with ggc's kernels replaced by their torch references
(moe_reference.py), against fp64. test/gpu/test_dropins_gpu.py runs them
on the GPU against deep_gemm itself."""

import sys

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import deepgemm as dg  # noqa: E402
from moe_reference import use_reference_kernels  # noqa: E402

BF16, F8 = torch.bfloat16, torch.float8_e4m3fn


@pytest.fixture(autouse=True)
def reference_kernels(tmp_path, monkeypatch):
    use_reference_kernels(monkeypatch, tmp_path / "cache")


def rel(out, ref):
    out = out.double()
    assert torch.isfinite(out).all()
    return ((out - ref).norm() / ref.norm()).item()


def operands(m, n, k, a_k_major, b_k_major, seed=0):
    """Logical a [M, K], b [N, K] bf16, each K-major or MN-major in memory."""
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=gen).to(BF16)
    b = torch.randn(n, k, generator=gen).to(BF16)
    a = a if a_k_major else a.t().contiguous().t()
    b = b if b_k_major else b.t().contiguous().t()
    return a, b


FORMS = {"nt": (True, True), "nn": (True, False), "tn": (False, False), "tt": (False, True)}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("out_dtype,accumulate", [(BF16, False), (BF16, True),
                                                  (torch.float32, False),
                                                  (torch.float32, True)])
def test_bf16_forms_match_fp64(form, out_dtype, accumulate):
    m, n, k = 129, 200, 136  # off every tile boundary
    a, b = operands(m, n, k, *FORMS[form], seed=len(form))
    c = (torch.randn(m, n) * 4).to(out_dtype) if accumulate else None
    ref = a.double() @ b.double().t() + (c.double() if accumulate else 0)
    d = torch.full((m, n), float("nan"), dtype=out_dtype)
    # The alias takes the transposed operands as DeepGEMM's tests give them.
    args = {"nt": (a, b), "nn": (a, b.t()), "tn": (a.t(), b.t()), "tt": (a.t(), b)}[form]
    for side in args:
        assert side.is_contiguous()
    getattr(dg, f"bf16_gemm_{form}")(*args, d, c=c)
    assert rel(d, ref) < (1e-2 if out_dtype == BF16 else 1e-5)
    # nt takes every layout by strides.
    d2 = torch.full((m, n), float("nan"), dtype=out_dtype)
    dg.bf16_gemm_nt(a, b, d2, c=c)
    assert torch.equal(d2, d)


def test_accumulating_into_d_itself():
    a, b = operands(64, 72, 128, True, True, seed=3)
    d = torch.randn(64, 72)
    ref = a.double() @ b.double().t() + d.double()
    dg.bf16_gemm_nt(a, b, d, c=d)
    assert rel(d, ref) < 1e-5


def test_fp8_gemm_nt_matches_fp64():
    m, n, k = 100, 256, 384
    gen = torch.Generator().manual_seed(4)
    x, sx = dg.per_token_cast_to_fp8(torch.randn(m, k, generator=gen), use_ue8m0=False)
    w, sw = dg.per_block_cast_to_fp8(torch.randn(n, k, generator=gen), use_ue8m0=False)
    assert sx.shape == (m, 3) and sw.shape == (2, 3)
    xs = x.double() * sx.double().repeat_interleave(128, 1)
    ws = w.double() * sw.double().repeat_interleave(128, 0).repeat_interleave(128, 1)
    d = torch.empty(m, n, dtype=BF16)
    dg.fp8_gemm_nt((x, sx), (w, sw), d)
    assert rel(d, xs @ ws.t()) < 1e-2
    # The MN-major TMA-aligned scale form DeepGEMM callers pass gives the same.
    d2 = torch.empty(m, n, dtype=BF16)
    dg.fp8_gemm_nt((x, dg.get_mn_major_tma_aligned_tensor(sx)), (w, sw), d2)
    assert torch.equal(d, d2)


def test_casts_round_trip_and_ue8m0_scales_are_powers_of_two():
    x = torch.randn(130, 300) * 3
    for use_ue8m0 in (False, True):
        q, s = dg.per_token_cast_to_fp8(x, use_ue8m0=use_ue8m0)
        assert q.shape == x.shape and s.shape == (130, 3)
        back = q.float() * s.repeat_interleave(128, 1)[:, :300]
        assert rel(back, x.double()) < 0.05
        if use_ue8m0:
            assert torch.equal(torch.log2(s), torch.log2(s).round())
    assert dg.ceil_div(7, 2) == 4 and dg.align(130, 128) == 256


def test_fp8_layouts_sm90_has_not():
    for name in ("fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt", "m_grouped_fp8_gemm_nn_contiguous"):
        with pytest.raises(NotImplementedError, match="K-major only"):
            getattr(dg, name)(None, None, None)
    x, sx = dg.per_token_cast_to_fp8(torch.randn(8, 128), use_ue8m0=False)
    w, sw = dg.per_block_cast_to_fp8(torch.randn(128, 128), use_ue8m0=False)
    with pytest.raises(ValueError, match="must be K-major"):
        dg.fp8_gemm_nt((x, sx), (w.t().contiguous().t(), sw), torch.empty(8, 128, dtype=BF16))


def test_dense_errors_name_the_argument():
    a, b = operands(8, 16, 32, True, True)
    with pytest.raises(ValueError, match=r"d must be \[M, N\] = \[8, 16\]"):
        dg.bf16_gemm_nt(a, b, torch.empty(16, 8, dtype=BF16))
    with pytest.raises(ValueError, match="a has K = 32 but b has K = 31"):
        dg.bf16_gemm_nt(a, b[:, :31], torch.empty(8, 16, dtype=BF16))
    with pytest.raises(ValueError, match="a must be torch.bfloat16"):
        dg.bf16_gemm_nt(a.float(), b, torch.empty(8, 16, dtype=BF16))
    with pytest.raises(ValueError, match="d must be bfloat16 or float32"):
        dg.bf16_gemm_nt(a, b, torch.empty(8, 16, dtype=torch.float16))


def test_set_num_sms_compiles_kernels_for_that_many_sms(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    before = dg.get_num_sms()
    assert before == ggc.get_num_sms() == 132
    a, b = operands(64, 64, 128, True, True)
    try:
        dg.set_num_sms(100)
        assert ggc.get_num_sms() == 100
        d = torch.empty(64, 64, dtype=BF16)
        dg.bf16_gemm_nt(a, b, d)
        assert torch.isfinite(d.float()).all()
        # The kernel the call compiles spreads its grid over 100 SMs.
        kernel = ggc.ops._kernel_for("contiguous", "nk", False)
        args = (a, b.unsqueeze(0), torch.tensor([0, 64], dtype=torch.int32), d)
        compiled = kernel.compile(*args)
        assert kernel.num_sms == 100 and "sms = 100>" in compiled.asm["gg-config"]
        assert compiled.info["max_grid"] <= 100
        dg.set_num_sms(before)
        assert "sms = 132>" in kernel.compile(*args).asm["gg-config"]
        for bad in (0, 5000, 1.5, True):
            with pytest.raises(ValueError, match="new_num_sms must be an int"):
                dg.set_num_sms(bad)
    finally:
        dg.set_num_sms(before)
    assert ggc.get_num_sms() == before


def test_install_as_deep_gemm(monkeypatch):
    for name in ("deep_gemm", "deep_gemm.utils", "deep_gemm.utils.layout", "deep_gemm.utils.math"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    dg.install_as_deep_gemm()
    import deep_gemm
    from deep_gemm.utils.layout import get_mn_major_tma_aligned_tensor
    from deep_gemm.utils.math import ceil_div
    assert deep_gemm is dg and deep_gemm.__version__ == "2.6.1"
    assert get_mn_major_tma_aligned_tensor is dg.get_mn_major_tma_aligned_tensor
    assert ceil_div(5, 4) == 2
    monkeypatch.setitem(sys.modules, "deep_gemm", type(sys)("deep_gemm"))
    with pytest.raises(RuntimeError, match="deep_gemm is imported already"):
        dg.install_as_deep_gemm()
    dg.install_as_deep_gemm(replace=True)
    assert sys.modules["deep_gemm"] is dg
