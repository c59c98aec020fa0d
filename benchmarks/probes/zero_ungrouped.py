"""The input gradient's rows outside every group cleared by the kernel
(gg's `zero_ungrouped`, what `torch.ops.ggc.grouped_mm`'s backward runs)
against a zero fill before the kernel (its backward before) and against
the kernel alone (nothing cleared: the floor), beside `torch._grouped_mm`'s
kernel, on bench_training's BF16 projections, interleaved in one process;
then the same with 1,000 rows past the last group (the kernel then stores
their zeros as tiles of their own). "kernel's zeros (ops)" is the op's
kernel called through ggc.ops into one buffer, as "kernel alone" is.

    python3 benchmarks/probes/zero_ungrouped.py [--cases Qwen3]

Every output is poisoned with NaN and checked first: zeros past the last
group, the first two groups' rows against fp64.
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
from probe_cases import bf16_projections, rel_err, report  # noqa: E402


def variants(dy, w, offsets):
    t, k = dy.shape[0], w.shape[2]
    empty = dy.new_empty(t, k)

    def zero_fill():
        out = dy.new_zeros(t, k)
        ops.grouped_gemm(dy, w, offsets=offsets, b_layout="kn", out=out)
        return out
    return {
        "kernel's zeros (op)": lambda: torch_ops.grouped_mm_grad_x(dy, w, offsets),
        "zero fill + kernel": zero_fill,
        "kernel alone": lambda: ops.grouped_gemm(dy, w, offsets=offsets, b_layout="kn",
                                                 out=empty),
        "kernel's zeros (ops)": lambda: ops.grouped_gemm(dy, w, offsets=offsets, b_layout="kn",
                                                         out=empty, zero_ungrouped=True),
    }


def check(out, ref, end):
    assert torch.count_nonzero(out[end:].float().nan_to_num(1.0)) == 0, "rows past the groups"
    return rel_err(out[:ref.shape[0]], ref)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    for p in bf16_projections(args.cases):
        t, n, k, w, dy = p.t, p.n, p.k, p.w, p.dy
        ref = p.input_gradient_reference()
        for tail in (0, 1000):
            d = torch.cat([dy, torch.randn(tail, n, device="cuda").bfloat16()])
            fns = variants(d, w, p.offsets)
            errors = {}
            for name, fn in fns.items():
                if name == "kernel alone":
                    continue  # leaves the rows past the groups as they were
                torch.empty(d.shape[0] * k * 2, device="cuda").fill_(float("nan"))
                errors[name] = check(fn(), ref, sum(p.sizes))
            fns["torch"] = lambda d=d: torch._grouped_mm(d, w, offs=p.ends)
            report(f"{p.label} dgrad, {tail} rows past the groups", time_interleaved(fns),
                   errors, 2.0 * t * n * k)


if __name__ == "__main__":
    main()
