"""Which `expected_m` hint serves ggc.moe's GEMMs best where experts get a
few dozen to a few hundred rows (#38: the Qwen3-like layer at T=1,024,
64 rows an expert, trails vLLM). ggc.moe hints the even share of routes
(T * top_k / E) rounded down to a power of two, and gg-select-config
takes 64x64 decode tiles up to a hint of 64, so an expert of 65-127 rows
takes two M tiles and reads its weights twice. Each variant times the
whole layer (graph replay, L2 flushed, interleaved) with the hint scaled
by a factor, with the SwiGLU in the up projection where the hint allows
it (ggc.moe.kernels.gated_up) and, at factor 2, also without.

    python3 benchmarks/probes/moe_expected_m.py [--shapes qwen3,mixtral]
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
from ggc.moe import kernels, layer  # noqa: E402

CASES = {"qwen3": (512, 1024, 2048, 4096), "mixtral": (128, 256, 512, 1024)}


def with_hint(factor, fused=True):
    """fused_moe's layer with expected_rows scaled by `factor`."""
    def hinted(routes, experts):
        hint = original(routes, experts)
        return None if hint is None else hint * factor

    def run(x, w13, w2, weights, ids):
        saved = layer.expected_rows, kernels._GATED_UP
        layer.expected_rows = hinted
        if not fused:
            kernels._GATED_UP = {}
        try:
            return moe.fused_moe(x, w13, w2, weights, ids, graph=False)
        finally:
            layer.expected_rows, kernels._GATED_UP = saved
    return run


original = layer.expected_rows
VARIANTS = {"hint x1": with_hint(1), "hint x2": with_hint(2), "hint x2 unfused up":
            with_hint(2, fused=False), "hint x4": with_hint(4)}


def time_variants(variants, cases, shapes, rounds):
    """Prints one row per shape and token count: the layer under each of
    `variants` ({label: fn(x, w13, w2, weights, ids)}, the first the
    reference the others must match within 1e-2), graph replay, L2 flushed,
    interleaved, us. `cases`: {shape: token counts}."""
    labels = list(variants)
    print(torch.cuda.get_device_name(), flush=True)
    print("| shape | T | rows an expert | " + " | ".join(labels) + " |")
    print("|---|---:|---:|" + "---:|" * len(labels))
    for name in shapes:
        experts, top_k, hidden, inter = SHAPES[name]
        w13, w2 = weights_for(experts, hidden, inter, seed=0)
        for tokens in cases[name]:
            x, weights, ids = inputs(experts, top_k, hidden, inter, tokens, seed=tokens)
            calls, outs, graphs = {}, {}, []  # a graph must outlive its replays
            for label, fn in variants.items():
                replay, outs[label], graph = captured(lambda fn=fn: fn(x, w13, w2, weights, ids))
                calls[label], graphs = replay, graphs + [graph]
            times = time_interleaved_flushed(calls, rounds)
            ref = outs[labels[0]].double()
            for label, out in outs.items():
                err = ((out.double() - ref).norm() / ref.norm()).item()
                assert err < 1e-2, f"{name} T={tokens} {label}: {err:.1e} from {labels[0]}"
            print(f"| {name} | {tokens} | {tokens * top_k / experts:.0f} | "
                  + " | ".join(f"{times[label]:.1f}" for label in labels) + " |", flush=True)


def main(variants, cases, rounds=15):
    """A probe's command line: --shapes (default qwen3,mixtral), --rounds."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="qwen3,mixtral")
    parser.add_argument("--rounds", type=int, default=rounds)
    args = parser.parse_args()
    time_variants(variants, cases, args.shapes.split(","), args.rounds)


if __name__ == "__main__":
    main(VARIANTS, CASES)
