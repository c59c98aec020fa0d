"""BF16 training GEMMs with each tile's epilogue deferred beside the next
tile's first wgmma (`epilogue_blocks = 1`, one-level kernels since
1e89a21) against the chosen tiles, which run it at each tile's end (#40):
the weight gradient reduces a group's few hundred tokens a tile, so its
epilogue is a large share of a tile's time. Explicit configs and plans of
one compiler beside `torch._grouped_mm`'s kernel, interleaved; every
output first compared with the chosen kernel's (the same K order: the
same bits).

    python3 benchmarks/probes/deferred_one_level.py [--cases SUBSTRING] [--gemms wgrad,fwd]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_training import BF16_CASES, projection_problem  # noqa: E402
from bf16_training_gemm import gemm_pairs  # noqa: E402

# label: (block N, stages, epilogue_blocks); 128 rows a tile throughout.
TILES = {"128x128 s6 at end": (128, 6, 0), "128x128 s6 deferred": (128, 6, 1),
         "128x192 s4 at end": (192, 4, 0), "128x192 s4 deferred": (192, 4, 1)}


def kernel(gemm, g, n, k, block_n, stages, epilogue_blocks):
    """ggc's kernel for the projection's (N, K) `gemm` on 128 x block_n tiles."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    spec = dict(config=f"#gg.config<block = [128, {block_n}, 64], stages = {stages}, "
                       f"cluster = [1, 1], sms = {sms}>",
                kernel_plan="#gg.kernel_plan<promotion = serial, scales = none, registers = "
                            f"[40, 232], staging = swizzled, epilogue_blocks = {epilogue_blocks}>")
    if gemm == "wgrad":  # dW[g] = dy[g]^T x[g]: tokens reduced, both token-major
        return ggc.Kernel(ir.grouped_matmul("k", layout="k_grouped", num_groups=g, n=k, k=None,
                                            m=n, b_layout="kn", dtype="bf16", out_dtype="bf16",
                                            **spec))
    return ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=g, n=n, k=k,
                                        dtype="bf16", out_dtype="bf16", **spec))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    parser.add_argument("--gemms", default="wgrad", help="comma-separated: wgrad, fwd")
    args = parser.parse_args()
    gemms = args.gemms.split(",")
    unknown = set(gemms) - {"wgrad", "fwd"}
    if unknown:
        sys.exit(f"deferred_one_level.py: --gemms takes wgrad and fwd, got {sorted(unknown)}")
    print(torch.cuda.get_device_name(), flush=True)
    for label, t, g, n, k, loads in BF16_CASES:
        if args.cases not in label:
            continue
        _, _, offsets, x, w, dy = projection_problem(t, g, n, k, loads, seed=0)
        x, w = x.detach(), w.detach()
        pairs = gemm_pairs(x, w, dy, offsets)
        for gemm in gemms:
            chosen, theirs = pairs[gemm]
            want = chosen()
            fns = {"chosen": chosen, "torch": theirs}
            for name, (block_n, stages, blocks) in TILES.items():
                try:
                    kern = kernel(gemm, g, n, k, block_n, stages, blocks)
                except Exception as e:  # noqa: BLE001 - a refusal is reported
                    print(f"  {label} {gemm} {name}: {str(e).splitlines()[0][:160]}")
                    continue
                out = torch.full_like(want, float("nan"))
                call = ((lambda kern=kern, out=out: kern(dy, x, offsets, out)) if gemm == "wgrad"
                        else (lambda kern=kern, out=out: kern(x, w, offsets, out)))
                call()
                torch.cuda.synchronize()
                same = torch.equal(out, want)
                diff = ((out.float() - want.float()).norm() / want.float().norm()).item()
                print(f"  {label} {gemm} {name}: {'same bits' if same else f'differs {diff:.1e}'}",
                      flush=True)
                fns[name] = call
            times = time_interleaved(fns)
            print("\n".join(f"{label:44} {gemm:5} {name:22} {us:9.1f} us  chosen "
                            f"{times['chosen'] / us:5.3f}x" for name, us in times.items()),
                  flush=True)


if __name__ == "__main__":
    main()
