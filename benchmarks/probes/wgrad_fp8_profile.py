"""One FP8 weight-gradient kernel (wgrad_fp8_variants' jit kernel, G4
M4096 N7168, accumulating into f32) launched a few times, for Nsight
Compute: `--variant column` (1x128 scales of both sides, MN-major, as
DeepGEMM takes them), `rows` (A's 1x128 scales, B per tensor) or
`tensor` (per-tensor scales on both sides).

    ncu --clock-control none -k regex:wgrad --launch-skip 2 --launch-count 1 \\
        python3 benchmarks/probes/wgrad_fp8_profile.py --variant column
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from wgrad_fp8_variants import inputs, ops, wgrad  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("column", "rows", "tensor"), default="column")
    args = parser.parse_args()
    g, m, n = 4, 4096, 7168
    _, offsets, (_, dy_s), (_, x_s), a, b = inputs(g, m, n, 8192)
    sa, a_kind = ops._k_grouped_scale_kind("a", dy_s.t(), m, g, None)
    sb, b_kind = ops._k_grouped_scale_kind("b", x_s.t(), n, g, None)
    ones = torch.ones(g, device="cuda")
    d = torch.zeros(g, m, n, device="cuda")
    if args.variant == "tensor":
        sa, sb, a_kind, b_kind = ones, ones, "tensor", "tensor"
    elif args.variant == "rows":
        sb, b_kind = ones, "tensor"
    for _ in range(4):
        wgrad(a, b, offsets, sa, sb, d, A_KIND=a_kind, B_KIND=b_kind)
    torch.cuda.synchronize()
    print(f"{args.variant}: ran", flush=True)


if __name__ == "__main__":
    main()
