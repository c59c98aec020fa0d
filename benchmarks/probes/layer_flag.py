"""A MoE layer's inference forward (router output to combine) with one of
ggc.moe.layer's switches off (old) and on (new), FP8 weights (or BF16
with --bf16), eager (a graph would keep the path it was captured with),
L2 flushed, interleaved in one run; the two outputs against each other
and against the BF16 layer's.

    python3 benchmarks/probes/layer_flag.py --flag FP8_SWIGLU_IN_EPILOGUE
        [--shapes qwen3,deepseek] [--tokens 1024,4096,16384] [--rounds 15]
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from ggc import moe  # noqa: E402
from ggc.moe import layer as moe_layer  # noqa: E402
from bench_moe import SHAPES, inputs, time_interleaved_flushed, weights_for  # noqa: E402


def rel_err(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flag", required=True, help="a bool switch of ggc.moe.layer")
    parser.add_argument("--shapes", default="qwen3,deepseek")
    parser.add_argument("--tokens", default="1024,4096,16384")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--bf16", action="store_true", help="BF16 weights instead of FP8")
    args = parser.parse_args()
    if not isinstance(getattr(moe_layer, args.flag, None), bool):
        parser.error(f"--flag must name a bool switch of ggc.moe.layer, got {args.flag!r}")
    if args.flag == "FP8_SWIGLU_IN_EPILOGUE":
        # Timed at every T: on, it applies to all the hints.
        moe_layer.FP8_SWIGLU_EPILOGUE_ROWS = (1, 1 << 30)
    print(torch.cuda.get_device_name(), flush=True)
    for shape in args.shapes.split(","):
        experts, top_k, hidden, inter = SHAPES[shape]
        w13, w2 = weights_for(experts, hidden, inter, seed=1)
        (q13, s13), (q2, s2) = moe.quantize_weights(w13), moe.quantize_weights(w2)
        for tokens in map(int, args.tokens.split(",")):
            x, weights, ids = inputs(experts, top_k, hidden, inter, tokens, seed=0)

            def layer(new, bf16=args.bf16):
                setattr(moe_layer, args.flag, new)
                if bf16:
                    return moe.fused_moe(x, w13, w2, weights, ids, graph=False)
                return moe.fused_moe(x, q13, q2, weights, ids, w13_scale=s13, w2_scale=s2,
                                     graph=False)
            with torch.no_grad():
                old, new, ref = layer(False), layer(True), layer(False, bf16=True)
                times = time_interleaved_flushed({"old": lambda: layer(False),
                                                  "new": lambda: layer(True)}, args.rounds)
            print(f"{shape} T={tokens} {args.flag}: old {times['old']:9.1f} us, new "
                  f"{times['new']:9.1f} us ({times['old'] / times['new']:.3f}x); new vs old "
                  f"{rel_err(new, old):.2e}, vs bf16 layer: old {rel_err(old, ref):.2e} new "
                  f"{rel_err(new, ref):.2e}", flush=True)
            del x, weights, ids
        del w13, w2, q13, q2
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
