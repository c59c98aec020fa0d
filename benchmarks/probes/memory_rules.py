"""gg-select-config's tiles for the card in hand against those it plans for
a card of unknown DRAM bandwidth (`ggc.set_memory_gbps(0)`: an H200's
rules), on contiguous forward projections (BF16, and FP8 with 1x128 /
128x128 block scales), ragged groups, interleaved in one process: the
narrow-memory rules' old-against-new check (fifty-second session).

    python3 benchmarks/probes/memory_rules.py [--cases "DTYPE,T,G,N,K;..."]

Each kernel is compiled by ggc.Kernel with the expected_m that ggc.ops
gives such a call (mean_hint), its config printed, and its output checked
against fp64 (the first and last groups) before timing. Where both
settings give the same config the case is timed anyway (a control).
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
import ggc  # noqa: E402
from ggc import ir, ops  # noqa: E402
from probe_cases import contiguous, report  # noqa: E402

CASES = ("bf16,16384,32,3072,8192;bf16,8192,8,4096,7168;bf16,4096,8,4096,14336;"
         "bf16,4096,64,2048,7168;fp8,8192,8,7168,2048;fp8,32768,32,7168,2048;"
         "fp8,8192,8,4096,7168")


def parse_cases(text):
    """'DTYPE,T,G,N,K;...' -> [(DTYPE, T, G, N, K), ...]."""
    cases = []
    for spec in filter(None, text.split(";")):
        parts = spec.split(",")
        if (len(parts) != 5 or parts[0] not in ("bf16", "fp8")
                or not all(p.strip().isdigit() for p in parts[1:])):
            raise SystemExit(f"--cases: each case is DTYPE,T,G,N,K with DTYPE bf16 or fp8, "
                             f"got {spec!r}")
        cases.append((parts[0], *(int(p) for p in parts[1:])))
    return cases


def kernel_for(case, g, n, k, hint, memory_gbps):
    """(label, ggc.Kernel) compiled with memory_gbps set as given."""
    ggc.set_memory_gbps(memory_gbps)
    try:
        kern = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=g, n=n, k=k,
                                            expected_m=hint, **case.spec))
    finally:
        ggc.set_memory_gbps(None)
    bm, bn = kern.info["block_m"], kern.info["block_n"]
    return f"{bm}x{bn} at {memory_gbps if memory_gbps is not None else 'card'}", kern


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=CASES, help="DTYPE,T,G,N,K;...")
    args = parser.parse_args()
    cases = parse_cases(args.cases)
    print(f"{torch.cuda.get_device_name()}: {ggc.compiler.device_memory_gbps()} GB/s "
          "as the driver reports it", flush=True)
    for dtype, t, g, n, k in cases:
        case = contiguous(t, g, n, k, fp8=dtype == "fp8")
        hint = ops.mean_hint(t, g, 4096)
        kernels = dict(kernel_for(case, g, n, k, hint, gbps) for gbps in (0, None))
        report(f"{dtype} contiguous T{t} G{g} N{n} K{k} (hint {hint})",
               *case.time_kernels(kernels, n), 2.0 * t * n * k)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
