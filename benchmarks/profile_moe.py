"""Where one MoE layer's GPU time goes: each kernel's mean time over graph
replays (torch.profiler), for ggc.moe.fused_moe and the torch._grouped_mm
pipeline on one shape and token count.

    python benchmarks/profile_moe.py --shape qwen3 --tokens 1 [--replays 50] [--fp8]

--fp8 adds ggc.moe's FP8 layer (its weights quantised 128x128).
"""

import argparse
import collections
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import moe_layers  # noqa: E402
from bench_moe import SHAPES, captured, inputs, weights_for  # noqa: E402


def kernel_times(replay, replays):
    """[(kernel name, mean us per replay, launches per replay)], longest first."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            replay()
        torch.cuda.synchronize()
    total, count = collections.Counter(), collections.Counter()
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            total[event.name] += event.device_time
            count[event.name] += 1
    return sorted(((name, us / replays, count[name] / replays) for name, us in total.items()),
                  key=lambda row: -row[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", choices=sorted(SHAPES), default="qwen3")
    parser.add_argument("--tokens", type=int, default=1)
    parser.add_argument("--replays", type=int, default=50)
    parser.add_argument("--fp8", action="store_true", help="also ggc.moe's FP8 layer")
    args = parser.parse_args()
    experts, top_k, hidden, inter = SHAPES[args.shape]
    w13, w2 = weights_for(experts, hidden, inter, seed=1)
    x, weights, ids = inputs(experts, top_k, hidden, inter, args.tokens, seed=args.tokens)
    layers = {"ggc": moe_layers.ggc_bf16(w13, w2, graph=False),
              "torch._grouped_mm": moe_layers.torch_grouped_mm_pipeline(w13, w2)}
    if args.fp8:
        layers["ggc fp8"] = moe_layers.ggc_fp8(w13, w2)
    for label, layer in layers.items():
        replay, _, _ = captured(lambda layer=layer: layer(x, weights, ids))
        rows = kernel_times(replay, args.replays)
        print(f"\n{args.shape} T={args.tokens} {label}: "
              f"{sum(r[1] for r in rows):.1f} us of kernels per layer")
        for name, us, launches in rows:
            print(f"  {us:8.1f} us  x{launches:g}  {name[:110]}")


if __name__ == "__main__":
    main()
