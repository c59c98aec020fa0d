"""Worker processes of the expert-parallel tests: one process per rank of a
gloo group (CPU), the local experts computed by torch, each scenario's
outcome written to a queue for the test to check.

Also imported by test/gpu/test_expert_parallel_gpu.py, whose workers use
NCCL and ggc's kernels.
"""

import os
import sys
import traceback

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from moe_reference import activation64, reference_moe  # noqa: E402


def torch_experts(w13, w2, activation="swiglu"):
    """The local experts in torch, differentiable: y[r] = weight[r] *
    w2[e] @ act(w13[e] @ x[r]), e = local_ids[r]."""
    def run(rows, scale, offsets, local_ids, weights):
        assert scale is None
        # The routes come sorted by local expert, as offsets say; rows past
        # offsets[-1] (sync_free) are no routes, their results never read.
        routes = int(offsets[-1])
        counts = torch.bincount(local_ids[:routes].long(), minlength=w13.shape[0])
        assert offsets.tolist() == [0] + counts.cumsum(0).tolist(), (offsets, local_ids)
        assert (local_ids[routes:] == w13.shape[0]).all()
        ids = local_ids.long().clamp(max=w13.shape[0] - 1)
        h = torch.bmm(w13.index_select(0, ids), rows.unsqueeze(2)).squeeze(2)
        a = activation64(h, activation)
        y = torch.bmm(w2.index_select(0, ids), a.unsqueeze(2)).squeeze(2)
        return y * weights.unsqueeze(1).to(y.dtype)
    return run


def _rel_err(a, b) -> float:
    """|a - b| / |b| in fp64; 0 where b is empty (a rank without experts
    has no gradient for them: a may be None)."""
    if not b.numel():
        return 0.0
    a, b = a.double(), b.double()
    return float((a - b).norm() / max(b.norm(), 1e-30))


def launch(world, scenario, queue, init_file, backend="gloo"):
    """Spawns `world` processes running worker(rank, ...)."""
    import torch.multiprocessing as mp
    return mp.start_processes(worker, args=(world, scenario, queue, init_file, backend),
                              nprocs=world, join=False, start_method="spawn")


def worker(rank, world, scenario, queue, init_file, backend):
    os.environ.setdefault("GGC_PYTHON_DIR", os.path.join(HERE, "..", "..", "python"))
    sys.path.insert(0, os.environ["GGC_PYTHON_DIR"])
    try:
        if backend == "nccl":
            torch.cuda.set_device(rank)
        dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank,
                                world_size=world)
        if ":" in scenario:  # another module's scenario (the GPU tests')
            import importlib
            module, name = scenario.split(":")
            result = getattr(importlib.import_module(module), name)(rank, world)
        else:
            result = SCENARIOS[scenario](rank, world)
        queue.put((rank, "ok", result))
    except Exception as error:  # noqa: BLE001 - reported to the test
        queue.put((rank, type(error).__name__, f"{error}\n{traceback.format_exc()}"))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _problem(world, seed=0, experts=11, hidden=16, inter=8, top_k=3):
    """The same full layer on every rank (fp64 weights), and this rank's
    tokens and routes (ragged: rank 1 has none)."""
    gen = torch.Generator().manual_seed(seed)
    w13 = torch.randn(experts, 2 * inter, hidden, generator=gen, dtype=torch.float64) / 4
    w2 = torch.randn(experts, hidden, inter, generator=gen, dtype=torch.float64) / 4
    return w13, w2, experts, top_k


def _tokens(rank, hidden, experts, top_k, tokens=None):
    gen = torch.Generator().manual_seed(100 + rank)
    t = [13, 0, 7, 29][rank % 4] if tokens is None else tokens
    x = torch.randn(t, hidden, generator=gen, dtype=torch.float64)
    ids = torch.stack([torch.randperm(experts, generator=gen)[:top_k] for _ in range(t)]) \
        if t else torch.empty(0, top_k, dtype=torch.int64)
    weights = torch.rand(t, top_k, generator=gen, dtype=torch.float64)
    return x, weights, ids.to(torch.int32)


