"""The FP8 up projection with SwiGLU in its epilogue (column_halves with
128x128 block scales of B) against the plain FP8 GEMM writing all 2I
columns, kernels alone, interleaved (#38, eighteenth session).

    python benchmarks/probes/fp8_halves.py [--shapes mixtral,qwen3]

Each shape: M sorted rows over G experts (Dirichlet shares, seed 0),
N = 2I, K = H. Variants: "plain" (bf16 [M, 2I]), "halves" (bf16 [M, I],
the config gg-select-config picks), and halves at other depths/plans.
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_grouped_gemm import fp8, ragged_groups, time_interleaved  # noqa: E402
import ggc  # noqa: E402 (bench_grouped_gemm put python/ on the path)
from ggc import ir  # noqa: E402

SWIGLU = """%s = gg.silu %acc0 : f32
%r = arith.mulf %s, %acc1 : f32
gg.yield %r : f32"""
SHAPES = {"mixtral": (8192, 8, 28672, 4096), "qwen3": (32768, 128, 1536, 2048),
          "deepseek": (32768, 256, 4096, 7168)}
VARIANTS = {
    "plain": dict(),
    "halves": dict(column_halves=True, epilogue=SWIGLU),
    "halves s4": dict(column_halves=True, epilogue=SWIGLU,
                      config="#gg.config<block = [128, 128, 128], stages = 4, "
                             "cluster = [1, 1], sms = 132>"),
    "halves serial": dict(column_halves=True, epilogue=SWIGLU,
                          kernel_plan="#gg.kernel_plan<promotion = serial, scales = stages, "
                                      "registers = [40, 232], staging = swizzled>"),
    "plain silu*x": dict(epilogue="""%s = gg.silu %acc : f32
%r = arith.mulf %s, %acc : f32
gg.yield %r : f32"""),
    "plain x*x": dict(epilogue="""%r = arith.mulf %acc, %acc : f32
gg.yield %r : f32"""),
    "halves g*u": dict(column_halves=True, epilogue="""%r = arith.mulf %acc0, %acc1 : f32
gg.yield %r : f32"""),
    "halves g": dict(column_halves=True, epilogue="gg.yield %acc0 : f32"),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="mixtral,qwen3")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    for name in args.shapes.split(","):
        m, g, n, k = SHAPES[name]
        _, _, offsets = ragged_groups(m, g, 0)
        kb = -(-k // 128)
        a, b = fp8(m, k), fp8(g, n, k)
        a_scale = torch.rand(kb, (m + 3) // 4 * 4, device="cuda") + 0.5
        b_scale = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
        fns = {}
        for label in args.variants.split(","):
            spec = VARIANTS[label]
            out_n = n // 2 if spec.get("column_halves") else n
            out = torch.empty(m, out_n, device="cuda", dtype=torch.bfloat16)
            kern = ggc.Kernel(ir.grouped_matmul(
                "k", layout="contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
                a_scale="block_mn", b_scale="block", expected_m=m // g, **spec))
            print(f"{name} {label}: {kern.resources}", flush=True)
            fns[label] = (lambda kern, out: (lambda: kern(a, b, offsets, a_scale, b_scale, out)))(
                kern, out)
        times = time_interleaved(fns)
        flops = 2.0 * m * n * k
        for label, us in times.items():
            print(f"  {name} M={m} G={g} N={n} K={k} {label:14s} {us:9.1f} us "
                  f"{flops / us / 1e6:7.1f} TFLOPS")


if __name__ == "__main__":
    main()
