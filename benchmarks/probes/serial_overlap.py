"""Serial FP8 kernels with the previous tile's epilogue run beside the
next tile's first wgmma (`#gg.kernel_plan`'s `epilogue_blocks = 1`)
against at its tile's end (0), and the staged tile dense against
64B-swizzled (`staging = swizzled_64`), each as explicit plans of one
compiler, interleaved in one process (#39, #40):

- the FP8 weight gradient (k_grouped, 1x128 scales over the tokens, f32
  added to `out` by TMA's reduce-add) on 128x176 tiles, DeepGEMM's sm90
  test shapes, beside DeepGEMM's `k_grouped_fp8_gemm_nt_contiguous` where
  it is importable;
- the same with a bf16 output (no accumulation) on 128x160 tiles;
- FP8 contiguous forward projections on 128x192 tiles (short K: the
  Qwen3- and gpt-oss-like layers' GEMMs).

    python3 benchmarks/probes/serial_overlap.py [--cases wgrad,bf16,forward]

Every variant's output is checked against fp64 of the dequantised
operands (two groups) before timing.
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import ragged_groups, time_interleaved  # noqa: E402
from bench_training import DG, deepgemm_wgrad, quantise_per_128_tokens  # noqa: E402


def plan(staging, epilogue_blocks):
    return (f"#gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], "
            f"staging = {staging}, epilogue_blocks = {epilogue_blocks}>")


def config(block_n, stages):
    return (f"#gg.config<block = [128, {block_n}, 128], stages = {stages}, "
            f"cluster = [1, 1], sms = {torch.cuda.get_device_properties(0).multi_processor_count}>")


def rel_err(out, ref):
    out = out.double()
    assert torch.isfinite(out).all(), "non-finite outputs"
    return ((out - ref).norm() / ref.norm()).item()


def wgrad_case(g, m, n, per_group, out_dtype, block_n, stages, variants):
    gen = torch.Generator().manual_seed(g * 7 + m)
    ks = [-(-int(per_group * (0.7 + 0.6 * torch.rand(1, generator=gen).item())) // 128) * 128
          for _ in range(g)]
    total = sum(ks)
    dy_q, dy_s = quantise_per_128_tokens(torch.randn(total, m, device="cuda").bfloat16())
    x_q, x_s = quantise_per_128_tokens(torch.randn(total, n, device="cuda").bfloat16())
    offsets = torch.tensor([0] + ks, device="cuda").cumsum(0).to(torch.int32)
    a, b = dy_q.t().contiguous(), x_q.t().contiguous()
    sa, sb = dy_s, x_s  # [K blocks, M] and [K blocks, N]: M- and N-major
    accumulate = out_dtype == "f32"
    c = torch.randn(g, m, n, device="cuda") * 32
    fns, outs = {}, {}
    for staging, eb in variants:
        kern = ggc.Kernel(ir.grouped_matmul(
            "k", layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
            dtype="f8E4M3FN", out_dtype=out_dtype, a_scale="block_mn",
            b_scale="block1x128_mn", accumulate=accumulate, config=config(block_n, stages),
            kernel_plan=plan(staging, eb)))
        out = c.clone() if accumulate else torch.full(
            (g, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        label = f"{block_n} {staging} eb{eb}"
        fns[label] = lambda kern=kern, out=out: kern(a, b, offsets, sa, sb, out)
        outs[label] = out
    if DG is not None and accumulate:
        d = c.clone()
        fns["deep_gemm"] = deepgemm_wgrad(dy_q, dy_s, x_q, x_s, offsets, ks, d)
        outs["deep_gemm"] = d
    for label, fn in fns.items():
        fn()
    torch.cuda.synchronize()
    errors = {}
    for label, out in outs.items():
        worst, start = 0.0, 0
        for gi in range(2):
            e = start + ks[gi]
            aq = dy_q[start:e].double() * dy_s[start // 128:e // 128].double().repeat_interleave(128, 0)
            bq = x_q[start:e].double() * x_s[start // 128:e // 128].double().repeat_interleave(128, 0)
            ref = aq.T @ bq + (c[gi].double() if accumulate else 0)
            worst = max(worst, rel_err(out[gi], ref))
            start = e
        errors[label] = worst
    times = time_interleaved(fns)
    flops = 2.0 * m * n * total
    name = f"FP8 wgrad {out_dtype} G{g} M{m} N{n} tokens {total}"
    report(name, times, errors, flops, first=next(iter(fns)))


def forward_case(t, g, n, k, variants):
    _, _, offsets = ragged_groups(t, g, 0)
    kb = -(-k // 128)
    a = (torch.randn(t, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    a_scale = torch.rand(kb, (t + 3) // 4 * 4, device="cuda") + 0.5
    b_scale = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
    fns, outs = {}, {}
    for staging, eb in variants:
        kern = ggc.Kernel(ir.grouped_matmul(
            "k", layout="contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
            a_scale="block_mn", b_scale="block", config=config(192, 4),
            kernel_plan=plan(staging, eb)))
        out = torch.full((t, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        label = f"192 {staging} eb{eb}"
        fns[label] = lambda kern=kern, out=out: kern(a, b, offsets, a_scale, b_scale, out)
        outs[label] = out
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    bounds = offsets.tolist()
    errors = {}
    for label, out in outs.items():
        worst = 0.0
        for gi in (0, g - 1):
            s, e = bounds[gi], bounds[gi + 1]
            if s == e:
                continue
            ad = a[s:e].double() * a_scale[:, s:e].T.double().repeat_interleave(128, 1)[:, :k]
            bd = b[gi].double() * b_scale[gi].double().repeat_interleave(
                128, 0)[:n].repeat_interleave(128, 1)[:, :k]
            worst = max(worst, rel_err(out[s:e], ad @ bd.T))
        errors[label] = worst
    times = time_interleaved(fns)
    report(f"FP8 contiguous T{t} G{g} N{n} K{k}", times, errors, 2.0 * t * n * k,
           first=next(iter(fns)))


def report(name, times, errors, flops, first):
    print(name, flush=True)
    for label, us in times.items():
        print(f"    {label:24} {us:9.1f} us {flops / us / 1e6:6.0f} TFLOPS "
              f"{times[first] / us:6.3f}x of {first}  err {errors[label]:.1e}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="wgrad,bf16,forward")
    args = parser.parse_args()
    cases = args.cases.split(",")
    print(torch.cuda.get_device_name(), flush=True)
    wide = [("dense", 0), ("dense", 1), ("swizzled_64", 0), ("swizzled_64", 1)]
    if "wgrad" in cases:
        for g, m, n in ((4, 4096, 7168), (16, 4096, 7168), (16, 7168, 2048)):
            wgrad_case(g, m, n, 8192 * 4 // g, "f32", 176, 3, wide)
    if "bf16" in cases:
        wgrad_case(16, 4096, 7168, 2048, "bf16", 160, 4, wide)
    if "forward" in cases:
        for shape in ((16384, 32, 1536, 2048), (4096, 32, 1536, 2048),
                      (16384, 128, 2880, 2880)):
            forward_case(*shape, [("swizzled", 0), ("swizzled", 1)])


if __name__ == "__main__":
    main()
