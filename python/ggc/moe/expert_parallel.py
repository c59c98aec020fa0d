"""Expert parallelism: a MoE layer whose experts are spread over the ranks
of a torch.distributed group (NCCL across GPUs and hosts; gloo on CPUs).

    route      each rank routes its own tokens (the router is replicated)
    agree      the row and route counts, and a check that every rank's call
               agrees (ggc.moe.dispatch; the one host synchronisation)
    dispatch   each token goes once to each rank holding one of its experts
               (ggc.moe.ep_layout), bf16 or e4m3 with 1x128 scales
    experts    each rank runs its local experts on the routes it received
               (ggc's grouped GEMMs, the routing weight in the epilogue)
               and sums each received row's routes
    combine    the sums go back and each token adds its ranks' in rank order

docs/expert-parallel.md is the guide.
"""

from __future__ import annotations

from typing import List, Optional

import torch
import torch.distributed as dist

from . import checks
from .dispatch import (MAX_CHUNKS, WIRES, ExpertParallelError, ExpertsFn, agree, all_to_all,
                       dtype_code, exchange, fail, rank_and_size)
from .ep_static import check_once, sync_free_call
from .ep_layout import (CollectRows, ReceiveLayout, Sends, SendLayout, SpreadRows,
                        fixed_order_sum, plan_sends, receive_layout, zero_dummy,
                        send_layout, take_rows)
from .permute import _CombineRows, _GatherRows
from .placement import ExpertPlacement, PlacementSpec, local_weights_check
from .quant import BLOCK, FP8, mn_major, quantize_rows


