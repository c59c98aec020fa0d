"""Tiles for the BF16 backward's own shapes (#40: "input-gradient and
weight-gradient kernels chosen for their own shapes"): the input gradient
(contiguous, B read as `kn`) and the weight gradient (k_grouped, bf16
out) of bench_training's BF16 projections, each with the tiles
gg-select-config chooses today against other tiles, beside
`torch._grouped_mm`'s kernel for the same product, interleaved in one
process.

    python3 benchmarks/probes/training_tiles.py [--cases Mixtral]

Every output is poisoned with NaN, then checked against fp64 on its first
two groups before timing.
"""
import argparse
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from ggc.ops import mean_hint  # noqa: E402
from probe_cases import bf16_projections, rel_err, report  # noqa: E402

# (label, block M, block N, stages, cluster M): None is gg-select-config's.
TILES = (None, (128, 128, 6, 1), (128, 256, 3, 1), (256, 128, 3, 1), (128, 192, 4, 1),
         (128, 256, 3, 2))


def kernel(spec, tile, sms):
    config = None
    if tile:
        bm, bn, stages, cm = tile
        config = (f"#gg.config<block = [{bm}, {bn}, 64], stages = {stages}, "
                  f"cluster = [{cm}, 1], sms = {sms}>")
    return ggc.Kernel(ir.grouped_matmul("k", config=config, **spec))


def chosen(kern):
    found = re.search(r"#gg\.config<[^>]*>", kern.asm.get("gg-config", ""))
    return found.group(0) if found else "?"


def time_part(name, spec, run, ref, out_shape, flops, torch_fn, sms, hint=None):
    """Poisons, runs and checks every tile of `spec` (and, given `hint`,
    the tiles chosen with that expected_m), then times them with torch's
    kernel."""
    fns, errors = {}, {}
    for tile in TILES + (("hint",) if hint else ()):
        label = ("chosen" if tile is None else f"chosen, hint {hint}" if tile == ("hint",)
                 else "{}x{} s{} c{}".format(*tile))
        try:
            if tile == ("hint",):
                kern = ggc.Kernel(ir.grouped_matmul("k", **spec, expected_m=hint))
                print(f"    {label}: {chosen(kern)}", flush=True)
            else:
                kern = kernel(spec, tile, sms)
        except Exception as e:  # noqa: BLE001 - a tile the compiler refuses
            print(f"    {label}: refused: {str(e).splitlines()[0][:160]}", flush=True)
            continue
        if tile is None:
            print(f"    chosen: {chosen(kern)}", flush=True)
        out = torch.full(out_shape, float("nan"), device="cuda", dtype=torch.bfloat16)
        run(kern, out)
        torch.cuda.synchronize()
        errors[label] = ref(out)
        fns[label] = lambda kern=kern, out=out: run(kern, out)
    fns["torch"] = torch_fn
    from bench_grouped_gemm import time_interleaved
    report(name, time_interleaved(fns), errors, flops)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for p in bf16_projections(args.cases):
        label, t, g, n, k = p.label, p.t, p.g, p.n, p.k
        sizes, ends, offsets, x, w, dy = p.sizes, p.ends, p.offsets, p.x, p.w, p.dy
        rows = sizes[0] + sizes[1]
        dx_ref = p.input_gradient_reference()
        dgrad = dict(layout="contiguous", num_groups=g, n=k, k=n, b_layout="kn",
                     expected_m=mean_hint(t, g, 4096))
        time_part(f"{label} dgrad", dgrad,
                  lambda kern, out: kern(dy, w, offsets, out),
                  lambda out: rel_err(out[:rows], dx_ref), (t, k), 2.0 * t * n * k,
                  lambda: torch._grouped_mm(dy, w, offs=ends), sms)
        dw_ref = torch.stack([dy[:sizes[0]].double().T @ x[:sizes[0]].double(),
                              dy[sizes[0]:rows].double().T @ x[sizes[0]:rows].double()])
        # torch_ops.grouped_mm_grad_w passes no expected_m.
        wgrad = dict(layout="k_grouped", num_groups=g, n=k, k=None, m=n, b_layout="kn")
        time_part(f"{label} wgrad", wgrad,
                  lambda kern, out: kern(dy, x, offsets, out),
                  lambda out: rel_err(out[:2], dw_ref), (g, n, k), 2.0 * t * n * k,
                  lambda: torch._grouped_mm(dy.t(), x, offs=ends), sms,
                  hint=mean_hint(t, g, 4096))


if __name__ == "__main__":
    main()
