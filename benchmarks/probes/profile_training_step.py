"""Where a MoE layer's training step spends its time: the GPU's kernels
per step (torch.profiler) and how much of the step they fill, for the
BF16 layer and compute_dtype=FP8 (weights kept), one shape.

    python3 benchmarks/probes/profile_training_step.py [--shape qwen3] [--tokens 4096]
        [--steps 5] [--top 25] [--host]
"""

import argparse
import os
import sys
from collections import defaultdict

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_fp8_training import layer_shape, twin_layers  # noqa: E402


def print_host_ops(prof, steps, top):
    """The host's top-level ops of a step (those no other op called), by
    their own CPU time with what they called: where the step's host time
    goes when the GPU waits on it."""
    ops = defaultdict(lambda: [0, 0.0])
    host = 0.0
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CPU or event.cpu_parent is not None:
            continue
        entry = ops[event.name[:90]]
        entry[0] += 1
        entry[1] += event.cpu_time_total
        host += event.cpu_time_total
    print(f"  host: {host / steps:9.1f} us a step in top-level ops", flush=True)
    for name, (count, total) in sorted(ops.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {total / steps:9.1f} us  {count / steps:5.1f}x  {name}", flush=True)


def print_kernel_ops(prof, steps, top):
    """The ops that launched the step's kernels (the innermost op around
    each launch), by their kernels' GPU time, with their inputs' shapes:
    which torch call each of the step's kernels comes from."""
    ops = defaultdict(lambda: [0, 0.0])
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CPU or not event.kernels:
            continue
        gpu = sum(k.duration for k in event.kernels)
        entry = ops[f"{event.name[:40]} {str(event.input_shapes)[:70]}"]
        entry[0] += 1
        entry[1] += gpu
    print("  kernels by the op that launched them:", flush=True)
    for name, (count, total) in sorted(ops.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {total / steps:9.1f} us  {count / steps:5.1f}x  {name}", flush=True)


def print_launch_and_syncs(step):
    """The host's time to launch one step on an idle GPU (no sync inside
    counted apart), and every call in it that synchronises with the GPU
    (torch's sync debug mode), with the ggc frame that made it: a sync
    inside the step leaves the GPU idle while the host launches what
    follows it."""
    import time
    import traceback
    import warnings
    torch.cuda.synchronize()
    start = time.perf_counter()
    step()
    launched = time.perf_counter() - start
    torch.cuda.synchronize()
    print(f"  host launch of one step: {launched * 1e6:9.1f} us", flush=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            step()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    print(f"  synchronising calls in one step: {len(caught)}", flush=True)
    for w in caught[:8]:
        print(f"    {str(w.message)[:100]} at {w.filename}:{w.lineno}", flush=True)


def profile(layer, x, dy, steps, top, host=False):
    params = [x] + list(layer.parameters())

    def step():
        return torch.autograd.grad(layer(x), params, dy)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        step()
    end.record()
    end.synchronize()
    wall = start.elapsed_time(end) * 1e3 / steps
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, record_shapes=host) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    kernels = defaultdict(lambda: [0, 0.0])
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            entry = kernels[event.name[:90]]
            entry[0] += 1
            entry[1] += event.device_time
    busy = sum(t for _, t in kernels.values()) / steps
    print(f"  step {wall:9.1f} us (CUDA events), kernels {busy:9.1f} us a step "
          f"({busy / wall:.0%} of it), {sum(c for c, _ in kernels.values()) / steps:.0f} "
          f"kernels a step", flush=True)
    for name, (count, total) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {total / steps:9.1f} us  {count / steps:5.1f}x  {name}", flush=True)
    if host:
        print_launch_and_syncs(step)
        print_host_ops(prof, steps, top)
        print_kernel_ops(prof, steps, top)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="qwen3", help="qwen3, mixtral or deepseek")
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--host", action="store_true",
                        help="also the host's top-level ops by CPU time, and the ops "
                             "that launched the kernels")
    args = parser.parse_args()
    label, experts, top_k, hidden, inter = layer_shape(args.shape)
    bf16, fp8, x, dy = twin_layers(experts, top_k, hidden, inter, args.tokens)
    for name, layer in (("bf16", bf16), ("fp8 (weights kept)", fp8)):
        print(f"{label} T={args.tokens} {name}:", flush=True)
        profile(layer, x, dy, args.steps, args.top, args.host)


if __name__ == "__main__":
    main()
