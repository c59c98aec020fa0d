"""Whether a MoE layer's training step waits on the host: the host's time
to launch one step (forward, backward) after a synchronisation, the GPU
idle (medians of --repeats), against the time a step takes back to back
(CUDA events over 10 steps), BF16 and FP8 (weights kept), two rounds each.
Where the two times match, the step runs at the host's pace and its
kernels wait; where the back-to-back time is longer, at the GPU's. Also
the allocator's cudaMalloc calls and retries over the timed steps (a
cudaMalloc or a retry would stall the host), and a few small torch ops'
host cost on this machine, for scale.

    python3 benchmarks/probes/step_host_launch.py [--shape qwen3] [--tokens 4096]
        [--repeats 15]
"""

import argparse
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_fp8_training import layer_shape, twin_layers  # noqa: E402
from bench_grouped_gemm import host_us  # noqa: E402


def launch_times(layer, x, params, dy, repeats):
    """(forward, backward, step) host us of one step launched on an idle
    GPU, medians over `repeats`."""
    forward, backward = [], []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        out = layer(x)
        middle = time.perf_counter()
        torch.autograd.grad(out, params, dy)
        end = time.perf_counter()
        forward.append((middle - start) * 1e6)
        backward.append((end - middle) * 1e6)
    torch.cuda.synchronize()
    steps = [f + b for f, b in zip(forward, backward)]
    return (statistics.median(forward), statistics.median(backward),
            statistics.median(steps))


def back_to_back_us(layer, x, params, dy, steps=10):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        torch.autograd.grad(layer(x), params, dy)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="qwen3", help="qwen3, mixtral or deepseek")
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    label, experts, top_k, hidden, inter = layer_shape(args.shape)
    bf16, fp8, x, dy = twin_layers(experts, top_k, hidden, inter, args.tokens)
    params = [x] + list(bf16.parameters())
    print(f"{torch.cuda.get_device_name()} {label} T={args.tokens}", flush=True)
    for name, layer in (("bf16", bf16), ("fp8 (weights kept)", fp8)) * 2:
        for _ in range(4):
            torch.autograd.grad(layer(x), params, dy)
        before = torch.cuda.memory_stats()
        forward, backward, step = launch_times(layer, x, params, dy, args.repeats)
        after = torch.cuda.memory_stats()
        print(f"  {name:20} host launch, GPU idle: forward {forward:7.1f} backward "
              f"{backward:7.1f} step {step:7.1f} us | back to back "
              f"{back_to_back_us(layer, x, params, dy):7.1f} us a step | cudaMallocs "
              f"{after['num_device_alloc'] - before['num_device_alloc']}, retries "
              f"{after['num_alloc_retries'] - before['num_alloc_retries']}", flush=True)
    small = torch.randn(64, 64, device="cuda")
    index = torch.arange(64, device="cuda")
    print(f"  small ops, host us a call: add {host_us(lambda: small.add(1.0), 300):.1f}, "
          f"index_select {host_us(lambda: small.index_select(0, index), 300):.1f}, "
          f"empty {host_us(lambda: torch.empty(4096, 128, device='cuda'), 300):.1f}",
          flush=True)


if __name__ == "__main__":
    main()
