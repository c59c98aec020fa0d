"""Runs one masked FP8 shape back to back for a few seconds while
nvidia-smi samples the SM clock and the board power, to see whether a
shape runs power-limited (clocks below the maximum under load).

  python3 benchmarks/probes/clock_probe.py 4,256,7168,2048 [seconds]

GGC_CONFIG overrides the tile config (a #gg.config<...>), as in
profile_kernel.py.
"""

import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "python"))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402


def main():
    g, m, n, k = (int(v) for v in sys.argv[1].split(","))
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    a = torch.randn(g, m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(g, n, k, device="cuda").to(torch.float8_e4m3fn)
    groups = torch.full((g,), m, dtype=torch.int32, device="cuda")
    sa = torch.rand(g, k // 128, m, device="cuda")
    sb = torch.rand(g, n // 128, k // 128, device="cuda")
    out = torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
    kern = ggc.Kernel(ir.grouped_matmul("k", layout="masked", num_groups=g, n=n, k=k, m=m,
                                        expected_m=m, dtype="f8E4M3FN", a_scale="block_mn",
                                        b_scale="block",
                                        config=os.environ.get("GGC_CONFIG")))
    kern(a, b, groups, sa, sb, out)
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                            "--format=csv,noheader", "-lms", "100"],
                           stdout=subprocess.PIPE, text=True)
    start, calls = time.time(), 0
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    while time.time() - start < seconds:
        for _ in range(50):
            kern(a, b, groups, sa, sb, out)
        calls += 50
        torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    smi.terminate()
    samples = [line.split(",") for line in smi.communicate()[0].splitlines() if line.strip()]
    us = begin.elapsed_time(end) * 1e3 / calls
    tflops = 2 * g * m * n * k / us / 1e6
    clocks = sorted(int(s[0].split()[0]) for s in samples[2:-2])
    power = sorted(float(s[1].split()[0]) for s in samples[2:-2])
    print(f"G={g} M={m} N={n} K={k}: {us:.1f} us/call ({tflops:.0f} TFLOPS) over {calls} calls; "
          f"SM clock MHz min/median/max {clocks[0]}/{clocks[len(clocks) // 2]}/{clocks[-1]}; "
          f"power W median/max {power[len(power) // 2]:.0f}/{power[-1]:.0f}")


if __name__ == "__main__":
    main()
