"""A MoE layer's training step (router to combine; gradients of x and
every parameter) with a given ggc package, for an old-against-new
comparison in one device call: run it once per package (`--python DIR`,
the directory holding `ggc/`), BF16 and compute_dtype=FP8 (weights kept).

    python3 benchmarks/probes/layer_step_ab.py --python python --shapes qwen3,deepseek
        [--tokens 4096] [--rounds 7]
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = {"qwen3": (128, 8, 2048, 768), "mixtral": (8, 2, 4096, 14336),
          "deepseek": (256, 8, 7168, 2048)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="the directory holding ggc/")
    parser.add_argument("--shapes", default="qwen3,mixtral,deepseek")
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.python))
    sys.path.insert(1, os.path.join(HERE, ".."))
    import ggc.moe  # noqa: F401 - this package, before the suite's imports name ggc
    from bench_grouped_gemm import time_interleaved
    from bench_fp8_training import twin_layers
    print(f"ggc from {os.path.dirname(sys.modules['ggc.moe'].__file__)}", flush=True)
    for shape in args.shapes.split(","):
        bf16, fp8, x, dy = twin_layers(*SHAPES[shape], args.tokens)
        params = [x] + list(bf16.parameters())
        steps = {name: (lambda layer=layer: torch.autograd.grad(layer(x), params, dy))
                 for name, layer in (("bf16", bf16), ("fp8 kept", fp8))}
        times = time_interleaved(steps, rounds=args.rounds, per_batch=3)
        print(f"{shape} T={args.tokens}: " + ", ".join(f"{k} {v:.1f} us"
                                                      for k, v in times.items()), flush=True)
        del bf16, fp8, steps
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
