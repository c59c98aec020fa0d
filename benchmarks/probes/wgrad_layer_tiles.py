"""Tiles and plans for a MoE layer's BF16 weight gradients (k_grouped,
token-major operands, bf16 written) at a training layer's group sizes:
the routes of T tokens to top_k of E experts (about T * top_k / E tokens
an expert, Poisson-ragged), where each tile's K loop is one or two blocks
long and its epilogue weighs most. ggc's default against the given
variants and torch._grouped_mm's weight gradient, interleaved in one run;
every output checked against torch's.

    python3 benchmarks/probes/wgrad_layer_tiles.py [--layer deepseek] [--tokens 4096]
        [VARIANT ...]

A variant is 'BMxBN/STAGES[/PLAN]': the block, stages and, optionally,
the kernel plan's fields (`#gg.kernel_plan<PLAN>`), or 'default'
(ops.grouped_gemm's choice).
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
from ggc import ir, ops  # noqa: E402
from bench_fp8_training import layer_shape  # noqa: E402
from bench_grouped_gemm import runnable, time_interleaved  # noqa: E402

ONE_LEVEL = "promotion = serial, scales = none, registers = [40, 232], staging = swizzled"
DEFAULT_VARIANTS = ["default", f"128x256/3/{ONE_LEVEL}, store_issuers = warpgroup",
                    "128x256/4", "128x128/4", "128x128/6",
                    f"128x128/6/{ONE_LEVEL}, store_issuers = warpgroup", "256x128/3"]


def variant_fn(text, g, m, n, a, b, offsets, out):
    """A callable writing dw = a_g^T b_g into `out` by `text`'s kernel."""
    if text == "default":
        return lambda: ops.grouped_gemm(a, b, k_offsets=offsets, out=out, validate=False)
    block, stages, *plan = text.split("/", 2)
    bm, bn = map(int, block.split("x"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    spec = {"kernel_plan": f"#gg.kernel_plan<{plan[0]}>"} if plan else {}
    kern = ggc.Kernel(ir.grouped_matmul(
        "wgrad", layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="kn",
        config=f"#gg.config<block = [{bm}, {bn}, 64], stages = {stages}, cluster = [1, 1], "
               f"sms = {sms}>", **spec))
    return lambda: kern(a, b, offsets, out)


def chunked_rel_err(out, want, chunk=16):
    """|out - want| / |want| over [G, M, N], a few experts at a time (the
    whole in f32 would not fit beside them)."""
    diff = ref = 0.0
    for start in range(0, out.shape[0], chunk):
        o, w = out[start:start + chunk].float(), want[start:start + chunk].float()
        diff += float((o - w).square().sum())
        ref += float(w.square().sum())
    return (diff / ref) ** 0.5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layer", default="deepseek")
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("variants", nargs="*")
    args = parser.parse_args()
    label, experts, top_k, hidden, inter = layer_shape(args.layer)
    print(torch.cuda.get_device_name(), flush=True)
    gen = torch.Generator(device="cuda").manual_seed(0)
    ids = torch.randint(0, experts, (args.tokens * top_k,), device="cuda", generator=gen)
    sizes = torch.bincount(ids, minlength=experts)
    offsets = torch.cat([sizes.new_zeros(1), sizes.cumsum(0)]).to(torch.int32)
    rows = args.tokens * top_k
    # The up projection's weight gradient (dh [M, 2I], x [M, H]), then the
    # down projection's (dy [M, H], the routed rows [M, I]).
    for name, m, n in (("up", 2 * inter, hidden), ("down", hidden, inter)):
        a = torch.randn(rows, m, device="cuda", generator=gen).bfloat16()
        b = torch.randn(rows, n, device="cuda", generator=gen).bfloat16()
        want = torch._grouped_mm(a.t(), b, offs=offsets[1:])
        # One output for every variant (a layer's gradient is 15 GB in
        # DeepSeek-V3's up projection): each checked after its first run.
        out = torch.empty(experts, m, n, device="cuda", dtype=torch.bfloat16)
        fns = {"torch": lambda a=a, b=b: torch._grouped_mm(a.t(), b, offs=offsets[1:])}
        for text in args.variants or DEFAULT_VARIANTS:
            fns[text] = variant_fn(text, experts, m, n, a, b, offsets, out)
        for text, fn in list(fns.items())[1:]:
            out.fill_(float("nan"))
            if not runnable({text: fn}, f"{label} {name}"):
                del fns[text]
                continue
            err = chunked_rel_err(out, want)
            assert err < 1e-2, (text, err)
        times = time_interleaved(fns)
        flops = 2.0 * rows * m * n
        written = experts * m * n * 2
        for text, us in times.items():
            print(f"{label} T={args.tokens} {name} wgrad [{experts}, {m}, {n}] {text:60.60} "
                  f"{us:9.1f} us {flops / us / 1e6:5.0f} TFLOPS {written / us / 1e6:5.2f} TB/s "
                  f"written, torch {times['torch'] / us:5.3f}x", flush=True)
        del a, b, want, out, fns
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
