"""Expert-parallel MoE layer: tokens per second and all-to-all time against
world size. Run one process per GPU:

    torchrun --nproc-per-node W benchmarks/bench_expert_parallel.py --json out.json

For each shape, every rank routes its own `--tokens` tokens (uniform
random top-k, fresh each call) and times, with CUDA events after a barrier
and an L2 flush (the median of --iters calls, the slowest rank's):
  - layer:   ExpertParallelMoE's whole forward (routing included)
  - a2a:     dispatch + combine with no expert GEMMs (experts returning
             their rows), so the time of the collectives, sort and gather
  - nccl:    the two all_to_all_single calls alone, of the same bytes
  - host:    the host's time in one call (the GPU idle while it waits)
  - single:  (world size 1 only) ggc.moe.MoE with every expert on one
             GPU on the same tokens: the baseline of the scaling target
Configs: bf16 weights and wire; FP8 weights with bf16 or fp8 on the wire;
chunks 1 and 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

SHAPES = {  # name: (E, top_k, H, I)
    "deepseek-v3": (256, 8, 7168, 2048),
    "qwen3-235b": (128, 8, 4096, 1536),
}


def timed(fn, iters: int, flush: torch.Tensor) -> float:
    """The median ms of fn() over iters calls, each after a barrier and an
    L2 flush; the slowest rank's."""
    times = []
    for _ in range(iters):
        flush.zero_()
        dist.barrier()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    median = torch.tensor([statistics.median(times)], device="cuda")
    dist.all_reduce(median, op=dist.ReduceOp.MAX)
    return float(median)


def local_layer(shape, fp8: bool, device):
    """An ExpertParallelMoE with random weights for this rank's experts
    (built expert by expert, so that the FP8 one never holds an f32 copy
    of every expert)."""
    from ggc import moe
    experts, top_k, hidden, inter = shape
    layer = moe.ExpertParallelMoE(hidden, inter, experts, top_k, device=device)
    if fp8:
        w13 = torch.empty_like(layer.w13, dtype=moe.quant.FP8)
        w2 = torch.empty_like(layer.w2, dtype=moe.quant.FP8)
        s13 = torch.empty(w13.shape[0], w13.shape[1] // 128, hidden // 128, device=device)
        s2 = torch.empty(w2.shape[0], hidden // 128, inter // 128, device=device)
        with torch.no_grad():
            for e in range(w13.shape[0]):
                w13[e:e + 1], s13[e:e + 1] = moe.quantize_weights(layer.w13[e:e + 1])
                w2[e:e + 1], s2[e:e + 1] = moe.quantize_weights(layer.w2[e:e + 1])
        del layer.w13, layer.w2
        layer.register_buffer("w13", w13)
        layer.register_buffer("w2", w2)
        layer.w13_scale, layer.w2_scale = s13, s2
    return layer


def nccl_only(layer, weights, ids, wire, iters, flush) -> float:
    """The two all_to_alls alone, of the bytes the layer sends: the rows
    (bf16, or e4m3 and their scales) out and the bf16 results back."""
    from ggc.moe.ep_layout import plan_sends
    sends = plan_sends(ids, weights, layer.placement)
    send = sends.rows.tolist()
    recv = torch.empty_like(sends.rows)
    dist.all_to_all_single(recv, sends.rows)
    recv = recv.tolist()
    hidden = layer.hidden_size
    width = hidden * 2 if wire == "bf16" else hidden + hidden // 128 * 4
    out_rows = torch.empty(sum(send), width, dtype=torch.uint8, device=ids.device)
    in_rows = torch.empty(sum(recv), width, dtype=torch.uint8, device=ids.device)
    results = torch.empty(sum(recv), hidden, dtype=torch.bfloat16, device=ids.device)
    back = torch.empty(sum(send), hidden, dtype=torch.bfloat16, device=ids.device)

    def both():
        dist.all_to_all_single(in_rows, out_rows, recv, send)
        dist.all_to_all_single(back, results, send, recv)
    both()
    return timed(both, iters, flush)


def host_ms(fn) -> float:
    """The host's time in one call (the GPU idle before it)."""
    import time
    torch.cuda.synchronize()
    dist.barrier()
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed * 1e3


def profile(fn, path: str, write: bool) -> None:
    from torch.profiler import ProfilerActivity, profile as torch_profile
    torch.cuda.synchronize()
    with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    if not write:
        return
    with open(path, "w") as f:
        f.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=40))
        f.write("\n\n")
        f.write(prof.key_averages().table(sort_by="cpu_time_total", row_limit=40))


