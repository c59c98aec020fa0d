"""FP8 contiguous grouped GEMM (1x128 / 128x128 block scales) of ggc and
DeepGEMM side by side, for the profiler and the clock (#39's largest gap).

  python3 benchmarks/profile_fp8_contiguous.py time [T,G,N,K] [NAME,NAME,...]
  ncu --clock-control none --profile-from-start off \
      python3 benchmarks/profile_fp8_contiguous.py NAME [T,G,N,K]

NAME is any of `time`'s rows: ggc, "ggc 128x192", "ggc 128x192 c2",
"ggc 128x192 rc", "ggc 128x192 c2 rc", "ggc 128x128 rc" (ring_stages =
constant, serial promotion), "ggc 128x128 prc" (constant, pipelined),
"ggc 128x192 counted" (ring_stages = counted: since the fifty-sixth
session gg-plan-kernel gives the 128x192 row constant stages where its K
blocks are whole turns), padded,
"padded band B", "padded n_fastest", ggc_dg, deep_gemm. With
`--section SourceCounters -o REPORT`, `benchmarks/probes/stall_profile.py`
summarises where the kernel's warps wait.

Equal groups of T / G rows (a multiple of 128: DeepGEMM's padded layout
needs no padding rows, so the three read the same operands). `ggc` is
ggc's own contiguous kernel over CSR offsets (`ggc 128x192` with
DeepGEMM's tile width, `ggc 128x192 c2` in clusters of two with B
multicast); `ggc_dg` and `deep_gemm` are
`m_grouped_fp8_gemm_nt_contiguous` through ggc's drop-in and DeepGEMM 2.6.1
(on PYTHONPATH: ../shared/peers/setup-on-device.sh). `time` times the
kernels interleaved (bench_grouped_gemm.time_interleaved), all of them or
the names listed after the shape (the peer's row, DeepGEMM's or ggc's, is
always timed); a name runs that kernel once between cudaProfilerStart and
Stop, after warming it.
"""

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402


