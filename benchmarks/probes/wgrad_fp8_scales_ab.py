"""An FP8 weight gradient's kernels (#40), beside DeepGEMM's
k_grouped_fp8_gemm_nt_contiguous: the planner's (128x128 tiles, pipelined
promotion, the 1x128 scales in the stages: A's window and B's columns one
TMA box each a stage, read by the promotion there), the same with the
scales in the slots (each consumer warp copies its rows' and columns'
scales itself and publishes the columns to its warpgroup every K block),
and serial promotions on wider tiles, which the stages' box of column
scales allows (two fragments fit up to 192 columns, three do not);
checked against each other and an fp64 reference, timed interleaved.

    python3 benchmarks/probes/wgrad_fp8_scales_ab.py [--bf16] [--small]
    ncu --clock-control none -k regex:"wgrad|1d1d" --section SpeedOfLight \
        --section WarpStateStats python3 benchmarks/probes/wgrad_fp8_scales_ab.py --profile

`--small` takes training's shapes instead (DeepSeek-V3's up and down
projections at 512 tokens an expert, Qwen3-30B-A3B's at 256: a few K
blocks a tile). `--bf16` writes the gradient in bf16 instead of adding it to f32 (as
ggc.training's FP8 recipe does; DeepGEMM still accumulates). `--profile` launches the planned kernel, the serial 128x176 one and DeepGEMM's
once each on G4 M4096 N7168 and G16 M4096 N7168, for Nsight Compute.

The shapes are DeepGEMM's sm90 k-grouped test shapes (bench_training.py's
FP8 weight-gradient cases); groups 128-aligned as DeepGEMM needs, plus one
ragged case (ggc's groups need no alignment) checked only.
"""
import os
import random
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_training import DG, DG_WHY, deepgemm_wgrad, quantise_per_128_tokens, rel_err  # noqa: E402


SERIAL = ("#gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], "
          "staging = {}>")
PIPELINED = ("#gg.kernel_plan<promotion = pipelined, scales = {}, registers = [24, 240], "
             "staging = swizzled>")
TILE = "#gg.config<block = [128, {}, 128], stages = {}, cluster = [1, 1], sms = 132>"


# --bf16: the weight gradient written in bf16 (no accumulation), as
# ggc.training's FP8 recipe writes it.
BF16 = "--bf16" in sys.argv


def kernels(g, m, n):
    """The planned kernel, the same with the scales in the slots, and
    serial promotions on wider tiles."""
    spec = dict(layout="k_grouped", num_groups=g, n=n, k=None, m=m, dtype="f8E4M3FN",
                a_scale="block_mn", b_scale="block1x128_mn",
                out_dtype="bf16" if BF16 else "f32", accumulate=not BF16)
    planned = ggc.compile_ir(ir.grouped_matmul("wgrad", **spec), emit="gg-config").plans[0]
    print(f"planned: {planned['attributes']['config']} {planned['attributes']['kernel_plan']}",
          flush=True)
    # 176's rows of bf16 (352 bytes) keep no TMA store pool; 160's do.
    variants = {"planned": (None, None),
                "128x128 slots": (PIPELINED.format("slots"), TILE.format(128, 4)),
                "serial 128x160": (SERIAL.format("dense" if BF16 else "swizzled"),
                                   TILE.format(160, 4 if BF16 else 3)),
                "serial 128x176": (SERIAL.format("none" if BF16 else "dense"),
                                   TILE.format(176, 5 if BF16 else 3))}
    return planned, {label: ggc.Kernel(ir.grouped_matmul("wgrad", kernel_plan=plan, config=config,
                                                         **spec))
                     for label, (plan, config) in variants.items()}


