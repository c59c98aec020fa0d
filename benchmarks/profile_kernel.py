"""Runs one ggc grouped GEMM a few times, for a profiler (ncu) to look at.

  ncu --clock-control none -k regex:_kernel python3 benchmarks/profile_kernel.py masked

Cases: masked (bf16), masked-fp8, decode-fp8 (the benchmark's decode batch),
and anything else for contiguous bf16. GGC_CONFIG overrides the config;
masked-fp8 takes another shape as a second argument, G,M,N,K.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "masked"
    config = os.environ.get("GGC_CONFIG")  # e.g. a #gg.config<...> with cluster = [2, 1]
    if which in ("masked-fp8", "decode-fp8"):
        g, m, n, k = (4, 256, 4096, 7168) if which == "masked-fp8" else (16, 128, 4096, 7168)
        if which == "masked-fp8" and len(sys.argv) > 2:
            g, m, n, k = (int(v) for v in sys.argv[2].split(","))
        a = (torch.randn(g, m, k, device="cuda")).to(torch.float8_e4m3fn)
        b = (torch.randn(g, n, k, device="cuda")).to(torch.float8_e4m3fn)
        groups = torch.full((g,), m, dtype=torch.int32, device="cuda")
        if which == "decode-fp8":  # the benchmark's valid counts
            gen = torch.Generator().manual_seed(3)
            groups = torch.randint(1, 129, (g,), generator=gen).to(torch.int32).cuda()
        sa = torch.rand(g, k // 128, m, device="cuda")
        sb = torch.rand(g, n // 128, k // 128, device="cuda")
        out = torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
        kern = ggc.Kernel(ir.grouped_matmul("k", layout="masked", num_groups=g, n=n, k=k,
                                            m=m, expected_m=m, dtype="f8E4M3FN",
                                            a_scale="block_mn", b_scale="block",
                                            config=config))
        for _ in range(3):
            kern(a, b, groups, sa, sb, out)
        torch.cuda.synchronize()
        return
    if which == "masked":
        g, m, n, k = 4, 256, 4096, 7168
        a = torch.randn(g, m, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(g, n, k, device="cuda").to(torch.bfloat16)
        groups = torch.full((g,), m, dtype=torch.int32, device="cuda")
        out = torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
        kern = ggc.Kernel(ir.grouped_matmul("k", layout="masked", num_groups=g, n=n, k=k,
                                            m=m, expected_m=m, config=config))
    else:
        t, g, n, k = 8192, 8, 4096, 7168
        a = torch.randn(t, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(g, n, k, device="cuda").to(torch.bfloat16)
        groups = torch.arange(0, t + 1, t // g, dtype=torch.int32, device="cuda")
        out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
        kern = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=g, n=n,
                                            k=k, config=config))
    for _ in range(3):
        kern(a, b, groups, out)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
