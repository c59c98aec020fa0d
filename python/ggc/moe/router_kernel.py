"""The router's softmax and top-k as one kernel, compiled by ggc from
gg.select_experts.

For router logits [T, E] (bf16, f16 or f32), each token's top_k experts
(largest logit first; equal logits: the lower expert first) and their
softmax weights, optionally divided by the chosen weights' sum: what
`ggc.moe.route(scoring="softmax")` computes with about seven torch kernels
(a copy to f32, the softmax, top-k, a gather, a sum, a division, the ids'
conversion), and `scoring="topk_softmax"` too (a softmax over the chosen
logits is the renormalised softmax). A warp takes a token; exp is ex2's
(the SwiGLU kernels'), so a weight may differ from torch's in its last
bits. With renormalisation it also trains: `SelectExperts` (an autograd
function) runs gg.select_experts_backward's kernel backward, the logits'
gradient in one pass where torch's autograd of the softmax, gather and
division takes about ten kernels.

Kernels are compiled once per (E, top_k, logits dtype, renormalize or
backward, target) and launched through ggc's runtime (ggc.moe.ptx).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch
from torch.autograd.function import once_differentiable

from .. import compiler as ggc_compiler
from ..torch_ops import tracing
from . import ptx

THREADS = 128  # four tokens a CTA: decode's few tokens take few threads
_MAX_GRID = 132 * 16  # CTAs: enough to fill the GPU; the loop does the rest
MAX_EXPERTS = 1024  # gg.select_experts: 32 logits a lane
MAX_TOP_K = 32      # one chosen expert a lane
_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
_PTX: Dict[tuple, Tuple[str, str]] = {}


def source_text(name: str, experts: int, top_k: int, dtype: str, renormalize: bool) -> str:
    """The gg IR of one router kernel over `dtype` logits of `experts`."""
    logits, weights, ids = (f"memref<?x{experts}x{dtype}>", f"memref<?x{top_k}xf32>",
                            f"memref<?x{top_k}xi32>")
    attrs = ("renormalize, " if renormalize else "") + f"threads = {THREADS} : i64"
    return f"""
func.func @{name}(%l: {logits}, %w: {weights}, %i: {ids}) {{
  gg.select_experts logits(%l : {logits}) weights(%w : {weights}) ids(%i : {ids})
      {{{attrs}}}
  return
}}
"""


def backward_source_text(name: str, experts: int, top_k: int, dtype: str) -> str:
    """The gg IR of one router gradient kernel, the logits' gradient in `dtype`."""
    chosen, ids, out = (f"memref<?x{top_k}xf32>", f"memref<?x{top_k}xi32>",
                        f"memref<?x{experts}x{dtype}>")
    return f"""
func.func @{name}(%w: {chosen}, %i: {ids}, %g: {chosen}, %d: {out}) {{
  gg.select_experts_backward weights(%w : {chosen}) ids(%i : {ids}) grad(%g : {chosen})
      out(%d : {out}) {{threads = {THREADS} : i64}}
  return
}}
"""


def kernel(experts: int, top_k: int, dtype: torch.dtype, renormalize: bool,
           arch: Optional[str] = None, backward: bool = False) -> Tuple[str, str]:
    """(kernel name, PTX) on `arch` (default: ggc's target), compiled on
    first use; with `backward`, the renormalised weights' gradient
    kernel, writing `dtype`."""
    arch = arch or ggc_compiler.get_target()
    tag = _DTYPES[dtype]
    if backward:
        return ptx.compiled(_PTX, (experts, top_k, tag, "backward", arch),
                            f"ggc_moe_select_experts_backward_e{experts}_k{top_k}_{tag}_{arch}",
                            lambda name: backward_source_text(name, experts, top_k, tag),
                            arch, "_select_experts_backward")
    norm = "_renorm" if renormalize else ""
    return ptx.compiled(_PTX, (experts, top_k, tag, renormalize, arch),
                        f"ggc_moe_select_experts_e{experts}_k{top_k}_{tag}{norm}_{arch}",
                        lambda name: source_text(name, experts, top_k, tag, renormalize),
                        arch, "_select_experts")


def takes(logits: torch.Tensor, top_k: int, renormalize: bool = True) -> bool:
    """Whether the kernel takes these logits: CUDA, bf16/f16/f32, [T, E]
    contiguous and 16-byte aligned, E <= 1024, top_k <= min(E, 32), not
    under tracing; a gradient only with `renormalize`."""
    if tracing():  # first: torch.compile cannot trace data_ptr()
        return False
    wants_grad = logits.requires_grad and torch.is_grad_enabled()
    return (logits.is_cuda and logits.dtype in _DTYPES and logits.dim() == 2
            and 1 <= logits.shape[1] <= MAX_EXPERTS and 1 <= top_k <= min(logits.shape[1], MAX_TOP_K)
            and logits.is_contiguous() and ptx.aligned(logits)
            and (renormalize or not wants_grad))


def select_experts(logits: torch.Tensor, top_k: int, renormalize: bool
                   ) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
    """(weights [T, top_k] f32, ids [T, top_k] int32) of `logits` [T, E],
    differentiable in the logits where they want a gradient, or None
    where the kernel cannot take them (see `takes`)."""
    if not takes(logits, top_k, renormalize):
        return None
    if logits.requires_grad and torch.is_grad_enabled():
        return SelectExperts.apply(logits, top_k)
    return _forward(logits, top_k, renormalize)


class SelectExperts(torch.autograd.Function):
    """The renormalised routing of `logits` [T, E] (weights, ids), and the
    logits' gradient from the weights' (the ids have none)."""

    @staticmethod
    def forward(ctx, logits, top_k):
        weights, ids = _forward(logits, top_k, True)
        ctx.save_for_backward(weights, ids)
        ctx.mark_non_differentiable(ids)
        ctx.logits = (logits.shape, logits.dtype)
        return weights, ids

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_weights, _grad_ids):
        weights, ids = ctx.saved_tensors
        shape, dtype = ctx.logits
        grad = grad_weights.float().contiguous()
        out = torch.empty(shape, dtype=dtype, device=weights.device)
        tokens, top_k = weights.shape
        if tokens:
            name, code = kernel(shape[1], top_k, dtype, True, backward=True)
            params = [("pointer", i) for i in range(4)] + [("i64", tokens)]
            ptx.launch(name, code, THREADS, _grid(tokens), params,
                       (weights, ids, grad, out), weights.device)
        return out, None


def _grid(tokens: int) -> int:
    return min(_MAX_GRID, -(-tokens // (THREADS // 32)))


def _forward(logits, top_k, renormalize):
    tokens, experts = logits.shape
    weights = torch.empty(tokens, top_k, dtype=torch.float32, device=logits.device)
    ids = torch.empty(tokens, top_k, dtype=torch.int32, device=logits.device)
    if tokens == 0:
        return weights, ids
    name, code = kernel(experts, top_k, logits.dtype, renormalize)
    params = [("pointer", 0), ("pointer", 1), ("pointer", 2), ("i64", tokens)]
    ptx.launch(name, code, THREADS, _grid(tokens), params, (logits, weights, ids),
               logits.device)
    return weights, ids
