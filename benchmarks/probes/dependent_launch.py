"""Programmatic dependent launch (ggk-await-prior-grid): ggc's kernels with
the runtime's dependent launches on against off, interleaved in one run.

1. Kernels back to back (bench_peers' cases, 10 calls a batch between CUDA
   events, bench_grouped_gemm.time_interleaved): ggc on and off, DeepGEMM
   2.6.1 with its own PDL off (its default) and on (`set_pdl`), each output
   checked against ggc's.
2. The MoE layer (ggc.moe.fused_moe, BF16 and FP8), replayed from a CUDA
   graph captured under each setting (L2 flushed before each replay,
   bench_moe's timing), at several token counts. Eager calls are left
   out: one eager layer call costs the host more than its kernels take
   (Qwen3-like, T=1: 170-360 us against 54 us replayed), so its launches
   never queue back to back.
3. The DeepGEMM drop-in on K-major scales of A (the scales' copy, then the
   GEMM: a two-kernel chain) against DeepGEMM.

    python3 benchmarks/probes/dependent_launch.py [--parts kernels,layer,dropin]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
import bench_peers  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_moe import SHAPES, captured, inputs, time_interleaved_flushed, weights_for  # noqa: E402
import moe_layers  # noqa: E402

KERNEL_CASES = {
    "FP8 masked G4 M256 N7168 K2048": lambda: bench_peers.fp8_masked(4, 256, 7168, 2048, [256] * 4),
    "FP8 masked G32 M64 N7168 K2048 random": lambda: bench_peers.fp8_masked(
        32, 64, 7168, 2048, bench_peers.random_counts(32, 64, 1)),
    "FP8 contiguous T8192 G8 N7168 K2048": lambda: bench_peers.fp8_contiguous(8192, 8, 7168, 2048, 0),
    "BF16 Qwen3 decode up T128 G128 N1536 K2048": lambda: bench_peers.bf16_contiguous(
        128, 128, 1536, 2048, 0),
    "BF16 Qwen3 down T16384 G128 N2048 K768": lambda: bench_peers.bf16_contiguous(
        16384, 128, 2048, 768, 0),
}


def switched(fn, enabled):
    def call():
        ggc.set_dependent_launches(enabled)
        return fn()
    return call


def deep_gemm_switched(fn, enabled):
    def call():
        bench_peers.DG.set_pdl(enabled)
        return fn()
    return call


def kernels():
    print("== kernels back to back (10 a batch), us a call")
    for label, build in KERNEL_CASES.items():
        fns, views, _, _ = build()
        timed = {"ggc on": switched(fns["ggc"], True), "ggc off": switched(fns["ggc"], False)}
        if "deep_gemm" in fns and hasattr(bench_peers.DG, "set_pdl"):
            timed["deep_gemm"] = deep_gemm_switched(fns["deep_gemm"], False)
            timed["deep_gemm pdl"] = deep_gemm_switched(fns["deep_gemm"], True)
        for fn in timed.values():
            fn()
        torch.cuda.synchronize()
        reference = views["ggc"]()
        timed["ggc on"]()
        torch.cuda.synchronize()
        err = bench_peers.rel_err(views["ggc"](), reference)
        times = time_interleaved(timed)
        ggc.set_dependent_launches(True)
        cells = "  ".join(f"{name} {us:8.1f}" for name, us in times.items())
        print(f"{label:44} {cells}  off/on {times['ggc off'] / times['ggc on']:.3f}x"
              f"  rel diff on vs off {err:.1e}", flush=True)


def layer(tokens_list, shapes, rounds):
    print("== MoE layer replayed from CUDA graphs (L2 flushed), us a call")
    for shape in shapes:
        experts, top_k, hidden, inter = SHAPES[shape]
        w13, w2 = weights_for(experts, hidden, inter, 0)
        for tokens in tokens_list:
            x, weights, ids = inputs(experts, top_k, hidden, inter, tokens, 1)
            fns = {}
            outs = {}
            for dtype, make in (("bf16", moe_layers.ggc_bf16), ("fp8", moe_layers.ggc_fp8)):
                eager = make(w13, w2, graph=False)
                for state in (True, False):
                    name = f"{dtype} {'on' if state else 'off'}"
                    ggc.set_dependent_launches(state)
                    replay, outs[name], graph = captured(lambda e=eager: e(x, weights, ids))
                    fns[name] = (lambda r=replay, g=graph: r())
            ggc.set_dependent_launches(True)
            times = time_interleaved_flushed(fns, rounds)
            errs = "  ".join(f"{d} {bench_peers.rel_err(outs[d + ' on'], outs[d + ' off']):.1e}"
                             for d in ("bf16", "fp8"))
            cells = "  ".join(f"{n} {us:7.1f}" for n, us in times.items())
            gains = "  ".join(f"{d} {times[d + ' off'] / times[d + ' on']:.3f}x"
                              for d in ("bf16", "fp8"))
            print(f"{shape} T={tokens:<6} {cells}  off/on: {gains}  rel diff on vs off {errs}",
                  flush=True)


def dropin():
    from ggc import deepgemm as ggc_dg
    from profile_fp8_contiguous import equal_groups, fp8_operands
    print("== DeepGEMM drop-in, K-major sfa (copy + GEMM), 10 a batch, us a call")
    for t, g, n, k in ((8192, 8, 4096, 7168), (8192, 8, 7168, 2048), (2048, 8, 4096, 7168)):
        torch.manual_seed(0)
        (x, sx), (w, sw) = fp8_operands((t,), g, n, k)
        tags = equal_groups(t, g, "padded_contiguous")
        outs = {name: torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
                for name in ("on", "off", "dg")}
        fns = {f"drop-in {s}": switched(
            lambda o=outs[s]: ggc_dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), o, tags),
            s == "on") for s in ("on", "off")}
        if bench_peers.DG is not None:
            fns["deep_gemm"] = deep_gemm_switched(
                lambda: bench_peers.DG.m_grouped_fp8_gemm_nt_contiguous(
                    (x, sx), (w, sw), outs["dg"], tags), False)
            fns["deep_gemm pdl"] = deep_gemm_switched(
                lambda: bench_peers.DG.m_grouped_fp8_gemm_nt_contiguous(
                    (x, sx), (w, sw), outs["dg"], tags), True)
        times = time_interleaved(fns)
        ggc.set_dependent_launches(True)
        err = bench_peers.rel_err(outs["on"].float(), outs["off"].float())
        cells = "  ".join(f"{name} {us:8.1f}" for name, us in times.items())
        print(f"T{t} G{g} N{n} K{k}  {cells}  off/on "
              f"{times['drop-in off'] / times['drop-in on']:.3f}x  rel diff {err:.1e}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="kernels,layer,dropin")
    parser.add_argument("--tokens", default="1,16,64,128,1024,4096")
    parser.add_argument("--shapes", default="qwen3,mixtral")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    parts = args.parts.split(",")
    print(torch.cuda.get_device_name(), "dependent launches by default:",
          ggc.dependent_launches())
    if "kernels" in parts:
        kernels()
    if "layer" in parts:
        layer([int(t) for t in args.tokens.split(",")], args.shapes.split(","), args.rounds)
    if "dropin" in parts:
        dropin()


if __name__ == "__main__":
    main()
