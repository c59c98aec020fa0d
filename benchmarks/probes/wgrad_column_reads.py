"""The FP8 weight gradient with B's per-column scales read at the
promotion (the default: each stage held until its K block's promotion
has read them) against at the wgmma's issue (the plan's
`column_scale_reads = at_issue`: read into registers, the stage given
back before the promotion), on 128x176 tiles with three stages and
128x144 with four, beside DeepGEMM's `k_grouped_fp8_gemm_nt_contiguous`,
on DeepGEMM's six sm90 shapes, interleaved in one process (#40).

    python3 benchmarks/probes/wgrad_column_reads.py

Every output is checked against fp64 (two groups) before timing. Not yet
run (written in the thirty-second session, after its device time).
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

# (block N, stages, column_scale_reads); the first is ggc's choice.
VARIANTS = ((176, 3, "at_promotion"), (176, 3, "at_issue"), (144, 4, "at_promotion"),
            (144, 4, "at_issue"))


def kernels_for(g, m, n):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    kernels = {}
    for block_n, stages, reads in VARIANTS:
        label = f"128x{block_n} {stages} stages {reads}"
        kernels[label] = ggc.Kernel(ir.grouped_matmul(
            "k", layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
            dtype="f8E4M3FN", out_dtype="f32", a_scale="block_mn",
            b_scale="block1x128_mn", accumulate=True,
            config=f"#gg.config<block = [128, {block_n}, 128], stages = {stages}, "
                   f"cluster = [1, 1], sms = {sms}>",
            kernel_plan="#gg.kernel_plan<promotion = serial, scales = stages, "
                        "registers = [40, 232], staging = dense, "
                        f"column_scale_reads = {reads}>"))
    return kernels


def main():
    on_deepgemm_wgrad_shapes(kernels_for)


if __name__ == "__main__":
    main()
