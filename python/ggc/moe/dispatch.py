"""Expert-parallel dispatch and combine over torch.distributed.

Each rank's routes (token, slot) are sorted by the slot of their expert
in the placement's rank-major order, so the rows bound for one rank are
contiguous and, within it, sorted by that rank's local expert:

    agree     one fixed-size all_to_all of a header per peer (the row count
              bound for it and what every rank must agree on: sizes, dtype,
              wire format, placement, gradients, errors), read back in one
              host copy: the only host synchronisation of a call
    dispatch  all_to_all of the rows (bf16, or e4m3 with their 1x128
              scales) and of each row's local expert and routing weight
    experts   the local experts on the rows received (a callable: ggc's
              fused_moe on CUDA, anything on CPU)
    combine   all_to_all of the expert outputs back, then each token's
              top_k rows summed in slot order in f32 (no atomics: the same
              bits on every run)

Every rank takes part in every collective of a call, also one whose own
input is bad: it sends an error flag in its header, and then every rank
raises, naming the rank and the problem, instead of one rank raising and
the others waiting on a collective that never comes. Backward runs the
same collectives with the splits swapped (one autograd Function per
direction, so every rank issues them in the same order).
"""

from __future__ import annotations

from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

from .permute import _CombineRows, _GatherRows, sort_routes
from .placement import ExpertPlacement

WIRES = ("bf16", "fp8")
MAX_CHUNKS = 16  # the header's row-count columns: a fixed size, whatever a rank asks
MAX_FIELDS = 8  # the header's columns for what every rank must agree on
_DTYPES = {torch.bfloat16: 1, torch.float16: 2, torch.float32: 3, torch.float64: 4}


class Layout(NamedTuple):
    """One call's routes as the dispatch sends them (sorted by slot)."""
    send: List[int]       # rows bound for each rank
    recv: List[int]       # rows arriving from each rank
    source: torch.Tensor  # the token of each sorted row [M]
    position: torch.Tensor  # the sorted row of each route [M]
    local_ids: torch.Tensor  # the destination's local expert of each sorted row [M]
    weights: torch.Tensor  # each sorted row's routing weight, NaN for a bad id [M]


class ExpertParallelError(ValueError):
    """A bad argument on some rank; raised on every rank of the group."""


def rank_and_size(group) -> Tuple[int, int]:
    return dist.get_rank(group), dist.get_world_size(group)


def plan_routes(topk_ids: torch.Tensor, topk_weights: torch.Tensor,
                placement: ExpertPlacement):
    """The routes sorted by destination slot: (per-rank row counts [W]
    on the device, the layout's device tensors). An id outside [0, E) goes
    to the owner of the nearest expert with a NaN weight, so its token's
    output is NaN rather than a plausible wrong value (as in fused_moe)."""
    experts = placement.num_experts
    slot_of, local_of, rank_start = placement.tables(topk_ids.device)
    ids = topk_ids.reshape(-1).long()
    clamped = ids.clamp(0, experts - 1)
    slots = slot_of.index_select(0, clamped)
    offsets, order, source, position, _ = sort_routes(slots.view(topk_ids.shape), experts)
    if source is order:
        source = order.clone()
    invalid = clamped != ids
    flat = topk_weights.reshape(-1).float().masked_fill(invalid, float("nan"))
    weights = flat.index_select(0, order)
    local_ids = local_of.index_select(0, clamped.index_select(0, order))
    counts = offsets.long().index_select(0, rank_start)
    return counts[1:] - counts[:-1], source, position, local_ids, weights


def agree(group, counts: Optional[torch.Tensor], fields: Sequence[Tuple[str, int]],
          error: Optional[str], device: torch.device
          ) -> Tuple[List[List[int]], List[List[int]]]:
    """Exchanges each peer's header: this rank's row counts for it, counts
    [W, chunks] (None when there is nothing to send), its error flag and
    the values of `fields` (name, value), which every rank must share.
    Returns (rows sent to, rows received from) each rank, per chunk, or
    raises on every rank if any rank's header shows an error or disagrees
    with this rank's. The header has a fixed size, so that the exchange
    itself never waits on a rank whose call is bad."""
    rank, world = rank_and_size(group)
    header = torch.zeros(world, MAX_CHUNKS + 1 + MAX_FIELDS, dtype=torch.int64)
    header[:, MAX_CHUNKS] = 1 if error else 0
    if fields and not error:
        header[:, MAX_CHUNKS + 1:MAX_CHUNKS + 1 + len(fields)] = torch.tensor(
            [value for _, value in fields], dtype=torch.int64)
    header = header.to(device)
    if counts is not None:
        header[:, :counts.shape[1]] = counts
    received = torch.empty_like(header)
    dist.all_to_all_single(received, header, group=group)
    mine, theirs = torch.stack([header, received]).cpu().tolist()  # the call's one host sync
    if error:
        raise ExpertParallelError(f"rank {rank}: {error}")
    bad = [r for r in range(world) if theirs[r][MAX_CHUNKS]]
    if bad:
        raise ExpertParallelError(
            f"rank {rank}: rank(s) {bad} rejected their input (their error says why); this "
            f"rank stops too, so that no rank waits on a collective that never comes")
    for r in range(world):
        for (name, want), got in zip(fields, theirs[r][MAX_CHUNKS + 1:]):
            if want != got:
                raise ExpertParallelError(
                    f"rank {rank}: rank {r} called the layer with {name} {_show(name, got)}, "
                    f"this rank with {_show(name, want)}: every rank must agree")
    return [row[:MAX_CHUNKS] for row in mine], [row[:MAX_CHUNKS] for row in theirs]


