"""One of a BF16 grouped projection's three GEMMs (#40), launched once
between cudaProfilerStart and Stop for ncu, on bench_training's shapes:
the sixty-second session found ggc's weight gradient the slowest of the
three (528 against the forward's 710 TFLOPS on the issue's uniform shape,
H100), its tiles reducing 512 tokens each.

    ncu --profile-from-start off --section SpeedOfLight --section WarpStateStats \\
        python3 benchmarks/probes/bf16_training_gemm.py {fwd,dgrad,wgrad} [CASE]

CASE is a substring of a bench_training BF16 case (default: the issue's
uniform shape).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from bench_training import BF16_CASES, projection_problem  # noqa: E402
from profile_fp8_contiguous import launch_for_profiler  # noqa: E402
from ggc import torch_ops  # noqa: E402

GEMMS = ("fwd", "dgrad", "wgrad")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in GEMMS:
        sys.exit(f"bf16_training_gemm.py: the first argument must be one of {GEMMS}, "
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
    call = {"fwd": lambda: torch_ops.grouped_mm(x, w, offsets),
            "dgrad": lambda: torch_ops.grouped_mm_grad_x(dy, w, offsets),
            "wgrad": lambda: torch_ops.grouped_mm_grad_w(dy, x, offsets)}[which]
    print(f"{label}: {which}", flush=True)
    launch_for_profiler(call)


if __name__ == "__main__":
    main()
