"""The FP8 weight gradient of ggc.training's recipe (bf16 out, tokens in
each group's own 128-token blocks) at training's group sizes (256-1,024
tokens an expert: 2-8 K blocks a tile), where each tile's fixed cost
weighs most: plans and tiles against the default, beside the BF16 weight
gradient, interleaved in one process (#40).

    python3 benchmarks/probes/wgrad_short_groups.py [--cases SUBSTRING] [--f32] [--tokens T]
        [VARIANT ...]

A variant is 'BN/STAGES/PLAN': block N, stages and the kernel plan's
fields (`#gg.kernel_plan<PLAN>`), or 'default' (ops.grouped_gemm's
choice). Without variants: the default, then the plan fields that touch
a tile's end (epilogue_blocks, store_issuers, column_scale_reads, staging)
and other tiles. --f32: the gradient added to an f32 one instead (as the
DeepGEMM drop-in's k-grouped calls do). --tokens T: every case on T
tokens (shorter groups).
Every output is checked against the BF16 gradient.
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from ggc import ops, torch_ops, training  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_training import BF16_CASES, projection_problem, rel_err  # noqa: E402
from probe_cases import fp8_wgrad_kernel  # noqa: E402

PIPELINED = "promotion = pipelined, scales = stages, registers = [24, 240]"
SERIAL = "promotion = serial, scales = stages"
DEFAULT_VARIANTS = [
    "default",
    f"128/5/{SERIAL}, registers = [40, 232], staging = swizzled",
    f"128/6/{SERIAL}, registers = [40, 232], staging = swizzled",
    f"128/5/{SERIAL}, registers = [24, 240], staging = swizzled, column_scale_reads = at_issue",
    f"160/4/{SERIAL}, registers = [40, 232], staging = swizzled_64",
    f"128/5/{PIPELINED}, staging = swizzled, epilogue_blocks = 2",
    f"128/5/{PIPELINED}, staging = swizzled_64",
]
F32_VARIANTS = [
    "default",
    f"128/5/{SERIAL}, registers = [40, 232], staging = swizzled",
    f"128/4/{SERIAL}, registers = [40, 232], staging = swizzled",
    f"144/4/{SERIAL}, registers = [24, 240], staging = dense, column_scale_reads = at_issue",
]
SHAPES = ("uniform", "DeepSeek-V3 down", "Qwen3-30B up", "Qwen3-30B down", "Mixtral-8x7B down")


def variant_fn(text, g, m, n, a, b, sa, sb, padded, out):
    f32 = out.dtype == torch.float32
    if text == "default":
        hint = ops.expected_group_tokens(a.shape[1], g)
        return lambda: ops.grouped_gemm(a, b, k_offsets=padded, k_major=True, a_scale=sa,
                                        b_scale=sb, validate=False, expected_m=hint, out=out,
                                        accumulate=f32)
    block_n, stages, plan = text.split("/", 2)
    kern = fp8_wgrad_kernel(g, m, n, int(block_n), int(stages),
                            out_dtype="f32" if f32 else "bf16",
                            kernel_plan=f"#gg.kernel_plan<{plan}>")
    # The kernel takes the scales as they are stored, [P / 128, rows].
    return lambda: kern(a, b, padded, sa.t(), sb.t(), out)


def case(label, t, g, n, k, loads, variants, f32=False):
    sizes, _, offsets, x, _, dy = projection_problem(t, g, n, k, loads, 0)
    x = x.detach()
    a, sa, padded = training.quantized_tokens(dy, offsets)
    b, sb, _ = training.quantized_tokens(x, offsets)
    want = torch_ops.grouped_mm_grad_w(dy, x, offsets).float()
    fns, errors = {}, {}
    for text in variants:
        # Added to zeros (f32: checked after the first call), or written
        # over NaN (bf16).
        out = (torch.zeros((g, n, k), device="cuda") if f32 else
               torch.full((g, n, k), float("nan"), device="cuda", dtype=torch.bfloat16))
        try:
            fns[text] = variant_fn(text, g, n, k, a, b, sa, sb, padded, out)
            fns[text]()
        except Exception as error:  # a plan the compiler refuses: say why, go on
            print(f"    {text}: {str(error).splitlines()[0][:160]}", flush=True)
            fns.pop(text, None)
            continue
        errors[text] = rel_err(out.float(), want)
    fns["bf16 wgrad"] = lambda: torch_ops.grouped_mm_grad_w(dy, x, offsets)
    times = time_interleaved(fns, rounds=7)
    base = times[variants[0]] if variants[0] in times else None
    print(f"{label} (tokens a group: {min(sizes)}-{max(sizes)})", flush=True)
    for name, us in times.items():
        ratio = f"  {base / us:.3f}x of the first" if base else ""
        err = f"  err {errors[name]:.1e}" if name in errors else ""
        print(f"    {name[:100]:100} {us:8.1f} us{ratio}{err}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="")
    parser.add_argument("--f32", action="store_true",
                        help="add the gradient to an f32 one instead of writing bf16")
    parser.add_argument("--tokens", type=int, default=0,
                        help="each case's T replaced by this many tokens (shorter groups)")
    parser.add_argument("variants", nargs="*")
    args = parser.parse_args()
    variants = args.variants or (F32_VARIANTS if args.f32 else DEFAULT_VARIANTS)
    print(torch.cuda.get_device_name(), flush=True)
    for c in BF16_CASES:
        if args.cases in c[0] and any(s in c[0] for s in SHAPES):
            label, t, *shape = c
            if args.tokens:
                label, t = label.replace(f"T{t}", f"T{args.tokens}"), args.tokens
            case(label, t, *shape, variants, args.f32)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
