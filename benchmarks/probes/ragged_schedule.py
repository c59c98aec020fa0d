"""The persistent schedule's tile walk on ragged contiguous groups, against
DeepGEMM 2.6.1 on the same groups padded (#39, twenty-fifth session):
kernels alone, interleaved.

    python benchmarks/probes/ragged_schedule.py [--cases "DTYPE,T,G,N,K,SEED;..."]

Variants (DeepGEMM walks its padded M blocks in bands of 8 or 16 across
group boundaries; ggc walks each group's tiles):
  ggc               ggc.ops.grouped_gemm as a caller without a hint gets it
                    (since the twenty-fifth session: with mean_hint's)
  ggc no hint       the kernel compiled without expected_m (what ggc.ops
                    gave such a caller before; "ggc" in that session's
                    calls 2 and 3)
  ggc hint          with expected_m = ggc.ops.mean_hint(T, G, 4096)
  ggc nf            each group's N blocks first (gg-schedule-groups' order)
  ggc bandS         each group's M blocks first in bands of S
  ggc hint 128      the hint with 128x128 tiles (16-bit)
  ggc hint 256      the hint with 128x256 tiles (16-bit)
  ggc hint 256c2    the same in pairs of CTAs sharing B (cluster = [2, 1])
  ggc hint 192      the hint with 128x192 tiles, 5 stages (16-bit)
  ggc hint bandS    the hint, M blocks in bands of S (the chosen tiles)
  ggc hint last     the hint, B's tiles kept in L2 (b_cache = evict_last);
                    with bands: hint band8 last, hint band16 last
  deep_gemm         DeepGEMM on the padded layout (zero padding rows)
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_grouped_gemm import fp8, ragged_groups, time_interleaved  # noqa: E402
import ggc  # noqa: E402 (bench_grouped_gemm put python/ on the path)
from bench_peers import DG, DG_WHY, mn_major, pad_rows, padded_layout  # noqa: E402
from ggc import ir, ops  # noqa: E402

CASES = ("fp8,8192,8,7168,2048,0;fp8,32768,32,7168,2048,3;fp8,8192,8,4096,7168,0;"
         "fp8,16384,32,3072,8192,0;fp8,32768,32,4096,7168,3;fp8,4096,64,2048,7168,0;"
         "bf16,8192,8,4096,7168,0;bf16,4096,8,28672,4096,5;bf16,16384,128,1536,2048,6")
KERNELS = {"no hint": dict(), "nf": dict(tile_order="n_fastest"), "band8": dict(m_band=8),
           "band16": dict(m_band=16), "band0": dict(m_band=0),
           "hint 128": dict(config="#gg.config<block = [128, 128, 64], stages = 6, "
                                   "cluster = [1, 1], sms = 132>"),
           "hint 256": dict(config="#gg.config<block = [128, 256, 64], stages = 4, "
                                   "cluster = [1, 1], sms = 132>"),
           "hint 256c2": dict(config="#gg.config<block = [128, 256, 64], stages = 4, "
                                     "cluster = [2, 1], sms = 132>"),
           "hint 192": dict(config="#gg.config<block = [128, 192, 64], stages = 5, "
                                   "cluster = [1, 1], sms = 132>"),
           "hint band8": dict(m_band=8), "hint band16": dict(m_band=16),
           "hint last": dict(b_cache="evict_last"),
           "hint band8 last": dict(m_band=8, b_cache="evict_last"),
           "hint band16 last": dict(m_band=16, b_cache="evict_last")}


def chosen_order(g, n, k, spec, hint):
    """The tile order gg-schedule-groups chooses for this kernel with the hint."""
    text = ir.grouped_matmul("k", layout="contiguous", num_groups=g, n=n, k=k, expected_m=hint,
                             **spec)
    schedule = ggc.compile_ir(text, emit="gg-config", arch=ggc.compiler.get_target(),
                              memory_gbps=ggc.compiler.get_memory_gbps()
                              ).plans[0]["attributes"]["schedule"]
    return schedule.split("order = ")[1].split(",")[0].split(">")[0]


def case(dtype, t, g, n, k, seed, kernels):
    sizes, _, offsets = ragged_groups(t, g, seed)
    rows, src, tags = padded_layout(sizes)
    hint = ops.mean_hint(t, g, 4096)
    out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    padded_out = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
    if dtype == "fp8":
        a, b = fp8(t, k), fp8(g, n, k)
        sa = torch.rand(t, k // 128, device="cuda") + 0.5
        sb = torch.rand(g, -(-n // 128), k // 128, device="cuda") + 0.5
        sa_mn = mn_major(sa)  # a view of [K / 128, T rounded up to 4] storage
        sa_storage = sa_mn.transpose(0, 1).as_strided(
            (k // 128, sa_mn.stride(1)), (sa_mn.stride(1), 1))
        call = dict(a_scale=sa_mn, b_scale=sb)
        spec = dict(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block")
        run = lambda kern: (lambda: kern(a, b, offsets, sa_storage, sb, out))  # noqa: E731
        ap, sap = pad_rows(a, src), mn_major(pad_rows(sa, src))
        peer = lambda: DG.m_grouped_fp8_gemm_nt_contiguous((ap, sap), (b, sb), padded_out, tags)  # noqa: E731
    else:
        a = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
        call, spec = {}, {}
        run = lambda kern: (lambda: kern(a, b, offsets, out))  # noqa: E731
        ap = pad_rows(a, src)
        peer = lambda: DG.m_grouped_bf16_gemm_nt_contiguous(ap, b, padded_out, tags)  # noqa: E731
    fns = {"ggc": lambda: ops.grouped_gemm(a, b, offsets=offsets, out=out, **call),
           "ggc hint": lambda: ops.grouped_gemm(a, b, offsets=offsets, out=out,
                                                expected_m=hint, **call)}
    order = None  # the chosen tile order, asked for once
    for name in kernels:
        if "config" in KERNELS[name] and dtype == "fp8":
            continue  # FP8 already takes 128x128 at every hint
        options = dict(KERNELS[name], expected_m=hint) if name.startswith("hint") else KERNELS[name]
        if name.startswith("hint") and not {"config", "tile_order", "m_band"} & set(options):
            # A stated schedule replaces the chosen one whole: keep its tile
            # order (bands walk M blocks first by definition).
            order = order or chosen_order(g, n, k, spec, hint)
            options["tile_order"] = order
        kern = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=g, n=n, k=k,
                                            **spec, **options))
        fns[f"ggc {name}"] = run(kern)
    if DG is not None:
        fns["deep_gemm"] = peer
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    times = time_interleaved(fns)
    print(f"{dtype} T{t} G{g} N{n} K{k} seed {seed} (hint {hint})", flush=True)
    for name, us in times.items():
        vs = f"  deep_gemm / this {times['deep_gemm'] / us:.3f}x" if "deep_gemm" in times else ""
        print(f"  {name:12} {us:9.1f} us{vs}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=CASES,
                        help="'DTYPE,T,G,N,K,SEED;...', DTYPE fp8 or bf16")
    parser.add_argument("--kernels", default="no hint,nf,band8,band16,band0",
                        help=f"ggc kernel variants beside ggc and ggc hint, of {list(KERNELS)}")
    args = parser.parse_args()
    if DG is None:
        print(f"deep_gemm not importable ({DG_WHY}): ggc variants only")
    for spec in args.cases.split(";"):
        dtype, *dims = spec.split(",")
        case(dtype, *(int(v) for v in dims),
             kernels=[v for v in args.kernels.split(",") if v])


if __name__ == "__main__":
    main()
