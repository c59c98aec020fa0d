"""The layer's SwiGLU as a kernel of its own, compiled by ggc from
gg.swiglu_rows.

a[p, c] = bf16(silu(h[p, c]) * h[p, I + c]), in f32 and rounded once,
for the up projection's output h [M, 2I] (gate columns first): where the
up projection's epilogue does not compute the activation (decode tiles,
expert biases, an FP8 layer without the quantisation kernel). silu is the
epilogue's own (ex2 and an approximate reciprocal), so both round alike.

Kernels are compiled once per (I, target) and launched through ggc's
runtime (ggc.moe.ptx).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch

from .. import compiler as ggc_compiler
from ..torch_ops import tracing
from . import ptx

THREADS = 256
_MAX_GRID = 132 * 8  # CTAs: enough to fill the GPU; the loop does the rest
_PTX: Dict[tuple, Tuple[str, str]] = {}


def source_text(name: str, inter: int) -> str:
    """The gg IR of one SwiGLU kernel."""
    return f"""
func.func @{name}(%h: memref<?x{2 * inter}xbf16>, %a: memref<?x{inter}xbf16>) {{
  gg.swiglu_rows input(%h : memref<?x{2 * inter}xbf16>) out(%a : memref<?x{inter}xbf16>)
      {{threads = {THREADS} : i64}}
  return
}}
"""


def kernel(inter: int, arch: Optional[str] = None) -> Tuple[str, str]:
    """(kernel name, PTX) on `arch` (default: ggc's target), compiled on
    first use."""
    arch = arch or ggc_compiler.get_target()
    return ptx.compiled(_PTX, (inter, arch), f"ggc_moe_swiglu_i{inter}_{arch}",
                        lambda name: source_text(name, inter), arch, "_swiglu")


def swiglu(h: torch.Tensor) -> Optional[torch.Tensor]:
    """silu(gate) * up of h [M, 2I] bf16 (gate columns first) as [M, I]
    bf16, or None where the kernel cannot take h (not CUDA, not bf16, I
    not a multiple of 8, not contiguous or 16-byte aligned, under
    tracing)."""
    if (not h.is_cuda or h.dtype != torch.bfloat16 or h.dim() != 2 or h.shape[1] % 16
            or not h.is_contiguous() or tracing()):
        return None
    rows, inter = h.shape[0], h.shape[1] // 2
    out = h.new_empty(rows, inter)
    if not ptx.aligned(h, out):
        return None
    if rows == 0:
        return out
    name, code = kernel(inter)
    grid = min(_MAX_GRID, -(-rows * inter // 8 // THREADS))
    ptx.launch(name, code, THREADS, grid, [("pointer", 0), ("pointer", 1), ("i64", rows)],
               (h, out), h.device)
    return out
