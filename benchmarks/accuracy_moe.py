"""fused_moe's error against the layer in fp64, with ggc's SwiGLU and
combine kernels (the default without gradients) and with the torch ops
they replace, on the same inputs: does rounding SwiGLU once cost or gain
accuracy?

    python benchmarks/accuracy_moe.py
"""

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
from ggc import moe  # noqa: E402
from ggc.moe import combine_kernel, swiglu_kernel  # noqa: E402
from moe_reference import layer_inputs, reference_moe, rel_err  # noqa: E402

# (tokens, hidden, intermediate, experts, top_k)
SHAPES = [(1, 2048, 768, 128, 8), (256, 2048, 768, 128, 8), (64, 4096, 1792, 8, 2),
          (512, 1024, 512, 64, 6)]


def main():
    print("| T, H, I, E, top_k | ggc kernels vs fp64 | torch ops vs fp64 |")
    print("|---|---:|---:|")
    kernels = (swiglu_kernel.swiglu, combine_kernel.combine)
    for shape in SHAPES:
        x, w13, w2, weights, ids = (t.cuda() for t in layer_inputs(*shape, seed=sum(shape)))
        ref = reference_moe(x.double(), w13.double(), w2.double(), weights.double(), ids)
        with torch.no_grad():
            fused = moe.fused_moe(x, w13, w2, weights, ids, graph=False)
            swiglu_kernel.swiglu = combine_kernel.combine = lambda *args: None
            try:
                plain = moe.fused_moe(x, w13, w2, weights, ids, graph=False)
            finally:
                swiglu_kernel.swiglu, combine_kernel.combine = kernels
        print(f"| {', '.join(map(str, shape))} | {rel_err(fused, ref):.3e} | "
              f"{rel_err(plain, ref):.3e} |", flush=True)


if __name__ == "__main__":
    main()