def inputs(ks, m, n):
    total = sum(ks)
    padded = -(-total // 128) * 128
    dy = torch.randn(padded, m, device="cuda").bfloat16()
    x = torch.randn(padded, n, device="cuda").bfloat16()
    dy[total:] = 0
    x[total:] = 0
    dy_q, dy_s = quantise_per_128_tokens(dy)
    x_q, x_s = quantise_per_128_tokens(x)
    offsets = torch.tensor([0] + ks, device="cuda").cumsum(0).to(torch.int32)
    return offsets, (dy_q, dy_s), (x_q, x_s)


def reference(ks, dy_q, dy_s, x_q, x_s, d0):
    dy = (dy_q.double().view(-1, 128, dy_q.shape[1]) * dy_s.double()[:, None]).view(dy_q.shape)
    x = (x_q.double().view(-1, 128, x_q.shape[1]) * x_s.double()[:, None]).view(x_q.shape)
    want, start = d0.double().clone(), 0
    for gi, kg in enumerate(ks):
        want[gi] += dy[start:start + kg].T @ x[start:start + kg]
        start += kg
    return want


def case(g, m, n, ks, timed=True):
    total = sum(ks)
    label = f"G{g} M{m} N{n} tokens {total}"
    planned, kerns = kernels(g, m, n)
    offsets, (dy_q, dy_s), (x_q, x_s) = inputs(ks, m, n)
    a, b = dy_q.t().contiguous(), x_q.t().contiguous()  # K-major [M, T'], [N, T']
    args = lambda out: (a, b, offsets, dy_s, x_s, out)  # noqa: E731
    d0 = torch.randn(g, m, n, device="cuda")
    if BF16:
        d0.zero_()
    want = reference(ks, dy_q, dy_s, x_q, x_s, d0) if m * n <= 4096 * 7168 else None
    got = {}
    for name, kern in kerns.items():
        out = torch.full((g, m, n), float("nan"), dtype=torch.bfloat16,
                         device="cuda") if BF16 else d0.clone()
        kern(*args(out))
        torch.cuda.synchronize()
        got[name] = out
        err = rel_err(out, want) if want is not None else float("nan")
        print(f"{label}  {name:7} rel. error against fp64 {err:.2e}", flush=True)
        assert want is None or err < (1e-2 if BF16 else 1e-3), (label, name, err)
    for other in [name for name in got if name != "planned"]:
        same = torch.equal(got["planned"], got[other])
        print(f"{label}  planned and {other} bit-identical: {same} "
              f"(max diff {(got['planned'] - got[other]).abs().max().item():.3e})", flush=True)
    if not timed:
        return
    d = torch.randn(g, m, n, device="cuda")
    written = torch.empty(g, m, n, dtype=torch.bfloat16, device="cuda") if BF16 else d
    fns = {name: (lambda kern=kern: kern(*args(written))) for name, kern in kerns.items()}
    if DG is not None:
        fns["deep_gemm"] = deepgemm_wgrad(dy_q[:total], dy_s[:-(-total // 128)], x_q[:total],
                                          x_s[:-(-total // 128)], offsets, ks, d)
    else:
        print(f"deep_gemm skipped: {DG_WHY}")
    times = time_interleaved(fns)
    flops = 2.0 * m * n * total
    for name, us in times.items():
        print(f"{label}  {name:14} {us:9.1f} us {flops / us / 1e6:6.0f} TFLOPS  "
              f"{times['planned'] / us:5.3f}x planned"
              + (f"  {times['deep_gemm'] / us:5.3f}x DeepGEMM" if "deep_gemm" in times else ""),
              flush=True)


def profile_launches():
    rng = random.Random(0)
    for g, m, n, per_group in ((4, 4096, 7168, 8192), (16, 4096, 7168, 2048)):
        ks = [-(-max(1, int(per_group * rng.uniform(0.7, 1.3))) // 128) * 128 for _ in range(g)]
        _, kerns = kernels(g, m, n)
        offsets, (dy_q, dy_s), (x_q, x_s) = inputs(ks, m, n)
        a, b = dy_q.t().contiguous(), x_q.t().contiguous()
        d = torch.zeros(g, m, n, device="cuda")
        for name in ("planned", "serial 128x176"):
            kerns[name](a, b, offsets, dy_s, x_s, d)
            torch.cuda.synchronize()
        if DG is not None:
            deepgemm_wgrad(dy_q, dy_s, x_q, x_s, offsets, ks, d)()
        torch.cuda.synchronize()
        print(f"G{g} M{m} N{n}: launched planned, serial 128x176, deep_gemm", flush=True)


def main():
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), flush=True)
    if "--profile" in sys.argv:
        return profile_launches()
    rng = random.Random(0)
    # A ragged case with an empty group and groups off 128 (checked only).
    case(5, 256, 200, [300, 0, 129, 1, 517], timed=False)
    shapes = ((4, 4096, 7168, 8192), (4, 7168, 2048, 8192),
              (8, 4096, 7168, 4096), (8, 7168, 2048, 4096),
              (16, 4096, 7168, 2048), (16, 7168, 2048, 2048))
    if "--small" in sys.argv:  # training's: many experts, a few K blocks a group
        shapes = ((32, 4096, 7168, 512), (32, 7168, 2048, 512),
                  (128, 1536, 2048, 256), (128, 2048, 768, 256))
    for g, m, n, per_group in shapes:
        ks = [-(-max(1, int(per_group * rng.uniform(0.7, 1.3))) // 128) * 128 for _ in range(g)]
        case(g, m, n, ks)


if __name__ == "__main__":
    main()
