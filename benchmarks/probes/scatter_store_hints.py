"""What the scattered token quantisation's stores cost (#38): the FP8 layer's
gg.quantize_rows scatter kernel (each token quantised once, stored to its
top_k routes' sorted rows, every sorted row's scales stored at random
rows) with its PTX edited: the scale stores under an L2 evict_last
policy, the value stores under evict_first, both, and no scale stores at
all (wrong scales: timing only). Qwen3-like routing (bench_moe.inputs),
T = 4,096 and 16,384, graph replay, L2 flushed, interleaved, us; each
variant's bits checked against the compiled kernel's. The measurements
behind gg.quantize_rows' input_scales (docs/performance-history.md,
twentieth session).

    python3 benchmarks/probes/scatter_store_hints.py
"""
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_moe import SHAPES, captured, inputs, time_interleaved_flushed  # noqa: E402
from ggc.moe import ptx, quant_kernel, routes  # noqa: E402

SCALE_STORE = r"st\.global\.b32 \t(\[[^\]]+\]), (%r\d+);"
VALUE_STORE = r"st\.global\.v2\.b32 \t(\[[^\]]+\]), (\{[^}]+\});"


def variant(code, name, new_name, scales=None, values=None):
    """`code` (kernel `name`) renamed, its scale stores under L2 policy
    `scales` ("drop": removed) and its value stores under `values`."""
    code = code.replace(name, new_name)
    policies = ""
    if scales and scales != "drop":
        policies += f"\tcreatepolicy.fractional.L2::{scales}.b64 %rdpol0, 1.0;\n"
    if values:
        policies += f"\tcreatepolicy.fractional.L2::{values}.b64 %rdpol1, 1.0;\n"
    code = re.sub(r"(\t\.reg \.b64 \t%rd<\d+>;\n)",
                  lambda m: m.group(1) + "\t.reg .b64 \t%rdpol<2>;\n", code, count=1)
    code = re.sub(r"(\{\n(?:\t\.reg[^\n]*\n)+)", lambda m: m.group(1) + policies, code, count=1)
    if scales == "drop":
        code = re.sub(SCALE_STORE, "", code)
    elif scales:
        code = re.sub(SCALE_STORE, r"st.global.L2::cache_hint.b32 \1, \2, %rdpol0;", code)
    if values:
        code = re.sub(VALUE_STORE, r"st.global.L2::cache_hint.v2.b32 \1, \2, %rdpol1;", code)
    return code


def main():
    print(torch.cuda.get_device_name(), flush=True)
    experts, top_k, hidden, inter = SHAPES["qwen3"]
    name, code = quant_kernel.kernel(hidden, False, False, scatter=("i64", top_k, False))
    variants = {"compiled": code,
                "scales evict_last": variant(code, name, name + "_a", "evict_last"),
                "values evict_first": variant(code, name, name + "_b", None, "evict_first"),
                "both": variant(code, name, name + "_c", "evict_last", "evict_first"),
                "no scale stores": variant(code, name, name + "_d", "drop")}
    for tokens in (4096, 16384):
        x, weights, ids = inputs(experts, top_k, hidden, inter, tokens, seed=tokens)
        _, _, _, position, _ = routes.sort_routes(ids, weights, experts)
        m = position.shape[0]
        ld = (m + 3) // 4 * 4
        units = x.shape[0] * -(-hidden // (2 * 128 * quant_kernel.steps_for(hidden)))
        grid = min(132 * 8, -(-units // (quant_kernel.THREADS // 32)))
        params = [("pointer", i) for i in range(4)] + [("i64", m), ("i64", x.shape[0]),
                                                       ("i64", ld)]
        calls, outs = {}, {}
        for label, text in variants.items():
            entry = re.search(r"\.entry (\S+)\(", text).group(1)
            out = torch.empty(m, hidden, dtype=torch.float8_e4m3fn, device="cuda")
            scales = torch.zeros(-(-hidden // 128), ld, device="cuda")

            def run(entry=entry, text=text, out=out, scales=scales):
                ptx.launch(entry, text, quant_kernel.THREADS, grid, params,
                           (x, position, out, scales), x.device)
                return out, scales
            calls[label], outs[label], _ = captured(run)
        times = time_interleaved_flushed(calls, 10)
        for label in variants:
            same = torch.equal(outs[label][0].view(torch.uint8),
                               outs["compiled"][0].view(torch.uint8))
            same_scales = torch.equal(outs[label][1], outs["compiled"][1])
            print(f"T={tokens} {label}: {times[label]:.1f} us (values same {same}, "
                  f"scales same {same_scales})", flush=True)


if __name__ == "__main__":
    main()