def forward_and_backward(rank, world):
    """Each rank's output and gradients against the fp64 layer with every
    expert on one rank, under three placements (contiguous, uneven lists
    with an empty rank, the rank of each expert); and chunked inference."""
    from ggc import moe
    w13, w2, experts, top_k = _problem(world)
    placements = [None,
                  [list(range(r, experts, world)) if r != world - 1 else []
                   for r in range(world)] if world > 1 else None,
                  [(e * 7) % world for e in range(experts)]]
    if world > 1:  # the last rank of the second placement holds nothing
        placements[1][0] += list(range(world - 1, experts, world))
    report = []
    for placement in placements:
        place = moe.ExpertPlacement.of(placement, experts, world)
        local = torch.tensor(place.local_experts(rank), dtype=torch.long)
        lw13 = w13.index_select(0, local).requires_grad_()
        lw2 = w2.index_select(0, local).requires_grad_()
        x, weights, ids = _tokens(rank, 16, experts, top_k)
        x.requires_grad_()
        weights.requires_grad_()
        out = moe.expert_parallel_moe(x, weights, ids, lw13, lw2, num_experts=experts,
                                      placement=placement, experts=torch_experts(lw13, lw2))
        again = moe.expert_parallel_moe(x, weights, ids, lw13, lw2, num_experts=experts,
                                        placement=placement, experts=torch_experts(lw13, lw2))
        grad_out = torch.randn_like(out)
        out.backward(grad_out)
        # The reference: this rank's tokens through every expert at once.
        rx, rw = x.detach().clone().requires_grad_(), weights.detach().clone().requires_grad_()
        fw13, fw2 = w13.clone().requires_grad_(), w2.clone().requires_grad_()
        ref = reference_moe(rx, fw13, fw2, rw, ids.long())
        if ref.requires_grad:
            ref.backward(grad_out)
        for t in (rx, rw, fw13, fw2):
            if t.grad is None:
                t.grad = torch.zeros_like(t)
        # Weight gradients sum over every rank's tokens: all-reduce the
        # reference's, then take this rank's experts.
        gw13, gw2 = fw13.grad.clone(), fw2.grad.clone()
        dist.all_reduce(gw13)
        dist.all_reduce(gw2)

        with torch.no_grad():
            chunked = moe.expert_parallel_moe(x, weights, ids, lw13, lw2, num_experts=experts,
                                              placement=placement, chunks=3,
                                              experts=torch_experts(lw13, lw2))
        report.append(dict(
            out=_rel_err(out.detach(), ref.detach()), same=bool(torch.equal(out, again)),
            chunked=_rel_err(chunked, ref.detach()),
            x=_rel_err(x.grad, rx.grad), weights=_rel_err(weights.grad, rw.grad),
            w13=_rel_err(lw13.grad, gw13.index_select(0, local)),
            w2=_rel_err(lw2.grad, gw2.index_select(0, local)),
            rows=out.shape[0]))
    return report


def bad_ids(rank, world):
    """An id outside [0, E) makes its token's output NaN (only that token's)."""
    from ggc import moe
    w13, w2, experts, top_k = _problem(world)
    place = moe.ExpertPlacement.contiguous(experts, world)
    local = torch.tensor(place.local_experts(rank), dtype=torch.long)
    lw13, lw2 = w13.index_select(0, local), w2.index_select(0, local)
    x, weights, ids = _tokens(rank, 16, experts, top_k, tokens=5)
    ids[2, 1] = experts + 3 if rank == 0 else -1
    out = moe.expert_parallel_moe(x, weights, ids, lw13, lw2, num_experts=experts,
                                  experts=torch_experts(lw13, lw2))
    nan_rows = torch.isnan(out).any(dim=1).nonzero().flatten().tolist()
    return nan_rows