def fp8_operands(rows_shape, g, n, k):
    """DeepGEMM's operands: e4m3 rows with 1x128 scales [.., K/128], e4m3
    weights with 128x128 scales [G, N/128, K/128]."""
    x = (torch.randn(*rows_shape, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    sx = torch.rand(*rows_shape, k // 128, device="cuda") + 0.5
    w = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    sw = torch.rand(g, n // 128, k // 128, device="cuda") + 0.5
    return (x, sx), (w, sw)


# DeepGEMM's tile for these shapes (its kernel's template arguments), and
# with its cluster of two CTAs sharing B by multicast.
WIDE = "#gg.config<block = [128, 192, 128], stages = 0, cluster = [1, 1], sms = 132>"
WIDE_PAIR = "#gg.config<block = [128, 192, 128], stages = 0, cluster = [2, 1], sms = 132>"
# gg-plan-kernel's plan for both, with each K block's stage a constant
# (the "rc" rows: ring_stages = constant, fifty-fifth session).
CONSTANT_STAGES = ("#gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], "
                   "staging = swizzled, ring_stages = constant>")
# DeepGEMM's promotion order at ggc's 128x128 tile: serial, constant stages
# (the chosen 128x128 kernel pipelines its promotions over counted stages).
SQUARE = "#gg.config<block = [128, 128, 128], stages = 0, cluster = [1, 1], sms = 132>"
# The chosen 128x128 plan (pipelined promotion) over constant stages.
PIPELINED_CONSTANT = ("#gg.kernel_plan<promotion = pipelined, scales = stages, "
                      "registers = [24, 240], staging = swizzled, ring_stages = constant>")
CONSTANT_STAGE_ROWS = {"ggc 128x192 rc": (WIDE, CONSTANT_STAGES),
                       "ggc 128x192 c2 rc": (WIDE_PAIR, CONSTANT_STAGES),
                       "ggc 128x128 rc": (SQUARE, CONSTANT_STAGES),
                       "ggc 128x128 prc": (SQUARE, PIPELINED_CONSTANT)}
COUNTED_STAGES = CONSTANT_STAGES.replace(", ring_stages = constant", "")


def mn_major_scales(sx):
    """A's [T, ceil(K/128)] scales as ggc's "block_mn" storage:
    [ceil(K/128), align4(T)], zeros past T."""
    t, kb = sx.shape
    a_scale = torch.zeros(kb, (t + 3) // 4 * 4, device="cuda")
    a_scale[:, :t] = sx.t()
    return a_scale


def equal_groups(t, g, layout):
    """G groups of T/G rows: CSR offsets (contiguous) or each row's group
    (padded_contiguous, DeepGEMM's m_indices)."""
    if layout == "contiguous":
        return torch.arange(0, t + 1, t // g, dtype=torch.int32, device="cuda")
    return torch.arange(g, device="cuda", dtype=torch.int32).repeat_interleave(t // g)


def ggc_contiguous(a, b, t, g, n, k, config=None, layout="contiguous", **plan):
    """ggc's kernel on DeepGEMM's operands (A's scales M-major): over CSR
    offsets, or (`padded_contiguous`, the drop-in's layout) over row tags."""
    (x, sx), (w, sw) = a, b
    a_scale = mn_major_scales(sx)
    groups = equal_groups(t, g, layout)
    out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    kern = ggc.Kernel(ir.grouped_matmul(
        "k", layout=layout, num_groups=g, n=n, k=k, dtype="f8E4M3FN",
        a_scale="block_mn", b_scale="block", config=config, **plan))
    return lambda: kern(x, w, groups, a_scale, sw, out), out


def launch_for_profiler(fn):
    """Three warm-up calls (compiles, caches), then one between
    cudaProfilerStart and Stop: ncu --profile-from-start off sees it alone."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "time"
    t, g, n, k = (8192, 8, 4096, 7168)
    if len(sys.argv) > 2:
        t, g, n, k = (int(v) for v in sys.argv[2].split(","))
    torch.manual_seed(0)
    try:
        import deep_gemm
    except ImportError:  # ggc's kernels alone, against each other
        deep_gemm = None
    from ggc import deepgemm as ggc_dg
    a, b = fp8_operands((t,), g, n, k)
    tags = torch.arange(g, device="cuda", dtype=torch.int32).repeat_interleave(t // g)
    out_dg = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    out_gd = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    own, out_own = ggc_contiguous(a, b, t, g, n, k)
    wide, out_wide = ggc_contiguous(a, b, t, g, n, k, config=WIDE)
    pair, out_pair = ggc_contiguous(a, b, t, g, n, k, config=WIDE_PAIR)
    counted, _ = ggc_contiguous(a, b, t, g, n, k, config=WIDE, kernel_plan=COUNTED_STAGES)
    # An older compiler (the other side of an A/B) may not know the plan.
    optional = {}
    for name, (config, plan) in CONSTANT_STAGE_ROWS.items():
        try:
            optional[name] = ggc_contiguous(a, b, t, g, n, k, config=config,
                                            kernel_plan=plan)
        except Exception as e:  # noqa: BLE001 (the compiler's refusal, reported)
            print(f"{name}: not built by this compiler ({str(e).splitlines()[0]})")
    # The drop-in's layout with M bands that do or do not cross the groups
    # (T/G rows a group: T/G/128 M blocks), and N-fastest.
    padded = {"padded": ggc_contiguous(a, b, t, g, n, k, layout="padded_contiguous")[0]}
    for band in sorted({t // g // 128, 1}):
        padded[f"padded band {band}"] = ggc_contiguous(
            a, b, t, g, n, k, layout="padded_contiguous", m_band=band, b_cache="evict_first")[0]
    padded["padded n_fastest"] = ggc_contiguous(
        a, b, t, g, n, k, layout="padded_contiguous", tile_order="n_fastest",
        b_cache="evict_first")[0]
    fns = {"ggc": own, "ggc 128x192": wide, "ggc 128x192 c2": pair,
           "ggc 128x192 counted": counted,
           **{name: fn for name, (fn, _) in optional.items()}, **padded,
           "ggc_dg": lambda: ggc_dg.m_grouped_fp8_gemm_nt_contiguous(a, b, out_gd, tags)}
    if deep_gemm is not None:
        fns["deep_gemm"] = lambda: deep_gemm.m_grouped_fp8_gemm_nt_contiguous(a, b, out_dg, tags)
    flops = 2.0 * t * n * k
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    peer = "deep_gemm" if deep_gemm is not None else "ggc"
    ref = (out_dg if deep_gemm is not None else out_own).double()
    outs = {"ggc": out_own, "ggc 128x192": out_wide, "ggc 128x192 c2": out_pair,
            **{name: out for name, (_, out) in optional.items()}, "ggc_dg": out_gd}
    for name, out in outs.items():
        err = ((out.double() - ref).norm() / ref.norm()).item()
        print(f"{name} against {peer}: relative error {err:.2e}")
    if which == "time":
        if len(sys.argv) > 3:
            wanted = set(sys.argv[3].split(",")) | {peer}
            unknown = wanted - fns.keys() - CONSTANT_STAGE_ROWS.keys()
            if unknown:
                sys.exit(f"profile_fp8_contiguous.py: no kernel named {sorted(unknown)}; "
                         f"the names are {sorted(fns)}")
            fns = {name: fn for name, fn in fns.items() if name in wanted}
        times = time_interleaved(fns)
        for name, us in times.items():
            print(f"T={t} G={g} N={n} K={k} {name:18s} {us:8.1f} us "
                  f"{flops / us / 1e6:7.1f} TFLOPS  {peer}/this {times[peer] / us:.3f}x")
        return
    launch_for_profiler(fns[which])


if __name__ == "__main__":
    main()
