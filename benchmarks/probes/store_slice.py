"""The FP8 weight gradient with its f32 tile staged a slice at a time
(gg's `store_slice = 32`: a ring of two 128 x 32 buffers, which leaves
128x160 tiles five stages and 128x192 four) against 128x176 tiles with
three stages (the whole 88 KB tile staged; ggc's default until the
thirty-third session), beside DeepGEMM's
`k_grouped_fp8_gemm_nt_contiguous`, on DeepGEMM's six sm90 shapes,
interleaved in one process (#40: Nsight Compute showed ggc's consumers
waiting for full stages 1.8x as long as DeepGEMM's four-stage kernel's).

    python3 benchmarks/probes/store_slice.py

Every output is checked against fp64 (two groups) before timing.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from probe_cases import fp8_wgrad_kernel, on_deepgemm_wgrad_shapes  # noqa: E402

# (block N, stages, store_slice): 128x176 whole (the default until the
# thirty-third session), then the sliced tiles.
VARIANTS = ((176, 3, None), (160, 5, 32), (192, 4, 32), (160, 4, 32))


def kernels_for(g, m, n):
    kernels = {}
    for block_n, stages, store_slice in VARIANTS:
        label = f"128x{block_n} {stages} stages" + (
            f" slice {store_slice}" if store_slice else "")
        kernels[label] = fp8_wgrad_kernel(g, m, n, block_n, stages, store_slice=store_slice)
    return kernels


def main():
    on_deepgemm_wgrad_shapes(kernels_for)


if __name__ == "__main__":
    main()
