"""One launch of the FP8 weight gradient (k_grouped, 1x128 scales over the
tokens, f32 added to `out`) between cudaProfilerStart and Stop, for
Nsight Compute: ggc's chosen kernel or DeepGEMM's
`k_grouped_fp8_gemm_nt_contiguous`, on one of DeepGEMM's sm90 test shapes
(#40: ggc's weight gradient trails DeepGEMM's).

    ncu --clock-control none --profile-from-start off --section SourceCounters \\
        --section WarpStateStats --section SpeedOfLight -o /tmp/w \\
        python3 benchmarks/probes/wgrad_once.py ggc [G,M,N]
    ncu --import /tmp/w.ncu-rep --page source --csv --print-source sass > w.csv
    python3 benchmarks/probes/stall_profile.py w.csv
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from ggc import ops  # noqa: E402
from bench_training import DG, deepgemm_wgrad  # noqa: E402
from probe_cases import weight_gradient  # noqa: E402
from profile_fp8_contiguous import launch_for_profiler  # noqa: E402


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "ggc"
    g, m, n = (int(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "16,4096,7168").split(","))
    # Uniform groups of 2,048 tokens (DeepGEMM's sm90 tests: 2,048-8,192).
    w = weight_gradient(g, m, n, 2048, uniform=True)
    d = torch.zeros(g, m, n, device="cuda")
    if which == "deep_gemm":
        if DG is None:
            raise SystemExit("deep_gemm is not importable")
        fn = deepgemm_wgrad(w.dy_q, w.dy_s, w.x_q, w.x_s, w.offsets, w.ks, d)
    else:
        a, b = w.k_major()
        hint = ops.expected_group_tokens(w.total, g)

        def fn():
            ops.grouped_gemm(a, b, k_offsets=w.offsets, k_major=True, a_scale=w.dy_s.t(),
                             b_scale=w.x_s.t(), out=d, accumulate=True, expected_m=hint)
    launch_for_profiler(fn)


if __name__ == "__main__":
    main()