def expert_parallel_moe(x: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor,
                        w13: torch.Tensor, w2: torch.Tensor, *, num_experts: int,
                        group=None, placement: PlacementSpec = None,
                        activation: str = "swiglu", w13_scale: Optional[torch.Tensor] = None,
                        w2_scale: Optional[torch.Tensor] = None, wire: str = "bf16",
                        chunks: int = 1, sync_free: Optional[bool] = None,
                        experts: Optional[ExpertsFn] = None,
                        timeout: Optional[float] = None,
                        w13_bias: Optional[torch.Tensor] = None,
                        w2_bias: Optional[torch.Tensor] = None,
                        compute_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """out[t] = sum_j topk_weights[t, j] * expert_{topk_ids[t, j]}(x[t]), with
    the experts spread over the ranks of `group` (default: the world).

    Every rank calls this with its own tokens x [T, H] bf16 (T may differ
    by rank, and be 0) and routing [T, top_k] over all `num_experts`
    experts, and with its own experts' weights: w13 [E_local, 2I, H], w2
    [E_local, H, I] for the experts `placement` gives it (default:
    contiguous blocks, the first E % W ranks one more; or the rank of each
    expert, or each rank's list), bf16 or FP8 with 128x128 block scales.

    `wire`: "bf16" sends the rows as they are; "fp8" quantises each token
    once (e4m3, 1x128 f32 scales) and sends that, half the bytes (FP8
    weights only; inference). The results come back in bf16.
    `chunks` > 1 splits the tokens into that many parts and sends part
    c + 1 while part c's experts run (inference).
    `sync_free`: exchanges sized by T alone, with no host synchronisation,
    so that the call can be captured in a CUDA graph (every token goes to
    every rank; for decode sizes; inference; every rank the same T;
    ggc.moe.ep_static): True, False, or None (default) for while a CUDA
    graph captures.
    `experts`: the local experts, experts(rows, rows_scale, offsets,
    local_ids, weights) -> [M, H] (ggc.moe.dispatch.ExpertsFn); default
    ggc's grouped GEMMs (CUDA). `w13_bias` [E_local, 2I] and `w2_bias`
    [E_local, H]: the local experts' biases (gpt-oss), as fused_moe adds
    them (ggc's experts only). `compute_dtype=torch.float8_e4m3fn`: bf16
    weights, the local experts' GEMMs in FP8 on them quantised per call,
    differentiable (fused_moe's; ggc's experts only, wire='bf16').
    `timeout`: seconds this rank waits in the agreement for the others
    (None: $GGC_EP_TIMEOUT, else 300); past it, ExpertParallelError naming
    the ranks that did not come (gloo; NCCL cannot tell which).

    One small host synchronisation a call (the counts; none with
    sync_free after a signature's first call); the results are
    deterministic. A bad argument on any rank raises ExpertParallelError
    on every rank, never a hang (with sync_free, on a signature's first
    call only: later calls are trusted). BF16 is differentiable in x,
    topk_weights, w13 and w2 (every rank must run backward, as with DDP)."""
    group = dist.group.WORLD if group is None else group
    rank, world = rank_and_size(group)
    device = _collective_device(group, x.device if isinstance(x, torch.Tensor) else None)
    if sync_free is None:
        sync_free = device.type == "cuda" and torch.cuda.is_current_stream_capturing()
    problem, setup = _setup(x, topk_weights, topk_ids, w13, w2, num_experts, rank, world,
                            placement, activation, w13_scale, w2_scale, wire, chunks, experts,
                            sync_free, (w13_bias, w2_bias), compute_dtype)
    if setup is None:  # a bad argument: tell the others, then raise everywhere
        if sync_free and device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            raise ExpertParallelError(f"rank {rank}: {problem}")  # no collective in a capture
        fail(group, problem, device, timeout)
    place, grad_mask, run_experts = setup
    local_experts = len(place.local_experts(rank))
    if sync_free:
        fields = _fields(x, topk_ids.shape[1], num_experts, wire, grad_mask, chunks, place) + (
            ("tokens T (sync_free)", x.shape[0]),)
        check_once(group, (group, x.device) + tuple(v for _, v in fields), fields, device,
                   place, timeout)
        return sync_free_call(x, topk_weights, topk_ids, place, local_experts, wire,
                              run_experts, group)
    steps = [_Step(x_part, *_plan(x_part, w, ids, place, wire, grad_mask != 0),
                   topk_ids.shape[1], local_experts, wire)
             for x_part, w, ids in _split(x, topk_weights, topk_ids, chunks)]
    counts = torch.cat([torch.stack([s.sends.rows for s in steps], dim=1),
                        torch.stack([s.sends.routes for s in steps], dim=1)], dim=1)
    fields = _fields(x, topk_ids.shape[1], num_experts, wire, grad_mask, chunks, place)
    mine, theirs = agree(group, counts, fields, None, device, place, timeout)
    for c, step in enumerate(steps):
        step.agreed([row[c] for row in mine], [row[c] for row in theirs],
                    sum(row[chunks + c] for row in theirs))
    if chunks == 1:
        return steps[0].run(run_experts, group, grad_mask != 0)
    return _pipelined(steps, run_experts, group)


def _fields(x, top_k, num_experts, wire, grad_mask, chunks, place: ExpertPlacement):
    """What every rank's call must agree on, as (name, value): top_k too,
    since each row's slots travel with it."""
    return (("hidden size H", x.shape[1]), ("top_k", top_k), ("expert count E", num_experts),
            ("x dtype", dtype_code(x.dtype)), ("wire format", WIRES.index(wire)),
            ("gradient mask", grad_mask), ("chunks", chunks), ("placement", place.digest()))


class _Step:
    """One part of a call's tokens from dispatch to combine. Made in two
    steps: what needs no sizes before the counts are agreed (the host
    waits there, so every launch moved before it is one the GPU does not
    wait for), the rest after (`agreed`)."""

    def __init__(self, x, sends: Sends, meta: torch.Tensor, q: Optional[torch.Tensor],
                 top_k: int, local_experts: int, wire: str):
        self.x, self.sends, self.meta, self.q, self.top_k = x, sends, meta, q, top_k
        self.local_experts, self.wire = local_experts, wire
        self.world = sends.rows.shape[0]

    def agreed(self, send: List[int], recv: List[int], routes: int) -> None:
        """The agreed rows sent to and received from each rank, and the
        routes received in all."""
        self.send, self.recv, self.routes = send, recv, routes
        self.layout: SendLayout = send_layout(self.sends, sum(send))

    def payload(self, grad: bool):
        """The rows sent and their meta rows."""
        layout = self.layout
        if self.wire == "fp8":
            rows = take_rows(self.q, layout.tokens)
        elif grad:
            rows = SpreadRows.apply(self.x, layout.tokens, layout.position, self.world)
        else:
            rows = take_rows(self.x.contiguous(), layout.tokens)
        return rows, self.meta[:layout.tokens.shape[0]]

    def experts(self, run_experts: ExpertsFn, rows, meta, grad: bool) -> torch.Tensor:
        """Each received row's sum over its slots of weight * expert(row),
        in slot order (bf16 for FP8 rows, else the rows' dtype)."""
        dtype = torch.bfloat16 if rows.dtype == FP8 else rows.dtype
        k = self.top_k
        if rows.shape[0] == 0:
            # Still a function of the rows and weights, so that backward
            # sends (empty) gradients back as every other rank does.
            return rows.to(dtype) * meta[:, k:k + 1].to(dtype)
        layout = receive_layout(meta[:, :k], meta[:, k:2 * k], self.routes, self.local_experts)
        if grad:
            routed = _GatherRows.apply(rows, layout.source, layout.position, k)
        else:
            routed = take_rows(rows, layout.source)
        # FP8: the routes' 1x128 scales, M-major (quant.mn_major), gathered into place.
        scale = None if rows.dtype != FP8 else mn_major(meta[:, 2 * k:], layout.source)
        y = run_experts(routed, scale, layout.offsets, layout.local_ids, layout.weights)
        y = zero_dummy(y if y.dtype == dtype else y.to(dtype), layout, grad)
        return _sum_slots(y, layout, k, grad)

    def combine(self, back: torch.Tensor, grad: bool) -> torch.Tensor:
        """out[t] = the sum over ranks, in rank order, of t's returned rows
        (`back` has one more row, zero, for the ranks t sent nothing)."""
        layout = self.layout
        if grad:
            return CollectRows.apply(back, layout.tokens, layout.position, self.world)
        return fixed_order_sum(back, layout.position, self.world)

    def run(self, run_experts: ExpertsFn, group, grad: bool) -> torch.Tensor:
        rows, meta = exchange(self.payload(grad), self.recv, self.send, group, grad)
        y = self.experts(run_experts, rows, meta, grad)
        if grad:
            (back,) = exchange([y], self.send, self.recv, group, grad)
            back = torch.cat([back, back.new_zeros(1, back.shape[1])])
        else:
            back = self.returned(y)
            all_to_all([y], self.send, self.recv, group, outs=[back[:-1]])
        return self.combine(back, grad)

    def returned(self, y: torch.Tensor) -> torch.Tensor:
        """The buffer the results come back into: one row per row sent and
        a last row of zeros."""
        back = y.new_empty(sum(self.send) + 1, y.shape[1])
        back[-1].zero_()
        return back


def _plan(x, topk_weights, topk_ids, placement: ExpertPlacement, wire: str, grad: bool):
    """What a part's dispatch needs before the counts are agreed: the
    sends (ep_layout.plan_sends); per pair (sorted), its slots' local
    experts and weights (and, FP8, its token's 1x128 scales) as one f32
    tensor, cut to the rows sent once their count is known; FP8 x."""
    sends = _planned_sends(topk_weights, topk_ids, placement, grad)
    meta, q = [sends.ids, sends.weights], None
    if wire == "fp8":
        q, scale = quantize_rows(x, "x")  # once per token
        meta.append(scale.index_select(0, sends.tokens))
    return sends, torch.cat(meta, dim=1), q


def _planned_sends(topk_weights, topk_ids, placement: ExpertPlacement, grad: bool) -> Sends:
    """plan_sends, replayed from a CUDA graph per signature in eager
    inference on CUDA (its some thirty small launches are host time the
    GPU waits out: the agreement that follows synchronises), else run as
    it is ($GGC_MOE_GRAPH_TOKENS=0 turns the graphs off here too). The
    graph holds the routing's tensors only (T * W * top_k elements), not x."""
    from . import graphs
    from ..torch_ops import tracing
    if (grad or not topk_ids.is_cuda or graphs.max_tokens() == 0 or tracing()
            or torch.cuda.is_current_stream_capturing()):
        return plan_sends(topk_ids, topk_weights, placement)
    key = ("expert_parallel_plan", placement, topk_ids.device, topk_weights.dtype,
           topk_weights.shape, topk_ids.dtype, topk_ids.shape)
    out = graphs.replay(key, (topk_weights, topk_ids),
                        lambda w, ids: tuple(plan_sends(ids, w, placement)))
    return Sends(*out)


def _sum_slots(y: torch.Tensor, layout: ReceiveLayout, top_k: int, grad: bool):
    if grad:
        return _CombineRows.apply(y, layout.source, layout.position, top_k)
    return fixed_order_sum(y, layout.position, top_k)


def _setup(x, topk_weights, topk_ids, w13, w2, num_experts, rank, world, placement,
           activation, w13_scale, w2_scale, wire, chunks, experts, sync_free, biases,
           compute_dtype=None):
    """(None, (placement, gradient mask, the experts callable)), or (the
    first problem with this rank's arguments, None)."""
    try:
        if wire not in WIRES:
            raise ValueError(f"wire must be one of {WIRES}, got {wire!r}")
        if not isinstance(chunks, int) or isinstance(chunks, bool) or not 1 <= chunks <= MAX_CHUNKS:
            raise ValueError(f"chunks must be an int in [1, {MAX_CHUNKS}], got {chunks!r}")
        place = ExpertPlacement.of(placement, num_experts, world)
        _check_tokens(x, topk_weights, topk_ids)
        mismatch = local_weights_check(place, rank, w13, w2)
        if mismatch:
            raise ValueError(mismatch)
        _check_biases(biases, w13, w2, experts)
        needs = (x.requires_grad, topk_weights.requires_grad,
                 w13.requires_grad or w2.requires_grad
                 or any(b is not None and b.requires_grad for b in biases))
        mask = sum(1 << i for i, n in enumerate(needs) if n) if torch.is_grad_enabled() else 0
        if mask and (wire == "fp8" or w13.dtype == FP8):
            raise ValueError("FP8 expert parallelism is inference only: run it under "
                             "torch.no_grad(), or use bf16 weights and wire='bf16'")
        if mask and chunks > 1:
            raise ValueError("chunks > 1 is for inference: with gradients pass chunks=1")
        if sync_free not in (True, False):
            raise TypeError(f"sync_free must be None, True or False, got {sync_free!r}")
        if sync_free and (mask or chunks > 1):
            raise ValueError("sync_free is for inference with chunks=1: run it under "
                             "torch.no_grad()")
        if wire == "fp8" and x.shape[1] % 16:
            raise ValueError(f"wire='fp8' sends e4m3 rows of a multiple of 16 bytes (TMA's): "
                             f"H = {x.shape[1]} must be a multiple of 16")
        if wire == "fp8" and w13.dtype != FP8 and experts is None:
            raise ValueError("wire='fp8' sends e4m3 rows for FP8 experts: w13 and w2 must be "
                             f"float8_e4m3fn (quantize_weights), got {w13.dtype}")
        fp8_compute = checks.check_fp8_compute(
            compute_dtype, {"H (x.shape[1])": x.shape[1], "I (w2.shape[2])": w2.shape[2]},
            x.dtype)
        if fp8_compute and (experts is not None or w13.dtype == FP8 or wire != "bf16"):
            raise ValueError("compute_dtype=torch.float8_e4m3fn runs ggc's experts on bf16 "
                             "weights with wire='bf16' (FP8 weights or wire: leave it None)")
        run = experts if experts is not None else _ggc_experts(
            x, w13, w2, activation, w13_scale, w2_scale, wire, biases, fp8_compute)
        return None, (place, mask, run)
    except (TypeError, ValueError) as error:
        return str(error), None


def _check_biases(biases, w13, w2, experts) -> None:
    """The local experts' biases: [E_local, w13's rows] and [E_local, H],
    for ggc's experts (a caller's `experts` adds its own)."""
    for name, bias, rows in (("w13_bias", biases[0], w13.shape[1]),
                             ("w2_bias", biases[1], w2.shape[1])):
        if bias is None:
            continue
        if experts is not None:
            raise ValueError(f"{name} goes with ggc's experts; a caller's `experts` adds "
                             f"its own biases")
        want = [w13.shape[0], rows]
        if not isinstance(bias, torch.Tensor) or list(bias.shape) != want:
            raise ValueError(f"{name} must be this rank's experts' biases {want}, got "
                             f"{list(getattr(bias, 'shape', [])) or type(bias).__name__}")
        if bias.device != w13.device:
            raise ValueError(f"{name} is on {bias.device} but w13 on {w13.device}")


def _check_tokens(x, topk_weights, topk_ids) -> None:
    checks._tensor("x", x, 2, "[T, H]")
    checks._tensor("topk_ids", topk_ids, 2, "[T, top_k]")
    checks._tensor("topk_weights", topk_weights, 2, "[T, top_k]")
    if topk_ids.shape[0] != x.shape[0] or topk_ids.shape[1] < 1:
        raise ValueError(f"topk_ids must be [T, top_k] with T = {x.shape[0]} (x's rows), got "
                         f"shape {list(topk_ids.shape)}")
    if topk_weights.shape != topk_ids.shape:
        raise ValueError(f"topk_weights must have topk_ids' shape {list(topk_ids.shape)}, got "
                         f"{list(topk_weights.shape)}")
    if topk_ids.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"topk_ids must be int32 or int64, got {topk_ids.dtype}")
    if not topk_weights.is_floating_point():
        raise TypeError(f"topk_weights must be floating point, got {topk_weights.dtype}")
    for name, t in (("topk_ids", topk_ids), ("topk_weights", topk_weights)):
        if t.device != x.device:
            raise ValueError(f"{name} is on {t.device} but x on {x.device}")


