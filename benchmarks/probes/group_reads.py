"""Contiguous projections (FP8 with 1x128 / 128x128 block scales, and
BF16; ragged Dirichlet groups) with the group offsets read from global
memory as each CTA's walk reaches a group (gg-schedule-groups' choice,
`group_reads = global`) against a table of them in shared memory
(`group_reads = shared`), interleaved in one process. The shared variant
restates the chosen kernel's whole schedule (order, bands, B's policy)
with the table, so the two differ in the table alone. Masked batches:
`masked_idle.py --only-configs --configs "shared=|group_reads=shared"`
(their chosen schedule is the stated default one).

    python3 benchmarks/probes/group_reads.py [--shapes T:G:N:K:DTYPE,...]

Every output is checked against fp64 (the first and last groups) before
timing.
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
from ggc import ir, ops  # noqa: E402
from probe_cases import contiguous, report  # noqa: E402

# #39's contiguous cases, many small groups first (the walk steps over
# the most groups between two of a CTA's tiles there).
SHAPES = ("2048:128:4096:7168:fp8,4096:64:2048:7168:fp8,8192:8:4096:7168:fp8,"
          "16384:32:3072:8192:fp8,8192:8:7168:2048:fp8,4096:64:2048:7168:bf16,"
          "16384:32:3072:8192:bf16")


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) != 5 or parts[4] not in ("fp8", "bf16") or \
                not all(p.isdigit() for p in parts[:4]):
            raise SystemExit(f"--shapes {item!r}: expected T:G:N:K:fp8 or T:G:N:K:bf16")
        shapes.append((*map(int, parts[:4]), parts[4] == "fp8"))
    return shapes


def kernels_for(t, g, n, k, spec):
    common = dict(layout="contiguous", num_groups=g, n=n, k=k,
                  expected_m=ops.mean_hint(t, g, 4096), **spec)
    chosen = ggc.compile_ir(ir.grouped_matmul("k", **common), emit="gg-config",
                            memory_gbps=ggc.get_memory_gbps())
    schedule = chosen.plans[0]["schedule"]
    print(f"  chosen schedule: {chosen.plans[0]['attributes']['schedule']}, "
          f"config {chosen.plans[0]['attributes']['config']}", flush=True)
    stated = dict(tile_order=schedule["order"], m_band=schedule["m_band"],
                  b_cache=schedule["b_cache"])
    return {"global": ggc.Kernel(ir.grouped_matmul("k", **common)),
            "shared": ggc.Kernel(ir.grouped_matmul("k", group_reads="shared",
                                                   **stated, **common))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=SHAPES, help="T:G:N:K:fp8|bf16,...")
    shapes = parse_shapes(parser.parse_args().shapes)
    print(torch.cuda.get_device_name(), flush=True)
    for t, g, n, k, fp8 in shapes:
        case = contiguous(t, g, n, k, fp8=fp8)
        kernels = kernels_for(t, g, n, k, case.spec)
        report(f"{'FP8' if fp8 else 'BF16'} contiguous T{t} G{g} N{n} K{k}",
               *case.time_kernels(kernels, n), 2.0 * t * n * k)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
