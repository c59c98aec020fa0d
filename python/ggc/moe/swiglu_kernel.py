"""The layer's SwiGLU as a kernel of its own, compiled by ggc from
gg.swiglu_rows.

a[p, c] = bf16(silu(h[p, c]) * h[p, I + c]), in f32 and rounded once,
for the up projection's output h [M, 2I] (gate columns first): where the
up projection's epilogue does not compute the activation (decode tiles,
expert biases, an FP8 layer without the quantisation kernel). silu is the
epilogue's own (ex2 and an approximate reciprocal), so both round alike.

In training, `SwiGLU` (an autograd function) runs it forward and
gg.swiglu_rows_backward's kernel backward: the gate's and the up half's
gradients in one pass, each rounded once (torch's autograd of silu(gate)
* up takes about six passes).

Kernels are compiled once per (I, direction, target) and launched through
ggc's runtime (ggc.moe.ptx).
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


def backward_source_text(name: str, inter: int) -> str:
    """The gg IR of one SwiGLU gradient kernel."""
    wide, narrow = f"memref<?x{2 * inter}xbf16>", f"memref<?x{inter}xbf16>"
    return f"""
func.func @{name}(%h: {wide}, %d: {narrow}, %dh: {wide}) {{
  gg.swiglu_rows_backward input(%h : {wide}) grad(%d : {narrow}) out(%dh : {wide})
      {{threads = {THREADS} : i64}}
  return
}}
"""


def kernel(inter: int, arch: Optional[str] = None, backward: bool = False) -> Tuple[str, str]:
    """(kernel name, PTX) on `arch` (default: ggc's target), compiled on
    first use; the gradient's with `backward`."""
    arch = arch or ggc_compiler.get_target()
    if backward:
        return ptx.compiled(_PTX, (inter, arch, "backward"),
                            f"ggc_moe_swiglu_backward_i{inter}_{arch}",
                            lambda name: backward_source_text(name, inter), arch,
                            "_swiglu_backward")
    return ptx.compiled(_PTX, (inter, arch), f"ggc_moe_swiglu_i{inter}_{arch}",
                        lambda name: source_text(name, inter), arch, "_swiglu")


def swiglu(h: torch.Tensor) -> Optional[torch.Tensor]:
    """silu(gate) * up of h [M, 2I] bf16 (gate columns first) as [M, I]
    bf16, or None where the kernel cannot take h (not CUDA, not bf16, I
    not a multiple of 8, not contiguous or 16-byte aligned, under
    tracing)."""
    if not _takes(h):
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


def _takes(h: torch.Tensor) -> bool:
    return (h.is_cuda and h.dtype == torch.bfloat16 and h.dim() == 2 and h.shape[1] % 16 == 0
            and h.is_contiguous() and not tracing())


def swiglu_backward(h: torch.Tensor, grad: torch.Tensor) -> Optional[torch.Tensor]:
    """The gradient [M, 2I] of swiglu(h) for its gradient `grad` [M, I]
    (gate's columns, then up's), or None where the kernel cannot take them
    (as swiglu; grad must match)."""
    rows, inter = h.shape[0], h.shape[1] // 2
    if not _takes(h) or not (grad.is_cuda and grad.dtype == torch.bfloat16
                             and grad.shape == (rows, inter) and grad.is_contiguous()):
        return None
    out = torch.empty_like(h)
    if not ptx.aligned(h, grad, out):
        return None
    if rows == 0:
        return out
    name, code = kernel(inter, backward=True)
    grid = min(_MAX_GRID, -(-rows * inter // 8 // THREADS))
    ptx.launch(name, code, THREADS, grid,
               [("pointer", 0), ("pointer", 1), ("pointer", 2), ("i64", rows)],
               (h, grad, out), h.device)
    return out


class SwiGLU(torch.autograd.Function):
    """silu(gate) * up over h's column halves [M, 2I] -> [M, I],
    differentiable: ggc's kernels both ways where they take h (CUDA bf16,
    eager), else the same formulas by torch ops in f32, rounded once."""

    @staticmethod
    def forward(ctx, h):
        ctx.save_for_backward(h)
        out = swiglu(h)
        if out is None:
            gate, up = h.float().chunk(2, dim=-1)
            out = (gate * torch.sigmoid(gate) * up).to(h.dtype)
        return out

    @staticmethod
    def backward(ctx, grad):
        (h,) = ctx.saved_tensors
        grad = grad.contiguous()
        dh = swiglu_backward(h, grad)
        if dh is None:
            gate, up = h.float().chunk(2, dim=-1)
            s = torch.sigmoid(gate)
            d = grad.float()
            dh = torch.cat([d * up * s * (1 + gate * (1 - s)), d * gate * s], dim=-1).to(h.dtype)
        return dh
