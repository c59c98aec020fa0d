"""The FP8 weight gradient (ggc.training's k-grouped GEMM, bf16 out) on
the training projections' token groups quantised in global 128-token
blocks, as ggc.training did before gg.quantize_group_tokens (a torch
transposed copy, then gg.quantize_rows' kernel; each group starting
anywhere, its first and last K blocks straddling its neighbours and
cleared in shared memory), against each group padded to whole blocks by
training.quantized_tokens (every K block the group's own), beside the
BF16 weight gradient, interleaved in one process; and both quantisations
of x and dy alone (#40).

    python3 benchmarks/probes/wgrad_fp8_alignment.py [--cases SUBSTRING]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from ggc import ops, torch_ops, training  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_training import BF16_CASES, projection_problem, rel_err  # noqa: E402

BLOCK = 128


def padded_to_blocks(t_rows, sizes, offsets):
    """t_rows [T, C] with each group's rows moved to a multiple of 128
    (zeros between): (rows [T', C], offsets [G+1] int32)."""
    padded = [-(-s // BLOCK) * BLOCK for s in sizes]
    starts = [0]
    for p in padded:
        starts.append(starts[-1] + p)
    out = t_rows.new_zeros(max(starts[-1], BLOCK), t_rows.shape[1])
    bounds = offsets.tolist()
    for g, s in enumerate(sizes):
        out[starts[g]:starts[g] + s] = t_rows[bounds[g]:bounds[g] + s]
    return out, torch.tensor(starts, dtype=torch.int32, device=t_rows.device)


def global_blocks(t_rows):
    """t_rows [T, C] transposed and quantised in 128-token blocks of the
    whole token axis (ggc.training's quantized_tokens before
    gg.quantize_group_tokens)."""
    tokens = t_rows.shape[0]
    padded = -(-max(tokens, 1) // BLOCK) * BLOCK
    transposed = t_rows.new_empty(t_rows.shape[1], padded)
    transposed[:, :tokens].copy_(t_rows.t())
    transposed[:, tokens:].zero_()
    return training.quantized_rows(transposed)


def fp8_wgrad(dyt, xt, offsets):
    (dytq, dyts), (xtq, xts) = dyt, xt
    return lambda: ops.grouped_gemm(dytq, xtq, k_offsets=offsets, k_major=True, a_scale=dyts,
                                    b_scale=xts, out_dtype=torch.bfloat16, validate=False)


def case(label, t, g, n, k, loads):
    sizes, _, offsets, x, _, dy = projection_problem(t, g, n, k, loads, 0)
    x = x.detach()
    dyt_q, dyt_s, padded = training.quantized_tokens(dy, offsets)
    xt_q, xt_s, _ = training.quantized_tokens(x, offsets)
    fns = {"quantise x, dy: global blocks": lambda: (global_blocks(x), global_blocks(dy)),
           "quantise x, dy: group blocks": lambda: (training.quantized_tokens(x, offsets),
                                                    training.quantized_tokens(dy, offsets)),
           "fp8 wgrad, global blocks": fp8_wgrad(global_blocks(dy), global_blocks(x), offsets),
           "fp8 wgrad, group blocks": fp8_wgrad((dyt_q, dyt_s), (xt_q, xt_s), padded),
           "bf16 wgrad": lambda: torch_ops.grouped_mm_grad_w(dy, x, offsets)}
    want = torch_ops.grouped_mm_grad_w(dy, x, offsets).float()
    errors = {name: rel_err(fns[name]().float(), want) for name in fns if "wgrad" in name}
    times = time_interleaved(fns, rounds=9)
    aligned = sum(s % BLOCK == 0 for s in sizes)
    print(f"{label} ({aligned}/{g} groups of whole blocks)", flush=True)
    for name, us in times.items():
        extra = (f"  {times['bf16 wgrad'] / us:.3f}x of bf16  err vs bf16 {errors[name]:.1e}"
                 if name in errors else "")
        print(f"    {name:32} {us:9.1f} us{extra}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="")
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), flush=True)
    for c in BF16_CASES:
        if args.cases in c[0]:
            case(*c)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
