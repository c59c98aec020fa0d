"""Tile configs for MoE decode GEMMs: a few experts of E get one row each
(the rest none), as one decode step's up and down projections; ggc's
default choice against fixed configs and torch._grouped_mm, interleaved,
L2 flushed before each call, median us and the share of HBM bandwidth the
active experts' weights take.

    python benchmarks/sweep_decode.py [--cases qwen3-up,...] [--rounds 15]
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_grouped_gemm import HBM_BYTES_PER_S, config_text  # noqa: E402
from bench_moe import time_interleaved_flushed  # noqa: E402

import ggc  # noqa: E402
from ggc import ir  # noqa: E402

# name: (experts, active experts, N, K), one row per active expert.
CASES = {
    "qwen3-up": (128, 8, 1536, 2048), "qwen3-down": (128, 8, 2048, 768),
    "mixtral-up": (8, 2, 28672, 4096), "mixtral-down": (8, 2, 4096, 14336),
    "deepseek-up": (256, 8, 4096, 7168), "deepseek-down": (256, 8, 7168, 2048),
}
# BM, BN, BK, stages.
CONFIGS = [(64, 32, 64, 8), (64, 32, 64, 16), (64, 64, 64, 8), (64, 64, 64, 12),
           (64, 128, 64, 6), (64, 256, 64, 4), (128, 64, 64, 6)]


def case(experts, active, n, k):
    chosen = torch.randperm(experts)[:active].sort().values
    counts = torch.zeros(experts, dtype=torch.int32)
    counts[chosen] = 1
    offsets = torch.cat([torch.zeros(1, dtype=torch.int32), counts.cumsum(0).int()]).cuda()
    a = torch.randn(active, k, device="cuda").to(torch.bfloat16)
    b = (torch.randn(experts, n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
    return a, b, offsets


def kernel(experts, n, k, config=None):
    return ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=experts, n=n,
                                        k=k, expected_m=1,
                                        config=None if config is None else config_text(config)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print("| GEMM | impl | us | weights' share of HBM |")
    print("|---|---|---:|---:|")
    for name in args.cases.split(","):
        experts, active, n, k = CASES[name]
        a, b, offsets = case(experts, active, n, k)
        out = torch.empty(active, n, device="cuda", dtype=torch.bfloat16)
        fns = {"ggc default": (lambda kern=kernel(experts, n, k): kern(a, b, offsets, out))}
        for config in CONFIGS:
            label = "ggc " + "x".join(map(str, config[:3])) + f" s{config[3]}"
            try:
                kern = kernel(experts, n, k, config)
            except ggc.CompilationError as e:
                print(f"{name} {label}: skipped, {str(e).splitlines()[0]}", file=sys.stderr)
                continue
            fns[label] = (lambda kern=kern: kern(a, b, offsets, out))
        ends = offsets[1:].contiguous()
        fns["torch._grouped_mm"] = lambda: torch._grouped_mm(a, b.transpose(1, 2), offs=ends)
        want = torch._grouped_mm(a, b.transpose(1, 2), offs=ends).double()
        for label, fn in fns.items():
            if label.startswith("ggc"):
                out.fill_(float("nan"))
                fn()
                err = ((out.double() - want).norm() / want.norm()).item()
                assert err < 1e-2, (name, label, err)
        times = time_interleaved_flushed(fns, args.rounds)
        floor = 2.0 * active * n * k / HBM_BYTES_PER_S * 1e6
        for label, us in times.items():
            print(f"| {name} | {label} | {us:.1f} | {floor / us:.0%} |", flush=True)


if __name__ == "__main__":
    main()
