"""The whole MoE layer forward, side by side in one run: the per-expert
loop, a torch._grouped_mm pipeline, vLLM's Triton fused MoE, ggc.moe (BF16,
and FP8 with --fp8) and, with --algorithms, the executor's algorithms; each
eager and replayed from a CUDA graph, on Mixtral-, DeepSeek-V3- and
Qwen3-30B-A3B-like shapes.

GPU time: the median over --rounds rounds, each timing one call of every
layer in turn (interleaved, so clock drift reaches all alike) between CUDA
events, with the L2 cache flushed before each call (--flush: by writing a
buffer twice its size, the records' method, or by reading it, which spares
the timed call the flush's dirty lines). Host time: the host's
own time per eager call, calls queued behind a long sleep kernel so that
none waits for the GPU (host_time.py's method; n/a where a call
synchronises or fills the launch queue). Floors: the touched experts'
weights, x and out moved once at the copy bandwidth measured in the same
run, or the FLOPs at its measured dense bf16 rate (bench_peers.ceilings).
Prints a markdown table, then per shape and T what --target times the
best peer asks for as a share of that floor; --json writes every number.

    python benchmarks/bench_moe.py --tokens 1,128,4096 --shapes qwen3 --json out.json
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_peers import ceilings  # noqa: E402 (puts python/ on the path)
import moe_layers  # noqa: E402
from ggc import moe  # noqa: E402
from ggc.autotune import _l2_flush_buffer  # noqa: E402

SHAPES = {  # name: (experts, top_k, hidden, intermediate)
    "mixtral": (8, 2, 4096, 14336),
    "deepseek": (256, 8, 7168, 2048),
    "qwen3": (128, 8, 2048, 768),
    # gpt-oss-120b's sizes (SwiGLU here, no biases): H and I off 128, so FP8's
    # last 1x128 and 128x128 blocks are partial.
    "gptoss": (128, 4, 2880, 2880),
}
TOKENS = [1, 4, 16, 64, 256, 1024, 4096, 16384]
# Where the peer lies: copied into the checkout (.peers/, as
# ../shared/peers/setup-on-device.sh suggests), shared/ in the checkout (the
# device machine), or beside it (this workplace).
VLLM_PLACES = [os.path.join(HERE, "..", *parts, "vllm_fused_moe.py") for parts in
               ((".peers",), ("shared", "peers"), ("..", "shared", "peers"))]
DEFAULT_VLLM = next((p for p in VLLM_PLACES if os.path.exists(p)), VLLM_PLACES[-1])


FLUSHES = ("write", "read")


def l2_flush(mode):
    """A callable that empties L2 of the timed call's data before it runs.
    `write` zeroes twice L2's size, which leaves L2 full of dirty lines that
    the timed call then writes back to DRAM (at 3 TB/s, about 17 us for an
    H100's 50 MB, added to every implementation alike); `read` sums the
    same buffer, so the timed call starts on clean lines and the previous
    call's dirty ones are written back before its start event."""
    if mode not in FLUSHES:
        raise ValueError(f"flush must be one of {FLUSHES}, got {mode!r}")
    flush = _l2_flush_buffer()
    if mode == "write":
        return flush.zero_
    words = flush.view(torch.int32)
    words.zero_()
    return lambda: torch.sum(words, dtype=torch.int32)


def time_interleaved_flushed(fns, rounds, flush="write"):
    """Median microseconds of one call of each of `fns`, L2 flushed first
    (l2_flush's `flush`)."""
    empty_l2 = l2_flush(flush)
    for fn in fns.values():  # warm: compiled, loaded, clocks up
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    times = {label: [] for label in fns}
    for _ in range(rounds):
        for label, fn in fns.items():
            empty_l2()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[label].append(start.elapsed_time(end) * 1e3)
    return {label: statistics.median(t) for label, t in times.items()}


def host_time_us(fn, calls=8, reps=3):
    """The host's own time per eager call (host_time.py's queued method),
    the best of `reps`; None when every try waited for the GPU."""
    from host_time import queued_host_us
    runs = [h for h in (queued_host_us(fn, calls) for _ in range(reps)) if h is not None]
    return min(runs) if runs else None


def host_cell(host_us):
    return "n/a" if host_us is None else f"{host_us:.1f}"


def captured(fn):
    """fn captured in a CUDA graph (after an eager warm-up call); returns
    the replay and the graph's output."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph.replay, out, graph


def inputs(experts, top_k, hidden, inter, tokens, seed):
    """Activations, weights, and routing from ggc.moe.route over router
    logits with a per-expert skew (real routers are not uniform)."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(tokens, hidden, device="cuda", generator=gen).to(torch.bfloat16)
    skew = torch.randn(experts, device="cuda", generator=gen)
    logits = torch.randn(tokens, experts, device="cuda", generator=gen) + skew
    weights, ids = moe.route(logits, top_k)
    return x, weights, ids


def weights_for(experts, hidden, inter, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    w13 = (torch.randn(experts, 2 * inter, hidden, device="cuda", generator=gen)
           / hidden ** 0.5).to(torch.bfloat16)
    w2 = (torch.randn(experts, hidden, inter, device="cuda", generator=gen)
          / inter ** 0.5).to(torch.bfloat16)
    return w13, w2


def layers(args, w13, w2, tokens, top_k, notes):
    """{label: fn(x, weights, ids)} for this shape; what is left out goes to notes."""
    fns = {"per-expert loop": moe_layers.per_expert_loop(w13, w2),
           "torch._grouped_mm": moe_layers.torch_grouped_mm_pipeline(w13, w2)}
    vllm, why = moe_layers.load_vllm(args.vllm)
    if vllm is None:
        notes.append(f"vLLM Triton fused MoE left out: {why}")
    else:
        fns["vLLM triton"], source = moe_layers.vllm_fused(vllm, w13, w2, tokens, top_k)
        notes.append(f"vLLM config: {source}")
    fns["ggc"] = moe_layers.ggc_bf16(w13, w2)
    if tokens <= moe.graphs.max_tokens():  # the default above replays a graph
        fns["ggc graph=False"] = moe_layers.ggc_bf16(w13, w2, graph=False)
    if args.unfused_up:
        fns["ggc unfused up"] = moe_layers.ggc_bf16_unfused_up(w13, w2)
    if args.copied_rows:
        fns["ggc copied rows"] = moe_layers.ggc_bf16_copied_rows(w13, w2)
    if args.torch_routing:
        fns["ggc torch routing"] = moe_layers.ggc_bf16_torch_routing(w13, w2)
    if args.fp8:
        fns["ggc fp8"] = moe_layers.ggc_fp8(w13, w2)
        if args.whole_block_quantisation:
            fns["ggc fp8 graph=False"] = moe_layers.ggc_fp8(w13, w2, graph=False)
            fns["ggc fp8 whole-block quantisation"] = \
                moe_layers.ggc_fp8_whole_block_quantisation(w13, w2)
    for algorithm in filter(None, args.algorithms.split(",")):
        try:
            fns[f"executor {algorithm}"] = moe_layers.executor_layer(algorithm, w13, w2)
        except Exception as e:  # noqa: BLE001 - e.g. no ggc.executor yet: a note, not fatal
            notes.append(f"executor {algorithm} left out: {type(e).__name__}: {e}")
    return fns


def work(experts, top_k, hidden, inter, tokens, ids):
    """FLOPs, and bytes: the touched experts' weights once, x and out."""
    active = int(torch.unique(ids).numel())
    flops = 6.0 * tokens * top_k * hidden * inter
    bytes_moved = 2.0 * (active * 3 * hidden * inter + 2 * tokens * hidden)
    return flops, bytes_moved, active


def bench_case(args, name, shape, tokens, w13, w2, ceiling):
    experts, top_k, hidden, inter = shape
    x, weights, ids = inputs(experts, top_k, hidden, inter, tokens, seed=tokens)
    notes = []
    fns = layers(args, w13, w2, tokens, top_k, notes)
    calls, outputs, graphs = {}, {}, []
    for label, layer in fns.items():
        call = (lambda layer=layer: layer(x, weights, ids))
        try:
            outputs[label] = call()
        except Exception as e:  # noqa: BLE001 - one peer failing must not end the run
            notes.append(f"{label} failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            continue
        calls[label] = call
        if label == "per-expert loop" or label.startswith("executor"):
            continue  # sizes read on the host: a graph would replay stale ones
        try:
            replay, _, graph = captured(call)
            graphs.append(graph)
            calls[label + " (graph)"] = replay
        except Exception as e:  # noqa: BLE001
            notes.append(f"{label}: no CUDA graph: {type(e).__name__}: {str(e)[:200]}")
    times = time_interleaved_flushed(calls, args.rounds, args.flush)
    reference = outputs["per-expert loop"].double()
    flops, bytes_moved, active = work(experts, top_k, hidden, inter, tokens, ids)
    rows = []
    for label in outputs:
        if label not in calls:
            continue
        err = ((outputs[label].double() - reference).norm() / reference.norm()).item()
        rows.append({"shape": name, "tokens": tokens, "impl": label,
                     "eager_us": times[label], "graph_us": times.get(label + " (graph)"),
                     "host_us": host_time_us(calls[label]), "rel_err_vs_loop": err,
                     "active_experts": active,
                     "floor_mem_us": bytes_moved / ceiling["bytes_per_s"] * 1e6,
                     "floor_math_us": flops / (ceiling["bf16_tflops"] * 1e6)})
    del graphs
    return rows, notes


def add_kernel_sums(args, shapes, token_counts, rows):
    """Each replayed layer's kernels alone (torch.profiler, 20 replays back
    to back, L2 not flushed) as rows' `kernels_us`. Run after every case is
    timed: with CUDA graphs torch leaves its profiling layer (CUPTI)
    loaded, which would slow what is timed after it."""
    from profile_moe import kernel_times  # imports this module: not at the top
    for name in shapes:
        experts, top_k, hidden, inter = SHAPES[name]
        w13, w2 = weights_for(experts, hidden, inter, seed=0)
        for tokens in token_counts:
            x, weights, ids = inputs(experts, top_k, hidden, inter, tokens, seed=tokens)
            for label, layer in layers(args, w13, w2, tokens, top_k, []).items():
                row = next((r for r in rows if (r["shape"], r["tokens"], r["impl"]) ==
                            (name, tokens, label) and r["graph_us"] is not None), None)
                if row is None:
                    continue
                replay, _, graph = captured(lambda layer=layer: layer(x, weights, ids))
                row["kernels_us"] = sum(us for _, us, _ in kernel_times(replay, 20))
                del graph
            torch.cuda.empty_cache()
        del w13, w2
        torch.cuda.empty_cache()


def best(row):
    return min(t for t in (row["eager_us"], row["graph_us"]) if t is not None)


def print_table(rows):
    print("| shape | T | impl | eager us | graph us | host us/call | vs torch pipeline "
          "(best) | floor us (mem/math) | % of floor | rel err vs loop |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        peer = next(r for r in rows if r["shape"] == row["shape"]
                    and r["tokens"] == row["tokens"] and r["impl"] == "torch._grouped_mm")
        graph = "n/a" if row["graph_us"] is None else f"{row['graph_us']:.1f}"
        print(f"| {row['shape']} | {row['tokens']} | {row['impl']} | {row['eager_us']:.1f} | "
              f"{graph} | {host_cell(row['host_us'])} | {best(peer) / best(row):.2f}x | "
              f"{row['floor_mem_us']:.1f}/{row['floor_math_us']:.1f} | "
              f"{100 * floor_us(row) / best(row):.0f}% | {row['rel_err_vs_loop']:.1e} |")


def floor_us(row):
    """The layer's floor on this card: the touched weights, x and out
    moved once at the measured copy bandwidth, or its FLOPs at the
    measured dense bf16 rate, whichever is longer."""
    return max(row["floor_mem_us"], row["floor_math_us"])


PEERS = ("vLLM triton", "torch._grouped_mm")


def target_table(rows, target):
    """Per shape and T: ggc against the best peer, and the time `target`
    times the best peer asks for as a share of the floor (above 100%: no
    kernel on this card can reach it); with --kernel-sum, ggc's kernels
    alone (back to back, L2 not flushed) against the best peer's time (the
    rest of ggc's replay: launches, the gaps between its kernels and what
    the flush costs it)."""
    print(f"\n| shape | T | best peer | us | ggc us | ggc vs best | {target}x needs us "
          "| that, % of floor | ggc's kernels alone (unflushed) vs best |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for key in dict.fromkeys((r["shape"], r["tokens"]) for r in rows):
        mine = {r["impl"]: r for r in rows if (r["shape"], r["tokens"]) == key}
        peers = [mine[p] for p in PEERS if p in mine]
        if "ggc" not in mine or not peers:
            continue
        peer = min(peers, key=best)
        needed = best(peer) / target
        kernels = mine["ggc"].get("kernels_us")
        alone = "n/a" if not kernels else f"{best(peer) / kernels:.3f}x"
        print(f"| {key[0]} | {key[1]} | {peer['impl']} | {best(peer):.1f} | "
              f"{best(mine['ggc']):.1f} | {best(peer) / best(mine['ggc']):.3f}x | "
              f"{needed:.1f} | {100 * floor_us(peer) / needed:.0f}% | {alone} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=os.environ.get("GGC_BENCH_SHAPES",
                                                           ",".join(SHAPES)),
                        help=f"comma-separated, of {sorted(SHAPES)}")
    parser.add_argument("--tokens", default=os.environ.get("GGC_BENCH_TOKENS",
                                                           ",".join(map(str, TOKENS))),
                        help="comma-separated token counts (env GGC_BENCH_TOKENS)")
    parser.add_argument("--vllm", default=os.environ.get("GGC_VLLM_PEER", DEFAULT_VLLM),
                        help="path of vllm_fused_moe.py (env GGC_VLLM_PEER)")
    parser.add_argument("--algorithms", default="",
                        help="executor algorithms to add, e.g. cublas_grouped,cublas_sequential"
                             " (left out with a note when ggc.executor cannot run them)")
    parser.add_argument("--fp8", action="store_true", help="also time ggc.moe in FP8")
    parser.add_argument("--whole-block-quantisation", action="store_true",
                        help="with --fp8, also time the FP8 layer eager with gg.quantize_rows' "
                             "kernel on whole 128-column blocks only (before partial ones)")
    parser.add_argument("--unfused-up", action="store_true",
                        help="also time ggc.moe with the up projection and the activation "
                             "as two steps (before gated_up)")
    parser.add_argument("--copied-rows", action="store_true",
                        help="also time ggc.moe with the tokens gathered into a sorted copy "
                             "for the up projection (before a_rows)")
    parser.add_argument("--torch-routing", action="store_true",
                        help="also time ggc.moe with the routes sorted by torch ops "
                             "instead of gg.sort_routes' kernels")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--flush", choices=FLUSHES, default="write",
                        help="how L2 is emptied before each timed call (l2_flush): write "
                             "(the records' method) leaves dirty lines for the call to write "
                             "back; read leaves clean ones")
    parser.add_argument("--kernel-sum", action="store_true",
                        help="also each replayed layer's kernels alone (torch.profiler, 20 "
                             "replays, L2 not flushed, after every case is timed): the "
                             "target table then sets ggc's against the best peer's time")
    parser.add_argument("--target", type=float, default=1.3,
                        help="the speedup over the best peer whose cost is shown as a share "
                             "of the floor (#38: 1.3)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    shapes = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        parser.error(f"--shapes: unknown {unknown}; choose from {sorted(SHAPES)}")
    token_counts = [int(t) for t in args.tokens.split(",") if t]
    ceiling = ceilings()
    print(f"{torch.cuda.get_device_name()}: measured ceilings bf16 "
          f"{ceiling['bf16_tflops']:.0f} TFLOPS, copy {ceiling['bytes_per_s'] / 1e12:.2f} TB/s",
          flush=True)
    all_rows, all_notes = [], {}
    for name in shapes:
        experts, top_k, hidden, inter = SHAPES[name]
        w13, w2 = weights_for(experts, hidden, inter, seed=0)
        for tokens in token_counts:
            print(f"# {name} E={experts} top-{top_k} H={hidden} I={inter} T={tokens}",
                  file=sys.stderr, flush=True)
            rows, notes = bench_case(args, name, SHAPES[name], tokens, w13, w2, ceiling)
            all_rows += rows
            all_notes[f"{name} T={tokens}"] = notes
            torch.cuda.empty_cache()
        del w13, w2
        torch.cuda.empty_cache()
    if args.kernel_sum:
        add_kernel_sums(args, shapes, token_counts, all_rows)
    print_table(all_rows)
    target_table(all_rows, args.target)
    for case, notes in all_notes.items():
        for note in notes:
            print(f"- {case}: {note}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "shapes": SHAPES,
                       "ceiling": ceiling, "flush": args.flush,
                       "rows": all_rows, "notes": all_notes}, f, indent=1)


if __name__ == "__main__":
    main()