def routes(tokens, experts, top_k, device):
    scores = torch.rand(tokens, experts, device=device)
    weights, ids = scores.topk(top_k, dim=-1)
    return (weights / weights.sum(-1, keepdim=True)), ids.to(torch.int32)


def bench_shape(name, shape, args, rank, world, device, flush):
    from ggc import moe
    experts, top_k, hidden, inter = shape
    tokens = args.tokens
    x = torch.randn(tokens, hidden, device=device, dtype=torch.bfloat16)
    rows = []
    for fp8 in (False, True):
        layer = local_layer(shape, fp8, device)
        for wire in (("bf16", "fp8") if fp8 else ("bf16",)):
            for chunks in (1, 2):
                if chunks == 2 and not args.chunks:
                    continue
                weights, ids = routes(tokens, experts, top_k, device)

                def run():
                    return moe.expert_parallel_moe(
                        x, weights, ids, layer.w13, layer.w2, num_experts=experts,
                        w13_scale=layer.w13_scale, w2_scale=layer.w2_scale, wire=wire,
                        chunks=chunks)

                def comm_only():
                    return moe.expert_parallel_moe(
                        x, weights, ids, layer.w13, layer.w2, num_experts=experts,
                        w13_scale=layer.w13_scale, w2_scale=layer.w2_scale, wire=wire,
                        chunks=chunks, experts=lambda r, s, o, i, w: r.to(torch.bfloat16))
                with torch.no_grad():
                    for _ in range(3):
                        run()
                        comm_only()
                    ms = timed(run, args.iters, flush)
                    a2a = timed(comm_only, args.iters, flush)
                    nccl = nccl_only(layer, weights, ids, wire, args.iters, flush)
                    host = host_ms(run)
                    if (args.profile and chunks == 1 and not fp8 and world in (1, 4)
                            and name == "deepseek-v3"):  # every rank runs it, rank 0 writes
                        profile(run, f"{args.profile}-{name}-W{world}.txt", rank == 0)
                rows.append(dict(shape=name, world=world, tokens_per_rank=tokens,
                                 weights="fp8" if fp8 else "bf16", wire=wire, chunks=chunks,
                                 layer_ms=ms, a2a_ms=a2a, nccl_ms=nccl, host_ms=host,
                                 tokens_per_s=world * tokens / ms * 1e3))
        if world == 1:  # the baseline: every expert on this GPU, ggc.moe.fused_moe
            weights, ids = routes(tokens, experts, top_k, device)
            with torch.no_grad():
                for _ in range(3):
                    moe.fused_moe(x, layer.w13, layer.w2, weights, ids,
                                  w13_scale=layer.w13_scale, w2_scale=layer.w2_scale)
                ms = timed(lambda: moe.fused_moe(x, layer.w13, layer.w2, weights, ids,
                                                 w13_scale=layer.w13_scale,
                                                 w2_scale=layer.w2_scale), args.iters, flush)
            rows.append(dict(shape=name, world=1, tokens_per_rank=tokens,
                             weights="fp8" if fp8 else "bf16", wire="-", chunks=0,
                             layer_ms=ms, a2a_ms=0.0, tokens_per_s=tokens / ms * 1e3,
                             single=True))
        del layer
        torch.cuda.empty_cache()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--chunks", action="store_true", help="also time chunks=2")
    parser.add_argument("--json", default=None)
    parser.add_argument("--profile", default=None,
                        help="path prefix: rank 0 writes a torch.profiler table of one "
                        "bf16 call per shape")
    args = parser.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=device)
    rows = []
    for name in args.shapes.split(","):
        rows += bench_shape(name, SHAPES[name], args, rank, world, device, flush)
    if rank == 0:
        gpu = torch.cuda.get_device_name(device)
        for row in rows:
            row["gpu"] = gpu
            print(f"{row['shape']:12s} W={row['world']} {row['weights']:4s} wire={row['wire']:4s} "
                  f"chunks={row['chunks']} {'single-GPU layer ' if row.get('single') else ''}"
                  f"layer {row['layer_ms']:8.3f} ms  a2a {row['a2a_ms']:7.3f} ms  "
                  f"nccl {row.get('nccl_ms', 0):7.3f} ms  host {row.get('host_ms', 0):6.2f} ms  "
                  f"{row['tokens_per_s']:10.0f} tok/s", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
