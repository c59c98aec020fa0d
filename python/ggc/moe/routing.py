"""Routing: which experts each token goes to, and with what weight.

On CUDA, routing is one kernel (ggc.moe.router_kernel, from
gg.select_experts; renormalised softmax routing's gradient another,
gg.select_experts_backward; `ROUTER_KERNEL = False` turns them off);
elsewhere (CPU, tracing, more than 1,024 experts, a gradient of other
routing) it is torch on the router logits' device. Neither synchronises
with the host, so routing can sit inside a CUDA graph or a compiled
graph with the rest of the layer.
"""

from __future__ import annotations

import math

from typing import Optional, Tuple

import torch

from . import router_kernel

SCORINGS = ("softmax", "topk_softmax", "sigmoid")
# Routing by gg.select_experts' kernel where it takes the logits.
ROUTER_KERNEL = True


def route(router_logits: torch.Tensor, top_k: int, *, scoring: str = "softmax",
          renormalize: bool = True, n_group: Optional[int] = None,
          topk_group: Optional[int] = None, correction_bias: Optional[torch.Tensor] = None,
          scaling_factor: float = 1.0) -> Tuple[torch.Tensor, torch.Tensor]:
    """Top-k routing over `router_logits` [T, E]; returns (topk_weights
    [T, top_k] f32, topk_ids [T, top_k] int32).

    `scoring`: "softmax" (softmax over all E experts, then top-k: Mixtral,
    Qwen3), "topk_softmax" (top-k of the logits, then softmax over those
    k) or "sigmoid" (DeepSeek-V3). `renormalize` divides each token's
    weights by their sum (a no-op for "topk_softmax"). With `n_group`
    and `topk_group`, grouped top-k (DeepSeek-V3): the experts split into
    n_group groups, each token keeps its best topk_group groups, and the
    top-k is taken among their experts. `correction_bias` [E] (DeepSeek-V3's
    e_score_correction_bias) is added to the scores for choosing experts
    (and groups, by the sum of each group's two best) but not to the
    weights. `scaling_factor` multiplies the final weights
    (routed_scaling_factor)."""
    num_experts = _check_route_args(router_logits, top_k, scoring, n_group, topk_group,
                                    correction_bias, scaling_factor)
    if not isinstance(renormalize, bool):  # a string is truthy: say so, not renormalise
        raise TypeError(f"renormalize must be True or False, got {renormalize!r}")
    kernel = kernel_routing(scoring, renormalize, n_group, topk_group,
                            correction_bias is not None, scaling_factor)
    if kernel is not None:
        made = router_kernel.select_experts(router_logits, top_k, kernel, correction_bias)
        if made is not None:
            return made
    logits = router_logits.float()
    if scoring == "topk_softmax":
        chosen, ids = _choose(logits, logits, top_k, n_group, topk_group, num_experts)
        weights = torch.softmax(chosen, dim=-1)
    else:
        scores = torch.softmax(logits, dim=-1) if scoring == "softmax" else logits.sigmoid()
        choice = scores if correction_bias is None else scores + correction_bias.float()
        _, ids = _choose(choice, scores, top_k, n_group, topk_group, num_experts,
                         biased=correction_bias is not None)
        weights = scores.gather(1, ids)
        if renormalize:
            weights = weights / weights.sum(dim=-1, keepdim=True)
    if scaling_factor != 1.0:
        weights = weights * scaling_factor
    return weights, ids.to(torch.int32)


def kernel_routing(scoring: str, renormalize: bool, n_group: Optional[int],
                   topk_group: Optional[int], biased: bool, scaling_factor: float
                   ) -> Optional[router_kernel.KernelRouting]:
    """The gg.select_experts kernel route() takes for these (checked)
    arguments where the logits suit it, or None with ROUTER_KERNEL off.
    topk_softmax's softmax over the chosen logits is the renormalised
    softmax, its groups ranked by logit as the kernel ranks softmax's."""
    if not ROUTER_KERNEL:
        return None
    return router_kernel.KernelRouting(
        renormalize=renormalize or scoring == "topk_softmax", sigmoid=scoring == "sigmoid",
        groups=n_group or 1, topk_groups=topk_group or 1, bias=biased,
        scaling=float(scaling_factor))


