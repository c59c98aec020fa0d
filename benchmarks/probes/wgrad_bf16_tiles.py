"""Tiles for training's BF16 weight gradient (k_grouped, token-major
operands, bf16 out), on the shapes where forward + backward stays under
1.15x torch's autograd (#40): gg-select-config's choice against other
block shapes and depths, with torch._grouped_mm's weight gradient,
interleaved in one run.

    python3 benchmarks/probes/wgrad_bf16_tiles.py
"""

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from bench_grouped_gemm import runnable, time_interleaved  # noqa: E402
from bench_training import BF16_CASES, group_sizes  # noqa: E402

TILES = [(None, None, None), (128, 128, None), (256, 128, None), (128, 128, 4)]


@ggc.jit
def wgrad(dy: gl.TokenMajor, x: gl.TokenMajor, groups: gl.Offsets, dw: gl.Out,
          BLOCK_M: gl.constexpr = None, BLOCK_N: gl.constexpr = None,
          STAGES: gl.constexpr = None):
    gl.store(dw, gl.grouped_dot(dy, x, groups))


def main():
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), flush=True)
    for label, t, g, n, k, loads in BF16_CASES:
        if not any(s in label for s in ("Mixtral", "uniform", "Qwen3-30B up")):
            continue
        sizes = group_sizes(t, g, loads, 0)
        offsets = torch.tensor([0] + sizes, device="cuda").cumsum(0).to(torch.int32)
        x = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
        dy = torch.randn(t, n, device="cuda", dtype=torch.bfloat16)
        dw = torch.empty(g, n, k, device="cuda", dtype=torch.bfloat16)
        fns = {"torch": lambda: torch._grouped_mm(dy.t(), x, offs=offsets[1:])}
        for bm, bn, stages in TILES:
            name = "default" if bm is None and stages is None else \
                f"{bm or ''}x{bn or ''} stages {stages or 'max'}"
            kw = {k_: v for k_, v in (("BLOCK_M", bm), ("BLOCK_N", bn), ("STAGES", stages))
                  if v is not None}
            fns[name] = (lambda kw=kw: wgrad(dy, x, offsets, dw, **kw))
        times = time_interleaved(runnable(fns, label))
        print("\n".join(f"{label:44} wgrad {name:22} {us:9.1f} us  torch "
                        f"{times['torch'] / us:5.3f}x" for name, us in times.items()), flush=True)


if __name__ == "__main__":
    main()
