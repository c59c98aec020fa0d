"""The FP8 weight gradient with B's per-column scales read at the
promotion (each stage held until its K block's promotion has read them)
against at the wgmma's issue (the plan's `column_scale_reads =
at_issue`: read into registers, the stage given back before the
promotion), on tiles of several widths and depths, beside DeepGEMM's
`k_grouped_fp8_gemm_nt_contiguous`, on DeepGEMM's six sm90 shapes,
interleaved in one process (#40). Without arguments: ggc's default
(f32: 128x144, four stages, read at the issue, 24/240 registers; bf16:
128x160, four stages, read at the promotion) first, then the
alternatives the thirty-third session measured it against.

    python3 benchmarks/probes/wgrad_column_reads.py [--bf16] [N/STAGES/READS[/P-C[/STAGING]] ...]

Each argument is one variant (block N, stages, column_scale_reads and
optionally the producer's and consumers' registers, 40-232 unless given,
and the staging, dense unless given),
replacing the defaults; the first is the baseline of the ratios.
--bf16 writes a bf16 weight gradient instead of adding to an f32 one
(DeepGEMM has no such kernel: ggc's variants only).
Every output is checked against fp64 (two groups) before timing.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from probe_cases import fp8_wgrad_kernel, on_deepgemm_wgrad_shapes  # noqa: E402

# (block N, stages, column_scale_reads, registers, staging) by output
# dtype; the first is ggc's default and the baseline.
DEFAULT_VARIANTS = {
    "f32": ((144, 4, "at_issue", "24-240", "dense"), (176, 3, "at_promotion", "40-232", "dense"),
            (144, 4, "at_promotion", "40-232", "dense")),
    "bf16": ((160, 4, "at_promotion", "40-232", "swizzled_64"),
             (160, 4, "at_issue", "24-240", "swizzled_64")),
}
VARIANTS = DEFAULT_VARIANTS["f32"]


def parse_variant(text):
    """'N/STAGES/READS[/P-C[/STAGING]]' -> (N, STAGES, READS, 'P-C', STAGING)."""
    parts = text.split("/")
    if len(parts) not in (3, 4, 5):
        raise SystemExit(f"variant {text!r}: expected N/STAGES/READS[/P-C[/STAGING]]")
    parts += ["40-232", "dense"][len(parts) - 3:]
    return (int(parts[0]), int(parts[1]), parts[2], parts[3], parts[4])


OUT_DTYPE = "f32"


def kernels_for(g, m, n):
    kernels = {}
    for block_n, stages, reads, regs, staging in VARIANTS:
        producer, consumer = regs.split("-")
        kernels[f"128x{block_n} {stages}st {reads} {regs} {staging}"] = fp8_wgrad_kernel(
            g, m, n, block_n, stages, out_dtype=OUT_DTYPE,
            kernel_plan="#gg.kernel_plan<promotion = serial, scales = stages, "
                        f"registers = [{producer}, {consumer}], staging = {staging}, "
                        f"column_scale_reads = {reads}>")
    return kernels


def main():
    global VARIANTS, OUT_DTYPE
    args = sys.argv[1:]
    if "--bf16" in args:
        args.remove("--bf16")
        OUT_DTYPE = "bf16"
    VARIANTS = (tuple(parse_variant(v) for v in args) if args
                else DEFAULT_VARIANTS[OUT_DTYPE])
    on_deepgemm_wgrad_shapes(kernels_for, OUT_DTYPE)


if __name__ == "__main__":
    main()
