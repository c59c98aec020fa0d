"""FP8 masked groups of random counts (bench_peers' cases): ggc's chosen
kernel against 128x128 tiles with idle warpgroups computing and skipping
(`#gg.padding`), and 64x256 split tiles, beside DeepGEMM's masked kernel, interleaved in one
process (#39: the G16 M128 case trails DeepGEMM).

    python3 benchmarks/probes/masked_idle.py [--cases G,M,N,K,SEED;...]
    python3 benchmarks/probes/masked_idle.py --only-configs --cases records --configs tilings

Each output's valid rows are checked against fp64 of the dequantised
operands before timing; DG_PRINT_CONFIGS=1 prints DeepGEMM's choice.
`--profile NAME,...` skips the timing and launches only those variants
once more between cudaProfilerStart and Stop, for
`ncu --profile-from-start off` (stall_profile.py reads its export).
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
from bench_peers import mn_major, random_counts  # noqa: E402
from ggc import ops  # noqa: E402

WIDE64 = ("#gg.config<block = [64, 256, 128], stages = 4, cluster = [1, 1], sms = 132, "
          "split_n = 2>")
# 128x128 tiles as gg-select-config chose them for every such batch before
# the forty-sixth session's wave rule (stages: as many as fit).
SQUARE = "#gg.config<block = [128, 128, 128], stages = 0, cluster = [1, 1], sms = 132>"


SMS = 132


def tile_counts(counts, n):
    """(block M, block N, tiles) of the batch's valid rows on the tilings
    gg-select-config gives masked f8 (128x128, 64x256 split, 128x192 in
    pairs): the wave counts behind their differences, which the real counts
    decide where the mean cannot (fifty-first session)."""
    return [(bm, bn, sum(-(-c // bm) for c in counts) * -(-n // bn))
            for bm, bn in ((128, 128), (64, 256), (128, 192))]


def case(g, m, n, k, seed, configs=(), profile=(), only_configs=False):
    counts = random_counts(g, m, seed)
    expected = max(1, sum(counts) // g)
    x = (torch.randn(g, m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    w = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    sx = torch.rand(g, m, k // 128, device="cuda") + 0.5
    sw = torch.rand(g, n // 128, k // 128, device="cuda") + 0.5
    sx_mn = mn_major(sx)  # as bench_peers passes it
    sx_physical, a_kind = ops._physical_block_scale(sx_mn)
    masked = torch.tensor(counts, dtype=torch.int32, device="cuda")
    fns, outs = {}, {}
    variants = {"chosen": {}}
    if not only_configs:
        variants.update({"compute": {"idle_warpgroups": "compute", "config": SQUARE},
                         "skip": {"idle_warpgroups": "skip", "config": SQUARE}})
        if n % 256 == 0 and m % 64 == 0:
            variants["64x256"] = {"config": WIDE64}
    for name, spec in configs:
        config, *options = spec.split("|")
        if any("=" not in option for option in options):
            raise SystemExit(f"--configs {name}: options are OPTION=VALUE, got {options}")
        variants[name] = {**({"config": config} if config else {}),
                          **dict(o.split("=", 1) for o in options)}
    for i, (name, extra) in enumerate(variants.items()):
        try:
            kern = ggc.Kernel(ir.grouped_matmul(
                f"k_{i}", layout="masked", num_groups=g, m=m, n=n, k=k,
                dtype="f8E4M3FN", a_scale=a_kind, b_scale="block", expected_m=expected,
                **extra))
        except Exception as err:  # a --configs variant ggc refuses: say why, go on
            print(f"  {name}: not compiled: {str(err).splitlines()[0][:300]}", flush=True)
            continue
        if name == "chosen":
            print(f"  chosen: {kern.info['block_m']}x{kern.info['block_n']}, {kern.info['block']} threads", flush=True)
        out = torch.full((g, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        outs[name] = out
        fns[name] = (lambda kern=kern, out=out: kern(x, w, masked, sx_physical, sw, out))
    try:
        import deep_gemm
        outs["deep_gemm"] = torch.full((g, m, n), float("nan"), device="cuda",
                                       dtype=torch.bfloat16)
        fns["deep_gemm"] = lambda: deep_gemm.m_grouped_fp8_gemm_nt_masked(
            (x, sx_mn), (w, sw), outs["deep_gemm"], masked, expected)
    except ImportError:
        pass
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    xd = x.double() * sx.double().repeat_interleave(128, -1)
    wd = w.double() * sw.double().repeat_interleave(128, 1).repeat_interleave(128, 2)
    for name, out in outs.items():
        worst = 0.0
        for gi, c in enumerate(counts):
            ref = xd[gi, :c] @ wd[gi].T
            got = out[gi, :c].double()
            worst = max(worst, ((got - ref).norm() / ref.norm()).item())
        print(f"  {name:10s} worst relative error over groups {worst:.2e}"
              + ("" if worst < 1e-2 else "  WRONG"))
    if profile:
        unknown = [name for name in profile if name not in fns]
        if unknown:
            raise SystemExit(f"--profile: no variant {unknown}; variants: {sorted(fns)}")
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        for name in profile:
            fns[name]()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        return
    times = time_interleaved(fns)
    flops = 2.0 * sum(counts) * n * k
    print(f"  tiles (waves on {SMS} SMs): " + ", ".join(
        f"{bm}x{bn} {t} ({t / SMS:.2f})" for bm, bn, t in tile_counts(counts, n)), flush=True)
    for name, us in times.items():
        print(f"G{g} M{m} N{n} K{k} counts avg {expected}: {name:10s} {us:8.1f} us "
              f"{flops / us / 1e6:7.1f} TFLOPS", flush=True)


# bench_peers' random-count cases, then taller groups, decode and N 2,048.
CASES = ("16,128,4096,7168,1;32,64,7168,2048,2;16,128,7168,2048,3;8,256,4096,7168,4;"
         "32,32,4096,7168,5;16,128,2048,7168,6")
# `--cases records`: the batches of docs/performance-history.md's
# fifty-first session (decode, one M block, and beyond four waves).
RECORD_CASES = ("32,64,4096,7168,24;32,64,7168,2048,2;16,128,4096,7168,1;16,128,4096,7168,26;"
                "8,128,4096,7168,21;32,128,4096,7168,22;8,256,4096,7168,4;16,256,4096,7168,9;"
                "32,256,7168,2048,13;8,512,4096,7168,11;16,384,4096,7168,14")
# `--configs tilings`: each tiling gg-select-config has given masked f8
# batches, stated, so that an old default runs beside a new one: 128x128
# with the pool, 64x256 split tiles with the pool's four stages and with
# five and per-thread stores, paired 128x192 with five.
_SMS = f"sms = {SMS}"
TILINGS = ";".join((
    f"sq=#gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], {_SMS}>",
    f"w64=#gg.config<block = [64, 256, 128], stages = 4, cluster = [1, 1], {_SMS}, split_n = 2>",
    f"w64d5=#gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], {_SMS}, "
    "split_n = 2>|direct_stores=1",
    f"p192=#gg.config<block = [128, 192, 128], stages = 5, cluster = [2, 1], {_SMS}>"))


# `--configs split_knobs`: the 64x256 split tiles with five stages (the
# default beyond four waves since the fifty-first session, which still
# trailed DeepGEMM's paired kernel by 6% on G16 M384) with one knob turned
# each: serial promotion, two-column stores, N-fastest and M-banded tile
# orders, whole-tile row loads, B read evict-first.
_SPLIT = (f"#gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], {_SMS}, "
          "split_n = 2>|direct_stores=1")
_PLAN = ("#gg.kernel_plan<promotion = {promotion}, scales = slots, registers = [24, 240], "
         "staging = none, store_columns = {columns}>")
SPLIT_KNOBS = ";".join((
    f"split={_SPLIT}",
    f"serial={_SPLIT}|kernel_plan={_PLAN.format(promotion='serial', columns=8)}",
    f"cols2={_SPLIT}|kernel_plan={_PLAN.format(promotion='pipelined', columns=2)}",
    f"nfast={_SPLIT}|tile_order=n_fastest",
    f"band2={_SPLIT}|m_band=2",
    f"whole={_SPLIT}|overfetch_rows=63",
    f"evictB={_SPLIT}|b_cache=evict_first"))

# `--configs constant_stages`: the paired 128x192 tiles gg-select-config
# gives batches beyond four waves (five stages, counted, the chosen
# kernel) against constant stages (ring_stages = constant, which
# gg-plan-kernel gives contiguous FP8 of whole turns since the fifty-sixth
# session): five stages, K 7,168's 56 blocks ending each tile's last turn
# on four empty stages, and four stages (whole turns) counted and
# constant.
_SERIAL = ("#gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], "
           "staging = none, store_columns = 8{ring}>|direct_stores=1")
_WIDE = f"#gg.config<block = [128, 192, 128], stages = {{s}}, cluster = [2, 1], {_SMS}>"
_CONSTANT = ", ring_stages = constant"
CONSTANT_STAGES = ";".join((
    f"p5rc={_WIDE.format(s=5)}|kernel_plan={_SERIAL.format(ring=_CONSTANT)}",
    f"p4={_WIDE.format(s=4)}|kernel_plan={_SERIAL.format(ring='')}",
    f"p4rc={_WIDE.format(s=4)}|kernel_plan={_SERIAL.format(ring=_CONSTANT)}"))
NAMED_CONFIGS = {"tilings": TILINGS, "split_knobs": SPLIT_KNOBS,
                 "constant_stages": CONSTANT_STAGES}


def parse_cases(text):
    """'G,M,N,K,SEED;...' or 'records' -> [(G, M, N, K, SEED), ...]."""
    text = RECORD_CASES if text == "records" else text
    cases = []
    for spec in filter(None, text.split(";")):
        values = spec.split(",")
        if len(values) != 5 or not all(v.strip().isdigit() for v in values):
            raise SystemExit(f"--cases: each case is G,M,N,K,SEED (five whole numbers) "
                             f"or 'records', got {spec!r}")
        cases.append(tuple(int(v) for v in values))
    return cases


def parse_configs(text):
    """'NAME=SPEC;...', where a part may be a name of NAMED_CONFIGS
    ('tilings', 'split_knobs') -> [(NAME, SPEC), ...]."""
    parts = [NAMED_CONFIGS.get(part, part) for part in text.split(";")]
    return [tuple(c.split("=", 1)) for c in ";".join(parts).split(";") if c]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=CASES,
                        help="G,M,N,K,SEED;...: groups, M_max, N, K and the counts' seed "
                             "(counts uniform in [1, M]); 'records': RECORD_CASES")
    parser.add_argument("--configs", default="",
                        help="NAME=[#gg.config<...>][|OPTION=VALUE...];...: more variants, "
                             "each a config (none: gg-select-config's) and "
                             "ir.grouped_matmul's string options "
                             "(b_cache=normal, kernel_plan=#gg.kernel_plan<...>); "
                             "'tilings', 'split_knobs' and 'constant_stages' stand for NAMED_CONFIGS' sets")
    parser.add_argument("--only-configs", action="store_true",
                        help="time the chosen kernel, --configs and DeepGEMM alone")
    parser.add_argument("--profile", default="",
                        help="NAME,...: no timing; launch these variants once for ncu")
    args = parser.parse_args()
    profile = [name for name in args.profile.split(",") if name]
    configs = parse_configs(args.configs)
    print(torch.cuda.get_device_name(), flush=True)
    for spec in parse_cases(args.cases):
        case(*spec, configs=configs, profile=profile, only_configs=args.only_configs)


if __name__ == "__main__":
    main()
