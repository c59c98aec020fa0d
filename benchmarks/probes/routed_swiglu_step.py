"""A MoE layer's training step with the routing weight in the SwiGLU
kernel (ggc.moe.layer.ROUTED_SWIGLU_IN_TRAINING, the default) against the
path before it (the weight in the down projection's epilogue, its
gradient and SwiGLU's apart), BF16 and FP8 (weights kept), interleaved in
one run; the gradients of the two paths against each other. `--flag`
names another of ggc.moe.layer's switches to time off (old) against on
(new), say KERNEL_SORT_IN_TRAINING, or MODULE.NAME a switch of another
ggc.moe module.

    python3 benchmarks/probes/routed_swiglu_step.py [--shapes qwen3,mixtral] [--tokens 4096]
        [--flag ROUTED_SWIGLU_IN_TRAINING]
"""

import argparse
import importlib
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from ggc.moe import layer as moe_layer  # noqa: E402
from bench_fp8_training import layer_shape, chunked_rel_err, twin_layers  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402


def compare_weight_gradients(label, tokens, bf16, fp8, params, dy, x, names):
    """The FP8 layer's step with FP8 weight gradients against BF16 ones
    (and the BF16 layer's step), interleaved; their gradients against
    each other."""
    def step(layer, rows):
        moe_layer.FP8_WEIGHT_GRADIENT_ROWS = rows
        return torch.autograd.grad(layer(x), params, dy)

    errors = {n: chunked_rel_err(a, b) for n, a, b in
              zip(names, step(fp8, 1), step(fp8, None))}
    print(f"  {label} T={tokens} fp8: FP8 against BF16 weight gradients "
          + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()), flush=True)
    times = time_interleaved({"bf16": lambda: step(bf16, None),
                              "fp8 bf16 wgrad": lambda: step(fp8, None),
                              "fp8 fp8 wgrad": lambda: step(fp8, 1)},
                             rounds=7, per_batch=3)
    moe_layer.FP8_WEIGHT_GRADIENT_ROWS = None
    print(f"{label} T={tokens}: bf16 {times['bf16']:8.1f} us | fp8, bf16 wgrad "
          f"{times['fp8 bf16 wgrad']:8.1f} us ({times['bf16'] / times['fp8 bf16 wgrad']:.3f}x) "
          f"| fp8, fp8 wgrad {times['fp8 fp8 wgrad']:8.1f} us "
          f"({times['bf16'] / times['fp8 fp8 wgrad']:.3f}x)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="qwen3,mixtral")
    parser.add_argument("--tokens", default="4096")
    parser.add_argument("--fp8-wgrad", action="store_true",
                        help="the FP8 layer with FP8 weight gradients "
                             "(ggc.moe.layer.FP8_WEIGHT_GRADIENT_ROWS = 1) against BF16 ones, "
                             "both on the routed path, instead of old against new")
    parser.add_argument("--flag", default="ROUTED_SWIGLU_IN_TRAINING",
                        help="the ggc.moe.layer switch timed off (old) against on (new); "
                             "MODULE.NAME for another ggc.moe module's")
    args = parser.parse_args()
    owner, flag = moe_layer, args.flag
    if "." in flag:
        module, flag = flag.rsplit(".", 1)
        owner = importlib.import_module(f"ggc.moe.{module}")
    if not isinstance(getattr(owner, flag, None), bool):
        parser.error(f"--flag must name a bool switch of ggc.moe.layer (or MODULE.NAME of "
                     f"another ggc.moe module), got {args.flag!r}")
    print(torch.cuda.get_device_name(), flush=True)
    for shape in args.shapes.split(","):
        label, experts, top_k, hidden, inter = layer_shape(shape)
        for tokens in map(int, args.tokens.split(",")):
            bf16, fp8, x, dy = twin_layers(experts, top_k, hidden, inter, tokens)
            params = [x] + list(bf16.parameters())

            def step(layer, new):
                setattr(owner, flag, new)
                return torch.autograd.grad(layer(x), params, dy)

            names = ["x"] + [n for n, _ in bf16.named_parameters()]
            if args.fp8_wgrad:
                compare_weight_gradients(label, tokens, bf16, fp8, params, dy, x, names)
                del bf16, fp8, x, dy
                torch.cuda.empty_cache()
                continue
            for name, layer in (("bf16", bf16), ("fp8", fp8)):
                errors = {n: chunked_rel_err(new, old) for n, old, new in
                          zip(names, step(layer, False), step(layer, True))}
                print(f"  {label} T={tokens} {name}: new against old gradients "
                      + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()), flush=True)
            times = time_interleaved({"bf16 old": lambda: step(bf16, False),
                                      "bf16 new": lambda: step(bf16, True),
                                      "fp8 old": lambda: step(fp8, False),
                                      "fp8 new": lambda: step(fp8, True)},
                                     rounds=7, per_batch=3)
            setattr(owner, flag, True)
            print(f"{label} T={tokens} {args.flag}: bf16 {times['bf16 old']:8.1f} -> "
                  f"{times['bf16 new']:8.1f} us ({times['bf16 old'] / times['bf16 new']:.3f}x)"
                  f" | fp8 {times['fp8 old']:8.1f} -> {times['fp8 new']:8.1f} us "
                  f"({times['fp8 old'] / times['fp8 new']:.3f}x) | fp8 new vs bf16 new "
                  f"{times['bf16 new'] / times['fp8 new']:.3f}x", flush=True)
            del bf16, fp8, x, dy
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
