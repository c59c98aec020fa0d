"""What a cluster launch alone costs ggc's FP8 contiguous kernels (#39,
twenty-sixth session): ggc's clusters of two (B multicast) measure 5-21%
slower than single CTAs, and their warps' stall profile is the single
CTA's, stretched. Here the single-CTA kernel (no cluster code in it) is
also launched in clusters of two (the launch attribute only; its tiles and
loads unchanged), beside the true cluster kernel, interleaved:

    python3 benchmarks/probes/cluster_launch.py [T,G,N,K]

If the plainly compiled kernel slows as much when launched in clusters,
the loss is the clusters' placement on the GPU, not ggc's multicast; if it
does not, it is in the cluster kernel's own code. Equal groups of T / G
rows (a multiple of 128), 1x128 / 128x128 block scales (DeepGEMM's
operands, profile_fp8_contiguous.py's).
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_grouped_gemm import config_text, extra, time_interleaved  # noqa: E402
from profile_fp8_contiguous import fp8_operands  # noqa: E402
import ggc  # noqa: E402 (profile_fp8_contiguous put python/ on the path)
from ggc import ir  # noqa: E402


def main():
    t, g, n, k = (8192, 8, 4096, 7168)
    if len(sys.argv) > 1:
        t, g, n, k = (int(v) for v in sys.argv[1].split(","))
    torch.manual_seed(0)
    (x, sx), (w, sw) = fp8_operands((t,), g, n, k)
    a_scale = torch.zeros(k // 128, (t + 3) // 4 * 4, device="cuda")
    a_scale[:, :t] = sx.t()
    groups = torch.arange(0, t + 1, t // g, dtype=torch.int32, device="cuda")
    fns, outs = {}, {}
    for block_n, stages, plan in ((128, 5, "pipelined"), (192, 4, "serial")):
        # bench_grouped_gemm's spelling of a tile and its plan ('c2': a cluster)
        tile = (128, block_n, 128, stages, plan)
        for label, options, relaunch in (("alone", (), False), ("launched in pairs", (), True),
                                         ("cluster kernel", ("c2",), False)):
            kern = ggc.Kernel(ir.grouped_matmul(
                "k", layout="contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
                a_scale="block_mn", b_scale="block", config=config_text(tile + options),
                kernel_plan=extra(tile)["kernel_plan"]))
            if relaunch:
                # The same code, launched with a cluster dimension of 2: its
                # own copy of the launch contract (the compile cache shares
                # the original).
                kern.info = dict(kern.info, cluster=2)
            name = f"128x{block_n} {plan} {label}"
            out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
            outs[name] = out
            fns[name] = (lambda kern=kern, out=out:
                         kern(x, w, groups, a_scale, sw, out))
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    ref = next(iter(outs.values())).double()
    for name, out in outs.items():
        err = ((out.double() - ref).norm() / ref.norm()).item()
        print(f"{name:40s} relative difference from the first {err:.2e}")
    times = time_interleaved(fns)
    flops = 2.0 * t * n * k
    for name, us in times.items():
        print(f"T={t} G={g} N={n} K={k} {name:40s} {us:8.1f} us {flops / us / 1e6:7.1f} TFLOPS")


if __name__ == "__main__":
    main()
