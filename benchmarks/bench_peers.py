"""ggc's forward grouped GEMM against every peer kernel, in one run (#39).

    python3 benchmarks/bench_peers.py [--cases SUBSTRING] [--json OUT.json] [--svg OUT.svg]

Each case times ggc (`ggc.ops.grouped_gemm`, the public call) and the peers
that take it, interleaved on the same inputs (bench_grouped_gemm's
time_interleaved: medians of batches of back-to-back calls, CUDA events):

- deep_gemm     DeepGEMM 2.6.1 (../shared/peers/setup-on-device.sh):
                m_grouped_{fp8,bf16}_gemm_nt_{masked,contiguous};
- deep_gemm_v1  DeepGEMM v1 (the TMA-Adaptive fork): its FP8 masked and
                padded contiguous kernels, and `TMA-adaptive`, its
                unpadded contiguous call (host-side preparation inside);
- torch         torch._grouped_mm (bf16) and torch._scaled_grouped_mm (fp8
                with rowwise scales: another recipe, timed for reference).

ggc launches its kernels as dependent launches (each waits at entry for
the kernel ahead: ggk-await-prior-grid), its default. DeepGEMM has the same
as an opt-in (`set_pdl`, off by default): `deep_gemm pdl` is DeepGEMM 2.6.1
with it on, a peer of its own.

DeepGEMM's contiguous kernels need every group padded to 128 rows; ggc's
reads CSR offsets. The peers' contiguous kernels are timed alone on input
padded beforehand (the target, as #39 states it); the copy that pads is
timed apart (`pad copy`). A's 1x128 scales are given to both in the
M-major TMA-aligned layout their kernels read, so neither transposes them
inside the call. A peer that is missing or refuses a case is skipped with
the reason printed; a peer whose output differs from ggc's by more than
the dtype's tolerance is reported, not hidden.

The ceiling is measured in the same run: the best of dense bf16 and FP8
(per-tensor scaled) matmuls of 8192^3, and a device-to-device copy for
bandwidth. Prints us, TFLOPS, % of that ceiling and ggc's speedup per
peer; --json writes every number; --svg draws ggc's speedup over the best
peer per case and --roofline-svg ggc's and the best peer's share of the
roofline (no plotting library needed); --from-json redraws both from an
earlier run's --json. "% of roofline" is the
larger of the FLOPs and the bytes (the weights of non-empty groups) over
those ceilings, divided by the time.
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
from ggc import ops  # noqa: E402
from bench_grouped_gemm import fp8, host_us, ragged_groups, time_interleaved  # noqa: E402


def optional_import(name):
    try:
        return __import__(name), None
    except Exception as e:  # noqa: BLE001 - the reason is printed
        return None, f"{type(e).__name__}: {e}"


DG, DG_WHY = optional_import("deep_gemm")
DG1, DG1_WHY = optional_import("deep_gemm_v1")


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def mn_major(scale):
    """[M, KB] f32 scales as a view of [KB, align4(M)] storage: the layout
    DeepGEMM's and ggc's kernels read A's 1x128 scales in."""
    m, kb = scale.shape[-2:]
    aligned = (m + 3) // 4 * 4
    storage = torch.zeros(*scale.shape[:-2], kb, aligned, device=scale.device)
    storage[..., :m].copy_(scale.transpose(-1, -2))
    return storage.transpose(-1, -2)[..., :m, :]