def _ggc_experts(x, w13, w2, activation, w13_scale, w2_scale, wire, biases,
                 fp8_compute: bool = False) -> ExpertsFn:
    """The local experts through ggc's grouped GEMMs (as fused_moe runs
    them), their arguments checked now (on rows like those that will
    arrive), not after the dispatch, where one rank's error would leave
    the others waiting."""
    from .layer import Weights, expected_rows, sorted_experts
    checks.require_device(x.device)  # also on a rank that holds no experts
    rows = torch.empty(0, x.shape[1], dtype=FP8 if wire == "fp8" else x.dtype,
                       device=x.device)
    scale = (torch.empty(0, -(-x.shape[1] // BLOCK), device=x.device)
             if wire == "fp8" else None)
    if w13.shape[0]:
        ids = torch.empty(0, 1, dtype=torch.int32, device=x.device)
        checks.check_fused_moe(rows, w13, w2, ids.float(), ids, activation, w13_scale,
                               w2_scale, scale)

    def run(rows, rows_scale, offsets, local_ids, weights):
        hint = expected_rows(rows.shape[0], w13.shape[0])
        grad = torch.is_grad_enabled() and (
            rows.requires_grad or weights.requires_grad or w13.requires_grad
            or w2.requires_grad or any(b is not None and b.requires_grad for b in biases))
        if w13.dtype == FP8 and rows_scale is None:  # bf16 on the wire
            rows, rows_scale = quantize_rows(rows, "x")
            rows_scale = mn_major(rows_scale)
        return sorted_experts(rows, rows_scale, offsets, weights,
                              Weights(w13, w2, w13_scale, w2_scale, *biases), activation, hint,
                              grad, fp8_compute=fp8_compute)
    return run


def _collective_device(group, device: Optional[torch.device]) -> torch.device:
    """Where the header goes: NCCL moves CUDA tensors only, gloo CPU ones."""
    if dist.get_backend(group) == "nccl":
        if device is not None and device.type == "cuda":
            return device
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _split(x, topk_weights, topk_ids, chunks: int):
    """The tokens in `chunks` contiguous parts (some may be empty)."""
    if chunks == 1:
        return [(x, topk_weights, topk_ids)]
    size = -(-x.shape[0] // chunks)
    bounds = [min(c * size, x.shape[0]) for c in range(chunks + 1)]
    return [(x[a:b], topk_weights[a:b], topk_ids[a:b]) for a, b in zip(bounds, bounds[1:])]


def _pipelined(steps: List[_Step], run_experts: ExpertsFn, group) -> torch.Tensor:
    """Inference with the tokens in parts: part c + 1's dispatch is queued
    before part c's experts run, and part c's results go back while part
    c + 1's run (NCCL runs its collectives in the order issued, on its own
    stream). Other backends run them one at a time: gloo's worker threads
    may run two outstanding collectives at once and mismatch them."""
    in_order = dist.get_backend(group) == "nccl"

    def start(tensors, recv, send, outs=None):
        if in_order:
            return all_to_all(tensors, recv, send, group, outs=outs, async_op=True)
        return all_to_all(tensors, recv, send, group, outs=outs), []

    def dispatch(step):
        payload = step.payload(False)  # kept alive until its collective is done
        return payload, start(payload, step.recv, step.send)

    sent = [dispatch(steps[0])]
    backs = []
    for c, step in enumerate(steps):
        if c + 1 < len(steps):
            sent.append(dispatch(steps[c + 1]))
        _, ((rows, meta), works) = sent[c]
        for work in works:
            work.wait()
        y = step.experts(run_experts, rows, meta, False)
        back = step.returned(y)
        backs.append((y, back, start([y], step.send, step.recv, outs=[back[:-1]])[1]))
    outs = []
    for step, (_, back, works) in zip(steps, backs):
        for work in works:
            work.wait()
        outs.append(step.combine(back, False))
    return torch.cat(outs)
