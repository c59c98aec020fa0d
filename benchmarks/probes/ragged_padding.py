"""Where FP8 contiguous's ragged-groups gap against DeepGEMM comes from
(#39, twenty-fifth session): the same ragged groups, kernels alone,
interleaved.

    python benchmarks/probes/ragged_padding.py [--cases "T,G,N,K,SEED;..."]

Variants, on Dirichlet group sizes (bench_grouped_gemm.ragged_groups):
  ggc ragged        ggc on the groups as they are (the benchmark's case)
  ggc padded zero   ggc on DeepGEMM's padded layout, each group taken
                    as its padded size (whole tiles, zero padding rows)
  ggc padded rand   the same with random padding rows
  dg zero           DeepGEMM 2.6.1 on the padded layout (zero padding:
                    bench_peers's input)
  dg rand           DeepGEMM with random padding rows
"dg zero" against "dg rand" says whether zero rows make DeepGEMM faster
(a power-limited card runs MMAs of zeros at higher clocks); "ggc padded
zero" against "dg zero" compares the kernels on identical work and data;
"ggc ragged" against "ggc padded zero" is what ggc's partial tiles cost.
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_grouped_gemm import fp8, ragged_groups, time_interleaved  # noqa: E402
from bench_peers import DG, DG_WHY, mn_major, pad_rows, padded_layout  # noqa: E402
from ggc import ops  # noqa: E402


def case(t, g, n, k, seed):
    sizes, _, offsets = ragged_groups(t, g, seed)
    x, w = fp8(t, k), fp8(g, n, k)
    sx = torch.rand(t, k // 128, device="cuda") + 0.5
    sw = torch.rand(g, -(-n // 128), k // 128, device="cuda") + 0.5
    rows, src, tags = padded_layout(sizes)
    padded_sizes = [-(-s // 128) * 128 for s in sizes]
    padded_offsets = torch.tensor([0] + padded_sizes, device="cuda").cumsum(0).to(torch.int32)
    inputs = {}
    for name, fill_x, fill_s in (
            ("zero", lambda *s: torch.zeros(*s, device="cuda").to(torch.float8_e4m3fn),
             lambda *s: torch.zeros(*s, device="cuda")),
            ("rand", lambda *s: fp8(*s), lambda *s: torch.rand(*s, device="cuda") + 0.5)):
        inputs[name] = (pad_rows(x, src, fill_x), mn_major(pad_rows(sx, src, fill_s)))
    d = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    sx_mn = mn_major(sx)
    fns = {}
    fns["ggc ragged"] = lambda: ops.grouped_gemm(x, w, offsets=offsets, a_scale=sx_mn,
                                                 b_scale=sw, out=d)
    outs = {}
    for name, (xp, sxp) in inputs.items():
        outs[name] = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
        fns[f"ggc padded {name}"] = (lambda xp=xp, sxp=sxp, o=outs[name]: ops.grouped_gemm(
            xp, w, offsets=padded_offsets, a_scale=sxp, b_scale=sw, out=o))
        if DG is not None:
            fns[f"dg {name}"] = (lambda xp=xp, sxp=sxp, o=outs[name]:
                                 DG.m_grouped_fp8_gemm_nt_contiguous((xp, sxp), (w, sw), o, tags))
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    times = time_interleaved(fns)
    label = f"T{t} G{g} N{n} K{k} seed {seed}"
    print(f"{label}: sizes {sizes}; padded rows {rows}", flush=True)
    base = times.get("dg zero")
    for name, us in times.items():
        vs = f"  dg zero / this {base / us:.3f}x" if base else ""
        print(f"  {name:18} {us:9.1f} us{vs}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="8192,8,7168,2048,0;8192,8,4096,7168,0;"
                                           "32768,32,7168,2048,3",
                        help="FP8 contiguous shapes 'T,G,N,K,SEED;...' (SEED: the groups' "
                             "Dirichlet draw)")
    args = parser.parse_args()
    if DG is None:
        print(f"deep_gemm not importable ({DG_WHY}): ggc variants only")
    for spec in args.cases.split(";"):
        case(*(int(v) for v in spec.split(",")))


if __name__ == "__main__":
    main()
