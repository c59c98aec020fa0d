"""A MoE up projection with its SwiGLU: one GEMM whose epilogue combines
column pairs (gg's `column_pairs`, gate and up rows of w13 interleaved),
against the GEMM writing all 2I columns and ggc.moe's SwiGLU kernel
after it (ggc.moe's path today), and torch._grouped_mm with torch's silu
and mul. Interleaved medians in one run (`time_interleaved`; no L2 flush:
the weights, 0.2-1.9 GB, are far past the L2). The fused output is
checked against the unfused one and an fp64 reference of one group.

    python3 benchmarks/bench_column_pairs.py [--json FILE]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import ir  # noqa: E402
from ggc.moe import swiglu_kernel  # noqa: E402
from bench_grouped_gemm import ragged_groups, time_interleaved  # noqa: E402


@ggc.jit
def swiglu_up(x: gl.Rows, w13: gl.Weights, m_indptr: gl.Offsets, h: gl.Out):
    gate, up = gl.column_pairs(gl.grouped_dot(x, w13, m_indptr))
    gl.store(h, gl.silu(gate) * up)


@ggc.jit
def pair_product(x: gl.Rows, w13: gl.Weights, m_indptr: gl.Offsets, h: gl.Out):
    gate, up = gl.column_pairs(gl.grouped_dot(x, w13, m_indptr))
    gl.store(h, gate * up)


def interleave(w13):
    """[E, 2I, H] with gate rows first, up rows after -> rows 2j, 2j+1 the
    j-th gate and up rows."""
    e, two_i, h = w13.shape
    return torch.stack((w13[:, :two_i // 2], w13[:, two_i // 2:]), dim=2).reshape(e, two_i, h)


def case(name, rows, experts, hidden, inter, seed=0):
    sizes, ends, offsets = ragged_groups(rows, experts, seed)
    x = (torch.randn(rows, hidden, device="cuda") / 4).to(torch.bfloat16)
    w13 = (torch.randn(experts, 2 * inter, hidden, device="cuda") / 16).to(torch.bfloat16)
    w13i = interleave(w13)
    fused_out = torch.empty(rows, inter, device="cuda", dtype=torch.bfloat16)

    def fused():
        swiglu_up(x, w13i, offsets, fused_out)
        return fused_out

    def unfused():
        return swiglu_kernel.swiglu(ggc.ops.grouped_gemm(x, w13, offsets=offsets))

    def torch_path():
        h = torch._grouped_mm(x, w13.transpose(1, 2), offs=ends)
        return torch.nn.functional.silu(h[:, :inter]) * h[:, inter:]

    a, b = fused(), unfused()
    torch.cuda.synchronize()
    err_vs_unfused = ((a.double() - b.double()).norm() / b.double().norm()).item()
    g = max(range(experts), key=lambda i: int(sizes[i]))
    lo = int(offsets[g])
    h = x[lo:lo + int(sizes[g])].double() @ w13[g].double().T
    ref = torch.nn.functional.silu(h[:, :inter]) * h[:, inter:]
    err_fused = ((a[lo:lo + int(sizes[g])].double() - ref).norm() / ref.norm()).item()
    fns = {"ggc column_pairs (fused)": fused,
           "ggc GEMM + ggc.moe SwiGLU": unfused,
           "torch._grouped_mm + silu*mul": torch_path}
    if os.environ.get("GGC_PAIRS_PROBES"):
        # Where the fused kernel's time goes: the pairs' product without
        # SiLU, and the plain GEMM with per-thread stores (no TMA pool).
        direct = ggc.Kernel(ir.grouped_matmul(
            "k", layout="contiguous", num_groups=experts, n=2 * inter, k=hidden,
            direct_stores=True))
        full = torch.empty(rows, 2 * inter, device="cuda", dtype=torch.bfloat16)
        fns["probe: fused gate*up, no SiLU"] = lambda: pair_product(x, w13i, offsets, fused_out)
        fns["probe: GEMM alone (TMA store pool)"] = lambda: ggc.ops.grouped_gemm(
            x, w13, offsets=offsets)
        fns["probe: GEMM alone, per-thread stores"] = lambda: direct(x, w13, offsets, full)
    times = time_interleaved(fns)
    flops = 2.0 * rows * 2 * inter * hidden
    print(f"{name}: rows={rows} E={experts} H={hidden} I={inter}; rel err fused vs fp64 "
          f"{err_fused:.1e}, vs unfused {err_vs_unfused:.1e}")
    for label, us in times.items():
        print(f"  {label:30s} {us:9.1f} us  {flops / (us * 1e-6) / 1e12:6.0f} TFLOPS")
    return dict(rows=rows, experts=experts, hidden=hidden, inter=inter, us=times,
                err_fused=err_fused, err_vs_unfused=err_vs_unfused)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), "target", ggc.get_target())
    results = [
        case("Mixtral 8x7B, 4096 tokens top-2", 8192, 8, 4096, 14336),
        case("Qwen3-30B-A3B, 4096 tokens top-8", 32768, 128, 2048, 768),
        case("DeepSeek-V3 shape (32 of 256 experts), 4096 routes", 4096, 32, 7168, 2048),
        case("decode-sized: 256 routes over 64 experts", 256, 64, 2048, 768),
    ]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), results=results), f, indent=1)


if __name__ == "__main__":
    main()
