"""The router's scores and top-k as one kernel, compiled by ggc from
gg.select_experts.

For router logits [T, E] (bf16, f16 or f32), each token's top_k experts
(best first; equal choices: the lower expert first) and their weights,
as `ggc.moe.route` computes them with torch in about seven kernels
(softmax routing: a copy to f32, the softmax, top-k, a gather, a sum, a
division, the ids' conversion) to about fifteen (DeepSeek-V3's sigmoid
scores, correction bias and grouped top-k): every routing `route` takes
(`KernelRouting` says which), softmax or sigmoid scores, renormalised or
not, `topk_softmax` (a softmax over the chosen logits is the
renormalised one), a correction bias, grouped top-k and a scaling. A
warp takes a token; exp and sigmoid are ex2's (the SwiGLU kernels'), so
a weight may differ from torch's in its last bits, and where two
experts' choice values lie within those bits of each other either may
be chosen.

Renormalised softmax routing without bias, groups or scaling also trains:
`SelectExperts` (an autograd function) runs gg.select_experts_backward's
kernel backward, the logits' gradient in one pass where torch's autograd
of the softmax, gather and division takes about ten kernels.

Kernels are compiled once per (E, top_k, logits dtype, routing or
backward, target) and launched through ggc's runtime (ggc.moe.ptx).
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional, Tuple

import torch
from torch.autograd.function import once_differentiable

from .. import compiler as ggc_compiler
from ..torch_ops import tracing
from . import ptx

THREADS = 128  # four tokens a CTA: decode's few tokens take few threads
_MAX_GRID = 132 * 16  # CTAs: enough to fill the GPU; the loop does the rest
MAX_EXPERTS = 1024  # gg.select_experts: 32 logits a lane
MAX_TOP_K = 32      # one chosen expert a lane
MAX_GROUPS = 32     # one bit each of the kept groups' mask
# The logits' dtypes the kernel takes, by their IR names (as LayerShape.router names them).
LOGIT_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
LOGIT_TAGS = {dtype: tag for tag, dtype in LOGIT_DTYPES.items()}
_PTX: Dict[tuple, Tuple[str, str]] = {}


class KernelRouting(NamedTuple):
    """The routing a gg.select_experts kernel computes (its attributes)."""
    renormalize: bool
    sigmoid: bool = False      # DeepSeek-V3's scores; else softmax's
    groups: int = 1            # grouped top-k: the expert groups ...
    topk_groups: int = 1       # ... and how many of them are kept
    bias: bool = False         # a correction bias [E] ranks the experts
    scaling: float = 1.0       # multiplies the final weights

    @property
    def trains(self) -> bool:
        """Whether gg.select_experts_backward gives its gradient."""
        return (self.renormalize and not self.sigmoid and self.groups == 1 and not self.bias
                and self.scaling == 1.0)

    def attributes(self) -> str:
        parts = ["renormalize"] * self.renormalize + ["sigmoid"] * self.sigmoid
        if self.groups > 1:
            parts += [f"groups = {self.groups} : i64", f"topk_groups = {self.topk_groups} : i64"]
        if self.scaling != 1.0:
            parts.append(f"scaling = {float(self.scaling):.9e} : f32")
        return ", ".join(parts + [f"threads = {THREADS} : i64"])

    def tag(self) -> str:
        """A kernel-name suffix that tells routings apart."""
        scaling = f"{float(self.scaling):.9e}".replace(".", "p").replace("-", "m").replace("+", "")
        return ("_renorm" * self.renormalize + "_sigmoid" * self.sigmoid
                + (f"_g{self.groups}x{self.topk_groups}" if self.groups > 1 else "")
                + "_bias" * self.bias + (f"_s{scaling}" if self.scaling != 1.0 else ""))


def source_text(name: str, experts: int, top_k: int, dtype: str,
                routing: KernelRouting) -> str:
    """The gg IR of one router kernel over `dtype` logits of `experts`."""
    logits, weights, ids = (f"memref<?x{experts}x{dtype}>", f"memref<?x{top_k}xf32>",
                            f"memref<?x{top_k}xi32>")
    bias = f"memref<{experts}xf32>"
    bias_arg, bias_use = ((f", %b: {bias}", f" bias(%b : {bias})") if routing.bias else ("", ""))
    return f"""
