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
the others waiting on a collective that never comes. A rank that does not
come at all is waited for `timeout` seconds (agreement_timeout), then
every waiting rank raises, naming it where the backend can tell.
"""

from __future__ import annotations

import datetime
import math
import numbers
import os
import threading
import time
from typing import Callable, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

WIRES = ("bf16", "fp8")
MAX_CHUNKS = 16  # chunks a call may ask for (the header has a fixed size)
MAX_COUNTS = 2 * MAX_CHUNKS  # the header's count columns: rows and routes per chunk
MAX_FIELDS = 12  # the header's columns for what every rank must agree on
_DTYPES = {torch.bfloat16: 1, torch.float16: 2, torch.float32: 3, torch.float64: 4}
# How long a rank waits in the agreement for the others: generous, since a
# rank's first call may be minutes behind (its kernels compiling, a
# checkpoint loading); timeout= or $GGC_EP_TIMEOUT set it.
DEFAULT_TIMEOUT = 300.0
TIMEOUT_ENV = "GGC_EP_TIMEOUT"
_TAG = 0x6767  # the agreement's point-to-point messages, apart from a caller's (tag 0)
_READBACK = threading.local()  # _readback_slot's buffers and events


class ExpertParallelError(ValueError):
    """A bad argument on some rank, raised on every rank of the group; or
    a rank that failed or did not come, raised on those that waited."""


def rank_and_size(group) -> Tuple[int, int]:
    return dist.get_rank(group), dist.get_world_size(group)


def agreement_timeout(timeout: Optional[float] = None) -> Tuple[float, Optional[str]]:
    """(seconds, problem): `timeout` if given, else $GGC_EP_TIMEOUT, else
    DEFAULT_TIMEOUT; a bad value is a problem (this rank's error in the
    agreement, which then waits DEFAULT_TIMEOUT)."""
    if timeout is None:
        text = os.environ.get(TIMEOUT_ENV, "").strip()
        if not text:
            return DEFAULT_TIMEOUT, None
        name, value, seconds = "$" + TIMEOUT_ENV, text, _float(text)
    else:
        number = isinstance(timeout, numbers.Real) and not isinstance(timeout, bool)
        name, value, seconds = "timeout", timeout, float(timeout) if number else None
    if seconds is None or not (math.isfinite(seconds) and seconds > 0):
        return DEFAULT_TIMEOUT, (f"{name} must be a number of seconds > 0 (the expert-parallel "
                                 f"agreement's limit), got {value!r}")
    return seconds, None


def _float(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def agree(group, counts: Optional[torch.Tensor], fields: Sequence[Tuple[str, int]],
          error: Optional[str], device: torch.device, placement=None,
          timeout: Optional[float] = None) -> Tuple[List[List[int]], List[List[int]]]:
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
    differently instead of two digests. `timeout`: agreement_timeout's."""
    rank, world = rank_and_size(group)
    seconds, bad_timeout = agreement_timeout(timeout)
    error = error or bad_timeout
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
    mine, theirs = _exchange(header, group, rank, world, seconds)  # the call's one host sync
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
        raise ExpertParallelError(
            f"rank {rank}: {_placements_differ(group, placement, device, seconds)}")
    for r in range(world):
        for (name, want), got in zip(fields, theirs[r][MAX_COUNTS + 1:]):
            if want != got:
                raise ExpertParallelError(
                    f"rank {rank}: rank {r} called the layer with {name} {_show(name, got)}, "
                    f"this rank with {_show(name, want)}: every rank must agree")
    return [row[:n] for row in mine], [row[:n] for row in theirs]


def _exchange(sent: torch.Tensor, group, rank: int, world: int,
              seconds: float) -> List[List[List[int]]]:
    """The agreement's exchange: row r of `sent` [W, n] int64 to rank r.
    Returns [sent, received] as lists (received row r: rank r's row for
    this rank), read back in one host copy, or raises ExpertParallelError
    if a peer does not come within `seconds` or fails (exits, crashes:
    gloo's "Connection closed by peer", NCCL's errors), which is what a
    caller of the layer handles.

    The wait's limit is ggc's own, not the backend's (the process group's
    timeout, 30 min for gloo and 10 for NCCL, after which NCCL's watchdog
    ends the process). How it waits depends on where the header is:
    - CPU (gloo): a point-to-point message to and from each peer instead
      of one all_to_all, each receive waited for until the deadline, so
      that the ranks whose header never came are named. gloo's
      all_to_all runs on a worker thread that cannot say which peer it
      waits for and keeps waiting past a timed-out work.wait (destroying
      the group then waits until that peer comes or leaves); a timed-out
      receive closes the group's connections instead. As fast as the all_to_all on 2 ranks (median
      255 vs 263 us, 2 CPU cores), slower with more ranks than cores
      (3 ranks: 2.4 vs 0.6 ms), each receive's wake-up its own.
    - CUDA (NCCL): the all_to_all as before, its result copied to pinned
      memory, and the host polls that copy's event against the deadline
      instead of blocking in the copy: the same wait for the same GPU
      work (the agreement's one host synchronisation), no added one. On
      an H200 (one rank) it took what the blocking copy took when the
      host waits for the GPU, as it does after the routing's kernels
      (median 121 vs 125 us), and up to 20 us more when the GPU is idle
      already. torch's work.wait(timeout) sleeps 10 ms between polls,
      and a monitored barrier or a store would add a round trip to every
      call. NCCL's all_to_all does not say which peer is missing."""
    deadline = time.monotonic() + seconds
    try:
        if sent.is_cuda:
            return _exchange_on_gpu(sent, group, rank, world, deadline, seconds)
        return _exchange_by_messages(sent, group, rank, world, deadline, seconds)
    except RuntimeError as error:  # DistBackendError and the backends' errors
        raise _failed(rank, error, None) from error


