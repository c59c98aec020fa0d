"""The collectives of an expert-parallel layer, over torch.distributed.

    agree     one fixed-size all_to_all of a header per peer (the rows and
              routes bound for it, and what every rank must agree on:
              sizes, dtype, wire format, placement, gradients, errors),
              read back in one host copy: the call's only host
              synchronisation
    exchange  all_to_all of several tensors with one set of splits, in one
              order on every rank; differentiable (its backward sends the
              gradients back with the splits swapped)

Every rank takes part in every collective of a call, also one whose own
input is bad: it sends an error flag in its header, and then every rank
raises, naming the rank and the problem, instead of one rank raising and
the others waiting on a collective that never comes.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

WIRES = ("bf16", "fp8")
MAX_CHUNKS = 16  # chunks a call may ask for (the header has a fixed size)
MAX_COUNTS = 2 * MAX_CHUNKS  # the header's count columns: rows and routes per chunk
MAX_FIELDS = 12  # the header's columns for what every rank must agree on
_DTYPES = {torch.bfloat16: 1, torch.float16: 2, torch.float32: 3, torch.float64: 4}


class ExpertParallelError(ValueError):
    """A bad argument on some rank; raised on every rank of the group."""


def rank_and_size(group) -> Tuple[int, int]:
    return dist.get_rank(group), dist.get_world_size(group)


def agree(group, counts: Optional[torch.Tensor], fields: Sequence[Tuple[str, int]],
          error: Optional[str], device: torch.device, placement=None
          ) -> Tuple[List[List[int]], List[List[int]]]:
    """Exchanges each peer's header: this rank's counts for it, counts
    [W, n <= MAX_COUNTS] (None when there is nothing to send), its error
    flag and the values of `fields` (name, value), which every rank must
    share. Returns (this rank's counts for, each rank's counts for this
    rank), n per rank, or raises on every rank if any rank's header shows
    an error or disagrees with this rank's. The header has a fixed size,
    so that the exchange itself never waits on a rank whose call is bad.
    `placement` (this rank's ExpertPlacement, whose digest is the field
    "placement"): when only the placements differ, every rank sees it and
    they exchange their tables, so that the error names the experts placed
    differently instead of two digests."""
    rank, world = rank_and_size(group)
    n = 0 if counts is None else counts.shape[1]
    header = torch.zeros(world, MAX_COUNTS + 1 + MAX_FIELDS, dtype=torch.int64)
    header[:, MAX_COUNTS] = 1 if error else 0
    if fields and not error:
        header[:, MAX_COUNTS + 1:MAX_COUNTS + 1 + len(fields)] = torch.tensor(
            [value for _, value in fields], dtype=torch.int64)
    if device.type == "cuda":
        # From pinned memory: a copy from pageable memory would wait for
        # the GPU's queue, a second host synchronisation.
        header = header.pin_memory().to(device, non_blocking=True)
    else:
        header = header.to(device)
    if counts is not None:
        header[:, :n] = counts
    received = torch.empty_like(header)
    _exchange(received, header, group, rank)
    mine, theirs = torch.stack([header, received]).cpu().tolist()  # the call's one host sync
    if error:
        raise ExpertParallelError(f"rank {rank}: {error}")
    bad = [r for r in range(world) if theirs[r][MAX_COUNTS]]
    if bad:
        raise ExpertParallelError(
            f"rank {rank}: rank(s) {bad} rejected their input (their error says why); this "
            f"rank stops too, so that no rank waits on a collective that never comes")
    values = [row[MAX_COUNTS + 1:MAX_COUNTS + 1 + len(fields)] for row in theirs]
    differ = [name for i, (name, _) in enumerate(fields) if len({v[i] for v in values}) > 1]
    # Every rank holds every rank's fields, so all of them take this branch
    # (a collective) or none does.
    if differ == ["placement"] and placement is not None:
        raise ExpertParallelError(f"rank {rank}: {_placements_differ(group, placement, device)}")
    for r in range(world):
        for (name, want), got in zip(fields, theirs[r][MAX_COUNTS + 1:]):
            if want != got:
                raise ExpertParallelError(
                    f"rank {rank}: rank {r} called the layer with {name} {_show(name, got)}, "
                    f"this rank with {_show(name, want)}: every rank must agree")
    return [row[:n] for row in mine], [row[:n] for row in theirs]


def _exchange(received: torch.Tensor, sent: torch.Tensor, group, rank: int) -> None:
    """The agreement's all_to_all; its failure (a peer that exited or
    crashed: gloo's "Connection closed by peer", NCCL's errors) raised as
    ExpertParallelError, which is what a caller of the layer handles."""
    try:
        dist.all_to_all_single(received, sent, group=group)
    except RuntimeError as error:  # DistBackendError and the backends' errors
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ExpertParallelError(
            f"rank {rank}: the agreement with the other ranks failed ({first}): a rank "
            f"exited or crashed during the call, or the group is broken") from error


def _placements_differ(group, placement, device: torch.device, shown: int = 4) -> str:
    """Every rank's expert -> rank table exchanged, and the experts on
    which they differ named (the first `shown`)."""
    rank, world = rank_and_size(group)
    table = placement.tables(device)[0].repeat(world, 1)  # each expert's rank, for each peer
    received = torch.empty_like(table)
    _exchange(received, table, group, rank)
    tables = received.cpu().tolist()
    parts = []
    differing = [e for e in range(placement.num_experts) if len({t[e] for t in tables}) > 1]
    for e in differing[:shown]:
        by_target = {}
        for r, t in enumerate(tables):
            by_target.setdefault(t[e], []).append(r)
        parts.append(f"expert {e} is on " + ", ".join(
            f"rank {target} for rank(s) {ranks}" for target, ranks in sorted(by_target.items())))
    more = f" (and {len(differing) - shown} more)" if len(differing) > shown else ""
    return ("the ranks were given different expert placements: " + "; ".join(parts) + more
            + ": every rank must be given the same placement")


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


def all_to_all(tensors: Sequence[torch.Tensor], recv: List[int], send: List[int], group,
               outs: Optional[Sequence[torch.Tensor]] = None, async_op: bool = False):
    """Each tensor's rows, `send[r]` of them to rank r, `recv[r]` from rank
    r, in the order given (the same order on every rank), into `outs` or
    new tensors. With async_op, (outs, works) (NCCL: the collectives run
    on its stream in the order issued)."""
    if outs is None:
        outs = [t.new_empty((sum(recv),) + tuple(t.shape[1:])) for t in tensors]
    works = [dist.all_to_all_single(_as_bytes(out), _as_bytes(t), recv, send, group=group,
                                    async_op=async_op)
             for t, out in zip(tensors, outs)]
    return (list(outs), works) if async_op else list(outs)


class _Exchange(torch.autograd.Function):
    """all_to_all of several tensors with one set of splits; its backward
    sends the gradients back with the splits swapped, every tensor's in
    the same order on every rank (a zero gradient where none came).
    `anchor`, a leaf that needs a gradient, makes every output need one, so
    that every rank records the exchange whatever its own tensors need
    (a rank that received no rows would otherwise drop out of backward)."""

    @staticmethod
    def forward(ctx, recv, send, group, anchor, *tensors):
        ctx.recv, ctx.send, ctx.group = recv, send, group
        ctx.shapes = [(t.shape[1:], t.dtype, t.device) for t in tensors]
        return tuple(all_to_all(tensors, recv, send, group))

    @staticmethod
    def backward(ctx, *grads):
        wanted = ctx.needs_input_grad[4:]
        to_send = []
        for grad, want, (shape, dtype, device) in zip(grads, wanted, ctx.shapes):
            if want:
                to_send.append(torch.zeros((sum(ctx.recv),) + tuple(shape), dtype=dtype,
                                           device=device) if grad is None else grad)
        back = iter(all_to_all(to_send, ctx.send, ctx.recv, ctx.group))
        return (None, None, None, None) + tuple(next(back) if want else None
                                                for want in wanted)


def exchange(tensors: Sequence[torch.Tensor], recv: List[int], send: List[int], group,
             differentiable: bool) -> List[torch.Tensor]:
    if differentiable:
        anchor = torch.zeros((), requires_grad=True)
        return list(_Exchange.apply(recv, send, group, anchor, *tensors))
    return all_to_all(tensors, recv, send, group)


# experts(rows [M, H] sorted by local expert, their 1x128 scales (FP8: in
# quant.mn_major's M-major [H/128, align4(M)] form) or None, offsets [E_local + 1] int32, local expert ids [M], routing
# weights [M] f32) -> [M, H]: weight * expert(row) per row. With sync_free,
# rows past offsets[-1] are no routes (local id E_local, weight 0): their
# results are never read.
ExpertsFn = Callable[[torch.Tensor, Optional[torch.Tensor], torch.Tensor, torch.Tensor,
                      torch.Tensor], torch.Tensor]
