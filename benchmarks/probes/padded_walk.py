"""DeepGEMM's padded contiguous layout (the drop-in's) with the walk its
groups' rows call for: ggc's padded kernel as chosen today (no row hint,
so no group-size rule), with `expected_m` (the mean rows of a group), and
with the contiguous layout's walk for the same groups (N blocks first,
B under L2's default policy or evict-first), against ggc's contiguous
kernel with the hint on the same rows. M-major scales; equal groups
(T/G rows each, a multiple of 128: no padding rows). Interleaved; every
output checked against the contiguous kernel's.

    python3 benchmarks/probes/padded_walk.py [--shapes T,G,N,K;...]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from profile_fp8_contiguous import equal_groups, fp8_operands, mn_major_scales  # noqa: E402

SHAPES = "8192,8,7168,2048;32768,32,7168,2048;8192,8,4096,7168;16384,32,3072,8192"


def case(t, g, n, k):
    torch.manual_seed(0)
    (x, sx), (w, sw) = fp8_operands((t,), g, n, k)
    sx_mn = mn_major_scales(sx)
    hint = 1 << ((t // g).bit_length() - 1)
    offsets, tags = equal_groups(t, g, "contiguous"), equal_groups(t, g, "padded_contiguous")
    base = dict(num_groups=g, n=n, k=k, dtype="f8E4M3FN", a_scale="block_mn", b_scale="block")
    variants = {
        "contiguous, hint": (dict(layout="contiguous", expected_m=hint), offsets),
        "padded as chosen": (dict(layout="padded_contiguous"), tags),
        "padded, hint": (dict(layout="padded_contiguous", expected_m=hint), tags),
        "padded, hint, N first, evict_first": (dict(layout="padded_contiguous", expected_m=hint,
                                                    tile_order="n_fastest",
                                                    b_cache="evict_first"), tags),
        "padded, hint, N first, normal": (dict(layout="padded_contiguous", expected_m=hint,
                                               tile_order="n_fastest", b_cache="normal"), tags),
        "padded, hint, M first, normal": (dict(layout="padded_contiguous", expected_m=hint,
                                               tile_order="m_fastest", b_cache="normal"), tags),
    }
    outs, fns = {}, {}
    for name, (spec, groups) in variants.items():
        kern = ggc.Kernel(ir.grouped_matmul("k", **base, **spec))
        outs[name] = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
        fns[name] = (lambda kern=kern, groups=groups, o=outs[name]:
                     kern(x, w, groups, sx_mn, sw, o))
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    same = all(torch.equal(o, outs["contiguous, hint"]) for o in outs.values())
    times = time_interleaved(fns, rounds=9)
    base_us = times["padded as chosen"]
    print(f"T={t} G={g} N={n} K={k} hint {hint} (bits equal {same}):", flush=True)
    for name, us in times.items():
        print(f"  {name:36s} {us:8.1f} us  {base_us / us:.3f}x padded as chosen", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=SHAPES)
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), flush=True)
    for shape in args.shapes.split(";"):
        case(*(int(v) for v in shape.split(",")))


if __name__ == "__main__":
    main()
