"""The FP8 layer's up projection reading the tokens through the routes'
source list (#38): the tokens quantised once each (T rows) and the GEMM
gathering their rows by cp.async (gg's a_rows with the sorted rows' 1x128
scales), against the quantisation kernel writing a gathered quantised
copy (T x top_k rows) for the plain FP8 GEMM. Also gg.quantize_rows'
`steps` (a warp's steps of a row loaded together) on the layer's three
quantisations alone. Graph replay, L2 flushed, interleaved, us.

    python3 benchmarks/probes/fp8_gather.py [--shapes qwen3,mixtral] [--tokens 1024,4096]
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_moe import SHAPES, captured, inputs, time_interleaved_flushed, weights_for  # noqa: E402
from ggc import moe  # noqa: E402
from ggc.moe import layer, quant_kernel  # noqa: E402


def fp8_layer(q13, s13, q2, s2, gather):
    """fused_moe in FP8 with the up projection's gather on or off."""
    def run(x, weights, ids):
        chosen = layer.gathers_rows
        if not gather:
            layer.gathers_rows = lambda x, w13: chosen(x, w13) and w13.dtype == torch.bfloat16
        try:
            return moe.fused_moe(x, q13, q2, weights, ids, w13_scale=s13, w2_scale=s2,
                                 graph=False)
        finally:
            layer.gathers_rows = chosen
    return run


def layer_rows(shapes, tokens, rounds):
    print(torch.cuda.get_device_name(), flush=True)
    print("| shape | T | BF16 | FP8, gathered GEMM | FP8, gathered quantisation | "
          "gathered GEMM gain | FP8 vs BF16 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in shapes:
        experts, top_k, hidden, inter = SHAPES[name]
        w13, w2 = weights_for(experts, hidden, inter, seed=0)
        (q13, s13), (q2, s2) = moe.quantize_weights(w13), moe.quantize_weights(w2)
        variants = {"bf16": lambda x, w, i: moe.fused_moe(x, w13, w2, w, i, graph=False),
                    "gemm": fp8_layer(q13, s13, q2, s2, True),
                    "quant": fp8_layer(q13, s13, q2, s2, False)}
        for t in tokens:
            x, weights, ids = inputs(experts, top_k, hidden, inter, t, seed=t)
            calls, outs, graphs = {}, {}, []
            for label, fn in variants.items():
                replay, outs[label], graph = captured(lambda fn=fn: fn(x, weights, ids))
                calls[label], graphs = replay, graphs + [graph]
            times = time_interleaved_flushed(calls, rounds)
            def err(label, against):
                ref = outs[against].double()
                return ((outs[label].double() - ref).norm() / ref.norm()).item()
            # The same quantised values either way; FP8 within its error of BF16.
            assert err("gemm", "quant") < 1e-2, f"{name} T={t}: {err('gemm', 'quant'):.1e}"
            assert err("gemm", "bf16") < 1e-1, f"{name} T={t}: {err('gemm', 'bf16'):.1e}"
            print(f"| {name} | {t} | {times['bf16']:.1f} | {times['gemm']:.1f} | "
                  f"{times['quant']:.1f} | {times['quant'] / times['gemm']:.3f}x | "
                  f"{times['bf16'] / times['gemm']:.2f}x |", flush=True)


def quantisation_rows(rounds):
    """The Qwen3-like layer's quantisations at T = 4,096 by `steps`."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    tokens = torch.randn(4096, 2048, device="cuda", generator=gen).to(torch.bfloat16)
    source = torch.randint(0, 4096, (32768,), device="cuda", generator=gen, dtype=torch.int32)
    h = torch.randn(32768, 1536, device="cuda", generator=gen).to(torch.bfloat16)
    cases = {"tokens 4096 x 2048": lambda s: quant_kernel.rows_mn(tokens, steps=s),
             "gathered 32768 x 2048": lambda s: quant_kernel.rows_mn(tokens, source, steps=s),
             "gated 32768 x 768": lambda s: quant_kernel.rows_mn(h, gated=True, steps=s)}
    steps = (1, 2, 3, 4)
    print("| quantisation | " + " | ".join(f"steps {s}" for s in steps) + " |")
    print("|---|" + "---:|" * len(steps))
    for label, fn in cases.items():
        calls, outs, graphs = {}, {}, []
        for s in steps:
            replay, outs[s], graph = captured(lambda s=s: fn(s))
            calls[s], graphs = replay, graphs + [graph]
        times = time_interleaved_flushed(calls, rounds)
        for s in steps[1:]:
            assert torch.equal(outs[s][0].view(torch.uint8), outs[1][0].view(torch.uint8))
            assert torch.equal(outs[s][1], outs[1][1])
        print(f"| {label} | " + " | ".join(f"{times[s]:.1f}" for s in steps) + " |",
              flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="qwen3,mixtral,deepseek")
    parser.add_argument("--tokens", default="1024,4096,16384")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    quantisation_rows(args.rounds)
    layer_rows(args.shapes.split(","), [int(t) for t in args.tokens.split(",")], args.rounds)
