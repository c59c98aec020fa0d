"""Where the DeepGEMM drop-in's FP8 contiguous call loses to DeepGEMM
(#39: the drop-in at least level with DeepGEMM on its own layouts): the
same operands through DeepGEMM 2.6.1 and ggc's drop-in, each with A's
scales K-major (as DeepGEMM's tests make them: both calls transpose them)
and MN-major TMA-aligned (no copy), beside the pieces of the drop-in's
call: the scales' copy alone, `ggc.ops.grouped_gemm` over m_indices (what
the drop-in calls), and the padded_contiguous kernel as a `ggc.Kernel`,
also over K-major scales with the stages or the warps' slots carrying
them.
Timed interleaved (bench_grouped_gemm.time_interleaved); every output
checked against DeepGEMM's.

    python3 benchmarks/probes/dropin_gap.py [--shapes T,G,N,K;...] [--timeline] [--per-batch N]
"""
import argparse
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
from ggc import deepgemm as ggc_dg, ir, ops  # noqa: E402
from ggc.deepgemm.utils.layout import get_mn_major_tma_aligned_tensor  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from profile_fp8_contiguous import equal_groups, fp8_operands, ggc_contiguous  # noqa: E402

SHAPES = "8192,8,4096,7168;16384,32,3072,8192;8192,8,7168,2048"


def padded_k_major(x, sx, w, sw, tags, out, g, n, k, scales):
    """The padded_contiguous kernel over K-major scales of A, its plan's
    `scales` set to `scales` (the rest of the plan gg-plan-kernel's)."""
    spec = dict(layout="padded_contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
                a_scale="block", b_scale="block")
    chosen = ggc.compile_ir(ir.grouped_matmul("k", **spec), emit="gg-config",
                            memory_gbps=ggc.get_memory_gbps())
    plan = chosen.plans[0]["attributes"]["kernel_plan"]
    plan = re.sub(r"scales = \w+", f"scales = {scales}", plan)
    kern = ggc.Kernel(ir.grouped_matmul("k", kernel_plan=plan, **spec))
    return lambda: kern(x, w, tags, sx, sw, out)


def case(t, g, n, k, deep_gemm, timeline=False, per_batch=10):
    torch.manual_seed(0)
    (x, sx), (w, sw) = fp8_operands((t,), g, n, k)
    sx_mn = get_mn_major_tma_aligned_tensor(sx)
    tags = equal_groups(t, g, "padded_contiguous")
    outs = {}

    def out(name):
        return outs.setdefault(name, torch.empty(t, n, device="cuda", dtype=torch.bfloat16))

    fns = {
        "drop-in, K-major sfa": lambda: ggc_dg.m_grouped_fp8_gemm_nt_contiguous(
            (x, sx), (w, sw), out("drop-in, K-major sfa"), tags),
        "drop-in, MN-major sfa": lambda: ggc_dg.m_grouped_fp8_gemm_nt_contiguous(
            (x, sx_mn), (w, sw), out("drop-in, MN-major sfa"), tags),
        "ops.grouped_gemm m_indices": lambda: ops.grouped_gemm(
            x, w, m_indices=tags, a_scale=sx_mn, a_scale_kind="block", b_scale=sw,
            b_scale_kind="block", out=out("ops.grouped_gemm m_indices")),
        "ops.grouped_gemm K-major sfa": lambda: ops.grouped_gemm(
            x, w, m_indices=tags, a_scale=sx, a_scale_kind="block", b_scale=sw,
            b_scale_kind="block", out=out("ops.grouped_gemm K-major sfa")),
        "sfa copy alone": lambda: get_mn_major_tma_aligned_tensor(sx),
    }
    padded, outs["ggc.Kernel padded"] = ggc_contiguous((x, sx), (w, sw), t, g, n, k,
                                                       layout="padded_contiguous")
    fns["ggc.Kernel padded"] = padded
    own, outs["ggc.Kernel contiguous"] = ggc_contiguous((x, sx), (w, sw), t, g, n, k)
    fns["ggc.Kernel contiguous"] = own
    # The padded kernel on K-major scales as they are: its plan's choice
    # (the stages carry them where a row is whole 16-byte units) against the
    # same plan with the warps' slots.
    for scales in ("stages", "slots"):
        name = f"ggc.Kernel padded K-major {scales}"
        fns[name] = padded_k_major(x, sx, w, sw, tags, out(name), g, n, k, scales)
    if deep_gemm is not None:
        fns["deep_gemm, K-major sfa"] = lambda: deep_gemm.m_grouped_fp8_gemm_nt_contiguous(
            (x, sx), (w, sw), out("deep_gemm, K-major sfa"), tags)
        fns["deep_gemm, MN-major sfa"] = lambda: deep_gemm.m_grouped_fp8_gemm_nt_contiguous(
            (x, sx_mn), (w, sw), out("deep_gemm, MN-major sfa"), tags)
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    ref_name = "deep_gemm, K-major sfa" if deep_gemm is not None else "ggc.Kernel contiguous"
    ref = outs[ref_name].double()
    for name, o in outs.items():
        err = ((o.double() - ref).norm() / ref.norm()).item()
        print(f"  {name:28s} against {ref_name}: relative difference {err:.2e}", flush=True)
    if timeline:
        show_timeline({k: fns[k] for k in fns if k.endswith("-major sfa")})
    times = time_interleaved(fns, per_batch=per_batch)
    base = times.get("deep_gemm, K-major sfa")
    for name, us in times.items():
        vs = f"  deep_gemm K-major / this {base / us:.3f}x" if base else ""
        print(f"T={t} G={g} N={n} K={k} {name:28s} {us:8.1f} us{vs}", flush=True)


def show_timeline(fns, calls=4):
    """The GPU's timeline of `calls` back-to-back calls of each of `fns`:
    every kernel's duration and the idle gap before it (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile
    for name, fn in fns.items():
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        kernels = sorted((e for e in prof.events() if e.device_type.name == "CUDA"),
                         key=lambda e: e.time_range.start)
        line, last = [], None
        for e in kernels:
            gap = 0.0 if last is None else e.time_range.start - last
            line.append(f"{e.name[:24]}[gap {gap:.1f} dur {e.time_range.elapsed_us():.1f}]")
            last = e.time_range.end
        print(f"  timeline {name}: " + " ".join(line), flush=True)


def deep_gemm_or_none():
    """DeepGEMM where it imports (benchmarks/peers_env.sh builds it on the
    device), else None and a line saying so; then the card's name."""
    try:
        import deep_gemm
    except ImportError:
        deep_gemm = None
        print("deep_gemm not importable: ggc's rows alone", flush=True)
    print(torch.cuda.get_device_name(), flush=True)
    return deep_gemm


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=SHAPES)
    parser.add_argument("--timeline", action="store_true",
                        help="also print the GPU timeline of the calls given K-major or MN-major sfa")
    parser.add_argument("--per-batch", type=int, default=10,
                        help="calls between a batch's two events (time_interleaved's "
                             "per_batch): more calls share each batch's first host lead")
    args = parser.parse_args()
    deep_gemm = deep_gemm_or_none()
    for shape in args.shapes.split(";"):
        case(*(int(v) for v in shape.split(",")), deep_gemm, args.timeline, args.per_batch)


if __name__ == "__main__":
    main()
