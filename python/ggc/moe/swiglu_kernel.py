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
* up takes about six passes). `RoutedSwiGLU` takes each row's routing
weight too (gg.swiglu_rows' `route`): forward the routed rows
route * silu(gate) * up, which the down projection reads as they are;
backward the gradients of h and of the weights in one pass (its
`route_grad`), where the weight's product, its gradient and the rows'
sums took four passes over [M, I]. `quantized_routed_swiglu_backward`
also writes h's gradient in e4m3 with 1x128 scales for an FP8 input
gradient (gg.swiglu_rows_backward's `quantized`), where a quantisation
pass would read it again.

Kernels are compiled once per (I, direction, routed, target) and launched
through ggc's runtime (ggc.moe.ptx).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch

from .. import compiler as ggc_compiler
from ..torch_ops import tracing
from . import ptx
from .quant_kernel import converts_fp8

THREADS = 256
_MAX_GRID = 132 * 8  # CTAs: enough to fill the GPU; the loop does the rest
_PTX: Dict[tuple, Tuple[str, str]] = {}


def source_text(name: str, inter: int, routed: bool = False) -> str:
    """The gg IR of one SwiGLU kernel (`routed`: with a weight a row)."""
    wide, narrow = f"memref<?x{2 * inter}xbf16>", f"memref<?x{inter}xbf16>"
    route_arg = ", %r: memref<?xf32>" if routed else ""
    route_use = " route(%r : memref<?xf32>)" if routed else ""
    return f"""
func.func @{name}(%h: {wide}{route_arg}, %a: {narrow}) {{
  gg.swiglu_rows input(%h : {wide}){route_use} out(%a : {narrow})
      {{threads = {THREADS} : i64}}
  return
}}
"""


def backward_source_text(name: str, inter: int, routed: bool = False,
                         quantized: bool = False) -> str:
    """The gg IR of one SwiGLU gradient kernel (`routed`: the routed rows'
    gradient, with the weights'; `quantized`, routed: h's gradient in
    e4m3 too, 1x128 blocks)."""
    wide, narrow = f"memref<?x{2 * inter}xbf16>", f"memref<?x{inter}xbf16>"
    fp8, scales = f"memref<?x{2 * inter}xf8E4M3FN>", f"memref<{2 * inter // 128}x?xf32>"
    route_args = ", %r: memref<?xf32>, %dr: memref<?xf32>" if routed else ""
    route_use = " route(%r : memref<?xf32>)" if routed else ""
    route_grad = " route_grad(%dr : memref<?xf32>)" if routed else ""
    q_args = f", %q: {fp8}, %s: {scales}" if quantized else ""
    q_use = f" quantized(%q : {fp8}) quantized_scales(%s : {scales})" if quantized else ""
    return f"""
func.func @{name}(%h: {wide}, %d: {narrow}, %dh: {wide}{route_args}{q_args}) {{
  gg.swiglu_rows_backward input(%h : {wide}) grad(%d : {narrow}){route_use}
      out(%dh : {wide}){route_grad}{q_use} {{threads = {THREADS} : i64}}
  return
}}
"""


def kernel(inter: int, arch: Optional[str] = None, backward: bool = False,
           routed: bool = False, quantized: bool = False) -> Tuple[str, str]:
    """(kernel name, PTX) on `arch` (default: ggc's target), compiled on
    first use; the gradient's with `backward` (and its FP8 copy where
    `quantized`); with a weight a row where `routed`."""
    arch = arch or ggc_compiler.get_target()
    tag = ("_routed" if routed else "") + ("_fp8" if quantized else "")
    if backward:
        return ptx.compiled(_PTX, (inter, arch, "backward", routed, quantized),
                            f"ggc_moe_swiglu_backward{tag}_i{inter}_{arch}",
                            lambda name: backward_source_text(name, inter, routed, quantized),
                            arch, "_swiglu_backward")
    return ptx.compiled(_PTX, (inter, arch, "forward", routed),
                        f"ggc_moe_swiglu{tag}_i{inter}_{arch}",
                        lambda name: source_text(name, inter, routed), arch, "_swiglu")


def swiglu(h: torch.Tensor, route: Optional[torch.Tensor] = None) -> Optional[torch.Tensor]:
    """silu(gate) * up of h [M, 2I] bf16 (gate columns first) as [M, I]
    bf16 (times route[p] on row p, in f32 before the one rounding, with
    `route` f32 [M]), or None where the kernel cannot take h (not CUDA,
    not bf16, I not a multiple of 8, not contiguous or 16-byte aligned,
    under tracing) or route."""
    if not _takes(h) or (route is not None and not _takes_route(route, h)):
        return None
    rows, inter = h.shape[0], h.shape[1] // 2
    out = h.new_empty(rows, inter)
    tensors = (h, out) if route is None else (h, route, out)
    if not ptx.aligned(*tensors):
        return None
    if rows == 0:
        return out
    name, code = kernel(inter, routed=route is not None)
    grid = min(_MAX_GRID, -(-rows * inter // 8 // THREADS))
    params = [("pointer", i) for i in range(len(tensors))] + [("i64", rows)]
    ptx.launch(name, code, THREADS, grid, params, tensors, h.device)
    return out


def _takes(h: torch.Tensor) -> bool:
    return (h.is_cuda and h.dtype == torch.bfloat16 and h.dim() == 2 and h.shape[1] % 16 == 0
            and h.is_contiguous() and not tracing())


def _takes_route(route: torch.Tensor, h: torch.Tensor) -> bool:
    return (route.device == h.device and route.dtype == torch.float32
            and route.shape == (h.shape[0],) and route.is_contiguous())


def swiglu_backward(h: torch.Tensor, grad: torch.Tensor):
    """The gradient [M, 2I] of swiglu(h) for its gradient `grad` [M, I]
    (gate's columns, then up's), or None where the kernel cannot take them
    (as swiglu; grad must match)."""
    made = _backward(h, grad, None)
    return None if made is None else made[0]


def routed_swiglu_backward(h: torch.Tensor, grad: torch.Tensor, route: torch.Tensor):
    """For the routed rows r = route * swiglu(h) and their gradient `grad`
    [M, I]: (h's gradient [M, 2I] bf16, route's f32 [M]: each row's sum of
    grad * swiglu(h), unrounded), or None where the kernel cannot take
    them (as swiglu_backward; route f32 [M] contiguous)."""
    if not _takes_route(route, h):
        return None
    return _backward(h, grad, route)


def quantized_routed_swiglu_backward(h: torch.Tensor, grad: torch.Tensor,
                                     route: torch.Tensor):
    """routed_swiglu_backward's (h's gradient dh, route's), and dh in
    1x128 blocks as quant_kernel.rows_mn quantises it (e4m3 [M, 2I], f32
    scales [2I/128, align4(M)] M-major: an FP8 input gradient's operand),
    from one kernel, or None where it cannot take them (as
    routed_swiglu_backward; I a multiple of 128; a target without FP8
    conversion)."""
    if not _takes_route(route, h) or (h.shape[1] // 2) % 128 or not converts_fp8():
        return None
    return _backward(h, grad, route, quantized=True)


def _backward(h, grad, route, quantized=False):
    rows, inter = h.shape[0], h.shape[1] // 2
    if not _takes(h) or not (grad.is_cuda and grad.dtype == torch.bfloat16
                             and grad.shape == (rows, inter) and grad.is_contiguous()):
        return None
    out = torch.empty_like(h)
    route_grad = None if route is None else route.new_empty(rows)
    tensors = ((h, grad, out) if route is None else (h, grad, route, out, route_grad))
    ld = (rows + 3) // 4 * 4
    if quantized:
        fp8 = torch.empty(rows, 2 * inter, dtype=torch.float8_e4m3fn, device=h.device)
        scales = torch.empty(2 * inter // 128, ld, dtype=torch.float32, device=h.device)
        tensors += (fp8, scales)
    if not ptx.aligned(*tensors):
        return None
    made = (out, route_grad) + ((fp8, scales) if quantized else ())
    if rows == 0:
        return made
    name, code = kernel(inter, backward=True, routed=route is not None, quantized=quantized)
    if route is None:
        grid = min(_MAX_GRID, -(-rows * inter // 8 // THREADS))
    else:  # a warp a row
        grid = min(_MAX_GRID, -(-rows // (THREADS // 32)))
    params = [("pointer", i) for i in range(len(tensors))] + [("i64", rows)]
    if quantized:
        params.append(("i64", ld))
    ptx.launch(name, code, THREADS, grid, params, tensors, h.device)
    return made


def _torch_swiglu(h: torch.Tensor, route: Optional[torch.Tensor] = None) -> torch.Tensor:
    """swiglu(h[, route])'s values by torch ops in f32, rounded once."""
    gate, up = h.float().chunk(2, dim=-1)
    out = gate * torch.sigmoid(gate) * up
    if route is not None:
        out = out * route.float().unsqueeze(1)
    return out.to(h.dtype)


def _torch_backward(h: torch.Tensor, grad: torch.Tensor,
                    route: Optional[torch.Tensor] = None):
    """(h's gradient, route's or None) by torch ops in f32: the kernels'
    formulas (gg.swiglu_rows_backward's)."""
    gate, up = h.float().chunk(2, dim=-1)
    s = torch.sigmoid(gate)
    d = grad.float()
    droute = None
    if route is not None:
        droute = (d * gate * s * up).sum(dim=-1).to(route.dtype)
        d = d * route.float().unsqueeze(1)
    dh = torch.cat([d * up * s * (1 + gate * (1 - s)), d * gate * s], dim=-1).to(h.dtype)
    return dh, droute


def swiglu_values(h: torch.Tensor, route: Optional[torch.Tensor] = None) -> torch.Tensor:
    """swiglu(h[, route]) by the kernel where it takes them, else by torch
    ops (the same formulas)."""
    out = swiglu(h, route)
    return _torch_swiglu(h, route) if out is None else out


def swiglu_gradients(h: torch.Tensor, grad: torch.Tensor,
                     route: Optional[torch.Tensor] = None):
    """(h's gradient, route's or None): swiglu_backward's or
    routed_swiglu_backward's kernel where it takes them, else by torch
    ops (the same formulas)."""
    made = (_backward(h, grad, None) if route is None
            else routed_swiglu_backward(h, grad, route))
    return _torch_backward(h, grad, route) if made is None else made


class SwiGLU(torch.autograd.Function):
    """silu(gate) * up over h's column halves [M, 2I] -> [M, I],
    differentiable: ggc's kernels both ways where they take h (CUDA bf16,
    eager), else the same formulas by torch ops in f32, rounded once."""

    @staticmethod
    def forward(ctx, h):
        ctx.save_for_backward(h)
        return swiglu_values(h)

    @staticmethod
    def backward(ctx, grad):
        (h,) = ctx.saved_tensors
        return swiglu_gradients(h, grad.contiguous())[0]


class RoutedSwiGLU(torch.autograd.Function):
    """route[p] * silu(gate) * up over h's column halves [M, 2I] -> [M, I]
    bf16, rounded once, differentiable in h and route (f32 [M]): the
    training step's routed rows, which the down projection reads as they
    are. ggc's kernels both ways where they take h and route (CUDA bf16
    and f32, eager), else the same formulas by torch ops in f32."""

    @staticmethod
    def forward(ctx, h, route):
        h, route = h.contiguous(), route.contiguous()
        ctx.save_for_backward(h, route)
        return swiglu_values(h, route)

    @staticmethod
    def backward(ctx, grad):
        h, route = ctx.saved_tensors
        return swiglu_gradients(h, grad.contiguous(), route)
