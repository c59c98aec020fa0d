"""Serial FP8 kernels with the previous tile's epilogue run beside the
next tile's first wgmma (`#gg.kernel_plan`'s `epilogue_blocks = 1`)
against at its tile's end (0), and the staged tile dense against
64B-swizzled (`staging = swizzled_64`), each as explicit plans of one
compiler, interleaved in one process (#39, #40):

- the FP8 weight gradient (k_grouped, 1x128 scales over the tokens, f32
  added to `out` by TMA's reduce-add) on 128x176 tiles, DeepGEMM's sm90
  test shapes, beside DeepGEMM's `k_grouped_fp8_gemm_nt_contiguous` where
  it is importable;
- the same with a bf16 output (no accumulation) on 128x160 tiles;
- FP8 contiguous forward projections on 128x192 tiles (short K: the
  Qwen3- and gpt-oss-like layers' GEMMs).

    python3 benchmarks/probes/serial_overlap.py [--cases wgrad,bf16,forward]

Every variant's output is checked against fp64 of the dequantised
operands (two groups) before timing.
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from probe_cases import contiguous, report, weight_gradient  # noqa: E402


def plan(staging, epilogue_blocks):
    return (f"#gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], "
            f"staging = {staging}, epilogue_blocks = {epilogue_blocks}>")


def config(block_n, stages):
    return (f"#gg.config<block = [128, {block_n}, 128], stages = {stages}, "
            f"cluster = [1, 1], sms = {torch.cuda.get_device_properties(0).multi_processor_count}>")


def wgrad_case(g, m, n, per_group, out_dtype, block_n, stages, variants):
    w = weight_gradient(g, m, n, per_group)
    kernels = {f"{block_n} {staging} eb{eb}": ggc.Kernel(ir.grouped_matmul(
        "k", layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
        dtype="f8E4M3FN", out_dtype=out_dtype, a_scale="block_mn", b_scale="block1x128_mn",
        accumulate=out_dtype == "f32", config=config(block_n, stages),
        kernel_plan=plan(staging, eb))) for staging, eb in variants}
    times, errors = w.time_kernels(kernels, torch.randn(g, m, n, device="cuda") * 32,
                                   out_dtype)
    report(f"FP8 wgrad {out_dtype} G{g} M{m} N{n} tokens {w.total}", times, errors,
           2.0 * m * n * w.total)


def forward_case(t, g, n, k, variants):
    case = contiguous(t, g, n, k, fp8=True)
    kernels = {f"192 {staging} eb{eb}": ggc.Kernel(ir.grouped_matmul(
        "k", layout="contiguous", num_groups=g, n=n, k=k, config=config(192, 4),
        kernel_plan=plan(staging, eb), **case.spec)) for staging, eb in variants}
    report(f"FP8 contiguous T{t} G{g} N{n} K{k}", *case.time_kernels(kernels, n),
           2.0 * t * n * k)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="wgrad,bf16,forward")
    args = parser.parse_args()
    cases = args.cases.split(",")
    print(torch.cuda.get_device_name(), flush=True)
    wide = [("dense", 0), ("dense", 1), ("swizzled_64", 0), ("swizzled_64", 1)]
    if "wgrad" in cases:
        for g, m, n in ((4, 4096, 7168), (16, 4096, 7168), (16, 7168, 2048)):
            wgrad_case(g, m, n, 8192 * 4 // g, "f32", 176, 3, wide)
    if "bf16" in cases:
        wgrad_case(16, 4096, 7168, 2048, "bf16", 160, 4, wide)
    if "forward" in cases:
        for shape in ((16384, 32, 1536, 2048), (4096, 32, 1536, 2048),
                      (16384, 128, 2880, 2880)):
            forward_case(*shape, [("swizzled", 0), ("swizzled", 1)])


if __name__ == "__main__":
    main()
