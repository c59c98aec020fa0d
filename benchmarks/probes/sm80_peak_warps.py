"""What mma.sync reaches with as few warps as ggc's sm_80 kernels have:
bench_sm80's peak micro-benchmark (independent chains of
mma.sync.m16n8k16 bf16 on registers, no memory traffic) with 1, 2 and 4
CTAs of 8 warps per SM (2, 4 and 8 warps a scheduler) and 4 to 32 chains
a warp, timed interleaved in one run, each as a share of the usual peak
(4 CTAs, 8 chains). The planned sm_80 kernel has 8 warps an SM and 16
independent mma.sync per warp and K step (32 x 64 warp tiles).

    python3 benchmarks/probes/sm80_peak_warps.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_sm80 import PeakKernel  # noqa: E402

ITERS = 4096


def main():
    kernels = {(ctas, chains, operands): PeakKernel(chains=chains, operands=operands,
                                                   ctas_per_sm=ctas)
               for ctas in (1, 2, 4) for chains in (4, 8, 16, 32)
               for operands in ("constant", "random")}
    times = time_interleaved({key: (lambda k=k: k.launch(ITERS // (k.chains // 4)))
                              for key, k in kernels.items()})
    rates = {key: k.flops(ITERS // (k.chains // 4)) / (times[key] * 1e-6) / 1e12
             for key, k in kernels.items()}
    usual = rates[(4, 8, "constant")]
    print(f"{torch.cuda.get_device_name()}: usual peak (4 CTAs of 8 warps an SM, 8 chains, "
          f"constant operands) {usual:.0f} TFLOPS")
    for (ctas, chains, operands), rate in rates.items():
        print(f"{ctas} CTA(s) of 8 warps an SM ({2 * ctas} warps a scheduler), {chains:2d} chains, "
              f"{operands:8s}: {rate:5.0f} TFLOPS, {100 * rate / usual:5.1f}% of the usual peak")


if __name__ == "__main__":
    main()
