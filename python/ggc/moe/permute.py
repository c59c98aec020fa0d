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

from ..torch_ops import tracing
from . import combine_kernel


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
    is counted on the nearest expert (the id clamped into [0, E)) and
    marked invalid (`valid`), so a caller can poison its result instead of
    dropping it without a word (fused_moe gives it a NaN weight)."""
    offsets, order, source, position, invalid = sort_routes(topk_ids, num_experts)
    counts = offsets[1:] - offsets[:-1]
    if source is order:  # top_k = 1: the caller of permute gets tensors of its own
        source = order.clone()
    return Permutation(offsets, counts, order, source, position, ~invalid)


def sort_routes(topk_ids: torch.Tensor, num_experts: int, skipped=None):
    """permute's (offsets, order, source, position), without the counts,
    and `invalid` (not `valid`: the poison needs no negation), in as few
    torch calls and kernels as the values allow (each costs several
    microseconds, of host time eagerly and of GPU time in a graph at
    decode sizes); with top_k = 1 `source` is `order` itself.

    `skipped` [M] bool marks routes to no expert here (another rank's):
    they sort after every group (offsets[E] counts the others), in no
    group, and are not invalid."""
    flat = topk_ids.reshape(-1)
    m = flat.shape[0]
    # The narrowest key that holds 0..E (E marks `skipped`): torch's radix
    # sort takes a pass over the routes per key byte (docs/performance.md,
    # twelfth session).
    experts = flat.clamp(0, num_experts - 1).to(_sort_key_dtype(num_experts))
    invalid = experts != flat
    if skipped is not None:
        invalid = invalid & ~skipped
        experts = experts.masked_fill(skipped, num_experts)
    sorted_experts, order = torch.sort(experts, stable=True)
    bounds = constant_arange(num_experts + 1, sorted_experts.dtype, flat.device)
    offsets = torch.searchsorted(sorted_experts, bounds, out_int32=True)
    rows = constant_arange(m, order.dtype, flat.device)
    position = torch.empty_like(order).scatter_(0, order, rows)
    top_k = topk_ids.shape[1]
    source = order if top_k == 1 else torch.div(order, top_k, rounding_mode="floor")
    return offsets, order, source, position, invalid


def _sort_key_dtype(num_experts: int) -> torch.dtype:
    """The narrowest integer type holding 0..num_experts."""
    if num_experts <= torch.iinfo(torch.uint8).max:
        return torch.uint8
    if num_experts <= torch.iinfo(torch.int16).max:
        return torch.int16
    return torch.int32


_ARANGES = {}
# Entries are never dropped (a CUDA graph may read one: it holds no
# reference); past this many sizes, new ones are made fresh each call.
_MAX_ARANGES = 64


def constant_arange(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """arange(n), made once per (n, dtype, device) in eager mode and never
    written: the same values as a fresh one, without the call. Made fresh
    where a cached one would be wrong: while torch.compile traces (the
    graph must make it), a dispatch mode runs (fake tensors), and during
    a CUDA-graph capture where none is cached yet (its kernel would not
    run until the graph is replayed; one made before the capture is read
    by every replay, and never dropped)."""
    if tracing():
        return torch.arange(n, device=device, dtype=dtype)
    key = (n, dtype, device)
    cached = _ARANGES.get(key)
    if cached is not None:
        return cached
    if (device.type == "cuda" and torch.cuda.is_current_stream_capturing()) or (
            len(_ARANGES) >= _MAX_ARANGES):
        return torch.arange(n, device=device, dtype=dtype)
    # Outside inference mode, so that autograd may use it later; the
    # stream synchronised once so that every stream may read it.
    with torch.inference_mode(False):
        cached = torch.arange(n, device=device, dtype=dtype)
    if device.type == "cuda":
        torch.cuda.current_stream(device).synchronize()
    _ARANGES[key] = cached
    return cached


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
        return summed_routes(grad, position, ctx.top_k), None, None, None


class _CombineRows(torch.autograd.Function):
    """Sorted rows y [M, H] -> out [T, H], out[t] = sum over slots j of
    y[position[t * top_k + j]], summed in f32 by one reduction over the
    slots, whose order depends on the shapes only: the same sum on every
    run (no atomics, unlike a scatter-add into the output)."""

    @staticmethod
    def forward(ctx, y, source, position, top_k):
        ctx.save_for_backward(source, position)
        return summed_routes(y, position, top_k)

    @staticmethod
    def backward(ctx, grad):
        source, position = ctx.saved_tensors
        return grad.index_select(0, source), None, None, None


class _SortedWeights(torch.autograd.Function):
    """topk_weights [T, top_k] -> the sorted rows' weights `route` (f32
    [M]) that gg.sort_routes' kernel gathered (and poisoned with NaN for
    an invalid expert id), differentiable in topk_weights: route r's
    gradient is its sorted row's, position[r] (position inverts order),
    one gather and no atomics. Unlike torch's masked_fill, the poisoned
    weight of an invalid route passes its gradient on (its token's output
    is NaN either way)."""

    @staticmethod
    def forward(ctx, topk_weights, route, position):
        ctx.save_for_backward(position)
        ctx.shape, ctx.dtype = topk_weights.shape, topk_weights.dtype
        return route

    @staticmethod
    def backward(ctx, grad):
        (position,) = ctx.saved_tensors
        return sorted_weights_gradient(grad, position, ctx.shape, ctx.dtype), None, None


def sorted_weights_gradient(grad, position, shape, dtype):
    """topk_weights' gradient (`shape`, `dtype`) from its sorted rows'
    `grad` [M]: route r's weight went to sorted row position[r]."""
    return grad.index_select(0, position).view(shape).to(dtype)


def summed_routes(rows, position, top_k):
    """_sum_routes by gg.combine_routes' kernel (the same bits, one pass)
    where it takes the rows (CUDA bf16, eager), else by torch."""
    combined = combine_kernel.combine(rows, position, top_k)
    return _sum_routes(rows, position, top_k) if combined is None else combined


def _sum_routes(rows, position, top_k):
    picked = rows.index_select(0, position)
    # The token count stated, not -1: with no tokens -1 would be ambiguous.
    by_token = picked.view(position.shape[0] // top_k, top_k, rows.shape[-1])
    # A 16-bit sum accumulates in f32 and rounds once (torch's reduced-
    # precision reductions), the same bits as an f32 sum cast after it,
    # one kernel fewer.
    return by_token.sum(dim=1)


def gather_rows(x: torch.Tensor, perm: Permutation, top_k: int) -> torch.Tensor:
    """x [T, H] in the sorted layout [T * top_k, H] (differentiable)."""
    return _GatherRows.apply(x, perm.source, perm.position, top_k)


def combine_rows(y: torch.Tensor, perm: Permutation, top_k: int) -> torch.Tensor:
    """The sorted rows [T * top_k, H] summed back per token [T, H]
    (differentiable, deterministic)."""
    return _CombineRows.apply(y, perm.source, perm.position, top_k)
