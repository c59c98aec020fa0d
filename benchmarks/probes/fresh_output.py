"""Why `torch.ops.ggc.grouped_mm_grad_x` measured 2.5-4.6% slower than
the same kernel through `ggc.ops` into a kept buffer (zero_ungrouped.py,
thirtieth session): the op allocates its output each call. Times the
input gradient four ways, interleaved: the op; `ggc.ops` into one kept
buffer; into a fresh `torch.empty` each call; into two kept buffers in
turn (the address changes each call, nothing is allocated); and counts
the caching allocator's device allocations and frees over 20 calls of
each.

    python3 benchmarks/probes/fresh_output.py [--cases Qwen3]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from ggc import ops, torch_ops  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from probe_cases import bf16_projections  # noqa: E402


def allocator_events(fn, calls=20):
    keys = ("num_device_alloc", "num_device_free", "num_alloc_retries", "num_sync_all_streams")
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    after = torch.cuda.memory_stats()
    return {k: after.get(k, 0) - before.get(k, 0) for k in keys}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    parser.add_argument("--op-last", action="store_true", help="time the op last in each round")
    args = parser.parse_args()
    for p in bf16_projections(args.cases):
        t, k, offsets, w, dy = p.t, p.k, p.offsets, p.w, p.dy
        kept = [dy.new_empty(t, k), dy.new_empty(t, k)]
        turn = [0]

        def into(out):
            return ops.grouped_gemm(dy, w, offsets=offsets, b_layout="kn", out=out,
                                    zero_ungrouped=True)

        def alternating():
            turn[0] ^= 1
            return into(kept[turn[0]])
        fns = {"op": lambda: torch_ops.grouped_mm_grad_x(dy, w, offsets),
               "ops, kept buffer": lambda: into(kept[0]),
               "ops, fresh torch.empty": lambda: into(dy.new_empty(t, k)),
               "ops, two buffers in turn": alternating}
        if args.op_last:  # whether the first place in each round costs
            fns["op"] = fns.pop("op")
        times = time_interleaved(fns)
        first = times["op"]
        print(f"{p.label} dgrad", flush=True)
        for name, us in times.items():
            print(f"    {name:26} {us:9.1f} us  {first / us:6.3f}x of op  "
                  f"allocator over 20 calls: {allocator_events(fns[name])}", flush=True)


if __name__ == "__main__":
    main()
