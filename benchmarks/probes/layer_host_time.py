"""The host's time for one MoE layer training step (router, routing,
experts, combine; forward + backward), BF16 and FP8 (weights kept), on a
token count small enough that the GPU waits on the host: wall time a
step over many steps (the host's cost, which bounds a step whose kernels
take less), then where it goes by cProfile with the backward on the
calling thread (torch.autograd.set_multithreading_enabled(False)).

    python3 benchmarks/probes/layer_host_time.py [--shape qwen3] [--tokens 128]
        [--steps 200] [--top 30] [--no-profile]
"""

import argparse
import cProfile
import os
import pstats
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_fp8_training import layer_shape, twin_layers  # noqa: E402
from bench_grouped_gemm import host_us  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="qwen3")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args()
    label, experts, top_k, hidden, inter = layer_shape(args.shape)
    bf16, fp8, x, dy = twin_layers(experts, top_k, hidden, inter, args.tokens)
    params = [x] + list(bf16.parameters())
    print(f"{torch.cuda.get_device_name()} {label} T={args.tokens}", flush=True)
    for name, layer in (("bf16", bf16), ("fp8 (weights kept)", fp8)):
        def step():
            return torch.autograd.grad(layer(x), params, dy)

        for _ in range(4):
            step()
        print(f"  {name:20} host {host_us(step, args.steps):8.1f} us a step", flush=True)
        if args.no_profile:
            continue
        torch.autograd.set_multithreading_enabled(False)
        try:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.steps // 4):
                step()
            profiler.disable()
            torch.cuda.synchronize()
        finally:
            torch.autograd.set_multithreading_enabled(True)
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