def _local(place, rank, w13, w2):
    local = torch.tensor(place.local_experts(rank), dtype=torch.long)
    return w13.index_select(0, local), w2.index_select(0, local)


def _swapped(world):
    """The contiguous placement (expert -> rank list) with rank 0's last
    expert and rank 1's first exchanged."""
    from ggc import moe
    experts = _problem(world)[2]
    place = moe.ExpertPlacement.contiguous(experts, world)
    rank_of = place.tables("cpu")[0].tolist()
    a, b = place.experts_of[0][-1], place.experts_of[1][0]
    rank_of[a], rank_of[b] = 1, 0
    return rank_of


def _call(rank, world, **changes):
    """One call with this rank's arguments changed by `changes` (only on
    rank 1 where the key says so)."""
    from ggc import moe
    w13, w2, experts, top_k = _problem(world)
    place = moe.ExpertPlacement.contiguous(experts, world)
    lw13, lw2 = _local(place, rank, w13, w2)
    x, weights, ids = _tokens(rank, 16, experts, top_k)
    args = dict(x=x, weights=weights, ids=ids, w13=lw13, w2=lw2, num_experts=experts,
                placement=None, wire="bf16")
    for key, value in changes.items():
        if key.startswith("rank1_"):
            if rank == 1:
                args[key[len("rank1_"):]] = value(args) if callable(value) else value
        else:
            args[key] = value
    return moe.expert_parallel_moe(args["x"], args["weights"], args["ids"], args["w13"],
                                   args["w2"], num_experts=args["num_experts"],
                                   placement=args["placement"], wire=args["wire"],
                                   experts=torch_experts(args["w13"], args["w2"]))


def peer_exits(rank, world):
    """Rank 1 leaves without calling (its process ends); the others' call
    raises ExpertParallelError, not the backend's error."""
    from ggc import moe
    if rank == 1:
        os._exit(0)
    try:
        _call(rank, world)
        return "no error"
    except moe.ExpertParallelError as error:
        return str(error)


def late_peer(rank, world):
    """The last rank builds the layer, then never calls it (it sleeps past
    the others' 2 s limit, then leaves); the others' call raises
    ExpertParallelError naming it. (message or "no error", seconds the
    call took) on the others."""
    import tempfile
    import time

    import pytest

    from ggc import moe
    from moe_reference import use_reference_kernels
    patch = pytest.MonkeyPatch()
    use_reference_kernels(patch, tempfile.mkdtemp())  # ggc's host path on the CPU
    try:
        layer = moe.ExpertParallelMoE(128, 128, 8, 2, timeout=2.0)
        if rank == world - 1:
            time.sleep(5)
            return "slept"
        start = time.monotonic()
        try:
            layer(torch.randn(3, 128).to(torch.bfloat16))
            message = "no error"
        except moe.ExpertParallelError as error:
            message = str(error)
        return message, time.monotonic() - start
    finally:
        patch.undo()


def error_cases(rank, world):
    """Each bad call, run on every rank; the message each rank raised."""
    from ggc import moe
    cases = {
        "missing rank": dict(placement=[0] * 10 + [world]),
        "expert twice": dict(placement=[[0, 1, 2]] + [[2] + list(range(3, 11))] +
                             [[] for _ in range(world - 2)]),
        "weights off placement": dict(rank1_w13=lambda a: a["w13"][:-1]),
        # Rank 1 swaps rank 0's last expert with its own first (the local
        # counts, and so the weights' shapes, stay the same).
        "placement across ranks": dict(rank1_placement=lambda a: _swapped(world)),
        "dtype across ranks": dict(rank1_x=lambda a: a["x"].float()),
        "hidden size across ranks": dict(rank1_x=lambda a: torch.randn(a["x"].shape[0], 24,
                                                                       dtype=torch.float64)),
        "ids shape": dict(rank1_ids=lambda a: a["ids"][:, :1].repeat(2, 1)),
        "wire": dict(rank1_wire="fp16"),
        "experts count across ranks": dict(rank1_num_experts=12),
        "top_k across ranks": dict(rank1_ids=lambda a: a["ids"][:, :2],
                                   rank1_weights=lambda a: a["weights"][:, :2]),
    }
    report = {}
    for name, changes in cases.items():
        try:
            _call(rank, world, **changes)
            report[name] = "no error"
        except moe.ExpertParallelError as error:
            report[name] = str(error)
    # The group still works after every error (no collective left hanging).
    report["after"] = float(_call(rank, world).double().norm()) >= 0
    return report


