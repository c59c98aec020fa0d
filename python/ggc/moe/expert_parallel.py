"""Expert parallelism: a MoE layer whose experts are spread over the ranks
of a torch.distributed group (NCCL across GPUs and hosts; gloo on CPUs).

    route      each rank routes its own tokens (the router is replicated)
    dispatch   each route's row goes to the rank that holds its expert
    experts    each rank runs its local experts on the rows it received
               (ggc's grouped GEMMs through fused_moe, top_k = 1 per row)
    combine    the results go back and each token sums its top_k rows

ggc.moe.dispatch has the collectives; docs/expert-parallel.md the guide.
"""

from __future__ import annotations

from typing import List, Optional

import torch
import torch.distributed as dist

from . import checks
from .dispatch import (MAX_CHUNKS, WIRES, ExpertsFn, Layout, _as_bytes, agree, combine,
                       dtype_code, exchange, fail, gather, plan_routes, rank_and_size)
from .placement import ExpertPlacement, PlacementSpec, local_weights_check
from .quant import FP8, quantize_rows


def expert_parallel_moe(x: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor,
                        w13: torch.Tensor, w2: torch.Tensor, *, num_experts: int,
                        group=None, placement: PlacementSpec = None,
                        activation: str = "swiglu", w13_scale: Optional[torch.Tensor] = None,
                        w2_scale: Optional[torch.Tensor] = None, wire: str = "bf16",
                        chunks: int = 1, experts: Optional[ExpertsFn] = None) -> torch.Tensor:
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
    c + 1 while part c's experts run (no gradients).
    `experts`: the local expert computation, experts(x_rows, x_scale,
    local_ids, weights) -> [R, H]; default ggc's fused_moe (CUDA).

    One small host synchronisation a call (the row counts); the results
    are deterministic. A bad argument on any rank raises
    ExpertParallelError on every rank, never a hang. BF16 is
    differentiable in x, topk_weights, w13 and w2 (every rank must run
    backward, as with DDP)."""
    group = dist.group.WORLD if group is None else group
    rank, world = rank_and_size(group)
    problem, setup = _setup(x, topk_weights, topk_ids, w13, w2, num_experts, rank, world,
                            placement, activation, w13_scale, w2_scale, wire, chunks, experts)
    device = _collective_device(group, x.device if isinstance(x, torch.Tensor) else None)
    if setup is None:  # a bad argument: tell the others, then raise everywhere
        fail(group, problem, device)
    place, grad_mask, run_experts = setup
    grad = grad_mask != 0
    parts = _split(x, topk_weights, topk_ids, chunks)
    plans = [plan_routes(ids, w, place) for _, w, ids in parts]
    fields = (("hidden size H", x.shape[1]), ("expert count E", num_experts),
              ("x dtype", dtype_code(x.dtype)), ("wire format", WIRES.index(wire)),
              ("gradient mask", grad_mask), ("chunks", chunks), ("placement", place.digest()))
    send, recv = agree(group, torch.stack([plan[0] for plan in plans], dim=1), fields, None,
                       device)
    layouts = [Layout([row[c] for row in send], [row[c] for row in recv], *plan[1:])
               for c, plan in enumerate(plans)]
    top_k = topk_ids.shape[1]
    if chunks == 1:
        return _one_part(x, layouts[0], top_k, wire, run_experts, group, grad)
    return _pipelined(parts, layouts, top_k, wire, run_experts, group)


def _setup(x, topk_weights, topk_ids, w13, w2, num_experts, rank, world, placement,
           activation, w13_scale, w2_scale, wire, chunks, experts):
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
        needs = (x.requires_grad, topk_weights.requires_grad,
                 w13.requires_grad or w2.requires_grad)
        mask = sum(1 << i for i, n in enumerate(needs) if n) if torch.is_grad_enabled() else 0
        if mask and (wire == "fp8" or w13.dtype == FP8):
            raise ValueError("FP8 expert parallelism is inference only: run it under "
                             "torch.no_grad(), or use bf16 weights and wire='bf16'")
        if mask and chunks > 1:
            raise ValueError("chunks > 1 is for inference: with gradients pass chunks=1")
        if wire == "fp8" and x.shape[1] % 128:
            raise ValueError(f"wire='fp8' quantises x per 1x128 block: H = {x.shape[1]} must "
                             f"be a multiple of 128")
        if wire == "fp8" and w13.dtype != FP8 and experts is None:
            raise ValueError("wire='fp8' sends e4m3 rows for FP8 experts: w13 and w2 must be "
                             f"float8_e4m3fn (quantize_weights), got {w13.dtype}")
        run = experts if experts is not None else _ggc_experts(
            x, w13, w2, activation, w13_scale, w2_scale, wire)
        return None, (place, mask, run)
    except (TypeError, ValueError) as error:
        return str(error), None


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


def _ggc_experts(x, w13, w2, activation, w13_scale, w2_scale, wire) -> ExpertsFn:
    """The local experts through ggc's fused_moe, its arguments checked
    now (on rows like those that will arrive), not after the dispatch,
    where one rank's error would leave the others waiting."""
    from .layer import fused_moe
    rows = torch.empty(0, x.shape[1], dtype=FP8 if wire == "fp8" else x.dtype,
                       device=x.device)
    scale = (torch.empty(0, -(-x.shape[1] // 128), device=x.device)
             if wire == "fp8" else None)
    if w13.shape[0]:
        ids = torch.empty(0, 1, dtype=torch.int32, device=x.device)
        checks.check_fused_moe(rows, w13, w2, ids.float(), ids, activation, w13_scale,
                               w2_scale, scale)

    def run(rows, rows_scale, local_ids, weights):
        return fused_moe(rows, w13, w2, weights.view(-1, 1), local_ids.view(-1, 1),
                         activation, w13_scale=w13_scale, w2_scale=w2_scale,
                         x_scale=rows_scale, graph=False)
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


def _payload(x: torch.Tensor, layout: Layout, top_k: int, wire: str, grad: bool):
    """What goes on the wire: the rows, and per row its local expert, its
    routing weight (and, FP8, its 1x128 scales) as one f32 tensor."""
    ids = layout.local_ids.to(torch.float32).unsqueeze(1)  # exact below 2**24 experts
    if wire == "fp8":
        q, scale = quantize_rows(x, "x")  # once per token, not per route
        rows = q.index_select(0, layout.source)
        meta = torch.cat([ids, layout.weights.unsqueeze(1), scale.index_select(0, layout.source)],
                         dim=1)
        return rows, meta
    return gather(x, layout, top_k, grad), torch.cat([ids, layout.weights.unsqueeze(1)], dim=1)


def _run(run_experts: ExpertsFn, rows: torch.Tensor, meta: torch.Tensor) -> torch.Tensor:
    local_ids = meta[:, 0].to(torch.int32)
    weights = meta[:, 1]
    scale = meta[:, 2:] if rows.dtype == FP8 else None
    # Results go back in x's dtype (bf16 for FP8 rows), the dtype every
    # rank allocates for them.
    dtype = torch.bfloat16 if rows.dtype == FP8 else rows.dtype
    if rows.shape[0] == 0:
        # Still a function of the rows and weights, so that backward sends
        # (empty) gradients back as every other rank does.
        return (rows.to(dtype) * weights.unsqueeze(1).to(dtype))
    y = run_experts(rows, None if scale is None else scale.contiguous(), local_ids, weights)
    return y if y.dtype == dtype else y.to(dtype)


def _one_part(x, layout: Layout, top_k: int, wire: str, run_experts: ExpertsFn, group,
              grad: bool) -> torch.Tensor:
    rows, meta = _payload(x, layout, top_k, wire, grad)
    rows, meta = exchange([rows, meta], layout.recv, layout.send, group, grad)
    y = _run(run_experts, rows, meta)
    (y_back,) = exchange([y], layout.send, layout.recv, group, grad)
    return combine(y_back, layout, top_k, grad)


def _pipelined(parts, layouts: List[Layout], top_k: int, wire: str, run_experts: ExpertsFn,
               group) -> torch.Tensor:
    """Inference with the tokens in parts: part c + 1's dispatch is queued
    before part c's experts run, and part c's combine while part c + 1's
    run (NCCL runs its collectives in the order issued, on its own
    stream). Other backends run them one at a time: gloo's worker threads
    may run two outstanding collectives at once and mismatch them."""
    in_order = dist.get_backend(group) == "nccl"

    def start(tensors, recv, send):
        outs, works = [], []
        for t in tensors:
            out = t.new_empty((sum(recv),) + tuple(t.shape[1:]))
            work = dist.all_to_all_single(_as_bytes(out), _as_bytes(t), recv, send,
                                          group=group, async_op=in_order)
            works.append(work if in_order else None)
            outs.append(out)
        return outs, works

    def wait(works):
        for work in works:
            if work is not None:
                work.wait()

    sent = [None] * len(parts)
    backs = [None] * len(parts)

    def dispatch(c):
        payload = _payload(parts[c][0], layouts[c], top_k, wire, False)
        sent[c] = (payload, start(payload, layouts[c].recv, layouts[c].send))

    dispatch(0)
    for c, layout in enumerate(layouts):
        if c + 1 < len(parts):
            dispatch(c + 1)
        _, ((rows, meta), works) = sent[c]
        wait(works)
        y = _run(run_experts, rows, meta)
        backs[c] = (y, start([y], layout.send, layout.recv))
    outs = []
    for c, layout in enumerate(layouts):
        y, ((y_back,), works) = backs[c]
        wait(works)
        outs.append(combine(y_back, layout, top_k, False))
    return torch.cat(outs)