def padded_layout(sizes, align=128):
    """DeepGEMM's contiguous layout of groups of `sizes` rows: each group's
    rows start on a multiple of `align`; returns the padded row count, the
    source row of each padded row (-1: padding) and m_indices."""
    src, tags, start = [], [], 0
    for g, size in enumerate(sizes):
        rows = -(-size // align) * align
        src += list(range(start, start + size)) + [-1] * (rows - size)
        tags += [g] * size + [-1] * (rows - size)
        start += size
    src = torch.tensor(src, dtype=torch.long, device="cuda")
    return src.numel(), src, torch.tensor(tags, dtype=torch.int32, device="cuda")


def pad_rows(x, src, fill=None):
    """x's rows gathered into the padded layout; padding rows zero, or from
    `fill(*shape)` (a tensor of x's dtype) when given."""
    shape = (src.numel(), *x.shape[1:])
    out = (torch.zeros(shape, dtype=x.dtype, device=x.device) if fill is None
           else fill(*shape))
    keep = src >= 0
    out[keep] = x[src[keep]]
    return out


# ---------------------------------------------------------------------------
# Cases: each returns {label: callable}, {label: callable giving the rows
# of its output that hold the useful work, in ggc's order} for the outputs
# to compare, and the FLOPs and bytes of the useful work.
# ---------------------------------------------------------------------------

def masked_rows(out, counts):
    return lambda: torch.cat([out[g, :c] for g, c in enumerate(counts)])


def fp8_contiguous(t, g, n, k, seed):
    sizes, ends, offsets = ragged_groups(t, g, seed)
    x, w = fp8(t, k), fp8(g, n, k)
    sx = torch.rand(t, k // 128, device="cuda") + 0.5
    sw = torch.rand(g, -(-n // 128), k // 128, device="cuda") + 0.5
    d = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    sx_mn = mn_major(sx)
    fns = {"ggc": lambda: ops.grouped_gemm(x, w, offsets=offsets, a_scale=sx_mn, b_scale=sw,
                                           out=d)}
    views = {"ggc": lambda: d}
    rows, src, tags = padded_layout(sizes)
    xp, sxp = pad_rows(x, src), pad_rows(sx, src)
    sxp_mn = mn_major(sxp)
    keep = src >= 0
    if DG is not None:
        dp = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
        views["deep_gemm"] = lambda: dp[keep]
        fns["deep_gemm"] = lambda: DG.m_grouped_fp8_gemm_nt_contiguous(
            (xp, sxp_mn), (w, sw), dp, tags)
    if DG1 is not None:
        d1 = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
        views["deep_gemm_v1"] = lambda: d1[keep]
        fns["deep_gemm_v1"] = lambda: DG1.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(
            (xp, sxp_mn), (w, sw), d1, tags)
        per_group = torch.tensor(sizes, dtype=torch.long, device="cuda")
        holder = {}

        def adaptive():
            holder["out"] = DG1.m_grouped_TMA_adaptive_gemm_fp8_fp8_bf16_nt_contiguous(
                (x, sx), (w, sw), per_group)
        fns["deep_gemm_v1 TMA-adaptive"] = adaptive
        views["deep_gemm_v1 TMA-adaptive"] = lambda: holder["out"]
    fns["pad copy"] = lambda: (pad_rows(x, src), pad_rows(sx, src))
    row_a = torch.rand(t, device="cuda") + 0.5
    col_b = torch.rand(g, n, device="cuda") + 0.5
    fns["torch._scaled_grouped_mm"] = lambda: torch._scaled_grouped_mm(
        x, w.transpose(1, 2), row_a, col_b, offs=ends, out_dtype=torch.bfloat16)
    used = sum(1 for size in sizes if size)  # empty groups' weights are never read
    return fns, views, 2.0 * t * n * k, t * k + used * n * k + 2.0 * t * n


def fp8_masked(g, m, n, k, counts):
    x, w = fp8(g, m, k), fp8(g, n, k)
    sx = torch.rand(g, m, k // 128, device="cuda") + 0.5
    sw = torch.rand(g, -(-n // 128), k // 128, device="cuda") + 0.5
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    expected = max(1, sum(counts) // g)
    sx_mn = mn_major(sx)
    out = {name: torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
           for name in ("ggc", "deep_gemm", "deep_gemm_v1")}
    fns = {"ggc": lambda: ops.grouped_gemm(x, w, masked_m=masked_m, expected_m=expected,
                                           a_scale=sx_mn, b_scale=sw, out=out["ggc"])}
    views = {name: masked_rows(o, counts) for name, o in out.items()}
    if DG is not None:
        fns["deep_gemm"] = lambda: DG.m_grouped_fp8_gemm_nt_masked(
            (x, sx_mn), (w, sw), out["deep_gemm"], masked_m, expected)
    if DG1 is not None:
        fns["deep_gemm_v1"] = lambda: DG1.m_grouped_gemm_fp8_fp8_bf16_nt_masked(
            (x, sx_mn), (w, sw), out["deep_gemm_v1"], masked_m, expected)
    row_a = torch.rand(g, m, device="cuda") + 0.5
    col_b = torch.rand(g, n, device="cuda") + 0.5
    fns["torch._scaled_grouped_mm"] = lambda: torch._scaled_grouped_mm(
        x, w.transpose(1, 2), row_a, col_b, out_dtype=torch.bfloat16)
    rows = sum(counts)
    return fns, views, 2.0 * rows * n * k, rows * k + g * n * k + 2.0 * rows * n


def bf16_contiguous(t, g, n, k, seed):
    sizes, ends, offsets = ragged_groups(t, g, seed)
    a = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
    d = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    fns = {"ggc": lambda: ops.grouped_gemm(a, w, offsets=offsets, out=d)}
    views = {"ggc": lambda: d}
    rows, src, tags = padded_layout(sizes)
    if DG is not None:
        ap = pad_rows(a, src)
        dp = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
        views["deep_gemm"] = lambda: dp[src >= 0]
        fns["deep_gemm"] = lambda: DG.m_grouped_bf16_gemm_nt_contiguous(ap, w, dp, tags)
        fns["pad copy"] = lambda: pad_rows(a, src)
    holder = {}

    def torch_peer():
        holder["out"] = torch._grouped_mm(a, w.transpose(1, 2), offs=ends)
    fns["torch._grouped_mm"] = torch_peer
    views["torch._grouped_mm"] = lambda: holder["out"]
    used = sum(1 for size in sizes if size)  # empty groups' weights are never read
    return fns, views, 2.0 * t * n * k, 2.0 * (t * k + used * n * k + t * n)


def bf16_masked(g, m, n, k, counts):
    a = torch.randn(g, m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    expected = max(1, sum(counts) // g)
    out = {name: torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
           for name in ("ggc", "deep_gemm")}
    fns = {"ggc": lambda: ops.grouped_gemm(a, w, masked_m=masked_m, expected_m=expected,
                                           out=out["ggc"])}
    views = {name: masked_rows(o, counts) for name, o in out.items()}
    if DG is not None:
        fns["deep_gemm"] = lambda: DG.m_grouped_bf16_gemm_nt_masked(
            a, w, out["deep_gemm"], masked_m, expected)
    holder = {}

    def torch_peer():  # every row of every batch: torch has no mask
        holder["out"] = torch._grouped_mm(a, w.transpose(1, 2))
    fns["torch._grouped_mm"] = torch_peer
    views["torch._grouped_mm"] = lambda: masked_rows(holder["out"], counts)()
    rows = sum(counts)
    return fns, views, 2.0 * rows * n * k, 2.0 * (rows * k + g * n * k + rows * n)


def random_counts(g, m, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(1, m + 1, (g,), generator=gen).tolist()


# (name, dtype, builder): #39's table, then real MoE projections with
# skewed (Dirichlet) loads: routed rows = tokens x top-k.
CASES = [
    ("fp8 masked G4 M256 N4096 K7168", "fp8", lambda: fp8_masked(4, 256, 4096, 7168, [256] * 4)),
    ("fp8 masked G4 M256 N7168 K2048", "fp8", lambda: fp8_masked(4, 256, 7168, 2048, [256] * 4)),
    ("fp8 masked G16 M128 N4096 K7168 random", "fp8",
     lambda: fp8_masked(16, 128, 4096, 7168, random_counts(16, 128, 1))),
    ("fp8 masked G32 M64 N7168 K2048 random", "fp8",
     lambda: fp8_masked(32, 64, 7168, 2048, random_counts(32, 64, 2))),
    # Taller masked batches of random counts (the fused-MoE decode of a
    # larger batch): where DeepGEMM led every ggc tile by 10-18% (forty-
    # fourth session, masked_idle.py).
    ("fp8 masked G16 M256 N4096 K7168 random", "fp8",
     lambda: fp8_masked(16, 256, 4096, 7168, random_counts(16, 256, 7))),
    ("fp8 masked G8 M512 N4096 K7168 random", "fp8",
     lambda: fp8_masked(8, 512, 4096, 7168, random_counts(8, 512, 8))),
    ("fp8 contiguous T8192 G8 N4096 K7168", "fp8", lambda: fp8_contiguous(8192, 8, 4096, 7168, 0)),
    ("fp8 contiguous T16384 G32 N3072 K8192", "fp8",
     lambda: fp8_contiguous(16384, 32, 3072, 8192, 0)),
    ("fp8 contiguous T8192 G8 N7168 K2048", "fp8", lambda: fp8_contiguous(8192, 8, 7168, 2048, 0)),
    ("fp8 contiguous T4096 G64 N2048 K7168", "fp8", lambda: fp8_contiguous(4096, 64, 2048, 7168, 0)),
    ("fp8 contiguous T2048 G128 N4096 K7168", "fp8",
     lambda: fp8_contiguous(2048, 128, 4096, 7168, 0)),
    ("bf16 contiguous T8192 G8 N4096 K7168", "bf16", lambda: bf16_contiguous(8192, 8, 4096, 7168, 0)),
    ("bf16 contiguous T16384 G32 N3072 K8192", "bf16",
     lambda: bf16_contiguous(16384, 32, 3072, 8192, 0)),
    ("bf16 contiguous T4096 G64 N2048 K7168", "bf16",
     lambda: bf16_contiguous(4096, 64, 2048, 7168, 0)),
    ("bf16 masked G16 M128 N4096 K7168", "bf16", lambda: bf16_masked(16, 128, 4096, 7168, [128] * 16)),
    # DeepSeek-V3 (H=7168, I=2048, top-8), 32 local experts of 256 (EP=8):
    # prefill of 4,096 tokens a rank, and decode's masked batches.
    ("DeepSeek-V3 up fp8 T32768 G32 N4096 K7168", "fp8",
     lambda: fp8_contiguous(32768, 32, 4096, 7168, 3)),
    ("DeepSeek-V3 down fp8 T32768 G32 N7168 K2048", "fp8",
     lambda: fp8_contiguous(32768, 32, 7168, 2048, 3)),
    ("DeepSeek-V3 decode up fp8 masked G32 M32 N4096 K7168", "fp8",
     lambda: fp8_masked(32, 32, 4096, 7168, random_counts(32, 32, 4))),
    # Mixtral 8x7B (H=4096, I=14336, top-2): 2,048 tokens.
    ("Mixtral-8x7B up bf16 T4096 G8 N28672 K4096", "bf16",
     lambda: bf16_contiguous(4096, 8, 28672, 4096, 5)),
    ("Mixtral-8x7B down bf16 T4096 G8 N4096 K14336", "bf16",
     lambda: bf16_contiguous(4096, 8, 4096, 14336, 5)),
    # Qwen3-30B-A3B (H=2048, I=768, E=128, top-8): 2,048 tokens, and 16.
    ("Qwen3-30B-A3B up bf16 T16384 G128 N1536 K2048", "bf16",
     lambda: bf16_contiguous(16384, 128, 1536, 2048, 6)),
    ("Qwen3-30B-A3B down bf16 T16384 G128 N2048 K768", "bf16",
     lambda: bf16_contiguous(16384, 128, 2048, 768, 6)),
    ("Qwen3-30B-A3B decode up bf16 T128 G128 N1536 K2048", "bf16",
     lambda: bf16_contiguous(128, 128, 1536, 2048, 7)),
    # gpt-oss-120b (H=2880, I=2880, E=128, top-4): 2,048 tokens.
    ("gpt-oss-120b up bf16 T8192 G128 N5760 K2880", "bf16",
     lambda: bf16_contiguous(8192, 128, 5760, 2880, 8)),
    ("gpt-oss-120b down bf16 T8192 G128 N2880 K2880", "bf16",
     lambda: bf16_contiguous(8192, 128, 2880, 2880, 8)),
]

# Peers whose time is not a GEMM kernel's (never "the best peer").
NOT_PEERS = {"ggc", "pad copy"}
# A peer whose useful rows differ from ggc's by more than this (relative
# norm) is reported as differing and never counted as the best peer.
AGREE = 1e-2


# ---------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------

def ceilings():
    """The card's measured ceilings in this run: dense bf16 and FP8
    (per-tensor scales) matmul TFLOPS at 8192^3, and copy bandwidth."""
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    src = torch.empty(2 ** 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    times = time_interleaved({
        "bf16": lambda: torch.mm(a, b),
        "fp8": lambda: torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16),
        "copy": lambda: dst.copy_(src)})
    flops = 2.0 * n ** 3
    return {"bf16_tflops": flops / times["bf16"] / 1e6,
            "fp8_tflops": flops / times["fp8"] / 1e6,
            "bytes_per_s": 2.0 * src.numel() / (times["copy"] * 1e-6)}


def rel_err(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


def with_deep_gemm_pdl(fns, views):
    """`deep_gemm` as DeepGEMM launches it by default (PDL off) and, as
    `deep_gemm pdl`, with its programmatic dependent launch on: each call
    sets the switch it is timed under."""
    if "deep_gemm" not in fns or not hasattr(DG, "set_pdl"):
        return
    def switched(fn, enabled):
        def call():
            DG.set_pdl(enabled)
            return fn()
        return call
    plain = fns["deep_gemm"]
    fns["deep_gemm"] = switched(plain, False)
    fns["deep_gemm pdl"] = switched(plain, True)
    views["deep_gemm pdl"] = views["deep_gemm"]


def run_case(label, dtype, build, ceiling):
    fns, views, flops, bytes_moved = build()
    with_deep_gemm_pdl(fns, views)
    usable = {}
    for name, fn in fns.items():
        try:
            fn()
            usable[name] = fn
        except Exception as e:  # noqa: BLE001 - a peer's refusal is reported
            print(f"  {label}: {name} skipped: {type(e).__name__}: "
                  f"{str(e).splitlines()[0][:100]}")
    torch.cuda.synchronize()
    reference = views["ggc"]()
    errors = {name: rel_err(view(), reference) for name, view in views.items()
              if name != "ggc" and name in usable}
    times = time_interleaved(usable)
    peak = ceiling["fp8_tflops" if dtype == "fp8" else "bf16_tflops"]
    floor_us = max(flops / (peak * 1e6), bytes_moved / ceiling["bytes_per_s"] * 1e6)
    differs = {n for n, e in errors.items() if not e <= AGREE}
    peers = {n: t for n, t in times.items() if n not in NOT_PEERS | differs}
    best = min(peers, key=peers.get) if peers else None
    row = {"case": label, "dtype": dtype, "flops": flops, "bytes": bytes_moved,
           "floor_us": floor_us, "us": times, "rel_diff_from_ggc": errors,
           "differs": sorted(differs),
           "ggc_host_us": host_us(usable["ggc"]), "best_peer": best,
           "speedup_vs_best": peers[best] / times["ggc"] if best else None}
    for name, us in times.items():
        if name in NOT_PEERS - {"ggc"}:
            print(f"{label:52} {name:26} {us:9.1f} us", flush=True)
            continue
        speed = "" if name == "ggc" else f"  ggc {times[name] / times['ggc']:.3f}x"
        diff = f"  diff {errors[name]:.1e}" if name in errors else ""
        if name in differs:
            diff += " OUTPUT DIFFERS FROM GGC'S: not counted"
        print(f"{label:52} {name:26} {us:9.1f} us {flops / us / 1e6:7.1f} TFLOPS "
              f"{100 * floor_us / us:5.1f}% of roofline{speed}{diff}", flush=True)
    if best:
        print(f"{'':52} best peer {best}: ggc {row['speedup_vs_best']:.3f}x; "
              f"ggc host {row['ggc_host_us']:.1f} us", flush=True)
    return row


def svg_header(width, height):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="11">')


def write_svg(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines + ["</svg>"]))


def svg(rows, path):
    """A bar per case: ggc's speedup over the best peer (1 = level)."""
    rows = [r for r in rows if r["speedup_vs_best"]]
    width, bar, left = 900, 18, 380
    top = max(r["speedup_vs_best"] for r in rows + [{"speedup_vs_best": 1.5}])
    scale = (width - left - 60) / top
    lines = [svg_header(width, len(rows) * (bar + 6) + 40)]
    for i, r in enumerate(rows):
        y = 20 + i * (bar + 6)
        s = r["speedup_vs_best"]
        color = "#2a7" if s >= 1 else "#c44"
        lines.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end">{r["case"]}</text>')
        lines.append(f'<rect x="{left}" y="{y}" width="{s * scale:.1f}" height="{bar}" '
                     f'fill="{color}"/>')
        lines.append(f'<text x="{left + s * scale + 4:.1f}" y="{y + 13}">{s:.2f}x '
                     f'({r["best_peer"]})</text>')
    x1 = left + scale
    lines.append(f'<line x1="{x1:.1f}" y1="10" x2="{x1:.1f}" '
                 f'y2="{len(rows) * (bar + 6) + 25}" stroke="#000" stroke-dasharray="4"/>')
    write_svg(path, lines)


def roofline_svg(rows, path, target=90.0):
    """Two bars per case: ggc's share of the roofline measured in the run
    (floor_us / us) and the best peer's, against 100% and #39's target
    share (`target`, a dashed line)."""
    rows = [r for r in rows if r["best_peer"]]
    width, bar, left, right = 900, 9, 380, 120
    scale = (width - left - right) / 100.0
    pitch = 2 * bar + 8
    lines = [svg_header(width, len(rows) * pitch + 50),
             f'<text x="{left}" y="14">share of the measured roofline: ggc (blue), '
             f'best peer (grey)</text>']
    for i, r in enumerate(rows):
        y = 24 + i * pitch
        lines.append(f'<text x="{left - 6}" y="{y + bar + 3}" text-anchor="end">{r["case"]}</text>')
        for j, (name, color) in enumerate((("ggc", "#37c"), (r["best_peer"], "#999"))):
            share = 100.0 * r["floor_us"] / r["us"][name]
            lines.append(f'<rect x="{left}" y="{y + j * bar}" width="{share * scale:.1f}" '
                         f'height="{bar}" fill="{color}"/>')
            lines.append(f'<text x="{left + share * scale + 4:.1f}" y="{y + j * bar + 8}" '
                         f'font-size="9">{share:.0f}% {name}</text>')
    bottom = len(rows) * pitch + 30
    for share, dash in ((100.0, ""), (target, ' stroke-dasharray="4"')):
        x = left + share * scale
        lines.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{bottom}" '
                     f'stroke="#000"{dash}/>')
        lines.append(f'<text x="{x:.1f}" y="{bottom + 12}" text-anchor="middle">{share:.0f}%</text>')
    write_svg(path, lines)


def chosen_cases(text):
    """The CASES whose name contains one of `text`'s comma-separated parts,
    in any case (all where `text` is empty); SystemExit naming --cases and
    the case names where none matches."""
    parts = [p.strip().lower() for p in text.split(",")]
    cases = [c for c in CASES if any(p in c[0].lower() for p in parts)]
    if not cases:
        names = "; ".join(label for label, _, _ in CASES)
        raise SystemExit(f"bench_peers.py: --cases {text!r} matches no case; the cases: {names}")
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="",
                        help="only cases whose name contains one of these "
                             "(comma-separated, any case)")
    parser.add_argument("--json", help="write every number here")
    parser.add_argument("--svg", help="draw ggc's speedup over the best peer here")
    parser.add_argument("--roofline-svg",
                        help="draw ggc's and the best peer's share of the roofline here")
    parser.add_argument("--from-json",
                        help="draw --svg / --roofline-svg from an earlier run's --json "
                             "instead of measuring (no GPU needed)")
    args = parser.parse_args()
    if args.from_json:
        if not (args.svg or args.roofline_svg):
            parser.error("--from-json draws --svg and/or --roofline-svg: give one")
        with open(args.from_json) as f:
            draw(json.load(f)["rows"], args)
        return
    cases = chosen_cases(args.cases)
    for name, why in (("deep_gemm", DG_WHY), ("deep_gemm_v1", DG1_WHY)):
        if why:
            print(f"{name} not available: {why}")
    torch.manual_seed(0)
    ceiling = ceilings()
    print(f"{torch.cuda.get_device_name()}: measured ceilings bf16 "
          f"{ceiling['bf16_tflops']:.0f} TFLOPS, fp8 {ceiling['fp8_tflops']:.0f} TFLOPS, "
          f"copy {ceiling['bytes_per_s'] / 1e12:.2f} TB/s", flush=True)
    rows = []
    for label, dtype, build in cases:
        rows.append(run_case(label, dtype, build, ceiling))
        # Written after each case, so a run cut short keeps what it measured.
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"device": torch.cuda.get_device_name(), "ceiling": ceiling,
                           "rows": rows}, f, indent=1)
        draw(rows, args)


def draw(rows, args):
    """The pictures main's options ask for."""
    if args.svg:
        svg(rows, args.svg)
    if args.roofline_svg:
        roofline_svg(rows, args.roofline_svg)


if __name__ == "__main__":
    main()