def module_matches_single_layer(rank, world):
    """ExpertParallelMoE.from_moe(layer) against the layer itself on this
    rank's tokens: ggc.moe's own host path (fused_moe, routing, FP8
    quantisation), each kernel launch done by the CPU reference; BF16 with
    gradients, then FP8 with bf16 and fp8 on the wire."""
    import tempfile

    import pytest

    from ggc import moe
    from moe_reference import use_reference_kernels
    patch = pytest.MonkeyPatch()
    use_reference_kernels(patch, tempfile.mkdtemp())
    torch.manual_seed(0)  # the same layer on every rank
    # H = 144: the FP8 layer's and the wire's last 1x128 blocks are partial.
    layer = moe.MoE(144, 128, 8, 3, scoring="sigmoid", n_group=4, topk_group=2,
                    correction_bias=True, scaling_factor=2.0)
    with torch.no_grad():
        layer.correction_bias.uniform_(-0.1, 0.1)
    ep = moe.ExpertParallelMoE.from_moe(layer, placement=[e % world for e in range(8)])
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn(2, [9, 0, 5, 17][rank % 4], 144, generator=gen).to(torch.bfloat16)
    out, ref = ep(x), layer(x)
    grad = torch.randn(out.shape, generator=gen).to(out.dtype)
    out.backward(grad)
    ref.backward(grad)
    g13 = layer.w13.grad.clone()
    dist.all_reduce(g13)
    local = torch.tensor(ep.local_experts, dtype=torch.long)

    report = dict(bf16=_rel_err(out.detach(), ref.detach()),
                  w13_grad=_rel_err(ep.w13.grad, g13.index_select(0, local)))
    layer.quantize_fp8()
    with torch.no_grad():
        ref8 = layer(x)
        for wire in ("bf16", "fp8"):
            ep8 = moe.ExpertParallelMoE.from_moe(layer, wire=wire, chunks=2)
            report["fp8_" + wire] = _rel_err(ep8(x), ref8)
    patch.undo()
    return report


def module_trains_in_fp8(rank, world):
    """ExpertParallelMoE.from_moe(layer) of a layer with compute_dtype FP8
    against the layer on this rank's tokens: the same FP8 GEMMs (weights
    quantised per expert, rows per token), so the same values within the
    rounding of each rank's bf16 partial sums, and its share of the
    layer's weight gradient."""
    import tempfile

    import pytest

    from ggc import moe
    from moe_reference import use_reference_kernels
    patch = pytest.MonkeyPatch()
    use_reference_kernels(patch, tempfile.mkdtemp())
    torch.manual_seed(0)
    layer = moe.MoE(256, 128, 8, 2, compute_dtype=torch.float8_e4m3fn)
    ep = moe.ExpertParallelMoE.from_moe(layer, placement=[e % world for e in range(8)])
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn([7, 0, 12][rank % 3], 256, generator=gen).to(torch.bfloat16)
    out, ref = ep(x), layer(x)
    grad = torch.randn(out.shape, generator=gen).to(out.dtype)
    out.backward(grad)
    ref.backward(grad)
    g2 = layer.w2.grad.clone()
    dist.all_reduce(g2)
    local = torch.tensor(ep.local_experts, dtype=torch.long)

    patch.undo()
    return dict(compute_dtype=str(ep.compute_dtype), out=_rel_err(out.detach(), ref.detach()),
                w2_grad=_rel_err(ep.w2.grad, g2.index_select(0, local)))


