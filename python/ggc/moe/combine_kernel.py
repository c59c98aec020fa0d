"""The layer's combine in one kernel that ggc compiles from gg.combine_routes.

out[t] = the sum over j < top_k of y[position[t * top_k + j]], in f32 in
slot order, rounded once to bf16: the bits of torch's f32 sum over the
slots (permute._sum_routes), in one pass (the gather and the sum).

Kernels are compiled once per (H, top_k, position type, target) and
launched through ggc's runtime (ggc.moe.ptx).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch

from .. import compiler as ggc_compiler
from ..torch_ops import tracing
from . import ptx

THREADS = 256
_MAX_GRID = 132 * 8  # CTAs: enough to fill the GPU; the loop does the rest
_POSITION_TYPES = {torch.int32: "i32", torch.int64: "i64"}
_PTX: Dict[tuple, Tuple[str, str]] = {}


def source_text(name: str, hidden: int, top_k: int, position_type: str) -> str:
    """The gg IR of one combine kernel."""
    return f"""
func.func @{name}(%y: memref<?x{hidden}xbf16>, %position: memref<?x{position_type}>,
    %out: memref<?x{hidden}xbf16>) {{
  gg.combine_routes input(%y : memref<?x{hidden}xbf16>)
      position(%position : memref<?x{position_type}>) out(%out : memref<?x{hidden}xbf16>)
      {{top_k = {top_k} : i64, threads = {THREADS} : i64}}
  return
}}
"""


def kernel(hidden: int, top_k: int, position_dtype: torch.dtype,
           arch: Optional[str] = None) -> Tuple[str, str]:
    """(kernel name, PTX) on `arch` (default: ggc's target), compiled on
    first use."""
    arch = arch or ggc_compiler.get_target()
    position_type = _POSITION_TYPES[position_dtype]
    return ptx.compiled(_PTX, (hidden, top_k, position_type, arch),
                        f"ggc_moe_combine_h{hidden}_k{top_k}_{position_type}_{arch}",
                        lambda name: source_text(name, hidden, top_k, position_type), arch,
                        "_combine")

def combine(y: torch.Tensor, position: torch.Tensor, top_k: int) -> Optional[torch.Tensor]:
    """out [T, H] bf16 for y [rows, H] bf16 and position [T * top_k] (int32
    or int64), or None where the kernel cannot take them (not CUDA, H not
    a multiple of 8, an input not 16-byte aligned, under tracing)."""
    if (not y.is_cuda or y.dtype != torch.bfloat16 or y.dim() != 2 or y.shape[1] % 8
            or position.dtype not in _POSITION_TYPES or tracing()):
        return None
    y, position = y.contiguous(), position.contiguous()
    tokens, hidden = position.shape[0] // top_k, y.shape[1]
    out = y.new_empty(tokens, hidden)
    if not ptx.aligned(y, position, out):
        return None
    if y.shape[0] == 0 or tokens == 0:  # no row to read: every sum is empty
        return out.zero_()
    name, code = kernel(hidden, top_k, position.dtype)
    grid = min(_MAX_GRID, -(-tokens * hidden // 8 // THREADS))
    ptx.launch(name, code, THREADS, grid,
               [("pointer", 0), ("pointer", 1), ("pointer", 2), ("i64", tokens),
                ("i64", y.shape[0])], (y, position, out), y.device)
    return out
