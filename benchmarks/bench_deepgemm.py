"""ggc against DeepGEMM 2.x on DeepGEMM's own API and inputs.

The same calls through `ggc.deepgemm` (ggc's kernels behind DeepGEMM's
names) and `deep_gemm` (built on the device by ../shared/peers/
setup-on-device.sh, on PYTHONPATH), timed interleaved as in
bench_grouped_gemm.py, with host time per call. FP8 with 1x128 activation
and 128x128 weight scales: masked batches (every row valid) and
DeepGEMM's contiguous layout (groups padded to 128 rows).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deep_gemm  # noqa: E402
from bench_grouped_gemm import host_us, time_interleaved  # noqa: E402
from profile_fp8_contiguous import fp8_operands  # noqa: E402
from ggc import deepgemm as ggc_dg  # noqa: E402


def masked(g, m, n, k):
    a, b = fp8_operands((g, m), g, n, k)
    counts = torch.full((g,), m, dtype=torch.int32, device="cuda")
    outs = {name: torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
            for name in ("ggc", "deep_gemm")}
    return {"ggc": lambda: ggc_dg.m_grouped_fp8_gemm_nt_masked(a, b, outs["ggc"], counts, m),
            "deep_gemm": lambda: deep_gemm.m_grouped_fp8_gemm_nt_masked(
                a, b, outs["deep_gemm"], counts, m)}, 2.0 * g * m * n * k, outs


def contiguous(t, g, n, k):
    a, b = fp8_operands((t,), g, n, k)
    tags = torch.arange(g, device="cuda", dtype=torch.int32).repeat_interleave(t // g)
    outs = {name: torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
            for name in ("ggc", "deep_gemm")}
    return {"ggc": lambda: ggc_dg.m_grouped_fp8_gemm_nt_contiguous(a, b, outs["ggc"], tags),
            "deep_gemm": lambda: deep_gemm.m_grouped_fp8_gemm_nt_contiguous(
                a, b, outs["deep_gemm"], tags)}, 2.0 * t * n * k, outs


def main():
    cases = [("masked fp8 G=4 M=256 N=4096 K=7168", masked(4, 256, 4096, 7168)),
             ("masked fp8 G=4 M=256 N=7168 K=2048", masked(4, 256, 7168, 2048)),
             ("contiguous fp8 T=8192 G=8 N=4096 K=7168", contiguous(8192, 8, 4096, 7168))]
    print(f"{'shape':42} {'impl':10} {'us':>8} {'TFLOPS':>8} {'host us':>8}")
    for label, (fns, flops, outs) in cases:
        times = time_interleaved(fns)
        err = ((outs["ggc"].double() - outs["deep_gemm"].double()).norm()
               / outs["deep_gemm"].double().norm()).item()
        for name, fn in fns.items():
            print(f"{label:42} {name:10} {times[name]:8.1f} {flops / times[name] / 1e6:8.1f} "
                  f"{host_us(fn):8.1f}", flush=True)
        print(f"{'':42} ggc / deep_gemm time {times['ggc'] / times['deep_gemm']:.2f}, "
              f"rel diff {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
