"""The token permutation: (token, k) routes sorted by expert, on the GPU.

No step reads data back to the host (no .item(), nonzero, bincount or
data-dependent size): the routes are sorted by expert (stable, so each
expert's rows keep token order and every run gives the same order) and
the group offsets are where each expert id would insert into the sorted
ids (searchsorted). Every buffer has T * top_k rows whatever the routing,
so a layer built on this can be captured in a CUDA graph and replayed with
new routing.
"""

from __future__ import annotations

from typing import NamedTuple

import torch


class Permutation(NamedTuple):
    """Routes sorted by expert. M = T * top_k rows; row p of the sorted
    layout is route order[p] = (token order[p] // top_k, slot order[p] % top_k).

    - offsets [E+1] int32: expert e owns sorted rows offsets[e] .. offsets[e+1]
      (ggc's CSR group offsets; offsets[E] = M).
    - counts [E] int32: rows per expert.
    - order [M] int64: the route (token * top_k + slot) of each sorted row.
    - source [M] int64: the token of each sorted row (order // top_k).
    - position [M] int64: the sorted row of each route (order's inverse).
    - valid [M] bool: whether each route's expert id was in [0, E), by route.
    """
    offsets: torch.Tensor
    counts: torch.Tensor
    order: torch.Tensor
    source: torch.Tensor
    position: torch.Tensor
    valid: torch.Tensor


def permute(topk_ids: torch.Tensor, num_experts: int) -> Permutation:
    """Sorts the routes of `topk_ids` [T, top_k] by expert.

    An id outside [0, num_experts) cannot be a group of its own: its route
    is counted on expert 0 and marked invalid (`valid`), so a caller can
    poison its result instead of dropping it without a word (fused_moe
    gives it a NaN weight)."""
    flat = topk_ids.reshape(-1)
    m = flat.shape[0]
    valid = (flat >= 0) & (flat < num_experts)
    experts = torch.where(valid, flat, torch.zeros_like(flat))
    sorted_experts, order = torch.sort(experts, stable=True)
    bounds = torch.arange(num_experts + 1, device=flat.device, dtype=sorted_experts.dtype)
    offsets = torch.searchsorted(sorted_experts, bounds, out_int32=True)
    counts = offsets[1:] - offsets[:-1]
    rows = torch.arange(m, device=flat.device, dtype=order.dtype)
    position = torch.empty_like(order).scatter_(0, order, rows)
    source = torch.div(order, topk_ids.shape[1], rounding_mode="floor")
    return Permutation(offsets, counts, order, source, position, valid)


class _GatherRows(torch.autograd.Function):
    """x [T, H] -> the sorted rows x[source] [M, H]. Its backward sums each
    token's top_k row gradients in slot order (deterministic, unlike
    index_select's backward, which adds with atomics)."""

    @staticmethod
    def forward(ctx, x, source, position, top_k):
        ctx.save_for_backward(source, position)
        ctx.top_k = top_k
        return x.index_select(0, source)

    @staticmethod
    def backward(ctx, grad):
        source, position = ctx.saved_tensors
        return _sum_routes(grad, position, ctx.top_k), None, None, None


class _CombineRows(torch.autograd.Function):
    """Sorted rows y [M, H] -> out [T, H], out[t] = sum over slots j of
    y[position[t * top_k + j]], summed in f32 by one reduction over the
    slots, whose order depends on the shapes only: the same sum on every
    run (no atomics, unlike a scatter-add into the output)."""

    @staticmethod
    def forward(ctx, y, source, position, top_k):
        ctx.save_for_backward(source, position)
        return _sum_routes(y, position, top_k)

    @staticmethod
    def backward(ctx, grad):
        source, position = ctx.saved_tensors
        return grad.index_select(0, source), None, None, None


def _sum_routes(rows, position, top_k):
    picked = rows.index_select(0, position)
    # The token count stated, not -1: with no tokens -1 would be ambiguous.
    by_token = picked.view(position.shape[0] // top_k, top_k, rows.shape[-1])
    return by_token.sum(dim=1, dtype=torch.float32).to(rows.dtype)


def gather_rows(x: torch.Tensor, perm: Permutation, top_k: int) -> torch.Tensor:
    """x [T, H] in the sorted layout [T * top_k, H] (differentiable)."""
    return _GatherRows.apply(x, perm.source, perm.position, top_k)


def combine_rows(y: torch.Tensor, perm: Permutation, top_k: int) -> torch.Tensor:
    """The sorted rows [T * top_k, H] summed back per token [T, H]
    (differentiable, deterministic)."""
    return _CombineRows.apply(y, perm.source, perm.position, top_k)