def _exchange_by_messages(sent, group, rank, world, deadline, seconds):
    """Each peer's row sent and received as its own message, receives
    posted first (a peer whose header came has posted its receive for
    this rank's, so the sends complete)."""
    sent = sent.contiguous()
    received = torch.empty_like(sent)
    received[rank] = sent[rank]
    peers = [r for r in range(world) if r != rank]
    recvs = [(r, dist.irecv(received[r], _global_rank(group, r), group, _TAG)) for r in peers]
    sends = [(r, dist.isend(sent[r], _global_rank(group, r), group, _TAG)) for r in peers]
    # Who came is told by the receives; a send can be left only after that.
    missing = _wait_all(recvs, rank, deadline) or _wait_all(sends, rank, deadline)
    if missing:
        raise _late(rank, world, missing, seconds)
    return [sent.tolist(), received.tolist()]


def _global_rank(group, rank: int) -> int:
    """isend/irecv's peer (torch >= 2.4 takes global ranks, not group_dst)."""
    if group is None or group is dist.group.WORLD:
        return rank
    return dist.get_global_rank(group, rank)


def _wait_all(works, rank: int, deadline: float) -> List[int]:
    """The peers of `works` [(peer, work)] whose work did not complete by
    the deadline. gloo closes every connection of the group when one wait
    times out, so the works not complete by then fail at once: their
    peers did not come in time either. A work that fails before the
    deadline is a peer that failed: raised."""
    missing = []
    for peer, work in works:
        try:
            work.wait(_until(deadline))
        except RuntimeError as error:
            if not missing and not _timed_out(error, deadline):
                raise _failed(rank, error, peer) from error
            missing.append(peer)
    return missing


def _timed_out(error: RuntimeError, deadline: float) -> bool:
    """gloo's timed-out wait, told from a peer's failure (which comes
    before the deadline, as "Connection closed by peer")."""
    return "Timed out" in str(error) or deadline - time.monotonic() < 0.05


def _until(deadline: float) -> datetime.timedelta:
    """The time left, at least 1 ms: 0 would mean no limit to work.wait."""
    left_ms = math.ceil(max(deadline - time.monotonic(), 0.0) * 1000)
    return datetime.timedelta(milliseconds=max(left_ms, 1))


def _exchange_on_gpu(sent, group, rank, world, deadline, seconds):
    received = torch.empty_like(sent)
    dist.all_to_all_single(received, sent, group=group)
    both = torch.stack([sent, received])
    host, copied = _readback_slot(both)
    host.copy_(both, non_blocking=True)
    copied.record(torch.cuda.current_stream(both.device))  # where the copy runs
    # A spin, as the blocking copy's (a time.sleep(0) in the loop cost
    # some 20 us a call on an H200).
    while not copied.query():
        if time.monotonic() > deadline:
            _READBACK.slots.pop((both.device, both.shape))  # its copy is still queued
            raise _late(rank, world, None, seconds)
    return host.tolist()


def _readback_slot(both: torch.Tensor):
    """A pinned host buffer shaped like `both` and an event, kept per
    thread and device: made anew each call, they cost some 20 us (H200)."""
    slots = _READBACK.__dict__.setdefault("slots", {})
    key = (both.device, both.shape)
    if key not in slots:
        slots[key] = (torch.empty(both.shape, dtype=both.dtype, pin_memory=True),
                      torch.cuda.Event())
    return slots[key]


def _late(rank: int, world: int, missing: Optional[List[int]], seconds: float):
    """The error of a rank that waited `seconds` for `missing` (None: for
    some rank, unnamed)."""
    if missing is None:
        who = f"not every rank of {world} reached"
        why = " (NCCL's all_to_all does not say which rank is missing)"
    else:
        who = (f"rank {missing[0]} of {world} did not reach" if len(missing) == 1
               else f"ranks {missing} of {world} did not reach")
        why = ""
    return ExpertParallelError(
        f"rank {rank}: {who} the expert-parallel agreement within {seconds:g} s{why}: "
        f"stopped calling the layer, stuck or far behind (timeout= or ${TIMEOUT_ENV} sets "
        f"the limit); the group is unusable after this")


def _failed(rank: int, error: Exception, peer: Optional[int]):
    text = str(error).strip()
    first = text.splitlines()[0] if text else type(error).__name__
    where = "" if peer is None else f" (its connection to rank {peer} failed)"
    return ExpertParallelError(
        f"rank {rank}: the agreement with the other ranks failed ({first}): a rank exited "
        f"or crashed during the call{where}, or the group is broken")


def _placements_differ(group, placement, device: torch.device, seconds: float,
                       shown: int = 4) -> str:
    """Every rank's expert -> rank table exchanged, and the experts on
    which they differ named (the first `shown`)."""
    rank, world = rank_and_size(group)
    table = placement.tables(device)[0].repeat(world, 1)  # each expert's rank, for each peer
    tables = _exchange(table, group, rank, world, seconds)[1]
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


def fail(group, error: str, device: torch.device, timeout: Optional[float] = None) -> None:
    """Raises `error` here and a pointer to this rank on every other rank
    (whose own agree() is waiting for this rank's header)."""
    agree(group, None, (), error, device, timeout=timeout)
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
