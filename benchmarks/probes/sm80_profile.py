"""One sm_80 kernel plan, launched a few times for Nsight Compute: the
planned kernel (`planned`) or the one without a producer warpgroup on
128x256 tiles of 64x64 warps (`no-producer`), contiguous bf16 T=8192 G=8
N=K=4096 (as sm80_plans.py).

    ncu --clock-control none -k regex:^k_kernel --launch-skip 2 --launch-count 1 \\
        --section WarpStateStats python3 benchmarks/probes/sm80_profile.py no-producer
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_sm80 import contiguous_inputs  # noqa: E402
from sm80_plans import cfg, kernel  # noqa: E402

PLANS = {
    "planned": dict(),
    "no-producer": dict(config=cfg(128, 256, 3), wc=4, lag=0, producer=False),
}


def main():
    t, g, n, k = 8192, 8, 4096, 4096
    ends, offsets, a, b, out = contiguous_inputs(t, g, n, k)
    kern = kernel(dict(layout="contiguous", num_groups=g, n=n, k=k), "sm_80",
                  **PLANS[sys.argv[1]])
    for _ in range(4):
        kern(a, b, offsets, out)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
