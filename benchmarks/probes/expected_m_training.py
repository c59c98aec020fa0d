"""Whether training's forward and input-gradient GEMMs gain from telling
ggc the rows a group holds on average (`expected_m`, a host int known from
the shapes: tokens / groups, rounded to a power of two), as ggc.moe does
for inference (#40). Without it contiguous ops take 128-column tiles;
with 1,024 rows or more per group, 128x256 (the rule then; since the
twenty-fifth session 2,048 rows, or 256 where N >= 16,384). Interleaved
in one run.

    python3 benchmarks/probes/expected_m_training.py
"""

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from ggc import ops  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_training import BF16_CASES, group_sizes  # noqa: E402


def main():
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), flush=True)
    for label, t, g, n, k, loads in BF16_CASES:
        sizes = group_sizes(t, g, loads, 0)
        offsets = torch.tensor([0] + sizes, device="cuda").cumsum(0).to(torch.int32)
        hint = 1 << max(0, (t // g).bit_length() - 1)
        x = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
        w = (torch.randn(g, n, k, device="cuda") / k ** 0.5).bfloat16()
        dy = torch.randn(t, n, device="cuda", dtype=torch.bfloat16)
        fns = {
            "fwd": lambda: ops.grouped_gemm(x, w, offsets=offsets, out_dtype=torch.bfloat16),
            f"fwd expected_m={hint}": lambda: ops.grouped_gemm(
                x, w, offsets=offsets, out_dtype=torch.bfloat16, expected_m=hint),
            "dgrad": lambda: ops.grouped_gemm(dy, w, offsets=offsets, b_layout="kn",
                                              out_dtype=torch.bfloat16),
            f"dgrad expected_m={hint}": lambda: ops.grouped_gemm(
                dy, w, offsets=offsets, b_layout="kn", out_dtype=torch.bfloat16,
                expected_m=hint),
            "torch fwd": lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offsets[1:]),
            "torch dgrad": lambda: torch._grouped_mm(dy, w, offs=offsets[1:]),
        }
        times = time_interleaved(fns)
        for name, us in times.items():
            base = times["fwd" if "fwd" in name else "dgrad"]
            print(f"{label:44} {name:24} {us:9.1f} us  {base / us:5.3f}x ggc's default",
                  flush=True)
        del x, w, dy
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
