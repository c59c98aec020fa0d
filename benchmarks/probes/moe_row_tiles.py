"""64-row tiles for ggc.moe's two GEMMs where experts get a few dozen to a
hundred rows (#38: the Qwen3-like layer at T = 1,024, 64 rows an expert
on average, is 1.27x vLLM where the target is 1.3x). gg-select-config
gives those groups 128x128 tiles (64x64 decode tiles only up to 16 rows
on sm_90a), so half of a tile's rows are empty for most experts while
the GEMMs run near the weights' bandwidth. This times the layer's own
kernels (the gathered up projection with SwiGLU in its epilogue, the
routed down projection) on the layer's routing, each as chosen and with
64x256 / 64x128 tiles (BLOCK_M / BLOCK_N overrides; --tiles for others),
graph replay, L2 flushed, interleaved, us. --gather also times the up
projection on a gathered copy of the rows, the copy included, against
reading them through the source list (gg's a_rows).

    python3 benchmarks/probes/moe_row_tiles.py [--cases qwen3:512:1024,deepseek:1024]
        [--tiles "64x256,128x192:s5,chosen:skip"] [--gather]
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_moe import SHAPES, captured, inputs, time_interleaved_flushed, weights_for  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc.jit import jit  # noqa: E402
from ggc.moe import kernels, layer, routes  # noqa: E402


@jit
def up(x: gl.Rows, source: gl.RowIndices, w13: gl.Weights, offsets: gl.Offsets, h: gl.Out,
       EXPECTED_M: gl.constexpr = None, BLOCK_M: gl.constexpr = None,
       BLOCK_N: gl.constexpr = None, STAGES: gl.constexpr = None,
       BLOCK_K: gl.constexpr = None, IDLE_WARPGROUPS: gl.constexpr = None):
    gate, upper = gl.column_halves(gl.grouped_dot(x, w13, offsets, a_rows=source,
                                                  expected_m=EXPECTED_M))
    gl.store(h, gl.silu(gate) * upper)


@jit
def up_copied(x: gl.Rows, w13: gl.Weights, offsets: gl.Offsets, h: gl.Out,
              EXPECTED_M: gl.constexpr = None, BLOCK_M: gl.constexpr = None,
              BLOCK_N: gl.constexpr = None, STAGES: gl.constexpr = None,
              BLOCK_K: gl.constexpr = None, IDLE_WARPGROUPS: gl.constexpr = None):
    gate, upper = gl.column_halves(gl.grouped_dot(x, w13, offsets, expected_m=EXPECTED_M))
    gl.store(h, gl.silu(gate) * upper)


@jit
def down(a: gl.Rows, w: gl.Weights, offsets: gl.Offsets, route: gl.RowVector, y: gl.Out,
         EXPECTED_M: gl.constexpr = None, BLOCK_M: gl.constexpr = None,
         BLOCK_N: gl.constexpr = None, STAGES: gl.constexpr = None,
         BLOCK_K: gl.constexpr = None, IDLE_WARPGROUPS: gl.constexpr = None):
    gl.store(y, gl.grouped_dot(a, w, offsets, expected_m=EXPECTED_M) * route)


TILES = {"as chosen": {}, "64x256": dict(BLOCK_M=64, BLOCK_N=256),
         "64x128": dict(BLOCK_M=64, BLOCK_N=128)}


def tile_overrides(spec: str) -> dict:
    """--tiles "64x256,128x192:s5,chosen:skip": {label: overrides}, each MxN
    (or `chosen`, the chosen tile) with an optional :sSTAGES, :kBLOCK_K and
    :skip or :compute (what warpgroups whose rows are all past their group
    do: gg's idle_warpgroups)."""
    tiles = {"as chosen": {}}
    for label in filter(None, spec.split(",")):
        size, *extras = label.split(":")
        knobs = {}
        if size != "chosen":
            m, n = (int(v) for v in size.split("x"))
            knobs = dict(BLOCK_M=m, BLOCK_N=n)
        for extra in extras:
            if extra in ("skip", "compute"):
                knobs["IDLE_WARPGROUPS"] = extra
            else:
                knobs[{"s": "STAGES", "k": "BLOCK_K"}[extra[0]]] = int(extra[1:])
        tiles[label] = knobs
    return tiles


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="qwen3:512:1024:2048",
                        help="shape:T:T...,shape:T...")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--tiles", default=None,
                        help='overrides to time beside the chosen tile: '
                             '"64x256,128x192:s5:k64,chosen:skip"')
    parser.add_argument("--gather", action="store_true",
                        help="also time the up projection on a gathered copy of the rows "
                             "(the copy timed with it) against reading them through the "
                             "source list (gg's a_rows), whatever gather_pays says")
    args = parser.parse_args()
    if args.tiles:
        TILES.clear()
        TILES.update(tile_overrides(args.tiles))
    print(torch.cuda.get_device_name(), flush=True)
    print("| shape | GEMM | T | rows an expert | " + " | ".join(TILES) + " |")
    print("|---|---|---:|---:|" + "---:|" * len(TILES))
    for case_spec in args.cases.split(","):
        shape, *token_counts = case_spec.split(":")
        time_shape(shape, [int(t) for t in token_counts], args.rounds, args.gather)


