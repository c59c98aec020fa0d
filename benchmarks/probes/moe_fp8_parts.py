"""Where the FP8 Qwen3-like layer's time can still go (#38: the FP8 layer
at 1.16-1.24x the BF16 one at T >= 4,096, the target 1.3x). On the
layer's own routing (bench_moe.inputs), graph replay, L2 flushed,
interleaved, us:

- the quantisations (ggc.moe.quant_kernel.rows_mn): the tokens alone, the
  sorted rows gathered from them (source in expert order: the layer's way
  before the scatter), the same gather with the source list sorted (the
  same rows and bytes, read in token order: how much the gather's order
  costs), the sorted rows scattered from the tokens (each token quantised
  once, written to its top_k routes' rows), the same with the tokens'
  scales written once and gathered (the layer's way now; both checked
  bit-identical to the gather), and SwiGLU's output quantised;
- the two FP8 GEMMs as the layer calls them, as gg-select-config chooses,
  with `idle_warpgroups = skip` (a group's last tile: the warpgroup
  whose 64 rows are all past the group's end skips its wgmma), walking
  each group's N blocks first (`tile_order = n_fastest`), the down
  projection as the layer's kernel with the routing weight in its
  epilogue (`routed`), and with each of `--configs`, and the BF16 GEMMs the same way; the GEMMs are
  timed eagerly (captured, they failed on replay here:
  docs/performance-history.md, twentieth session).

    python3 benchmarks/probes/moe_fp8_parts.py [--tokens 4096,16384] [--only quant|gemm]
        [--shape qwen3|mixtral|deepseek|gptoss] [--case up-fp8] [--configs "128,192,128,4,serial;128,128,128,6"]
        [--launches 3]   # untimed, for ncu
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_moe import SHAPES, captured, inputs, time_interleaved_flushed  # noqa: E402
from bench_grouped_gemm import config_text, extra  # noqa: E402
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from ggc.moe import kernels, layer, quant_kernel, routes  # noqa: E402


def quantisations(x, source, position, inter, rounds):
    m = source.shape[0]
    h = torch.randn(m, 2 * inter, device="cuda").to(torch.bfloat16)
    ordered = torch.sort(source).values
    cases = {"tokens": lambda: quant_kernel.rows_mn(x),
             "gathered": lambda: quant_kernel.rows_mn(x, source),
             "gathered, source sorted": lambda: quant_kernel.rows_mn(x, ordered),
             "scattered": lambda: quant_kernel.rows_mn(x, positions=position),
             "scattered, input scales gathered": lambda: quant_kernel.rows_mn(
                 x, positions=position, sources=source),
             "SwiGLU output": lambda: quant_kernel.rows_mn(h, gated=True)}
    calls, outs = {}, {}
    for label, fn in cases.items():
        try:
            calls[label], outs[label], _ = captured(fn)
        except Exception as e:  # noqa: BLE001 - an older compiler lacks the form
            print(f"{label}: not run, {type(e).__name__}: {str(e).splitlines()[0][:100]}")
    times = time_interleaved_flushed(calls, rounds)
    gq, gs = outs["gathered"]
    for label in ("scattered", "scattered, input scales gathered"):
        if label in outs:
            sq, ss = outs[label]
            assert torch.equal(gq.view(torch.uint8), sq.view(torch.uint8)), label
            assert torch.equal(gs[:, :m], ss[:, :m]), label
    return times


def gemm(m, g, n, k, hint, fp8, padding, config=None, order=None):
    """The layer's GEMM as a kernel: as chosen, or `config` (a
    bench_grouped_gemm --configs entry) or the tile `order` overriding the
    choice."""
    spec = dict(layout="contiguous", num_groups=g, n=n, k=k, expected_m=hint,
                idle_warpgroups=padding)
    if order:
        spec.update(tile_order=order)
    if fp8:
        spec.update(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block")
    if config:
        spec.update(config=config_text(config), **extra(config))
    return ggc.Kernel(ir.grouped_matmul("k", **spec))


def gemms(offsets, m, experts, hidden, inter, hint, rounds, only=None, configs=(),
          launches=0):
    """{(GEMM, dtype, padding): us}, outputs checked equal across paddings;
    `only`: 'GEMM-dtype' cases, comma-separated. `launches`: instead of
    timing, launch each variant that many times (for a profiler)."""
    results = {}
    for name, n, k in (("up", 2 * inter, hidden), ("down", hidden, inter)):
        for fp8 in (True, False):
            if only and f"{name}-{'fp8' if fp8 else 'bf16'}" not in only.split(","):
                continue
            if fp8:
                a = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
                b = (torch.randn(experts, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
                sa = torch.rand(-(-k // 128), (m + 3) // 4 * 4, device="cuda") + 0.5
                sb = torch.rand(experts, -(-n // 128), -(-k // 128), device="cuda") + 0.5
                args = (a, b, offsets, sa, sb)
            else:
                a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
                b = torch.randn(experts, n, k, device="cuda").to(torch.bfloat16)
                args = (a, b, offsets)
            calls, outs = {}, {}
            variants = {"as chosen": (None, None, None), "skip": ("skip", None, None),
                        "n_fastest": (None, None, "n_fastest")}
            variants.update({",".join(map(str, c)): (None, c, None) for c in configs})
            for label, (padding, config, order) in variants.items():
                try:
                    kern = gemm(m, experts, n, k, hint, fp8, padding, config, order)
                except ggc.CompilationError as e:
                    print(f"{name} {label}: not compiled, {str(e).splitlines()[0][:100]}")
                    continue
                out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
                # Eager: captured graphs of these kernels failed on replay
                # here (docs/performance-history.md, twentieth session);
                # a launch's host time (~12 us) hides behind the GEMM's.
                calls[label] = lambda kern=kern, out=out: kern(*args, out)
                outs[label] = out
            if name == "down":
                # The layer's own kernel: the routing weight (ones here) in
                # its epilogue.
                routed = kernels.moe_down_routed_fp8 if fp8 else kernels.moe_down_routed
                route = torch.ones(m, device="cuda")
                out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
                calls["routed"] = lambda routed=routed, route=route, out=out: routed(
                    *args, route, out, EXPECTED_M=hint, validate=False)
                outs["routed"] = out
            if launches:
                for label, call in calls.items():
                    for _ in range(launches):
                        call()
                torch.cuda.synchronize()
                continue
            times = time_interleaved_flushed(calls, rounds)
            want = outs["as chosen"].double()
            for label, us in times.items():
                err = ((outs[label].double() - want).norm() / want.norm()).item()
                assert err < 1e-2, (name, label, err)  # other tiles: other sum orders
                results[(name, "fp8" if fp8 else "bf16", label)] = us
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="4096,16384")
    parser.add_argument("--only", choices=["quant", "gemm"])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--case", help="GEMM cases, e.g. up-fp8,down-fp8 (default: all four)")
    parser.add_argument("--shape", default="qwen3", choices=sorted(SHAPES),
                        help="the layer (bench_moe.SHAPES) whose routing and GEMMs to time")
    parser.add_argument("--configs", default="",
                        help="GEMM configs to time beside the chosen one, as "
                             "bench_grouped_gemm.py --configs takes them")
    parser.add_argument("--launches", type=int, default=0,
                        help="launch each GEMM variant this many times untimed (for ncu)")
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), flush=True)
    configs = [tuple(int(x) if x.isdigit() else x for x in c.split(","))
               for c in args.configs.split(";") if c]
    experts, top_k, hidden, inter = SHAPES[args.shape]
    for tokens in (int(t) for t in args.tokens.split(",")):
        x, weights, ids = inputs(experts, top_k, hidden, inter, tokens, seed=tokens)
        offsets, _, source, position, _ = routes.sort_routes(ids, weights, experts)
        m = source.shape[0]
        if args.only != "gemm":
            for label, us in quantisations(x, source, position, inter, args.rounds).items():
                print(f"{args.shape} T={tokens} quantise {label}: {us:.1f} us", flush=True)
        if args.only != "quant":
            hint = layer.expected_rows(m, experts)
            for (name, dtype, padding), us in gemms(offsets, m, experts, hidden, inter, hint,
                                                    args.rounds, args.case,
                                                    configs, args.launches).items():
                print(f"{args.shape} T={tokens} {name} {dtype} {padding}: {us:.1f} us", flush=True)


if __name__ == "__main__":
    main()
