"""Where each row of an expert-parallel layer goes, and how its results
come back: the index tensors of both ends, built on the device.

Sender: a token goes once to each rank that holds at least one of its
top_k experts (not once per route: with DeepSeek-V3's top-8 of 256
experts over 4 ranks a token reaches 3.6 ranks on average, not 8), with
one (local expert or -1, routing weight) pair per slot. The rows are
sorted by destination rank, then token. Its results come back in the
same order, and token t sums its rows in rank order.

Receiver: the (row, slot) pairs for its experts are sorted by local
expert (stable, so in arrival order within an expert), plus one dummy
route of weight 0 at the end of the last expert's rows; each received
row's result is the sum of its slots' results in slot order, a skipped
slot reading the dummy's exact zero. No atomics on either end: the same
bits on every run.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import torch

from .permute import _sum_routes, constant_arange
from .placement import ExpertPlacement


class Sends(NamedTuple):
    """A rank's (token, destination) pairs, sorted so that those sent come
    first (by rank, then token), every tensor made before the sizes are
    agreed (the host waits for them there, so the fewer launches after,
    the shorter the GPU's idle gap). Pair q = token * W + rank; P pairs are
    sent."""
    rows: torch.Tensor      # [W] int64: tokens bound for each rank
    routes: torch.Tensor    # [W] int64: routes bound for each rank
    tokens: torch.Tensor    # [T * W] the token of each pair, in sent order
    position: torch.Tensor  # [T * W] by pair: its row in sent order, P (a zero row) if unsent
    ids: torch.Tensor       # [T * W, top_k] f32, sent order: the rank's local expert per slot, or -1
    weights: torch.Tensor   # [T * W, top_k] f32, sent order: the slot's weight (NaN: a bad id), or 0


class SendLayout(NamedTuple):
    """Sends cut to the P rows sent."""
    tokens: torch.Tensor    # [P]
    position: torch.Tensor  # [T * W]
    ids: torch.Tensor       # [P, top_k]
    weights: torch.Tensor   # [P, top_k]


class ReceiveLayout(NamedTuple):
    source: torch.Tensor    # [R + 1] the received row of each local route (the dummy: any)
    local_ids: torch.Tensor  # [R + 1] each route's local expert, sorted
    offsets: torch.Tensor   # [E_local + 1] int32: expert g's routes offsets[g] .. offsets[g+1]
    weights: torch.Tensor   # [R + 1] each route's routing weight (the dummy's: 0)
    position: torch.Tensor  # [N * top_k] each (row, slot)'s route, R (the dummy) if skipped
    dummy: torch.Tensor     # [1] R, the dummy route's row (its result must be zeroed)


def slots(topk_ids: torch.Tensor, topk_weights: torch.Tensor, placement: ExpertPlacement):
    """Per (token, rank, slot) [T, W, top_k]: whether the slot's expert is
    on the rank, the rank's local expert (f32) or -1, and the slot's weight
    or 0. An id outside [0, E) goes to the owner of the nearest expert with
    a NaN weight, so its token's output is NaN rather than a plausible
    wrong value (as in fused_moe)."""
    world = placement.world_size
    rank_of, local_of = placement.tables(topk_ids.device)
    ids = topk_ids.long()
    clamped = ids.clamp(0, placement.num_experts - 1)
    weights = topk_weights.float().masked_fill(clamped != ids, float("nan"))
    ranks = constant_arange(world, torch.int64, topk_ids.device)
    match = rank_of[clamped].unsqueeze(1) == ranks.view(1, world, 1)
    return (match, torch.where(match, local_of[clamped].unsqueeze(1).float(), -1.0),
            torch.where(match, weights.unsqueeze(1), 0.0))


def plan_sends(topk_ids: torch.Tensor, topk_weights: torch.Tensor,
               placement: ExpertPlacement) -> Sends:
    tokens, top_k = topk_ids.shape
    world = placement.world_size
    match, slot_ids, slot_weights = slots(topk_ids, topk_weights, placement)
    present = match.any(dim=2).reshape(-1)
    ranks = constant_arange(world, torch.int64, topk_ids.device)
    order = torch.sort(torch.where(present, ranks.repeat(tokens), world), stable=True).indices
    inverse = torch.empty_like(order).scatter_(
        0, order, constant_arange(order.shape[0], torch.int64, order.device))
    position = torch.where(present, inverse, present.sum())
    return Sends(present.view(tokens, world).sum(dim=0), match.sum(dim=(0, 2)),
                 torch.div(order, world, rounding_mode="floor"), position,
                 slot_ids.view(-1, top_k).index_select(0, order),
                 slot_weights.view(-1, top_k).index_select(0, order))


def send_layout(sends: Sends, rows: int) -> SendLayout:
    """Sends cut to the `rows` rows sent (a size agreed on the host)."""
    return SendLayout(sends.tokens[:rows], sends.position, sends.ids[:rows],
                      sends.weights[:rows])


def receive_layout(ids: torch.Tensor, weights: torch.Tensor, routes: Optional[int],
                   experts: int) -> ReceiveLayout:
    """The local routes of N received rows: ids [N, top_k] (local expert or
    -1), weights [N, top_k]; `routes` R of the N * top_k slots are local
    (agreed on the host), or None: not known on the host, and then every
    slot is kept, the skipped ones after the dummy, outside every expert's
    rows (offsets[-1] = R + 1 on the device); `experts` the local expert
    count (>= 1)."""
    rows, top_k = ids.shape
    flat = ids.reshape(-1).long()
    local = flat >= 0
    key = torch.where(local, flat, experts)
    # The dummy slot sorts right after the real routes of the last expert.
    key = torch.cat([key, key.new_full((1,), experts - 1)])
    sorted_keys, order = torch.sort(key, stable=True)
    kept = order.shape[0] if routes is None else routes + 1
    taken = order[:kept]
    source = torch.div(taken, top_k, rounding_mode="floor").clamp_(max=max(rows - 1, 0))
    local_ids = sorted_keys[:kept]
    bounds = constant_arange(experts + 1, local_ids.dtype, local_ids.device)
    offsets = torch.searchsorted(local_ids, bounds, out_int32=True)
    route = torch.cat([weights.reshape(-1), weights.new_zeros(1)]).index_select(0, taken)
    # A fresh arange: N varies call by call (a cached one per size would
    # synchronise the first time and pile up).
    inverse = torch.empty_like(order).scatter_(
        0, order, torch.arange(order.shape[0], dtype=torch.int64, device=order.device))
    dummy = local.sum().view(1)
    position = torch.where(local, inverse[:-1], dummy)
    return ReceiveLayout(source, local_ids, offsets, route, position, dummy)


def take_rows(t: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """t[index] (no gradient), gathered 8 bytes at a time where the rows
    allow it: torch's gather of 1- and 2-byte elements is several times
    slower than of 8-byte ones."""
    width = t.shape[1] * t.element_size()
    aligned = width % 8 == 0 and t.storage_offset() * t.element_size() % 8 == 0
    if t.dim() == 2 and t.is_contiguous() and aligned and t.dtype != torch.bool:
        return t.view(torch.int64).index_select(0, index).view(t.dtype)
    return t.index_select(0, index)


class SpreadRows(torch.autograd.Function):
    """x [T, H] -> the rows sent, x[tokens] [P, H]. Its backward sums each
    token's row gradients in rank order (position [T * W], P meaning none):
    deterministic, unlike index_select's backward (atomic adds)."""

    @staticmethod
    def forward(ctx, x, tokens, position, world):
        ctx.save_for_backward(position)
        ctx.world = world
        return x.index_select(0, tokens)

    @staticmethod
    def backward(ctx, grad):
        (position,) = ctx.saved_tensors
        padded = torch.cat([grad, grad.new_zeros(1, grad.shape[1])])
        return _sum_routes(padded, position, ctx.world), None, None, None


class CollectRows(torch.autograd.Function):
    """The returned rows [P + 1, H] (the last one zero) -> out [T, H],
    out[t] = the sum of t's rows in rank order (position [T * W]). Its
    backward hands each row sent its token's gradient."""

    @staticmethod
    def forward(ctx, back, tokens, position, world):
        ctx.save_for_backward(tokens)
        return _sum_routes(back, position, world)

    @staticmethod
    def backward(ctx, grad):
        (tokens,) = ctx.saved_tensors
        rows = grad.index_select(0, tokens)
        return torch.cat([rows, rows.new_zeros(1, rows.shape[1])]), None, None, None


def fixed_order_sum(rows: torch.Tensor, position: torch.Tensor, count: int) -> torch.Tensor:
    """out[i] = sum_j rows[position[i * count + j]], f32, j in order: ggc's
    combine kernel where it serves, else torch."""
    if position.numel() == 0:
        return rows.new_zeros(0, rows.shape[1])
    if rows.is_cuda:
        from . import combine_kernel
        combined = combine_kernel.combine(rows, position, count)
        if combined is not None:
            return combined
    return _sum_routes(rows, position, count)


def zero_dummy(y: torch.Tensor, layout: ReceiveLayout, grad: bool) -> torch.Tensor:
    """y with the dummy route's row set to exactly zero: its weight is 0,
    but 0 * expert(row) is NaN where the row it borrowed holds NaN or Inf,
    and every skipped slot reads it."""
    if grad:
        return y.index_fill(0, layout.dummy, 0)
    return y.index_fill_(0, layout.dummy, 0)
