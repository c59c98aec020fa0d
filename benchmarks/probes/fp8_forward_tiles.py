"""FP8 contiguous forward projections (1x128 scales of A, 128x128 of B,
bf16 out) on tiles other than gg-select-config's, against its choice,
interleaved in one process (#39: the kernels where ggc trails DeepGEMM
by 1-5%).

    python3 benchmarks/probes/fp8_forward_tiles.py [--shapes T:G:N:K,...]
        [N/STAGES/PROMOTION[/P-C][/c2][/e1] ...]

Each argument is one variant of a 128-row tile (block N, stages,
promotion serial or pipelined, the producer's and consumers' registers,
24-240 unless given, /c2 for pairs of CTAs sharing B by multicast,
cluster = [2, 1], and /e1 for `epilogue_blocks = 1`: a serial kernel's
epilogue deferred beside the next tile's first wgmma); the baseline is gg-select-config's choice for the
call's `expected_m` (the rows over the groups rounded down to a power of
two, as ggc.ops passes it). Every output is checked against fp64 (the
first and last groups) before timing. gg-tma-store-pool lowers a
variant's stages until its staged output tile fits beside them (a
128x128 tile asked for with 6 stages runs with 5).
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import ggc  # noqa: E402
from ggc import ir, ops  # noqa: E402
from probe_cases import contiguous, report  # noqa: E402

# (T, G, N, K): #39's FP8 contiguous shapes and DeepSeek-V3's projections.
SHAPES = ((8192, 8, 4096, 7168), (16384, 32, 3072, 8192), (8192, 8, 7168, 2048),
          (32768, 32, 4096, 7168), (32768, 32, 7168, 2048))


def parse_variant(text):
    """'N/STAGES/PROMOTION[/P-C][/c2][/e1]' ->
    (N, STAGES, PROMOTION, 'P-C', cluster, epilogue blocks or None)."""
    parts = text.split("/")
    flags = set()
    while len(parts) > 3 and parts[-1] in ("c2", "e1"):
        flags.add(parts.pop())
    if len(parts) not in (3, 4) or not (parts[0].isdigit() and parts[1].isdigit()):
        raise SystemExit(f"variant {text!r}: expected N/STAGES/PROMOTION[/P-C][/c2][/e1]")
    return (int(parts[0]), int(parts[1]), parts[2], parts[3] if len(parts) == 4 else "24-240",
            2 if "c2" in flags else 1, 1 if "e1" in flags else None)


def staging_for(block_n):
    """gg-plan-kernel's staging for a bf16 tile of `block_n` columns: 128B
    swizzled for whole 128-byte rows, 64B for whole 64-byte chunks, else
    none (the store pool's 1-row boxes would start off TMA's 128-byte
    alignment)."""
    row = 2 * block_n
    return "swizzled" if row % 128 == 0 else "swizzled_64" if row % 64 == 0 else "none"


def kernels_for(t, g, n, k, spec, variants):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    hint = ops.mean_hint(t, g, 4096)
    common = dict(layout="contiguous", num_groups=g, n=n, k=k, expected_m=hint, **spec)
    kernels = {"default": ggc.Kernel(ir.grouped_matmul("k", **common))}
    for block_n, stages, promotion, regs, cluster, epilogue_blocks in variants:
        producer, consumer = regs.split("-")
        name = (f"128x{block_n} {stages}st {promotion} {regs}" + (" c2" if cluster == 2 else "")
                + (" e1" if epilogue_blocks else ""))
        deferred = f", epilogue_blocks = {epilogue_blocks}" if epilogue_blocks else ""
        kernels[name] = ggc.Kernel(ir.grouped_matmul(
            "k", config=f"#gg.config<block = [128, {block_n}, 128], stages = {stages}, "
                        f"cluster = [{cluster}, 1], sms = {sms}>",
            kernel_plan=f"#gg.kernel_plan<promotion = {promotion}, scales = stages, "
                        f"registers = [{producer}, {consumer}], "
                        f"staging = {staging_for(block_n)}{deferred}>", **common))
    return kernels


def main():
    args, shapes = sys.argv[1:], SHAPES
    if args[:1] == ["--shapes"]:
        if len(args) < 2:
            raise SystemExit("--shapes takes T:G:N:K[,T:G:N:K...]")
        try:
            shapes = [tuple(int(v) for v in shape.split(":")) for shape in args[1].split(",")]
        except ValueError:
            shapes = []
        if not shapes or any(len(shape) != 4 for shape in shapes):
            raise SystemExit(f"--shapes {args[1]!r}: expected T:G:N:K[,T:G:N:K...]")
        args = args[2:]
    variants = [parse_variant(v) for v in args]
    print(torch.cuda.get_device_name(), flush=True)
    for t, g, n, k in shapes:
        case = contiguous(t, g, n, k, fp8=True)
        kernels = kernels_for(t, g, n, k, case.spec, variants)
        report(f"FP8 contiguous T{t} G{g} N{n} K{k}", *case.time_kernels(kernels, n),
               2.0 * t * n * k)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
