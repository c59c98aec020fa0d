"""Contiguous grouped GEMM with gg-plan-overfetch's partial loads of a
group's last tile (its valid rows rounded up to 8) against whole-tile
loads (`overfetch_rows` = block M - 1), the rest of the plan the
compiler's own, timed interleaved on ragged groups (bench_grouped_gemm's
Dirichlet loads), outputs compared.

    python3 benchmarks/overfetch_ab.py [--json OUT.json]
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import fp8, ragged_groups, time_interleaved  # noqa: E402

# (dtype, T, G, N, K): #39's contiguous shapes and bench_peers' projections.
SHAPES = [("fp8", 8192, 8, 4096, 7168), ("fp8", 16384, 32, 3072, 8192),
          ("fp8", 8192, 8, 7168, 2048), ("fp8", 4096, 64, 2048, 7168),
          ("fp8", 2048, 128, 4096, 7168), ("fp8", 32768, 32, 4096, 7168),
          ("bf16", 8192, 8, 4096, 7168), ("bf16", 16384, 32, 3072, 8192),
          ("bf16", 4096, 64, 2048, 7168), ("bf16", 4096, 8, 28672, 4096),
          ("bf16", 16384, 128, 1536, 2048), ("bf16", 16384, 128, 2048, 768),
          ("bf16", 128, 128, 1536, 2048), ("bf16", 8192, 128, 5760, 2880)]


def variants(dtype, t, g, n, k):
    _, _, offsets = ragged_groups(t, g, 0)
    out = {}
    if dtype == "fp8":
        a, b = fp8(t, k), fp8(g, n, k)
        a_scale = torch.rand(k // 128, (t + 3) // 4 * 4, device="cuda") + 0.5
        b_scale = torch.rand(g, -(-n // 128), k // 128, device="cuda") + 0.5
        args = (a, b, offsets, a_scale, b_scale)
        spec = dict(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block")
    else:
        a = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
        args = (a, b, offsets)
        spec = {}
    fns = {}
    partial = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=g, n=n, k=k,
                                           **spec))
    block_m = partial.info["block_m"]
    for name, kern in (("partial", partial),
                       ("whole", ggc.Kernel(ir.grouped_matmul(
                           "k", layout="contiguous", num_groups=g, n=n, k=k,
                           overfetch_rows=block_m - 1, **spec)))):
        out[name] = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
        fns[name] = (lambda kern=kern, o=out[name]: kern(*args, o))
    return fns, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    for shape in SHAPES:
        label = "{} T{} G{} N{} K{}".format(*shape)
        try:
            fns, out = variants(*shape)
        except ggc.CompilationError as e:
            print(f"{label}: {str(e).splitlines()[0]}", flush=True)
            continue
        for fn in fns.values():
            fn()
        torch.cuda.synchronize()
        same = torch.equal(out["partial"], out["whole"])
        times = time_interleaved(fns)
        rows.append({"shape": label, **times, "same_output": same})
        print(f"{label:32} partial {times['partial']:8.1f} us  whole {times['whole']:8.1f} us  "
              f"partial/whole {times['partial'] / times['whole']:.3f}  same output {same}",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