def fail(group, error: str, device: torch.device) -> None:
    """Raises `error` here and a pointer to this rank on every other rank
    (whose own agree() is waiting for this rank's header)."""
    agree(group, None, (), error, device)
    raise AssertionError("unreachable: agree raises on a rank's error")


def _show(name: str, value: int) -> str:
    if name == "x dtype":
        return next((str(d) for d, code in _DTYPES.items() if code == value), str(value))
    if name == "wire format":
        return repr(WIRES[value]) if 0 <= value < len(WIRES) else str(value)
    if name == "gradient mask":
        return "(" + ", ".join(f"{n} {'needs' if value >> i & 1 else 'needs no'} grad"
                               for i, n in enumerate(("x", "topk_weights", "weights"))) + ")"
    return str(value)


def dtype_code(dtype: torch.dtype) -> int:
    return _DTYPES.get(dtype, 0)


def _as_bytes(t: torch.Tensor) -> torch.Tensor:
    """A row-major tensor's bytes [rows, row bytes]: NCCL and gloo move any
    dtype this way (gloo lacks bf16 and fp8)."""
    row = 1
    for size in t.shape[1:]:
        row *= size
    return t.contiguous().view(t.shape[0], row).view(torch.uint8)


def all_to_all(tensors: Sequence[torch.Tensor], recv: List[int], send: List[int],
               group) -> List[torch.Tensor]:
    """Each tensor's rows, `send[r]` of them to rank r, `recv[r]` from rank
    r, in the order given (the same order on every rank)."""
    outs = []
    for t in tensors:
        out = t.new_empty((sum(recv),) + tuple(t.shape[1:]))
        dist.all_to_all_single(_as_bytes(out), _as_bytes(t), recv, send, group=group)
        outs.append(out)
    return outs


class _Exchange(torch.autograd.Function):
    """all_to_all of several tensors with one set of splits; its backward
    sends the gradients back with the splits swapped, every tensor's in
    the same order on every rank (a zero gradient where none came)."""

    @staticmethod
    def forward(ctx, recv, send, group, *tensors):
        ctx.recv, ctx.send, ctx.group = recv, send, group
        ctx.shapes = [(t.shape[1:], t.dtype, t.device) for t in tensors]
        return tuple(all_to_all(tensors, recv, send, group))

    @staticmethod
    def backward(ctx, *grads):
        wanted = ctx.needs_input_grad[3:]
        to_send = []
        for grad, want, (shape, dtype, device) in zip(grads, wanted, ctx.shapes):
            if want:
                to_send.append(torch.zeros((sum(ctx.recv),) + tuple(shape), dtype=dtype,
                                           device=device) if grad is None else grad)
        back = iter(all_to_all(to_send, ctx.send, ctx.recv, ctx.group))
        return (None, None, None) + tuple(next(back) if want else None for want in wanted)


def exchange(tensors: Sequence[torch.Tensor], recv: List[int], send: List[int], group,
             differentiable: bool) -> List[torch.Tensor]:
    if differentiable:
        return list(_Exchange.apply(recv, send, group, *tensors))
    return all_to_all(tensors, recv, send, group)


def combine(y_back: torch.Tensor, layout: Layout, top_k: int, differentiable: bool
            ) -> torch.Tensor:
    """out[t] = sum over slots j of y_back[position[t * top_k + j]], in f32,
    slot order: ggc's combine kernel where it serves, else torch."""
    if differentiable:
        return _CombineRows.apply(y_back, layout.source, layout.position, top_k)
    if layout.position.numel() == 0:
        return y_back.new_zeros(0, y_back.shape[1])
    from . import elementwise
    from .permute import _sum_routes
    combined = elementwise.combine(y_back, layout.position, top_k) if y_back.is_cuda else None
    return _sum_routes(y_back, layout.position, top_k) if combined is None else combined


def gather(x: torch.Tensor, layout: Layout, top_k: int, differentiable: bool) -> torch.Tensor:
    """x's rows in the sorted order (a deterministic backward: each token's
    row gradients summed in slot order)."""
    if differentiable:
        return _GatherRows.apply(x, layout.source, layout.position, top_k)
    return x.index_select(0, layout.source)


ExpertsFn = Callable[[torch.Tensor, Optional[torch.Tensor], torch.Tensor, torch.Tensor],
                     torch.Tensor]
