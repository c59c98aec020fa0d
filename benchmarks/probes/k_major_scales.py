"""K-major 1x128 scales of A ([M, ceil(K/128)], as a per-token quantiser
writes them) through ggc's FP8 kernels: the stages carrying them (a TMA
box four K blocks wide by the tile's rows, each stage) against the warps'
slots (each consumer warp's cp.async of its rows' words) and against the
M-major layout (one box of the tile's rows a stage) on the same values,
for the contiguous and padded layouts over a range of K (the rule of
gg-plan-kernel's `scales` for K-major scales). Interleaved
(bench_grouped_gemm.time_interleaved); every output checked against the
M-major kernel's (bit-identical expected).

    python3 benchmarks/probes/k_major_scales.py [--shapes T,G,N,K;...] [--layouts contiguous,padded_contiguous]
"""
import argparse
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from profile_fp8_contiguous import equal_groups, fp8_operands, mn_major_scales  # noqa: E402

SHAPES = ("8192,8,4096,2048;8192,8,4096,4096;"
          "8192,8,4096,7168;8192,8,7168,2048;16384,32,3072,8192")


def kernel(layout, g, n, k, a_scale, scales=None):
    spec = dict(layout=layout, num_groups=g, n=n, k=k, dtype="f8E4M3FN", a_scale=a_scale,
                b_scale="block")
    if scales is None:
        return ggc.Kernel(ir.grouped_matmul("k", **spec))
    chosen = ggc.compile_ir(ir.grouped_matmul("k", **spec), emit="gg-config",
                            memory_gbps=ggc.get_memory_gbps())
    plan = re.sub(r"scales = \w+", f"scales = {scales}",
                  chosen.plans[0]["attributes"]["kernel_plan"])
    return ggc.Kernel(ir.grouped_matmul("k", kernel_plan=plan, **spec))


def case(t, g, n, k, layout):
    torch.manual_seed(0)
    (x, sx), (w, sw) = fp8_operands((t,), g, n, k)
    kb = -(-k // 128)
    sx_mn, groups = mn_major_scales(sx), equal_groups(t, g, layout)
    variants = {"M-major": (kernel(layout, g, n, k, "block_mn"), sx_mn)}
    for scales in ("stages", "slots"):
        variants[f"K-major {scales}"] = (kernel(layout, g, n, k, "block", scales), sx)
    outs = {name: torch.empty(t, n, device="cuda", dtype=torch.bfloat16) for name in variants}
    fns = {name: (lambda kern=kern, s=s, o=outs[name]: kern(x, w, groups, s, sw, o))
           for name, (kern, s) in variants.items()}
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    same = all(torch.equal(o, outs["M-major"]) for o in outs.values())
    times = time_interleaved(fns, rounds=9)
    row = " | ".join(f"{name} {us:7.1f}" for name, us in times.items())
    print(f"{layout:17s} T={t} G={g} N={n} K={k} (kb {kb:2d}): {row} us | stages/slots "
          f"{times['K-major slots'] / times['K-major stages']:.3f}x | M-major/stages "
          f"{times['K-major stages'] / times['M-major']:.3f} | bits equal {same}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=SHAPES)
    parser.add_argument("--layouts", default="contiguous,padded_contiguous")
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), flush=True)
    for layout in args.layouts.split(","):
        for shape in args.shapes.split(";"):
            case(*(int(v) for v in shape.split(",")), layout)


if __name__ == "__main__":
    main()
