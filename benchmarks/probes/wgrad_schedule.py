"""The FP8 weight gradient's tile walk and B's L2 policy against
DeepGEMM's `k_grouped_fp8_gemm_nt_contiguous`, on DeepGEMM's six sm90
shapes, interleaved in one process (#40): B's evict-first L2 policy
(gg-schedule-groups' choice for k_grouped f8 before 53c923d, made for the
masked layout's weights) against the default, M or N blocks first, M
blocks in bands (a wave then reads fewer of A's tiles: a group's A and B
do not fit in L2 together on these shapes; 12 is the band
gg-schedule-groups' wave model picks for 128x144 tiles on 132 SMs, which
it gives only to rows known at run time; on an H100 the sixty-third
session's ncu found ggc's walk moving about 1.5x DeepGEMM's DRAM
bytes), B kept in L2, and 2-CTA
clusters (B multicast), all on ggc's tiles (128x144, four stages);
"chosen" is gg-schedule-groups' choice of the compiler in hand (M blocks
first, no band: k_grouped rows are static).

    python3 benchmarks/probes/wgrad_schedule.py

Every output is checked against fp64 (two groups) before timing.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from probe_cases import fp8_wgrad_kernel, on_deepgemm_wgrad_shapes  # noqa: E402

# label: (cluster M, ir.grouped_matmul's schedule arguments); None: the pass's choice.
VARIANTS = {
    "chosen": (1, None),
    "m first, B normal": (1, dict(tile_order="m_fastest", b_cache="normal")),
    "n first, B evict_first": (1, dict(tile_order="n_fastest", b_cache="evict_first")),
    "n first, B normal": (1, dict(tile_order="n_fastest", b_cache="normal")),
    "bands of 8": (1, dict(m_band=8)),
    "bands of 12": (1, dict(m_band=12)),
    "bands of 16": (1, dict(m_band=16)),
    "bands of 8, B evict_last": (1, dict(m_band=8, b_cache="evict_last")),
    "clusters of 2": (2, None),
}


def kernels_for(g, m, n):
    return {label: fp8_wgrad_kernel(g, m, n, 144, 4, cluster, **(schedule or {}))
            for label, (cluster, schedule) in VARIANTS.items()}


def main():
    on_deepgemm_wgrad_shapes(kernels_for)


if __name__ == "__main__":
    main()
