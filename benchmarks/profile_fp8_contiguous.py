"""FP8 contiguous grouped GEMM (1x128 / 128x128 block scales) of ggc and
DeepGEMM side by side, for the profiler and the clock (#39's largest gap).

  python3 benchmarks/profile_fp8_contiguous.py time [T,G,N,K]
  ncu --clock-control none --profile-from-start off \
      python3 benchmarks/profile_fp8_contiguous.py ggc|ggc_dg|deep_gemm [T,G,N,K]

Equal groups of T / G rows (a multiple of 128: DeepGEMM's padded layout
needs no padding rows, so the three read the same operands). `ggc` is
ggc's own contiguous kernel over CSR offsets (`ggc 128x192` with
DeepGEMM's tile width); `ggc_dg` and `deep_gemm` are
`m_grouped_fp8_gemm_nt_contiguous` through ggc's drop-in and DeepGEMM 2.6.1
(on PYTHONPATH: ../shared/peers/setup-on-device.sh). `time` times the
three interleaved (bench_grouped_gemm.time_interleaved); a name runs that
kernel once between cudaProfilerStart and Stop, after warming it.
"""

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_deepgemm import fp8_operands  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402


# DeepGEMM's tile for these shapes (its kernel's template arguments).
WIDE = "#gg.config<block = [128, 192, 128], stages = 0, cluster = [1, 1], sms = 132>"


def ggc_contiguous(a, b, t, g, n, k, config=None):
    """ggc's unpadded kernel on DeepGEMM's operands: A's scales M-major."""
    (x, sx), (w, sw) = a, b
    kb = k // 128
    a_scale = torch.zeros(kb, (t + 3) // 4 * 4, device="cuda")
    a_scale[:, :t] = sx.t()
    offsets = torch.arange(0, t + 1, t // g, dtype=torch.int32, device="cuda")
    out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    kern = ggc.Kernel(ir.grouped_matmul(
        "k", layout="contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
        a_scale="block_mn", b_scale="block", config=config))
    return lambda: kern(x, w, offsets, a_scale, sw, out), out


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "time"
    t, g, n, k = (8192, 8, 4096, 7168)
    if len(sys.argv) > 2:
        t, g, n, k = (int(v) for v in sys.argv[2].split(","))
    torch.manual_seed(0)
    import deep_gemm
    from ggc import deepgemm as ggc_dg
    a, b = fp8_operands((t,), g, n, k)
    tags = torch.arange(g, device="cuda", dtype=torch.int32).repeat_interleave(t // g)
    out_dg = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    out_gd = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    own, out_own = ggc_contiguous(a, b, t, g, n, k)
    wide, out_wide = ggc_contiguous(a, b, t, g, n, k, config=WIDE)
    fns = {"ggc": own, "ggc 128x192": wide,
           "ggc_dg": lambda: ggc_dg.m_grouped_fp8_gemm_nt_contiguous(a, b, out_gd, tags),
           "deep_gemm": lambda: deep_gemm.m_grouped_fp8_gemm_nt_contiguous(a, b, out_dg, tags)}
    flops = 2.0 * t * n * k
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    ref = out_dg.double()
    for name, out in (("ggc", out_own), ("ggc 128x192", out_wide), ("ggc_dg", out_gd)):
        err = ((out.double() - ref).norm() / ref.norm()).item()
        print(f"{name} against deep_gemm: relative error {err:.2e}")
    if which == "time":
        times = time_interleaved(fns)
        for name, us in times.items():
            print(f"T={t} G={g} N={n} K={k} {name:10s} {us:8.1f} us "
                  f"{flops / us / 1e6:7.1f} TFLOPS  deep_gemm/this {times['deep_gemm'] / us:.3f}x")
        return
    fn = fns[which]
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