def _choose(choice, scores, top_k, n_group, topk_group, num_experts, biased=False):
    """Top-k of `choice` [T, E], restricted to each token's best expert
    groups when grouped; returns (the chosen values of `choice`, ids)."""
    if n_group is not None:
        grouped = choice.view(choice.shape[0], n_group, num_experts // n_group)
        # With a correction bias a group ranks by its two best experts (one
        # outlier must not carry a group); without, by its best.
        group_score = (grouped.topk(2, dim=-1).values.sum(-1) if biased
                       else grouped.amax(dim=-1))
        keep = group_score.topk(topk_group, dim=-1).indices
        group_mask = torch.zeros_like(group_score, dtype=torch.bool).scatter_(1, keep, True)
        allowed = group_mask.unsqueeze(-1).expand_as(grouped).reshape(choice.shape)
        choice = choice.masked_fill(~allowed, float("-inf"))
    return choice.topk(top_k, dim=-1)


def _check_route_args(logits, top_k, scoring, n_group, topk_group, bias, scaling) -> int:
    """The expert count E; every bad argument a ValueError/TypeError naming it."""
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
        raise ValueError(f"router_logits must be a [T, E] tensor, got "
                         f"{_shape_of(logits)}")
    if not logits.is_floating_point():
        raise TypeError(f"router_logits must be floating point, got {logits.dtype}")
    num_experts = logits.shape[1]
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= num_experts:
        raise ValueError(f"top_k must be an int in [1, E = {num_experts}], got {top_k!r}")
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS}, got {scoring!r}")
    if (n_group is None) != (topk_group is None):
        raise ValueError(f"grouped top-k takes both n_group and topk_group; got "
                         f"n_group={n_group!r}, topk_group={topk_group!r}")
    if n_group is not None:
        _check_groups(n_group, topk_group, top_k, num_experts, bias is not None)
    if bias is not None:
        if scoring == "topk_softmax":
            raise ValueError("correction_bias ranks scores, not logits: use scoring "
                             "'softmax' or 'sigmoid' with it")
        if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (num_experts,):
            raise ValueError(f"correction_bias must be a [E] = [{num_experts}] tensor, got "
                             f"{_shape_of(bias)}")
        if bias.device != logits.device:
            raise ValueError(f"correction_bias is on {bias.device} but router_logits on "
                             f"{logits.device}")
    if not isinstance(scaling, (int, float)) or isinstance(scaling, bool):
        raise TypeError(f"scaling_factor must be a number, got {type(scaling).__name__}")
    if not math.isfinite(scaling):  # it multiplies every weight
        raise ValueError(f"scaling_factor must be finite, got {scaling!r}")
    return num_experts


def _check_groups(n_group, topk_group, top_k, num_experts, biased) -> None:
    for name, value in (("n_group", n_group), ("topk_group", topk_group)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if num_experts % n_group:
        raise ValueError(f"n_group = {n_group} must divide the expert count E = "
                         f"{num_experts}")
    if topk_group > n_group:
        raise ValueError(f"topk_group = {topk_group} exceeds n_group = {n_group}")
    per_group = num_experts // n_group
    if top_k > topk_group * per_group:
        raise ValueError(f"top_k = {top_k} exceeds the {topk_group * per_group} experts of "
                         f"the topk_group = {topk_group} groups kept")
    if biased and per_group < 2:
        raise ValueError(f"with correction_bias a group ranks by its two best experts; "
                         f"E / n_group = {per_group} leaves one per group")


def _shape_of(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"shape {list(value.shape)}"
    return type(value).__name__
