"""The FP8 weight gradient's staged f32 tile as dense rows against two
dense halves (the plan's staging = dense_halves), beside DeepGEMM's
`k_grouped_fp8_gemm_nt_contiguous`, on DeepGEMM's six sm90 shapes,
interleaved in one process (#40). Dense rows of 176 f32 (704 bytes) put
a warp's 8 rows of fragment stores on half the banks; halves of 88 (352
bytes) spread them over all 32, at the cost of two TMA boxes a height.
128x144 tiles (four stages) have the same conflict and the same cure.
The plan's `column_scale_reads = at_issue` (B's column scales read into
registers after each wgmma's issue, the stage given back before the
promotion) on both: not yet run (thirty-second session, no device time
left).

    python3 benchmarks/probes/wgrad_staging.py

Every output is checked against fp64 (two groups) before timing.
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from probe_cases import on_deepgemm_wgrad_shapes  # noqa: E402

# (block N, stages, staging, column_scale_reads); the first is ggc's choice.
VARIANTS = ((176, 3, "dense", "at_promotion"), (176, 3, "dense_halves", "at_promotion"),
            (144, 4, "dense", "at_promotion"), (144, 4, "dense_halves", "at_promotion"),
            (176, 3, "dense", "at_issue"), (144, 4, "dense_halves", "at_issue"))


def kernels_for(g, m, n):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    kernels = {}
    for block_n, stages, staging, reads in VARIANTS:
        label = f"128x{block_n} {stages} stages {staging}" + (
            " at_issue" if reads == "at_issue" else "")
        kernels[label] = ggc.Kernel(ir.grouped_matmul(
            "k", layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
            dtype="f8E4M3FN", out_dtype="f32", a_scale="block_mn",
            b_scale="block1x128_mn", accumulate=True,
            config=f"#gg.config<block = [128, {block_n}, 128], stages = {stages}, "
                   f"cluster = [1, 1], sms = {sms}>",
            kernel_plan="#gg.kernel_plan<promotion = serial, scales = stages, "
                        f"registers = [40, 232], staging = {staging}, "
                        f"column_scale_reads = {reads}>"))
    return kernels


def main():
    on_deepgemm_wgrad_shapes(kernels_for)


if __name__ == "__main__":
    main()
