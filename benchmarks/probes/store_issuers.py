"""Each consumer warpgroup storing its own rows of the staged tile
(`#gg.kernel_plan`'s `store_issuers = warpgroup`) against one issuer for
the tile (`tile`), on the config and plan ggc chooses for each case, with
only that field changed, interleaved in one process (#39, #40):

- the FP8 weight gradient (k_grouped, 1x128 scales over the tokens, f32
  added to `out`), DeepGEMM's sm90 test shapes, beside DeepGEMM's
  `k_grouped_fp8_gemm_nt_contiguous` where it is importable;
- FP8 contiguous forward projections (1x128 / 128x128 block scales),
  ragged groups, beside DeepGEMM's `m_grouped_fp8_gemm_nt_contiguous` on
  uniform groups padded to its alignment where importable;
- BF16 contiguous forward projections.

    python3 benchmarks/probes/store_issuers.py [--cases wgrad,fp8,bf16]

Every variant's output is checked against fp64 (two groups) first.
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
from ggc import ops as ggc_ops  # noqa: E402
from probe_cases import contiguous, report, weight_gradient  # noqa: E402

ISSUERS = ("tile", "warpgroup")


def variants(spec):
    """{issuers: ggc.Kernel} of `spec` (ir.grouped_matmul's arguments) on
    the config ggc chooses, its plan with store_issuers set each way."""
    chosen = ggc.compile_ir(ir.grouped_matmul("k", **spec), emit="gg-config",
                            memory_gbps=ggc.get_memory_gbps())
    attributes = chosen.plans[0]["attributes"]
    plan = attributes["kernel_plan"].replace(", store_issuers = warpgroup", "")
    kernels = {}
    for issuers in ISSUERS:
        text = plan if issuers == "tile" else plan[:-1] + ", store_issuers = warpgroup>"
        kernels[issuers] = ggc.Kernel(ir.grouped_matmul(
            "k", config=attributes["config"], kernel_plan=text, **spec))
    print(f"    {attributes['config']}\n    {plan}", flush=True)
    return kernels


def wgrad_case(g, m, n, per_group):
    w = weight_gradient(g, m, n, per_group)
    print(f"FP8 wgrad G{g} M{m} N{n} tokens {w.total}", flush=True)
    kernels = variants(dict(
        layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk", dtype="f8E4M3FN",
        out_dtype="f32", a_scale="block_mn", b_scale="block1x128_mn", accumulate=True,
        expected_m=ggc_ops.expected_group_tokens(w.total, g)))
    times, errors = w.time_kernels(kernels, torch.randn(g, m, n, device="cuda") * 32)
    report("", times, errors, 2.0 * m * n * w.total)


def contiguous_case(t, g, n, k, fp8):
    print(f"{'FP8' if fp8 else 'BF16'} contiguous T{t} G{g} N{n} K{k}", flush=True)
    case = contiguous(t, g, n, k, fp8)
    kernels = variants(dict(layout="contiguous", num_groups=g, n=n, k=k,
                            expected_m=ggc_ops.mean_hint(t, g, 4096), **case.spec))
    report("", *case.time_kernels(kernels, n), 2.0 * t * n * k)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="wgrad,fp8,bf16")
    args = parser.parse_args()
    cases = args.cases.split(",")
    print(torch.cuda.get_device_name(), flush=True)
    if "wgrad" in cases:
        for g, m, n in ((4, 4096, 7168), (16, 4096, 7168), (16, 7168, 2048)):
            wgrad_case(g, m, n, 8192 * 4 // g)
    if "fp8" in cases:
        for shape in ((8192, 8, 4096, 7168), (8192, 8, 7168, 2048), (32768, 32, 7168, 2048),
                      (16384, 32, 1536, 2048), (16384, 128, 2880, 2880)):
            contiguous_case(*shape, fp8=True)
    if "bf16" in cases:
        for shape in ((8192, 8, 4096, 7168), (16384, 128, 2048, 768)):
            contiguous_case(*shape, fp8=False)


if __name__ == "__main__":
    main()
