"""The FP8 weight gradient's tile walk and B's L2 policy against
DeepGEMM's `k_grouped_fp8_gemm_nt_contiguous`, on DeepGEMM's six sm90
shapes, interleaved in one process (#40): B's evict-first L2 policy
(gg-schedule-groups' choice for k_grouped f8 before 53c923d, made for the
masked layout's weights) against the default, M or N blocks first, and
2-CTA clusters (B multicast), all on ggc's 128x176 tiles with three
stages; "chosen" is gg-schedule-groups' choice of the compiler in hand.

    python3 benchmarks/probes/wgrad_schedule.py

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

# label: (cluster M, ir.grouped_matmul's schedule arguments); None: the pass's choice.
VARIANTS = {
    "chosen": (1, None),
    "m first, B normal": (1, dict(tile_order="m_fastest", b_cache="normal")),
    "n first, B evict_first": (1, dict(tile_order="n_fastest", b_cache="evict_first")),
    "n first, B normal": (1, dict(tile_order="n_fastest", b_cache="normal")),
    "clusters of 2": (2, None),
}


def kernels_for(g, m, n):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = {}
    for label, (cluster, schedule) in VARIANTS.items():
        out[label] = ggc.Kernel(ir.grouped_matmul(
            "k", layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
            dtype="f8E4M3FN", out_dtype="f32", a_scale="block_mn",
            b_scale="block1x128_mn", accumulate=True, **(schedule or {}),
            config=f"#gg.config<block = [128, 176, 128], stages = 3, "
                   f"cluster = [{cluster}, 1], sms = {sms}>"))
    return out


def main():
    on_deepgemm_wgrad_shapes(kernels_for)


if __name__ == "__main__":
    main()
