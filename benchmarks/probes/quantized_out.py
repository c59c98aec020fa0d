"""gg's out_scale (the output quantised to FP8 in the GEMM's epilogue)
against the two steps it replaces: the GEMM writing bf16, then
gg.quantize_rows (ggc.moe.quant_kernel.rows_mn), timed interleaved in one
process (bench_grouped_gemm.time_interleaved), with each result's bytes
and scales compared.

  python3 benchmarks/probes/quantized_out.py [--tokens T] [--groups G] [--cases 'fp8 SwiGLU']

Cases: a BF16 SwiGLU up projection (column_halves, Qwen3-like H = 2048,
I = 768, and Mixtral-like H = 4096, I = 14336 / 8 per shard) quantised for
an FP8 down projection, a plain FP8 product (N = 4096, K = 7168)
quantised, and an FP8 SwiGLU up projection (Qwen3-like and DeepSeek-V3-
like: H = 7168, I = 2048) against the FP8 GEMM and the gated
quantisation. Ragged groups: Dirichlet(1) shares of T, seed 0.
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from ggc.moe import quant_kernel  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402

SWIGLU = "%s = gg.silu %acc0 : f32\n%r = arith.mulf %s, %acc1 : f32\ngg.yield %r : f32"


def ragged_offsets(t, g):
    # Dirichlet(1): normalised exponential draws.
    gen = torch.Generator().manual_seed(0)
    shares = torch.rand(g, generator=gen).log().neg()
    sizes = (shares / shares.sum() * t).floor().long()
    sizes[-1] += t - sizes.sum()
    return torch.cat([torch.zeros(1, dtype=torch.long), sizes.cumsum(0)]).int().cuda()


def kernels(spec):
    plain = ggc.Kernel(ir.grouped_matmul("plain", layout="contiguous", **spec))
    fused = ggc.Kernel(ir.grouped_matmul("fused", layout="contiguous", out_dtype="f8E4M3FN",
                                         out_scale=True, **spec))
    return plain, fused


def compare(label, two_step, fused):
    q2, s2 = two_step
    q1, s1 = fused
    m = q1.shape[0]
    differ = (q1.view(torch.uint8) != q2.view(torch.uint8)).float().mean().item()
    scale_err = ((s1[:, :m] - s2[:, :m]).abs() / s2[:, :m]).max().item()
    print(f"{label}: e4m3 bytes differing {differ:.3%}, scales' largest relative "
          f"difference {scale_err:.2e}")


def gated_case(t, g, h, i):
    a = torch.randn(t, h, device="cuda").bfloat16()
    w13 = (torch.randn(g, 2 * i, h, device="cuda") / h ** 0.5).bfloat16()
    offsets = ragged_offsets(t, g)
    spec = dict(num_groups=g, n=2 * i, k=h, dtype="bf16", column_halves=True, epilogue=SWIGLU,
                expected_m=t // g)
    plain, fused = kernels(spec)
    hbuf = torch.empty(t, i, device="cuda", dtype=torch.bfloat16)
    q = torch.empty(t, i, device="cuda", dtype=torch.float8_e4m3fn)
    s = torch.empty(-(-i // 128), (t + 3) // 4 * 4, device="cuda")
    result = {}

    def two_step():
        plain(a, w13, offsets, hbuf)
        result["two"] = quant_kernel.rows_mn(hbuf)

    def one_step():
        fused(a, w13, offsets, q, s)
    return two_step, one_step, result, (q, s), 2.0 * t * 2 * i * h


def fp8_gated_case(t, g, h, i):
    """FP8 operands, SwiGLU over column halves: the fused kernel takes
    64x256 tiles whose two warpgroups share each block's amax; the two
    steps the chosen FP8 GEMM into bf16, then the gated quantisation
    (the FP8 MoE layer's _fp8_up)."""
    a = (torch.randn(t, h, device="cuda") * 2).to(torch.float8_e4m3fn)
    w13 = (torch.randn(g, 2 * i, h, device="cuda") * 2).to(torch.float8_e4m3fn)
    sa = (torch.rand(-(-h // 128), (t + 3) // 4 * 4, device="cuda") + 0.5) / h ** 0.5
    sw = torch.rand(g, 2 * i // 128, -(-h // 128), device="cuda") + 0.5
    offsets = ragged_offsets(t, g)
    spec = dict(num_groups=g, n=2 * i, k=h, dtype="f8E4M3FN", a_scale="block_mn",
                b_scale="block", expected_m=t // g)
    plain = ggc.Kernel(ir.grouped_matmul("plain", layout="contiguous", **spec))
    fused = ggc.Kernel(ir.grouped_matmul("fused", layout="contiguous", out_dtype="f8E4M3FN",
                                         out_scale=True, column_halves=True, epilogue=SWIGLU,
                                         **spec))
    hbuf = torch.empty(t, 2 * i, device="cuda", dtype=torch.bfloat16)
    q = torch.empty(t, i, device="cuda", dtype=torch.float8_e4m3fn)
    s = torch.empty(-(-i // 128), (t + 3) // 4 * 4, device="cuda")
    result = {}

    def two_step():
        plain(a, w13, offsets, sa, sw, hbuf)
        result["two"] = quant_kernel.rows_mn(hbuf, gated=True)

    def one_step():
        fused(a, w13, offsets, sa, sw, q, s)
    return two_step, one_step, result, (q, s), 2.0 * t * 2 * i * h


def fp8_case(t, g, n, k):
    a = (torch.randn(t, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    w = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    sa = torch.rand(-(-k // 128), (t + 3) // 4 * 4, device="cuda") + 0.5
    sw = torch.rand(g, n // 128, -(-k // 128), device="cuda") + 0.5
    offsets = ragged_offsets(t, g)
    spec = dict(num_groups=g, n=n, k=k, dtype="f8E4M3FN", a_scale="block_mn", b_scale="block",
                expected_m=t // g)
    plain, fused = kernels(spec)
    y = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    q = torch.empty(t, n, device="cuda", dtype=torch.float8_e4m3fn)
    s = torch.empty(n // 128, (t + 3) // 4 * 4, device="cuda")
    result = {}

    def two_step():
        plain(a, w, offsets, sa, sw, y)
        result["two"] = quant_kernel.rows_mn(y)

    def one_step():
        fused(a, w, offsets, sa, sw, q, s)
    return two_step, one_step, result, (q, s), 2.0 * t * n * k


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, nargs="+", default=[4096, 16384])
    parser.add_argument("--groups", type=int, default=8)
    parser.add_argument("--cases", default="",
                        help="only the cases whose label contains this (say 'fp8 SwiGLU')")
    args = parser.parse_args()
    torch.manual_seed(0)
    print(torch.cuda.get_device_name())
    for t in args.tokens:
        for label, make in (
                (f"bf16 SwiGLU H2048 I768 T{t}", lambda: gated_case(t, args.groups, 2048, 768)),
                (f"bf16 SwiGLU H4096 I1792 T{t}", lambda: gated_case(t, args.groups, 4096, 1792)),
                (f"fp8 N4096 K7168 T{t}", lambda: fp8_case(t, args.groups, 4096, 7168)),
                (f"fp8 SwiGLU H2048 I768 T{t}",
                 lambda: fp8_gated_case(t, args.groups, 2048, 768)),
                (f"fp8 SwiGLU H7168 I2048 T{t}",
                 lambda: fp8_gated_case(t, args.groups, 7168, 2048))):
            if args.cases not in label:
                continue
            two_step, one_step, result, fused_out, flops = make()
            two_step()
            one_step()
            torch.cuda.synchronize()
            compare(label, result["two"], fused_out)
            times = time_interleaved({"two steps": two_step, "out_scale": one_step})
            two, one = times["two steps"], times["out_scale"]
            print(f"{label}: two steps {two:8.1f} us, out_scale {one:8.1f} us "
                  f"({flops / one / 1e6:6.1f} TFLOPS), {two / one:.3f}x")


if __name__ == "__main__":
    main()
