"""One of a BF16 grouped projection's three GEMMs (#40), launched once
between cudaProfilerStart and Stop for ncu, on bench_training's shapes:
the sixty-second session found ggc's weight gradient the slowest of the
three (528 against the forward's 710 TFLOPS on the issue's uniform shape,
H100), its tiles reducing 512 tokens each.

    ncu --profile-from-start off --section SpeedOfLight --section WarpStateStats \\
        python3 benchmarks/probes/bf16_training_gemm.py {fwd,dgrad,wgrad} [CASE]
    python3 benchmarks/probes/bf16_training_gemm.py --time [CASE]

CASE is a substring of a bench_training BF16 case (default: the issue's
uniform shape; with --time, every case). --time times each case's three
GEMMs beside torch._grouped_mm's kernel for the same product,
interleaved, and prints ggc's time over torch's: a ratio that holds across
processes, so two compilers' runs (benchmarks/device_ab.sh) compare by it.
Each ggc output is first checked against torch's (a broken kernel differs
by about 1; bf16 rounding by about 1e-3).
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from bench_training import BF16_CASES, projection_problem  # noqa: E402
from profile_fp8_contiguous import launch_for_profiler  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from ggc import torch_ops  # noqa: E402

GEMMS = ("fwd", "dgrad", "wgrad")


def gemm_pairs(x, w, dy, offsets):
    """{gemm: (ggc's call, torch's call)} of one projection."""
    ends = offsets[1:]
    return {"fwd": (lambda: torch_ops.grouped_mm(x, w, offsets),
                    lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=ends)),
            "dgrad": (lambda: torch_ops.grouped_mm_grad_x(dy, w, offsets),
                      lambda: torch._grouped_mm(dy, w, offs=ends)),
            "wgrad": (lambda: torch_ops.grouped_mm_grad_w(dy, x, offsets),
                      lambda: torch._grouped_mm(dy.t(), x, offs=ends))}


def time_cases(wanted):
    print(torch.cuda.get_device_name(), flush=True)
    for label, t, g, n, k, loads in BF16_CASES:
        if wanted and wanted not in label:
            continue
        _, _, offsets, x, w, dy = projection_problem(t, g, n, k, loads, seed=0)
        x, w = x.detach(), w.detach()
        for gemm, (ours, theirs) in gemm_pairs(x, w, dy, offsets).items():
            mine, ref = ours().float(), theirs().float()
            err = ((mine - ref).norm() / ref.norm()).item()
            times = time_interleaved({"ggc": ours, "torch": theirs})
            print(f"{label:44} {gemm:5} ggc {times['ggc']:9.1f} us  torch {times['torch']:9.1f} us"
                  f"  ggc/torch {times['ggc'] / times['torch']:.4f}  vs torch {err:.1e}",
                  flush=True)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--time":
        return time_cases(sys.argv[2] if len(sys.argv) > 2 else "")
    if len(sys.argv) < 2 or sys.argv[1] not in GEMMS:
        sys.exit(f"bf16_training_gemm.py: the first argument must be --time or one of {GEMMS}, "
                 f"got {sys.argv[1:2]}")
    which = sys.argv[1]
    wanted = sys.argv[2] if len(sys.argv) > 2 else "issue uniform"
    matches = [c for c in BF16_CASES if wanted in c[0]]
    if not matches:
        sys.exit(f"bf16_training_gemm.py: no case contains {wanted!r}; cases: "
                 f"{[c[0] for c in BF16_CASES]}")
    label, t, g, n, k, loads = matches[0]
    _, _, offsets, x, w, dy = projection_problem(t, g, n, k, loads, seed=0)
    x, w = x.detach(), w.detach()
    call = gemm_pairs(x, w, dy, offsets)[which][0]
    print(f"{label}: {which}", flush=True)
    launch_for_profiler(call)


if __name__ == "__main__":
    main()
