"""What validate=True costs: wall time per call of ggc.ops.grouped_gemm with
and without the group metadata check, each call waited for (the check
synchronises the host with the stream, so the honest comparison is call +
synchronise against call + synchronise)."""

import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "python"))
from ggc import ops  # noqa: E402


def wall_us(fn, reps=200):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main():
    for tokens, g, n, k in ((64, 8, 4096, 7168), (8192, 8, 4096, 7168)):
        sizes = torch.full((g,), tokens // g)
        offsets = torch.zeros(g + 1, dtype=torch.int32, device="cuda")
        offsets[1:] = sizes.cumsum(0).cuda()
        a = torch.randn(tokens, k, device="cuda").bfloat16()
        b = torch.randn(g, n, k, device="cuda").bfloat16()
        out = torch.empty(tokens, n, device="cuda", dtype=torch.bfloat16)
        plain = wall_us(lambda: ops.grouped_gemm(a, b, offsets=offsets, out=out))
        checked = wall_us(lambda: ops.grouped_gemm(a, b, offsets=offsets, out=out,
                                                   validate=True))
        print(f"validate cost: T={tokens} G={g} N={n} K={k}: {plain:.1f} us without, "
              f"{checked:.1f} us with (+{checked - plain:.1f} us per call)", flush=True)


if __name__ == "__main__":
    main()
