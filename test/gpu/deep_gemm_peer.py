"""DeepGEMM 2.x itself, for the GPU tests that compare ggc.deepgemm with it:
built on the device by ../shared/peers/setup-on-device.sh, with
/tmp/peers/DeepGEMM on PYTHONPATH. Never ggc's own drop-in, even where
ggc.deepgemm.install_as_deep_gemm() made `import deep_gemm` resolve to it."""

import torch

import ggc.deepgemm


def import_deep_gemm():
    """(the deep_gemm module, "") or (None, why it is not there)."""
    if not torch.cuda.is_available():
        return None, "needs a CUDA GPU"
    try:
        import deep_gemm
    except Exception as e:  # noqa: BLE001 - not built here, or it failed to load
        return None, f"deep_gemm is not importable: {type(e).__name__}: {e}"
    if deep_gemm is ggc.deepgemm:
        return None, "`deep_gemm` is ggc's drop-in (install_as_deep_gemm), not DeepGEMM"
    if not hasattr(deep_gemm, "m_grouped_fp8_gemm_nt_contiguous"):
        return None, f"deep_gemm {getattr(deep_gemm, '__version__', '?')} is not 2.x"
    return deep_gemm, ""
