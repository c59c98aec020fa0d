"""Routing: which experts each token goes to, and with what weight.

Everything here is torch on the router logits' device, with no host
synchronisation, so routing can sit inside a CUDA graph or a compiled
graph with the rest of the layer.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

import torch

SCORINGS = ("softmax", "topk_softmax", "sigmoid")


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
    _check_route_args(router_logits, top_k, scoring, n_group, topk_group, correction_bias,
                      scaling_factor)
    args = (top_k, scoring, renormalize, n_group, topk_group, correction_bias, scaling_factor)
    if ONE_NODE_ROUTING and router_logits.requires_grad and torch.is_grad_enabled():
        return _RouteWeights.apply(router_logits, *args)
    routing = _routed(router_logits, *args)
    return routing.weights, routing.ids


# A differentiable route() is one autograd node (_RouteWeights) whose
# backward writes out the weights' gradient, where torch's autograd
# recorded a node for each of the float cast, softmax, gather, division
# and sum, each a visit of the host's. The same weights and ids; the
# logits' gradient equal up to f32 rounding.
# benchmarks/probes/routed_swiglu_step.py --flag ONE_NODE_ROUTING times both.
ONE_NODE_ROUTING = True


class _Routing(NamedTuple):
    """_routed()'s result: what route() returns, and what its backward
    reads. `scores` f32 [T, E] (None for "topk_softmax"); `unscaled` the
    weights before scaling_factor; `total` [T, 1] the sum the chosen
    scores were divided by (None without renormalisation)."""
    weights: torch.Tensor
    ids: torch.Tensor
    scores: Optional[torch.Tensor]
    unscaled: torch.Tensor
    total: Optional[torch.Tensor]


def _routed(router_logits, top_k, scoring, renormalize, n_group, topk_group,
            correction_bias, scaling_factor) -> _Routing:
    """route() once its arguments are checked."""
    num_experts = router_logits.shape[1]
    logits = router_logits.float()
    scores = total = None
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
            total = weights.sum(dim=-1, keepdim=True)
            weights = weights / total
    unscaled = weights
    if scaling_factor != 1.0:
        weights = weights * scaling_factor
    return _Routing(weights, ids.to(torch.int32), scores, unscaled, total)


class _RouteWeights(torch.autograd.Function):
    """route() as one autograd node: forward _routed() with no graph
    recorded, backward the weights' gradient to the logits (the chosen ids
    carry none)."""

    @staticmethod
    def forward(ctx, router_logits, top_k, scoring, renormalize, n_group, topk_group,
                correction_bias, scaling_factor):
        routing = _routed(router_logits.detach(), top_k, scoring, renormalize, n_group,
                          topk_group, correction_bias, scaling_factor)
        ctx.save_for_backward(routing.ids, routing.scores, routing.unscaled, routing.total)
        ctx.scoring, ctx.scaling = scoring, scaling_factor
        ctx.logits_dtype, ctx.experts = router_logits.dtype, router_logits.shape[1]
        ctx.mark_non_differentiable(routing.ids)
        return routing.weights, routing.ids

    @staticmethod
    def backward(ctx, grad_weights, _grad_ids):
        ids, scores, weights, total = ctx.saved_tensors
        ids, grad = ids.long(), grad_weights.float()
        if ctx.scaling != 1.0:
            grad = grad * ctx.scaling
        if ctx.scoring == "topk_softmax":
            # weights = softmax(the chosen logits); the chosen logits'
            # gradient goes to their experts' columns.
            chosen = torch._softmax_backward_data(grad, weights, -1, torch.float32)
            zeros = weights.new_zeros(weights.shape[0], ctx.experts)
            return (_scattered(zeros, ids, chosen).to(ctx.logits_dtype),) + (None,) * 7
        if total is not None:
            # w = s / S, S the chosen scores' sum: ds = (dw - sum(dw * w)) / S.
            grad = (grad - (grad * weights).sum(dim=-1, keepdim=True)) / total
        grad_scores = _scattered(torch.zeros_like(scores), ids, grad)
        if ctx.scoring == "softmax":
            grad_logits = torch._softmax_backward_data(grad_scores, scores, -1, torch.float32)
        else:
            grad_logits = torch.ops.aten.sigmoid_backward(grad_scores, scores)
        return (grad_logits.to(ctx.logits_dtype),) + (None,) * 7


def _scattered(zeros, ids, values):
    """zeros with values [T, k] at columns ids (a token's ids differ)."""
    return zeros.scatter_(1, ids, values)


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
