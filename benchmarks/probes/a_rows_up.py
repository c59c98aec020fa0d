"""What reading the up projection's rows through the routes' source list
(gg's a_rows) costs or saves against gathering them into a sorted copy
first (#38), kernel by kernel: the copy (torch's index_select) and the
GEMM on it, against the gathered GEMM; each with SwiGLU in the epilogue
(column_halves) where experts expect more than 16 rows, else the plain
GEMM. "no fence" loads the gathered kernel's PTX with its
fence.proxy.async lines removed (wrong in general: the consumers then
read cp.async's rows without ordering them for wgmma's async proxy), to
show what the fences cost. Medians over interleaved rounds, L2 flushed.

    python3 benchmarks/probes/a_rows_up.py [--cases qwen3:1024,128x8x7168x768:4096] [--fp8]

A case is a bench_moe shape or E x top_k x H x I, and a token count.
"""

import argparse
import copy
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "gpu"))
from bench_moe import SHAPES, time_interleaved_flushed  # noqa: E402
from ggc.moe import kernels  # noqa: E402
from ggc.moe.layer import expected_rows  # noqa: E402
from ggc.moe.permute import sort_routes  # noqa: E402
from test_a_rows import up_gathered_fp8  # noqa: E402 - the FP8 gathered up projection


def routes(tokens, experts, top_k, seed=0):
    """(offsets int32 [E+1], source int32 [T * top_k]): uniform routing,
    sorted as ggc.moe sorts it."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    ids = torch.randint(0, experts, (tokens, top_k), device="cuda", generator=g)
    offsets, _, source, _, _ = sort_routes(ids, experts)
    return offsets, source.to(torch.int32)


def without_fences(kernel):
    """The kernel loaded from its PTX with every fence.proxy.async removed."""
    bare = copy.copy(kernel)
    bare.asm = {k: v for k, v in kernel.asm.items() if k != "cubin"}
    bare.asm["ptx"] = kernel.asm["ptx"].replace("fence.proxy.async.shared::cta;", "")
    bare._launcher, bare._launches = None, {}
    return bare


def case(shape, tokens, rounds):
    experts, top_k, hidden, inter = (SHAPES[shape] if shape in SHAPES else
                                     tuple(int(v) for v in shape.split("x")))
    x = torch.randn(tokens, hidden, device="cuda").bfloat16()
    w13 = (torch.randn(experts, 2 * inter, hidden, device="cuda") / hidden ** 0.5).bfloat16()
    offsets, source = routes(tokens, experts, top_k)
    m, hint = source.shape[0], expected_rows(source.shape[0], experts)
    fused = kernels.gated_up_kernel("swiglu", hint) is not None
    n = inter if fused else 2 * inter
    h = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    copied = x.index_select(0, source.long())
    if fused:
        plain, gathered = kernels.moe_up_swiglu, kernels.moe_up_swiglu_gathered
    else:
        from ggc import ops
        plain = None
        gathered = kernels.moe_up_gathered
    args = (x, source, w13, offsets, h)
    k = gathered.compile(*args, EXPECTED_M=hint)
    bare = without_fences(k)
    fns = {"copy": lambda: x.index_select(0, source.long()),
           "gathered": lambda: gathered(*args, EXPECTED_M=hint, validate=False),
           "gathered, no fence": lambda: bare(*args)}
    if plain is not None:
        fns["GEMM on copy"] = lambda: plain(copied, w13, offsets, h, EXPECTED_M=hint,
                                            validate=False)
    else:
        fns["GEMM on copy"] = lambda: ops.grouped_gemm(copied, w13, offsets=offsets,
                                                       expected_m=hint, validate=False,
                                                       out=h)
    t = time_interleaved_flushed(fns, rounds)
    gathered(*args, EXPECTED_M=hint, validate=False)
    ref = h.clone()
    fns["GEMM on copy"]()
    same = torch.equal(h, ref)
    print(f"| {shape} | {tokens} | {m} | {hint} | {'swiglu' if fused else 'plain'} | "
          f"{t['copy']:.1f} | {t['GEMM on copy']:.1f} | {t['copy'] + t['GEMM on copy']:.1f} | "
          f"{t['gathered']:.1f} | {t['gathered, no fence']:.1f} | {same} |", flush=True)


def case_fp8(shape, tokens, rounds):
    """The FP8 up projection (no epilogue activation, as the layer runs it):
    each token quantised into its routes' sorted rows and the GEMM on them,
    against each token quantised once, its scales gathered to the sorted
    rows and the GEMM reading the rows through the list."""
    from ggc import ops
    from ggc.moe import quant_kernel
    from ggc.moe.quant import as_row_view, quantize_weights
    experts, top_k, hidden, inter = (SHAPES[shape] if shape in SHAPES else
                                     tuple(int(v) for v in shape.split("x")))
    x = torch.randn(tokens, hidden, device="cuda").bfloat16()
    w13, w13_scale = quantize_weights(
        (torch.randn(experts, 2 * inter, hidden, device="cuda") / hidden ** 0.5).bfloat16(), "w")
    g = torch.Generator(device="cuda").manual_seed(0)
    ids = torch.randint(0, experts, (tokens, top_k), device="cuda", generator=g)
    offsets, _, source, position, _ = sort_routes(ids, experts)
    source32 = source.to(torch.int32)
    m, hint = source.shape[0], expected_rows(source.shape[0], experts)
    h = torch.empty(m, 2 * inter, device="cuda", dtype=torch.bfloat16)
    h2 = torch.empty_like(h)
    sorted_q, sorted_s = quant_kernel.rows_mn(x, positions=position)
    once_q, once_s = quant_kernel.rows_mn(x)
    rows_s = once_s.new_empty(once_s.shape[0], (m + 3) // 4 * 4)

    def gather_scales():
        torch.index_select(once_s[:, :tokens], 1, source, out=rows_s.narrow(1, 0, m))

    gather_scales()
    fns = {"quant scatter": lambda: quant_kernel.rows_mn(x, positions=position),
           "GEMM sorted": lambda: ops.grouped_gemm(
               sorted_q, w13, offsets=offsets, a_scale=as_row_view(sorted_s, m),
               b_scale=w13_scale, expected_m=hint, validate=False, out=h),
           "quant once": lambda: quant_kernel.rows_mn(x),
           "scale gather": gather_scales,
           "GEMM gathered": lambda: up_gathered_fp8(once_q, source32, w13, offsets, rows_s,
                                                    w13_scale, h2, EXPECTED_M=hint,
                                                    validate=False)}
    t = time_interleaved_flushed(fns, rounds)
    fns["GEMM sorted"]()
    fns["GEMM gathered"]()
    torch.cuda.synchronize()
    same = torch.equal(h, h2)
    before = t["quant scatter"] + t["GEMM sorted"]
    after = t["quant once"] + t["scale gather"] + t["GEMM gathered"]
    print(f"| {shape} fp8 | {tokens} | {m} | {hint} | {t['quant scatter']:.1f} | "
          f"{t['GEMM sorted']:.1f} | {before:.1f} | {t['quant once']:.1f} | "
          f"{t['scale gather']:.1f} | {t['GEMM gathered']:.1f} | {after:.1f} | "
          f"{before / after:.3f}x | {same} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="qwen3:16,qwen3:1024,qwen3:4096,qwen3:16384,"
                                           "mixtral:1024,mixtral:4096")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--fp8", action="store_true",
                        help="the FP8 up projection: quantised scatter + GEMM against "
                             "quantised once + gathered GEMM")
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()}")
    columns = (["quant scatter", "GEMM sorted", "both", "quant once", "scale gather",
                "GEMM gathered", "all three", "speedup"] if args.fp8 else
               ["up", "copy us", "GEMM on copy", "both", "gathered", "gathered, no fence"])
    columns = ["shape", "T", "rows", "hint"] + columns + ["same bits"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for item in args.cases.split(","):
        shape, tokens = item.split(":")
        (case_fp8 if args.fp8 else case)(shape, int(tokens), args.rounds)

if __name__ == "__main__":
    main()
