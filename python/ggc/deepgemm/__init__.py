"""DeepGEMM 2.x's GEMM API on ggc's kernels (a drop-in for `deep_gemm`).

Same names, argument order, defaults, layouts and semantics as DeepGEMM
2.6.1 on sm90 (Hopper), each a thin translation into ggc's grouped GEMM:

    import ggc.deepgemm as deep_gemm
    deep_gemm.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d, m_indices)

What DeepGEMM accepts and ggc cannot serve raises ValueError or
NotImplementedError naming the argument, before anything is launched.
Shared rules:

- FP8 operands are e4m3, K-major; scales are f32 as on sm90: A's per token
  and 128-wide K block (`[.., M, ceil(K/128)]`, K-major or DeepGEMM's MN-major
  TMA-aligned form, any other layout is copied into the latter, as DeepGEMM
  does), B's in 128x128 blocks (`[G, ceil(N/128), ceil(K/128)]`, contiguous or
  transposed). Float scales are used as given: DeepGEMM on sm90 does the
  same, whatever `disable_ue8m0_cast` says (only sm100 rounds them to UE8M0).
- Also served, beyond sm90: sm100's packed UE8M0 scales (int32, four
  exponents per word, recipe `(1, 1, 32)` or `(1, 1, 128)` on both sides),
  as ggc's MX scales; ggc reads their words K-major (an MN-major tensor is
  copied, a small copy).
- `compiled_dims` and `expected_m_for_psum_layout` are performance hints of
  DeepGEMM's JIT; ggc's kernels take M at run time, so they are accepted and
  unused. `ensure_zero_padding` is sm100-only in DeepGEMM (ignored on sm90,
  and here).
- Rows of `d` outside every group (m_indices == -1, psum gaps, rows past
  masked_m) are never written. DeepGEMM leaves them unspecified: its sm90
  kernels store whole blocks of rows (zeros where a 64-row half starts
  outside the group, else the padding rows' `a @ w[g]`).
- Group metadata is trusted as DeepGEMM trusts it (rows of a group index
  out of range are skipped, masked_m past M_max clamped); with
  `GGC_VALIDATE=1` each call reads it back first and raises on values
  that would mis-group rows: m_indices and masked_m out of range,
  decreasing psum ends, a k-grouped `grouped_layout` other than `ks_cpu`.
- Dense GEMMs (`bf16_gemm_{nt,nn,tn,tt}`, `fp8_gemm_nt`) run as one group
  of the same kernels (ggc.deepgemm.dense); the `nn` forms read B as
  [.., K, N]. sm90 FP8 takes K-major operands only, as DeepGEMM on sm90: the
  FP8 `nn`/`tn`/`tt` forms raise NotImplementedError.
- `set_num_sms(n)` / `get_num_sms()`: the SMs ggc's persistent kernels spread
  over from then on (ggc.set_num_sms; default the current device's SMs,
  132 without a GPU). `deep_gemm.utils`
  (`layout`, `math`) is `ggc.deepgemm.utils`. `__version__` is the DeepGEMM
  API mirrored (2.6.1); `install_as_deep_gemm()` makes `import deep_gemm`
  (and `deep_gemm.utils.layout`) this package, for a stack that imports it
  by name.
- Not provided: FP4, einsum, attention, hyper-connection and Mega MoE
  kernels; set_tc_util, set_pdl and the other JIT knobs; `use_psum_layout`
  on k-grouped calls (sm100-only in DeepGEMM).
"""

from __future__ import annotations

import sys

from .. import compiler as _compiler
from . import dense, grouped, utils
from .dense import (bf16_gemm_nn, bf16_gemm_nt, bf16_gemm_tn, bf16_gemm_tt, cublaslt_gemm_nn,
                    cublaslt_gemm_nt, cublaslt_gemm_tn, cublaslt_gemm_tt, fp8_fp4_gemm_nt,
                    fp8_gemm_nn, fp8_gemm_nt, fp8_gemm_tn, fp8_gemm_tt,
                    m_grouped_fp8_gemm_nn_contiguous)
from .grouped import (bf16_m_grouped_gemm_nt_masked, fp8_m_grouped_gemm_nt_masked,
                      k_grouped_bf16_gemm_tn_contiguous, k_grouped_fp8_gemm_nt_contiguous,
                      k_grouped_fp8_gemm_tn_contiguous, m_grouped_bf16_gemm_nn_contiguous,
                      m_grouped_bf16_gemm_nt_contiguous, m_grouped_bf16_gemm_nt_masked,
                      m_grouped_fp8_fp4_gemm_nt_contiguous, m_grouped_fp8_fp4_gemm_nt_masked,
                      m_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nt_masked)
