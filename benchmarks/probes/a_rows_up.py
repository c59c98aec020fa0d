"""What reading the up projection's rows through the routes' source list
(gg's a_rows) costs or saves against gathering them into a sorted copy
first (#38), kernel by kernel: the copy (torch's index_select) and the
GEMM on it, against the gathered GEMM; each with SwiGLU in the epilogue
(column_halves) where experts expect more than 16 rows, else the plain
GEMM. "no fence" loads the gathered kernel's PTX with its
fence.proxy.async lines removed (wrong in general: the consumers then
read cp.async's rows without ordering them for wgmma's async proxy), to
show what the fences cost. Medians over interleaved rounds, L2 flushed.

    python3 benchmarks/probes/a_rows_up.py [--cases qwen3:1024,128x8x7168x768:4096]

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
from bench_moe import SHAPES, time_interleaved_flushed  # noqa: E402
from ggc.moe import kernels  # noqa: E402
from ggc.moe.layer import expected_rows  # noqa: E402
from ggc.moe.permute import sort_routes  # noqa: E402


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="qwen3:16,qwen3:1024,qwen3:4096,qwen3:16384,"
                                           "mixtral:1024,mixtral:4096")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()}")
    print("| shape | T | rows | hint | up | copy us | GEMM on copy | both | gathered | "
          "gathered, no fence | same bits |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for item in args.cases.split(","):
        shape, tokens = item.split(":")
        case(shape, int(tokens), args.rounds)


if __name__ == "__main__":
    main()
