"""DeepGEMM's `deep_gemm.utils`: `layout` and `math`, their names also here."""

from . import layout, math
from .layout import (get_k_alignment_for_contiguous_layout, get_m_alignment_for_contiguous_layout,
                     get_mk_alignment_for_contiguous_layout, get_mn_major_tma_aligned_tensor,
                     get_theoretical_mk_alignment_for_contiguous_layout, get_tma_aligned_size,
                     set_mk_alignment_for_contiguous_layout, transform_sf_into_required_layout)
from .math import align, ceil_div, per_block_cast_to_fp8, per_token_cast_to_fp8

__all__ = ["layout", "math", "align", "ceil_div", "get_k_alignment_for_contiguous_layout",
           "get_m_alignment_for_contiguous_layout", "get_mk_alignment_for_contiguous_layout",
           "get_mn_major_tma_aligned_tensor",
           "get_theoretical_mk_alignment_for_contiguous_layout", "get_tma_aligned_size",
           "per_block_cast_to_fp8", "per_token_cast_to_fp8",
           "set_mk_alignment_for_contiguous_layout", "transform_sf_into_required_layout"]
