"""DeepGEMM's padded layout (the drop-in's m_indices) through the TMA store
pool: ggc's padded_contiguous kernel as chosen (each tile ballots its rows'
tags and stores through the pool where its group's rows lead, else by
thread) against the same kernel with per-thread stores (`direct_stores`:
the kernel before the pool; 16-bit: also 128x256 and 128x128 tiles
each way), ggc's contiguous kernel on the same rows
(equal groups only) and DeepGEMM's kernel (M-major scales of A, where
deep_gemm imports). Groups: `equal` (T/G rows each, no padding rows),
`ragged` (Dirichlet shares, each padded to 128 rows with -1 tags, as
DeepGEMM's tests pad), `gaps` (ragged, with one padding row moved into
the middle of each group's every tile: no tile's rows lead, so every tile
takes the per-thread fallback). Interleaved; outputs checked bit for bit
against the per-thread kernel's, padding rows left as the NaN poison.

    python3 benchmarks/probes/padded_pool.py [--shapes DT,T,G,N,K;...] [--groups equal,ragged,gaps]
        [--walks]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from profile_fp8_contiguous import equal_groups, fp8_operands, mn_major_scales  # noqa: E402
from dropin_gap import deep_gemm_or_none  # noqa: E402

SHAPES = ("f8,8192,8,7168,2048;f8,32768,32,7168,2048;f8,8192,8,4096,7168;"
          "f8,16384,32,3072,8192;bf16,8192,8,4096,7168;bf16,16384,128,2048,768")
ALIGN = 128
WIDE = "#gg.config<block = [128, 256, 64], stages = 0, cluster = [1, 1], sms = 132>"
NARROW = "#gg.config<block = [128, 128, 64], stages = 0, cluster = [1, 1], sms = 132>"


def tags_of(t, g, kind):
    """m_indices of about T rows over G groups, and the row count."""
    if kind == "equal":
        return equal_groups(t, g, "padded_contiguous"), t
    shares = torch.distributions.Dirichlet(torch.ones(g)).sample()
    sizes = (shares * t).long().tolist()
    tags = []
    for gi, size in enumerate(sizes):
        rows = [gi] * size + [-1] * (-(-size // ALIGN) * ALIGN - size)
        if kind == "gaps":
            for start in range(0, size, ALIGN):
                end = min(start + ALIGN, size)
                if end - start > 2:  # a tile's rows then lead no more
                    mid = (start + end) // 2
                    rows[mid] = -1
                    if end < len(rows):
                        rows[end] = gi
        tags += rows
    return torch.tensor(tags, dtype=torch.int32, device="cuda"), len(tags)


def case(dt, t, g, n, k, kind, deep_gemm, walks=False):
    torch.manual_seed(0)
    tags, m = tags_of(t, g, kind)
    fp8 = dt == "f8"
    if fp8:
        (x, sx), (w, sw) = fp8_operands((m,), g, n, k)
        spec = dict(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block")
        extra = (mn_major_scales(sx), sw)
    else:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
        spec, extra = {}, ()
    hint = max(1, m // g)
    hint = 1 << (hint.bit_length() - 1)
    outs, fns = {}, {}

    def out(name):
        return outs.setdefault(name, torch.full((m, n), float("nan"), device="cuda",
                                                dtype=torch.bfloat16))

    def ggc_kernel(name, layout, groups, **more):
        kern = ggc.Kernel(ir.grouped_matmul("k", layout=layout, num_groups=g, n=n, k=k,
                                            expected_m=hint if fp8 else None, **spec, **more))
        o = out(name)
        fns[name] = lambda: kern(x, w, groups, *extra, o)

    ggc_kernel("padded, pool (rule)", "padded_contiguous", tags)
    ggc_kernel("padded, direct stores", "padded_contiguous", tags, direct_stores=True)
    if not fp8:
        # 16-bit padded tiles: 128x256 (the rule's) against 128x128, each
        # with per-thread stores and the pool.
        ggc_kernel("padded 128x256, direct", "padded_contiguous", tags, direct_stores=True,
                   config=WIDE)
        ggc_kernel("padded 128x256, pool", "padded_contiguous", tags, config=WIDE)
        ggc_kernel("padded 128x128, direct", "padded_contiguous", tags, direct_stores=True,
                   config=NARROW)
        ggc_kernel("padded 128x128, pool", "padded_contiguous", tags, config=NARROW)
        if walks:
            # The padded walk (M first in bands over the whole row space)
            # against N first and narrower bands, on the rule's tiles.
            for order, band in (("n_fastest", None), ("m_fastest", 8), ("m_fastest", 0)):
                label = f"padded, {order}" + (f" band {band}" if band is not None else "")
                ggc_kernel(label, "padded_contiguous", tags, tile_order=order, m_band=band)
    if kind == "equal":
        ggc_kernel("contiguous", "contiguous", equal_groups(t, g, "contiguous"))
    if deep_gemm is not None:
        o = out("deep_gemm")
        if fp8:
            from ggc.deepgemm.utils.layout import get_mn_major_tma_aligned_tensor
            sx_dg = get_mn_major_tma_aligned_tensor(sx)
            fns["deep_gemm"] = lambda: deep_gemm.m_grouped_fp8_gemm_nt_contiguous(
                (x, sx_dg), (w, sw), o, tags)
        else:
            fns["deep_gemm"] = lambda: deep_gemm.m_grouped_bf16_gemm_nt_contiguous(x, w, o, tags)
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    base = outs["padded, direct stores"]
    valid = tags >= 0
    for name, o in outs.items():
        if name == "deep_gemm":
            ref = base[valid].double()
            err = ((o[valid].double() - ref).norm() / ref.norm()).item()
            print(f"  deep_gemm against ggc: relative difference {err:.2e}", flush=True)
            continue
        same = torch.equal(o[valid], base[valid])
        poison = bool(torch.isnan(o[~valid]).all())
        print(f"  {name:24s} bits equal {same}, padding rows untouched {poison}", flush=True)
    times = time_interleaved(fns)
    ref_us = times["padded, direct stores"]
    print(f"{dt} T={m} G={g} N={n} K={k} groups {kind}:", flush=True)
    for name, us in times.items():
        print(f"  {name:24s} {us:8.1f} us  {ref_us / us:.3f}x direct stores", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=SHAPES)
    parser.add_argument("--groups", default="equal,ragged,gaps")
    parser.add_argument("--walks", action="store_true",
                        help="16-bit cases: also the padded kernel walked N first and in "
                             "bands of 8 M blocks and none")
    args = parser.parse_args()
    deep_gemm = deep_gemm_or_none()
    for shape in args.shapes.split(";"):
        dt, *sizes = shape.split(",")
        for kind in args.groups.split(","):
            case(dt, *(int(v) for v in sizes), kind, deep_gemm, args.walks)


if __name__ == "__main__":
    main()
