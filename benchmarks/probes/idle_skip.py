"""Idle warpgroups skipping their wgmma (gg's `idle_warpgroups = skip`)
against computing, on FP8 contiguous groups at long K, where
gg-eliminate-padding keeps `compute` (#39, sixtieth session: skip ran 12%
slower on T8192 G8 N4096 K7168, though only 6 of its 69 M blocks have an
idle warpgroup).

    python3 benchmarks/probes/idle_skip.py time [T,G,N,K,SEED [SCHEDULE]]
    ncu --clock-control none --profile-from-start off --metrics M \\
        python3 benchmarks/probes/idle_skip.py VARIANT [T,G,N,K,SEED [SCHEDULE]]

SEED as bench_grouped_gemm.ragged_groups: Dirichlet groups, equal ones
where negative. VARIANT is `compute` or `skip` (the chosen tile and plan
with the caller's row hint, ggc.ops.mean_hint, as ggc.ops passes it);
`time` times both interleaved and checks that their outputs match.
SCHEDULE states both variants' schedule as ggc.ir.grouped_matmul's
keywords, e.g. `m_band=16,b_cache=evict_last` or `tile_order=n_fastest`
(the sixty-first session found skipping read 21% more from DRAM with the
same loads: a schedule whose tiles share less by timing may lose less).
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from ggc.ops import mean_hint  # noqa: E402
from bench_grouped_gemm import fp8, ragged_groups, time_interleaved  # noqa: E402
from profile_fp8_contiguous import launch_for_profiler  # noqa: E402

VARIANTS = ("compute", "skip")


def schedule_keywords(text):
    """"m_band=16,b_cache=evict_last" -> {"m_band": 16, "b_cache": "evict_last"}."""
    keywords = {}
    for item in filter(None, text.split(",")):
        name, value = item.split("=")
        keywords[name] = int(value) if value.isdigit() else value
    return keywords


def kernels(t, g, n, k, seed, schedule=None):
    """{variant: (call, out)} over one set of operands and groups."""
    sizes, _, offsets = ragged_groups(t, g, seed)
    kb = -(-k // 128)
    a, b = fp8(t, k), fp8(g, n, k)
    a_scale = torch.rand(kb, (t + 3) // 4 * 4, device="cuda") + 0.5
    b_scale = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
    built = {}
    for variant in VARIANTS:
        out = torch.full((t, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        kern = ggc.Kernel(ir.grouped_matmul(
            "k", layout="contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
            a_scale="block_mn", b_scale="block", expected_m=mean_hint(t, g, 4096),
            idle_warpgroups=variant, **(schedule or {})))
        built[variant] = (lambda kern=kern, out=out: kern(a, b, offsets, a_scale, b_scale, out),
                          out)
    idle = sum(1 for s in sizes if 0 < s % 128 <= 64)
    tiles = sum(-(-s // 128) for s in sizes)
    print(f"groups {sizes}: {idle} of {tiles} M blocks with an idle warpgroup")
    return built


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "time"
    t, g, n, k, seed = (8192, 8, 4096, 7168, 0)
    if len(sys.argv) > 2:
        t, g, n, k, seed = (int(v) for v in sys.argv[2].split(","))
    torch.manual_seed(0)
    schedule = schedule_keywords(sys.argv[3]) if len(sys.argv) > 3 else None
    built = kernels(t, g, n, k, seed, schedule)
    if which != "time":
        if which not in built:
            sys.exit(f"idle_skip.py: VARIANT must be one of {VARIANTS} or time, got {which!r}")
        launch_for_profiler(built[which][0])
        return
    for call, _ in built.values():
        call()
    torch.cuda.synchronize()
    same = torch.equal(*(out.nan_to_num() for _, out in built.values()))
    print(f"outputs bit-identical: {same}")
    times = time_interleaved({v: call for v, (call, _) in built.items()})
    flops = 2.0 * t * n * k
    for variant, us in times.items():
        print(f"T={t} G={g} N={n} K={k} seed {seed} {variant:8s} {us:8.1f} us "
              f"{flops / us / 1e6:7.1f} TFLOPS  compute/this {times['compute'] / us:.3f}x")


if __name__ == "__main__":
    main()