def time_shape(shape, token_counts, rounds, gather=False):
    experts, top_k, hidden, inter = SHAPES[shape]
    w13, w2 = weights_for(experts, hidden, inter, seed=0)
    for tokens in token_counts:
        x, weights, ids = inputs(experts, top_k, hidden, inter, tokens, seed=tokens)
        offsets, _, source, _, route = routes.sort_routes(ids, weights, experts)
        m = source.shape[0]
        hint = layer.expected_rows(m, experts)
        a = torch.randn(m, inter, device="cuda").to(torch.bfloat16)
        gathers = kernels.gather_pays(w13.shape[1], hidden, hint)  # as the layer does
        rows = None if gathers else x.index_select(0, source.long())
        def up_case(kw):
            h = x.new_empty(m, inter)
            if gathers:
                up(x, source, w13, offsets, h, EXPECTED_M=hint, **kw)
            else:
                up_copied(rows, w13, offsets, h, EXPECTED_M=hint, **kw)
            return h

        def down_case(kw):
            y = x.new_empty(m, hidden)
            down(a, w2, offsets, route, y, EXPECTED_M=hint, **kw)
            return y

        row = f"| {shape} | {{}} | {tokens} | {m / experts:.0f} | "
        for name, case in {"up": up_case, "down": down_case}.items():
            times = time_variants({label: (lambda kw=kw, case=case: case(kw))
                                   for label, kw in TILES.items()}, rounds, f"{shape} {name}")
            print(row.format(name) + " | ".join(times.get(label, "-") for label in TILES)
                  + " |", flush=True)
        if gather:
            def copied():
                h = x.new_empty(m, inter)
                up_copied(x.index_select(0, source.long()), w13, offsets, h, EXPECTED_M=hint)
                return h

            def gathered():
                h = x.new_empty(m, inter)
                up(x, source, w13, offsets, h, EXPECTED_M=hint)
                return h
            times = time_variants({"copy + GEMM": copied, "gathered": gathered}, rounds,
                                  f"{shape} up rows")
            print(row.format("up: copy + GEMM / gathered (a_rows)")
                  + " / ".join(times.get(label, "-") for label in ("copy + GEMM", "gathered"))
                  + " |", flush=True)


def time_variants(variants, rounds, what):
    """{label: "us"} of each variant replayed from a CUDA graph, L2 flushed,
    interleaved; a variant the kernel refuses is noted and left out, and
    every output must equal the first's (the same sums in the same K
    order)."""
    calls, outs, graphs = {}, {}, []
    for label, fn in variants.items():
        try:
            replay, outs[label], graph = captured(fn)
        except Exception as e:  # noqa: BLE001 - a tile the kernel refuses: a note
            print(f"# {what} {label}: {type(e).__name__}: {str(e)[:160]}")
            continue
        calls[label], graphs = replay, graphs + [graph]
    if not calls:
        return {}
    times = time_interleaved_flushed(calls, rounds)
    first = next(iter(outs))
    for label in calls:
        assert torch.equal(outs[label], outs[first]), f"{what}: {label} differs from {first}"
    return {label: f"{us:.1f}" for label, us in times.items()}


if __name__ == "__main__":
    main()