func.func @{name}(%l: {logits}{bias_arg}, %w: {weights}, %i: {ids}) {{
  gg.select_experts logits(%l : {logits}){bias_use} weights(%w : {weights}) ids(%i : {ids})
      {{{routing.attributes()}}}
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


def kernel(experts: int, top_k: int, dtype: torch.dtype, routing,
           arch: Optional[str] = None, backward: bool = False) -> Tuple[str, str]:
    """(kernel name, PTX) on `arch` (default: ggc's target), compiled on
    first use; `routing` a KernelRouting (or a bool: softmax, renormalised
    or not); with `backward`, the renormalised weights' gradient kernel,
    writing `dtype`."""
    arch = arch or ggc_compiler.get_target()
    tag = LOGIT_TAGS[dtype]
    if backward:
        return ptx.compiled(_PTX, (experts, top_k, tag, "backward", arch),
                            f"ggc_moe_select_experts_backward_e{experts}_k{top_k}_{tag}_{arch}",
                            lambda name: backward_source_text(name, experts, top_k, tag),
                            arch, "_select_experts_backward")
    if isinstance(routing, bool):
        routing = KernelRouting(routing)
    return ptx.compiled(_PTX, (experts, top_k, tag, routing, arch),
                        f"ggc_moe_select_experts_e{experts}_k{top_k}_{tag}{routing.tag()}_{arch}",
                        lambda name: source_text(name, experts, top_k, tag, routing),
                        arch, "_select_experts")


def takes(logits: torch.Tensor, top_k: int, routing: KernelRouting = KernelRouting(True)) -> bool:
    """Whether the kernel takes these logits: CUDA, bf16/f16/f32, [T, E]
    contiguous and 16-byte aligned, a shape that `shape_fits`, not under
    tracing; a gradient only where the routing `trains`."""
    if tracing():  # first: torch.compile cannot trace data_ptr()
        return False
    wants_grad = logits.requires_grad and torch.is_grad_enabled()
    return (logits.is_cuda and logits.dtype in LOGIT_TAGS and logits.dim() == 2
            and shape_fits(logits.shape[1], top_k, routing) and logits.is_contiguous()
            and ptx.aligned(logits) and (routing.trains or not wants_grad))


def shape_fits(experts: int, top_k: int, routing: KernelRouting) -> bool:
    """Whether gg.select_experts' verifier takes E experts, top_k and the
    routing's groups (E up to 1,024, top_k up to min(E, 32) and the kept
    groups' experts, up to 32 groups dividing E, with a bias two experts
    a group)."""
    if not (1 <= experts <= MAX_EXPERTS and 1 <= top_k <= min(experts, MAX_TOP_K)):
        return False
    groups, kept = routing.groups, routing.topk_groups
    if not (1 <= groups <= MAX_GROUPS and experts % groups == 0 and 1 <= kept <= groups):
        return False
    size = experts // groups
    return top_k <= kept * size and not (routing.bias and groups > 1 and size < 2)


def select_experts(logits: torch.Tensor, top_k: int, routing: KernelRouting,
                   bias: Optional[torch.Tensor] = None
                   ) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
    """(weights [T, top_k] f32, ids [T, top_k] int32) of `logits` [T, E]
    routed as `routing` says (with `bias` [E] where it has one),
    differentiable in the logits where they want a gradient, or None
    where the kernel cannot take them (see `takes`)."""
    if not takes(logits, top_k, routing) or (bias is None) == routing.bias:
        return None
    if bias is not None:
        bias = bias.detach().float().contiguous()
        if bias.device != logits.device or not ptx.aligned(bias):
            return None
    if logits.requires_grad and torch.is_grad_enabled():
        return SelectExperts.apply(logits, top_k)
    return _forward(logits, top_k, routing, bias)


class SelectExperts(torch.autograd.Function):
    """Renormalised softmax routing of `logits` [T, E] (weights, ids), and
    the logits' gradient from the weights' (the ids have none)."""

    @staticmethod
    def forward(ctx, logits, top_k):
        weights, ids = _forward(logits, top_k, KernelRouting(True), None)
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
        if not ptx.aligned(grad):  # a view into a larger gradient (torch.cat's backward)
            grad = grad.clone()
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


def _forward(logits, top_k, routing, bias):
    tokens, experts = logits.shape
    weights = torch.empty(tokens, top_k, dtype=torch.float32, device=logits.device)
    ids = torch.empty(tokens, top_k, dtype=torch.int32, device=logits.device)
    if tokens == 0:
        return weights, ids
    name, code = kernel(experts, top_k, logits.dtype, routing)
    tensors = (logits,) + ((bias,) if bias is not None else ()) + (weights, ids)
    params = [("pointer", i) for i in range(len(tensors))] + [("i64", tokens)]
    ptx.launch(name, code, THREADS, _grid(tokens), params, tensors, logits.device)
    return weights, ids
