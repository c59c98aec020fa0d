"""Where ggc's FP8 weight gradient (k_grouped, 1x128 scales over the
tokens on both sides) spends its time against DeepGEMM's
k_grouped_fp8_gemm_nt_contiguous: variants that leave one cost out or
change one choice, interleaved in one run (#40).

    python3 benchmarks/probes/wgrad_fp8_variants.py [--variants NAME,NAME] [--all-shapes]
    ncu --profile-from-start off --metrics M \
        python3 benchmarks/probes/wgrad_fp8_variants.py --profile VARIANT

Variants (each a @ggc.jit kernel of the same product):
- default: what ops.grouped_gemm(k_offsets=, accumulate=True) runs;
- no accumulate: out written, not read (the accumulation's read);
- B scales MN-major ([KB, N] storage, as DeepGEMM takes them);
- per-tensor scales: one-level accumulation, no per-block promotion (the
  main loop's ceiling with this tile; a different product, for timing);
- B scales per tensor: A's row scales only (what B's column scales cost);
- STAGES=3: fewer stages (the default takes 4);
- cluster 2x1: CTA pairs of neighbouring M blocks sharing B's tile by
  TMA multicast (half of B's reads from L2), on the chosen tile (128x160
  pairs are refused with these K-major B scales).
"""

import argparse
import os
import random
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import ops  # noqa: E402
from bench_grouped_gemm import runnable, time_interleaved  # noqa: E402
from profile_fp8_contiguous import launch_for_profiler  # noqa: E402
from bench_training import (DG, DG_WHY, FP8_WGRAD_CASES, deepgemm_wgrad,  # noqa: E402
                            quantise_per_128_tokens)


@ggc.jit
def wgrad(a: gl.KMajor, b: gl.KMajor, groups: gl.Offsets, sa: gl.Scale, sb: gl.Scale,
          out: gl.Out, A_KIND: gl.constexpr = "block", B_KIND: gl.constexpr = "block1x128",
          ACC: gl.constexpr = True, STAGES: gl.constexpr = None,
          CLUSTER_M: gl.constexpr = None):
    gl.store(out, gl.grouped_dot(a, b, groups, a_scale=sa, b_scale=sb, a_scale_kind=A_KIND,
                                 b_scale_kind=B_KIND), accumulate=ACC)


def inputs(g, m, n, per_group, seed=0):
    """DeepGEMM's test layout of a weight gradient's quantised operands:
    G groups of about `per_group` tokens (0.7-1.3x, 128-aligned). Returns
    the group sizes, their offsets, dY and X as f8 with [tokens / 128, C]
    scales, and ggc's K-major operands a [M, tokens] and b [N, tokens]."""
    rng = random.Random(seed)
    ks = [-(-max(1, int(per_group * rng.uniform(0.7, 1.3))) // 128) * 128 for _ in range(g)]
    dy_q, dy_s = quantise_per_128_tokens(torch.randn(sum(ks), m, device="cuda").bfloat16())
    x_q, x_s = quantise_per_128_tokens(torch.randn(sum(ks), n, device="cuda").bfloat16())
    offsets = torch.tensor([0] + ks, device="cuda").cumsum(0).to(torch.int32)
    return ks, offsets, (dy_q, dy_s), (x_q, x_s), dy_q.t().contiguous(), x_q.t().contiguous()


def case(g, m, n, per_group, variants, seed=0, profile=None):
    ks, offsets, (dy_q, dy_s), (x_q, x_s), a, b = inputs(g, m, n, per_group, seed)
    total = sum(ks)
    # The scales as ops.grouped_gemm hands them to its kernel, with their kinds.
    sa, a_kind = ops._k_grouped_scale_kind("a", dy_s.t(), m, g, None)
    sb_k, bk_kind = ops._k_grouped_scale_kind("b", x_s.t().contiguous(), n, g, None)
    sb_mn, bmn_kind = ops._k_grouped_scale_kind("b", x_s.t(), n, g, None)
    ones = torch.ones(g, device="cuda")
    d = torch.randn(g, m, n, device="cuda")
    kinds = dict(A_KIND=a_kind, B_KIND=bk_kind)
    fns = {
        "default": lambda: wgrad(a, b, offsets, sa, sb_k, d, **kinds),
        "no accumulate": lambda: wgrad(a, b, offsets, sa, sb_k, d, ACC=False, **kinds),
        "B scales MN-major": lambda: wgrad(a, b, offsets, sa, sb_mn, d, A_KIND=a_kind,
                                           B_KIND=bmn_kind),
        "per-tensor scales": lambda: wgrad(a, b, offsets, ones, ones, d, A_KIND="tensor",
                                           B_KIND="tensor"),
        "B scales per tensor": lambda: wgrad(a, b, offsets, sa, ones, d, A_KIND=a_kind,
                                                B_KIND="tensor"),
        "STAGES=3": lambda: wgrad(a, b, offsets, sa, sb_k, d, STAGES=3, **kinds),
        "cluster 2x1": lambda: wgrad(a, b, offsets, sa, sb_k, d, CLUSTER_M=2, **kinds),
    }
    unknown = sorted(variants - set(fns) - {"deep_gemm"})
    if unknown:
        sys.exit(f"wgrad_fp8_variants.py: --variants names no variant {unknown}; "
                 f"choose from {sorted(fns)}")
    if variants:
        fns = {name: fn for name, fn in fns.items() if name == "default" or name in variants}
    if DG is not None:
        fns["deep_gemm"] = deepgemm_wgrad(dy_q, dy_s, x_q, x_s, offsets, ks, d)
    else:
        print(f"deep_gemm skipped: {DG_WHY}")
    usable = runnable(fns)
    if profile is not None:
        if profile not in usable:
            sys.exit(f"wgrad_fp8_variants.py: --profile must name a variant that runs, of "
                     f"{sorted(usable)}; got {profile!r}")
        launch_for_profiler(usable[profile])
        return
    if "default" not in usable:
        return
    times = time_interleaved(usable)
    flops = 2.0 * m * n * total
    for name, us in times.items():
        print(f"G{g} M{m} N{n} tokens {total:6}  {name:24} {us:9.1f} us "
              f"{flops / us / 1e6:6.0f} TFLOPS  {times['default'] / us:5.2f}x default",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="",
                        help="comma-separated variant names to time beside the default")
    parser.add_argument("--all-shapes", action="store_true",
                        help="DeepGEMM's six sm90 shapes (bench_training's), not three")
    parser.add_argument("--profile", metavar="VARIANT",
                        help="launch only VARIANT (default, deep_gemm, ...) once on the first "
                             "shape, between cudaProfilerStart and Stop, for ncu "
                             "--profile-from-start off")
    args = parser.parse_args()
    variants = {v.strip() for v in args.variants.split(",") if v.strip()}
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), flush=True)
    shapes = (FP8_WGRAD_CASES if args.all_shapes else
              ((4, 4096, 7168, 8192), (16, 4096, 7168, 2048), (16, 7168, 2048, 2048)))
    if args.profile:
        case(*shapes[0], variants | {args.profile}, profile=args.profile)
        return
    for g, m, n, per_group in shapes:
        case(g, m, n, per_group, variants)


if __name__ == "__main__":
    main()