# DeepGEMM's top level has utils' names too.
from .utils import (align, ceil_div, get_k_alignment_for_contiguous_layout,
                    get_m_alignment_for_contiguous_layout, get_mk_alignment_for_contiguous_layout,
                    get_mn_major_tma_aligned_tensor,
                    get_theoretical_mk_alignment_for_contiguous_layout, get_tma_aligned_size,
                    per_block_cast_to_fp8, per_token_cast_to_fp8,
                    set_mk_alignment_for_contiguous_layout, transform_sf_into_required_layout)

# The DeepGEMM API this package mirrors (callers pick API forms by it).
__version__ = "2.6.1"


def set_num_sms(new_num_sms: int) -> None:
    """DeepGEMM's `set_num_sms`: the SMs the GEMMs use from now on, at most
    the current device's."""
    import torch
    limit = _compiler.MAX_NUM_SMS
    if torch.cuda.is_available():
        limit = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    if not isinstance(new_num_sms, int) or isinstance(new_num_sms, bool) or not (
            1 <= new_num_sms <= limit):
        raise ValueError(f"new_num_sms must be an int in [1, {limit}] (the device's SMs), "
                         f"got {new_num_sms!r}")
    _compiler.set_num_sms(new_num_sms)


def get_num_sms() -> int:
    """DeepGEMM's `get_num_sms`: the SMs the GEMMs use."""
    return _compiler.get_num_sms()


def install_as_deep_gemm(replace: bool = False) -> None:
    """Makes `import deep_gemm`, `deep_gemm.utils`, `deep_gemm.utils.layout`
    and `deep_gemm.utils.math` this package, for code that imports
    DeepGEMM by name. A real deep_gemm imported already is an error unless
    `replace`."""
    present = sys.modules.get("deep_gemm")
    if present is not None and present is not sys.modules[__name__] and not replace:
        raise RuntimeError(f"deep_gemm is imported already ({getattr(present, '__file__', '?')}):"
                           f" install_as_deep_gemm() before it, or pass replace=True")
    sys.modules["deep_gemm"] = sys.modules[__name__]
    sys.modules["deep_gemm.utils"] = utils
    sys.modules["deep_gemm.utils.layout"] = utils.layout
    sys.modules["deep_gemm.utils.math"] = utils.math


__all__ = ["dense", "grouped", "utils", "get_num_sms", "set_num_sms", "install_as_deep_gemm",
           "bf16_gemm_nn", "bf16_gemm_nt", "bf16_gemm_tn", "bf16_gemm_tt",
           "cublaslt_gemm_nn", "cublaslt_gemm_nt", "cublaslt_gemm_tn", "cublaslt_gemm_tt",
           "fp8_fp4_gemm_nt", "fp8_gemm_nn", "fp8_gemm_nt", "fp8_gemm_tn", "fp8_gemm_tt",
           "m_grouped_fp8_gemm_nn_contiguous", "bf16_m_grouped_gemm_nt_masked",
           "fp8_m_grouped_gemm_nt_masked", "k_grouped_bf16_gemm_tn_contiguous",
           "k_grouped_fp8_gemm_nt_contiguous", "k_grouped_fp8_gemm_tn_contiguous",
           "m_grouped_bf16_gemm_nn_contiguous", "m_grouped_bf16_gemm_nt_contiguous",
           "m_grouped_bf16_gemm_nt_masked", "m_grouped_fp8_fp4_gemm_nt_contiguous",
           "m_grouped_fp8_fp4_gemm_nt_masked", "m_grouped_fp8_gemm_nt_contiguous",
           "m_grouped_fp8_gemm_nt_masked", "align", "ceil_div",
           "get_k_alignment_for_contiguous_layout", "get_m_alignment_for_contiguous_layout",
           "get_mk_alignment_for_contiguous_layout", "get_mn_major_tma_aligned_tensor",
           "get_theoretical_mk_alignment_for_contiguous_layout", "get_tma_aligned_size",
           "per_block_cast_to_fp8", "per_token_cast_to_fp8",
           "set_mk_alignment_for_contiguous_layout", "transform_sf_into_required_layout"]