def module_with_shared_experts_and_biases(rank, world):
    """ExpertParallelMoE.from_moe of a layer with a router bias computed in
    f32, expert biases and a shared expert (gpt-oss's and DeepSeek-V3's
    kinds) against the layer itself on this rank's tokens: BF16 with
    gradients (the routed experts' biases summed over the ranks, the shared
    expert's from this rank's tokens alone), then FP8."""
    import tempfile

    import pytest

    from ggc import moe
    from moe_reference import use_reference_kernels
    patch = pytest.MonkeyPatch()
    use_reference_kernels(patch, tempfile.mkdtemp())
    torch.manual_seed(0)  # the same layer on every rank
    layer = moe.MoE(144, 128, 8, 3, router_bias=True, router_dtype=torch.float32,
                    expert_bias=True, shared_experts=1)
    with torch.no_grad():
        for bias in (layer.gate.bias, layer.w13_bias, layer.w2_bias):
            bias.uniform_(-0.1, 0.1)
    ep = moe.ExpertParallelMoE.from_moe(layer, placement=[e % world for e in range(8)])
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn([9, 0, 5, 17][rank % 4], 144, generator=gen).to(torch.bfloat16)
    out, ref = ep(x), layer(x)
    grad = torch.randn(out.shape, generator=gen).to(out.dtype)
    out.backward(grad)
    ref.backward(grad)
    local = torch.tensor(ep.local_experts, dtype=torch.long)

    shared_grad = layer.w13.grad[8:].clone()  # this rank's tokens only, as ep.shared's
    routed = {name: getattr(layer, name).grad.clone() for name in ("w13", "w13_bias", "w2_bias")}
    for g in routed.values():
        dist.all_reduce(g)
    report = {f"{name}_grad": _rel_err(getattr(ep, name).grad,
                                       routed[name].index_select(0, local))
              for name in ("w13", "w13_bias", "w2_bias")}
    report.update(bf16=_rel_err(out.detach(), ref.detach()),
                  shared_grad=_rel_err(ep.shared.w13.grad, shared_grad))
    layer.quantize_fp8()
    with torch.no_grad():
        report["fp8"] = _rel_err(moe.ExpertParallelMoE.from_moe(layer)(x), layer(x))
    patch.undo()
    return report


def module_errors(rank, world):
    """ExpertParallelMoE: a bad placement, wire or size on one rank at
    construction, and a bad x on one rank in forward, raise on every rank;
    the layer still works after."""
    from ggc import moe
    torch.manual_seed(0)
    messages = {}
    bad = {"placement": dict(placement=[0] * 7 + [world]),
           "wire": dict(wire="int8"),
           "hidden size": dict(hidden_size=256), "timeout": dict(timeout=-1.0)}
    for name, change in bad.items():
        kwargs = dict(hidden_size=128, intermediate_size=128, num_experts=8, top_k=2)
        if rank == 1:
            kwargs.update(change)
        try:
            moe.ExpertParallelMoE(**kwargs)
            messages[name] = "no error"
        except moe.ExpertParallelError as error:
            messages[name] = str(error)
    import tempfile

    import pytest
    from moe_reference import use_reference_kernels
    patch = pytest.MonkeyPatch()
    use_reference_kernels(patch, tempfile.mkdtemp())  # ggc's host path on the CPU
    layer = moe.ExpertParallelMoE(128, 128, 8, 2)
    x = torch.randn(3, 128).to(torch.bfloat16)
    try:
        layer(x.float() if rank == 1 else x)
        messages["forward"] = "no error"
    except moe.ExpertParallelError as error:
        messages["forward"] = str(error)
    messages["local experts"] = list(layer.local_experts)
    messages["after"] = list(layer(x).shape)
    patch.undo()
    return messages


def sync_free(rank, world):
    """sync_free=True (fixed-size exchanges, no host synchronisation) gives
    the values of the counted exchanges, under three placements, with ids
    out of range poisoning only their tokens; ragged T across ranks is an
    error on every rank (the first call's agreement)."""
    from ggc import moe
    w13, w2, experts, top_k = _problem(world)
    report = {}
    for i, placement in enumerate([None, [(e * 7) % world for e in range(experts)],
                                   [list(range(experts))] + [[] for _ in range(world - 1)]]):
        place = moe.ExpertPlacement.of(placement, experts, world)
        lw13, lw2 = _local(place, rank, w13, w2)
        x, weights, ids = _tokens(rank, 16, experts, top_k, tokens=6)
        ids[3, 0] = experts + 1 if rank == 0 else ids[3, 0]
        outs = [moe.expert_parallel_moe(x, weights, ids, lw13, lw2, num_experts=experts,
                                        placement=placement, sync_free=free,
                                        experts=torch_experts(lw13, lw2))
                for free in (False, True, True)]
        ok = ~torch.isnan(outs[0]).any(dim=1)
        report[i] = dict(
            same=bool(torch.allclose(outs[1], outs[2], rtol=0, atol=0, equal_nan=True)),
            err=float((outs[1][ok] - outs[0][ok]).norm() / outs[0][ok].norm()),
            nan_rows=torch.isnan(outs[1]).any(dim=1).nonzero().flatten().tolist())
    x, weights, ids = _tokens(rank, 16, experts, top_k)  # ragged: 13, 0, 7, 29 tokens
    place = moe.ExpertPlacement.contiguous(experts, world)
    lw13, lw2 = _local(place, rank, w13, w2)
    try:
        moe.expert_parallel_moe(x, weights, ids, lw13, lw2, num_experts=experts,
                                sync_free=True, experts=torch_experts(lw13, lw2))
        report["ragged"] = "no error"
    except moe.ExpertParallelError as error:
        report["ragged"] = str(error)
    return report


def edge_cases(rank, world):
    """(1) Only the expert weights need gradients and rank 1 receives no
    rows (every id on rank 0's experts): backward completes on every rank.
    (2) A NaN in one token's row poisons that token's output only (the
    receiver's dummy route borrows a row; its result is zeroed)."""
    from ggc import moe
    w13, w2, experts, top_k = _problem(world)
    place = moe.ExpertPlacement.contiguous(experts, world)
    lw13, lw2 = (w.requires_grad_() for w in _local(place, rank, w13, w2))
    x, weights, ids = _tokens(rank, 16, experts, top_k, tokens=4)
    ids = ids % len(place.local_experts(0))  # rank 0's experts only
    out = moe.expert_parallel_moe(x, weights, ids, lw13, lw2, num_experts=experts,
                                  experts=torch_experts(lw13, lw2))
    out.sum().backward()
    # Rank 1's experts saw no row: no gradient for them, but no hang either.
    report = dict(backward=True, grad=None if lw13.grad is None else list(lw13.grad.shape))
    with torch.no_grad():
        x, weights, ids = _tokens(rank, 16, experts, top_k, tokens=5)
        x[4] = float("nan")  # the last row: the one the dummy borrows
        out = moe.expert_parallel_moe(x, weights, ids, lw13.detach(), lw2.detach(),
                                      num_experts=experts, experts=torch_experts(lw13, lw2))
        report["nan_rows"] = torch.isnan(out).any(dim=1).nonzero().flatten().tolist()
    return report


SCENARIOS = {"edge_cases": edge_cases, "sync_free": sync_free, "module_errors": module_errors, "forward_and_backward": forward_and_backward, "bad_ids": bad_ids,
             "error_cases": error_cases, "module_matches_single_layer": module_matches_single_layer,
             "module_with_shared_experts_and_biases": module_with_shared_experts_and_biases,
             "module_trains_in_fp8": module_trains_in_fp8,
             "peer_exits": peer_exits, "late_peer": late_peer}
