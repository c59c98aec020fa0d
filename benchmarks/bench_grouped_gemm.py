"""ggc grouped GEMM against torch._grouped_mm and a per-expert loop.

One run measures every implementation on the same inputs: the median over
15 batches of 10 back-to-back calls, timed with CUDA events after warm-up. Prints a table and, with --json, writes it.
Floors: bytes moved / 4.3 TB/s and FLOPs / 700 TFLOPS (bf16 dense, measured
on the H200).
"""

import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from ggc import ops as ggc_ops  # noqa: E402

HBM_BYTES_PER_S = 4.3e12
BF16_FLOPS = 700e12


def time_interleaved(fns, warmup_s=0.25, rounds=15, per_batch=10):
    """Median GPU time of one call of each of `fns` ({label: callable}).

    Calls are queued back to back between two events (per_batch of them),
    so host-side launch cost overlaps GPU work instead of being counted as
    GPU time. Each callable first runs for `warmup_s` of wall time, since
    after a host-side compile the GPU has idled and its clocks take that
    long to come back up. Then each of `rounds` rounds times one batch of
    every callable in turn: a drift of the clocks during the run reaches
    all of them alike, so their ratios hold (timed one after another, the
    same shape measured up to 15% apart from run to run)."""
    import time
    for fn in fns.values():
        fn()
        torch.cuda.synchronize()
        deadline = time.perf_counter() + warmup_s
        while time.perf_counter() < deadline:
            for _ in range(per_batch):
                fn()
            torch.cuda.synchronize()
    times = {label: [] for label in fns}
    for _ in range(rounds):
        for label, fn in fns.items():
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(per_batch):
                fn()
            end.record()
            end.synchronize()
            times[label].append(start.elapsed_time(end) * 1e3 / per_batch)
    return {label: statistics.median(t) for label, t in times.items()}


def runnable(fns, label=""):
    """The callables of `fns` that run once without raising; each refusal
    is printed with its reason (a variant the compiler or a peer does not
    take is reported, not fatal)."""
    usable = {}
    for name, fn in fns.items():
        try:
            fn()
            torch.cuda.synchronize()
            usable[name] = fn
        except Exception as e:  # noqa: BLE001 - the refusal is reported
            print(f"  {label} {name}: {type(e).__name__}: {str(e).splitlines()[0][:150]}")
    return usable


def host_us(fn, reps=200):
    """Host time of one call (launch overhead, with the GPU kept busy)."""
    import time
    fn()
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for _ in range(reps):
        fn()
    elapsed = time.perf_counter() - begin
    torch.cuda.synchronize()
    return elapsed / reps * 1e6


def group_sizes(total, groups, seed):
    """Skewed routing: `groups` experts get Dirichlet(1)-distributed shares
    of `total` tokens, drawn from `seed` alone (normalised exponentials, so
    the shares do not depend on what ran before). A negative seed gives
    equal groups instead (total // groups rows, the remainder in the
    last), to tell what ragged groups cost from what a kernel costs."""
    if seed < 0:
        sizes = [total // groups] * groups
        sizes[-1] += total - sum(sizes)
        return sizes
    gen = torch.Generator().manual_seed(seed)
    shares = -torch.log(torch.rand(groups, generator=gen))
    tokens = torch.multinomial(shares / shares.sum(), total, replacement=True, generator=gen)
    return torch.bincount(tokens, minlength=groups).tolist()


def ragged_groups(total, groups, seed):
    """group_sizes(total, groups, seed), their ends and the G+1 int32
    offsets on the GPU."""
    sizes = group_sizes(total, groups, seed)
    ends = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int32, device="cuda"), ends])
    return sizes, ends, offsets


def config_text(config):
    """BM,BN,BK,STAGES then options: 'c2' for clusters of 2 along M, 's2'
    for two consumer warpgroups per 64 rows (split_n = 2); 0,0,0,0 keeps
    gg-select-config's choice (None: the options alone change)."""
    bm, bn, bk, stages = config[:4]
    if bm == 0:
        return None
    cluster = 2 if "c2" in config[4:] else 1
    split = ", split_n = 2" if "s2" in config[4:] else ""
    return (f"#gg.config<block = [{bm}, {bn}, {bk}], stages = {stages}, "
            f"cluster = [{cluster}, 1], sms = 132{split}>")


def extra(config):
    """Options after BM,BN,BK,STAGES: 'direct' keeps per-thread stores,
    'nf' walks a group's N blocks first and 'bandS' its M blocks in bands
    of S (0: none) (gg-schedule-groups), 'compute'
    keeps idle warpgroups computing and 'skip' lets them skip
    (gg-eliminate-padding), 'normal'/'evict_first'/'evict_last' set B's L2
    policy (gg-schedule-groups; 'nf', 'bandS' and a policy each state the
    whole schedule, the rest at m_fastest, no bands, normal), 'whole' loads
    whole A tiles at group ends (gg-plan-overfetch), 'stages'/'slots' put
    the block scales in the ring's stages or each warp's slots and
    'serial'/'pipelined' order the promotion (a #gg.kernel_plan for
    128-row tiles: two consumer warpgroups), 'eb2' issues two K blocks
    before the deferred epilogue (pipelined: `epilogue_blocks = 2`) and
    'constant' gives each K block a constant stage (`ring_stages =
    constant`: serial unless 'pipelined' is named too; a plan naming
    'serial' or 'pipelined' without it is counted); 'emN'
    passes expected_m = N, 'emauto' the host's hint for the shape
    (ggc.ops.mean_hint of its rows a group, capped at 4,096, as ggc.moe
    passes it)."""
    opts = {"direct_stores": "direct" in config[4:]}
    for option in config[4:]:
        if isinstance(option, str) and option.startswith("em"):
            opts["expected_m"] = "auto" if option == "emauto" else int(option[2:])
    if "whole" in config[4:]:
        opts["overfetch_rows"] = config[0] - 1
    if "nf" in config[4:]:
        opts["tile_order"] = "n_fastest"
    for option in config[4:]:
        if isinstance(option, str) and option.startswith("band"):
            opts["m_band"] = int(option[4:])
    if "compute" in config[4:]:
        opts["idle_warpgroups"] = "compute"
    if "skip" in config[4:]:
        opts["idle_warpgroups"] = "skip"
    for policy in ("normal", "evict_first", "evict_last"):
        if policy in config[4:]:
            opts["b_cache"] = policy
    scales = next((s for s in ("stages", "slots") if s in config[4:]), None)
    promotion = next((p for p in ("serial", "pipelined") if p in config[4:]), None)
    two_blocks = "eb2" in config[4:]
    constant = "constant" in config[4:]
    if constant and promotion is None:
        promotion = "serial"
    if scales or promotion or two_blocks:
        promotion = promotion or "pipelined"
        registers = "[24, 240]" if promotion == "pipelined" else "[40, 232]"
        staging = "none" if opts["direct_stores"] else "swizzled"
        opts["kernel_plan"] = (f"#gg.kernel_plan<promotion = {promotion}, scales = "
                               f"{scales or 'stages'}, registers = {registers}, "
                               f"staging = {staging}"
                               f"{', epilogue_blocks = 2' if two_blocks else ''}"
                               f"{', ring_stages = constant' if constant else ''}>")
    return opts


def ggc_variants(run, make_kernel, configs, hint=None):
    """The default config and every extra one that compiles, as
    {label: callable} for time_interleaved; `hint` is the shape's
    expected_m for 'emauto'."""
    fns = {"ggc": run(make_kernel(None))}
    for config in configs:
        label = "ggc " + ("chosen" if config[0] == 0 else "x".join(map(str, config[:3])) +
                          f" s{config[3]}") + "".join(f" {o}" for o in config[4:])
        opts = extra(config)
        if opts.get("expected_m") == "auto":
            opts["expected_m"] = hint
        try:
            kernel = make_kernel(config_text(config), **opts)
        except ggc.CompilationError as e:
            # A config the shape cannot take is reported, not fatal.
            print(f"{label}: skipped, {str(e).splitlines()[0]}", flush=True)
            continue
        fns[label] = run(kernel)
    return fns


def bench_contiguous(t, g, n, k, seed=0, configs=()):
    sizes, ends, offsets = ragged_groups(t, g, seed)
    a = torch.randn(t, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(g, n, k, device="cuda").to(torch.bfloat16)
    out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    fns = ggc_variants(
        lambda kern: (lambda: kern(a, b, offsets, out)),
        lambda config, **opts: ggc.Kernel(ir.grouped_matmul(
            "k", layout="contiguous", num_groups=g, n=n, k=k, config=config, **opts)),
        configs, ggc_ops.mean_hint(t, g, 4096))
    kern = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=g, n=n, k=k))
    host = host_us(lambda: kern(a, b, offsets, out))
    kern(a, b, offsets, out)
    ref = torch._grouped_mm(a, b.transpose(1, 2), offs=ends)
    err = ((out.double() - ref.double()).norm() / ref.double().norm()).item()
    fns["torch._grouped_mm"] = lambda: torch._grouped_mm(a, b.transpose(1, 2), offs=ends)

    def loop():
        start = 0
        for gi, size in enumerate(sizes):
            if size:
                torch.matmul(a[start:start + size], b[gi].T, out=out[start:start + size])
            start += size
    fns["per-expert loop"] = loop
    results = time_interleaved(fns)
    results["ggc host overhead"] = host
    flops = 2.0 * t * n * k
    bytes_moved = 2.0 * (t * k + g * n * k + t * n)
    return f"contiguous bf16 T={t} G={g} N={n} K={k}", results, flops, bytes_moved, err


def bench_masked(g, m, n, k, configs=()):
    a = torch.randn(g, m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(g, n, k, device="cuda").to(torch.bfloat16)
    masked_m = torch.full((g,), m, dtype=torch.int32, device="cuda")
    out = torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
    fns = ggc_variants(
        lambda kern: (lambda: kern(a, b, masked_m, out)),
        lambda config, **opts: ggc.Kernel(ir.grouped_matmul(
            "k", layout="masked", num_groups=g, n=n, k=k, m=m, expected_m=m,
            config=config, **opts)),
        configs)
    kern = ggc.Kernel(ir.grouped_matmul("k", layout="masked", num_groups=g, n=n, k=k, m=m,
                                        expected_m=m))
    host = host_us(lambda: kern(a, b, masked_m, out))
    kern(a, b, masked_m, out)
    ref = torch._grouped_mm(a, b.transpose(1, 2))
    err = ((out.double() - ref.double()).norm() / ref.double().norm()).item()
    fns["torch._grouped_mm"] = lambda: torch._grouped_mm(a, b.transpose(1, 2))
    fns["per-expert loop"] = lambda: torch.bmm(a, b.transpose(1, 2), out=out)
    results = time_interleaved(fns)
    results["ggc host overhead"] = host
    flops = 2.0 * g * m * n * k
    bytes_moved = 2.0 * (g * m * k + g * n * k + g * m * n)
    return f"masked bf16 G={g} M_max={m} N={n} K={k}", results, flops, bytes_moved, err


FP8_FLOPS = 1270e12


def fp8(*shape):
    return (torch.randn(*shape, device="cuda") * 2).to(torch.float8_e4m3fn)


def with_torch_scaled(fns, fn):
    """Times `fns` and torch._scaled_grouped_mm (`fn`) together, or says why
    torch cannot run the shape (its time is then NaN)."""
    try:
        fn()
        fns["torch._scaled_grouped_mm"] = fn
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        print(f"    torch._scaled_grouped_mm: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
    results = time_interleaved(fns)
    results.setdefault("torch._scaled_grouped_mm", float("nan"))
    return results


def with_torch_rowwise_contiguous(fns, a, b, ends):
    """`fns` timed with the peer: torch._scaled_grouped_mm with rowwise
    scales, same inputs."""
    row_a = torch.rand(a.shape[0], device="cuda") + 0.5
    col_b = torch.rand(b.shape[0], b.shape[1], device="cuda") + 0.5
    return with_torch_scaled(
        fns, lambda: torch._scaled_grouped_mm(a, b.transpose(1, 2), row_a, col_b, offs=ends,
                                              out_dtype=torch.bfloat16))


def fp8_contiguous_work(t, g, n, k):
    """FLOPs, and bytes moved: A and B once (1 byte each), out once (bf16)."""
    return 2.0 * t * n * k, t * k + g * n * k + 2.0 * t * n


def bench_fp8_contiguous(t, g, n, k, seed=0, configs=()):
    _, ends, offsets = ragged_groups(t, g, seed)
    kb = -(-k // 128)
    a, b = fp8(t, k), fp8(g, n, k)
    a_scale = torch.rand(kb, (t + 3) // 4 * 4, device="cuda") + 0.5   # 1x128, M-major
    b_scale = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5     # 128x128
    out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    fns = ggc_variants(
        lambda kern: (lambda: kern(a, b, offsets, a_scale, b_scale, out)),
        lambda config, **opts: ggc.Kernel(ir.grouped_matmul(
            "k", layout="contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
            a_scale="block_mn", b_scale="block", config=config, **opts)),
        configs, ggc_ops.mean_hint(t, g, 4096))
    results = with_torch_rowwise_contiguous(fns, a, b, ends)
    return (f"contiguous fp8 T={t} G={g} N={n} K={k}", results,
            *fp8_contiguous_work(t, g, n, k))


def bench_fp8_masked(g, m, n, k, counts=None, configs=()):
    kb = -(-k // 128)
    a, b = fp8(g, m, k), fp8(g, n, k)
    a_scale = torch.rand(g, kb, (m + 3) // 4 * 4, device="cuda") + 0.5
    b_scale = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
    counts = counts if counts is not None else [m] * g
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    out = torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
    expected = max(1, sum(counts) // g)
    fns = ggc_variants(
        lambda kern: (lambda: kern(a, b, masked_m, a_scale, b_scale, out)),
        lambda config, **opts: ggc.Kernel(ir.grouped_matmul(
            "k", layout="masked", num_groups=g, n=n, k=k, m=m, dtype="f8E4M3FN",
            expected_m=expected, a_scale="block_mn", b_scale="block", config=config,
            **opts)),
        configs)
    row_a = torch.rand(g, m, device="cuda") + 0.5
    col_b = torch.rand(g, n, device="cuda") + 0.5
    results = with_torch_scaled(
        fns, lambda: torch._scaled_grouped_mm(a, b.transpose(1, 2), row_a, col_b,
                                              out_dtype=torch.bfloat16))
    rows = sum(counts)
    flops = 2.0 * rows * n * k
    bytes_moved = rows * k + g * n * k + 2.0 * rows * n
    name = f"masked fp8 G={g} M_max={m} N={n} K={k}" + ("" if counts == [m] * g else
                                                        f" rows={rows}")
    return name, results, flops, bytes_moved


def bench_mxfp8_contiguous(t, g, n, k, block=32, seed=0, configs=()):
    """FlashInfer's MXFP8 layout: UE8M0 per row and per `block` of K."""
    _, ends, offsets = ragged_groups(t, g, seed)
    words = -(-k // (4 * block))
    a, b = fp8(t, k), fp8(g, n, k)
    a_scale = torch.randint(120, 135, ((t + 3 * g) // 4 * 4, words * 4), dtype=torch.uint8,
                            device="cuda").view(torch.int32)
    b_scale = torch.randint(120, 135, (g, n, words * 4), dtype=torch.uint8,
                            device="cuda").view(torch.int32)
    out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    variants = ggc_variants(
        lambda kern: (lambda: kern(a, b, offsets, a_scale, b_scale, out)),
        lambda config, **opts: ggc.Kernel(ir.grouped_matmul(
            "k", layout="contiguous", num_groups=g, n=n, k=k, dtype="f8E4M3FN",
            a_scale=f"mx{block}", b_scale=f"mx{block}", config=config, **opts)),
        configs)
    fns = {label.replace("ggc", f"ggc (mx 1x{block})", 1): fn
           for label, fn in variants.items()}
    results = with_torch_rowwise_contiguous(fns, a, b, ends)
    return (f"contiguous mxfp8 T={t} G={g} N={n} K={k}", results,
            *fp8_contiguous_work(t, g, n, k))


def shapes_of(text):
    """'T,G,N,K;...' as tuples of ints."""
    return [tuple(int(x) for x in c.split(",")) for c in text.split(";") if c]


def run_fp8(rows, configs=(), only=None, contiguous=()):
    """The FP8 cases; `only` (a list of indices into them) picks some;
    `contiguous` (T, G, N, K shapes), when given, replaces them."""
    gen = torch.Generator().manual_seed(3)
    decode_counts = torch.randint(1, 129, (16,), generator=gen).tolist()
    cases = [
        lambda: bench_fp8_masked(4, 256, 4096, 7168, configs=configs),
        lambda: bench_fp8_masked(4, 256, 7168, 2048, configs=configs),
        lambda: bench_fp8_contiguous(8192, 8, 4096, 7168, configs=configs),
        lambda: bench_fp8_contiguous(16384, 32, 3072, 8192, configs=configs),
        lambda: bench_fp8_masked(16, 128, 4096, 7168, counts=decode_counts,
                                 configs=configs),
        lambda: bench_mxfp8_contiguous(4096, 8, 4096, 7168, block=32, configs=configs),
        lambda: bench_mxfp8_contiguous(4096, 8, 4096, 7168, block=128, configs=configs),
    ]
    if only is not None:
        cases = [cases[i] for i in only]
    if contiguous:
        cases = [lambda shape=shape: bench_fp8_contiguous(*shape, configs=configs)
                 for shape in contiguous]
    for case in cases:
        name, results, flops, bytes_moved = case()
        floor_mem = bytes_moved / HBM_BYTES_PER_S * 1e6
        floor_math = flops / FP8_FLOPS * 1e6
        peer = results["torch._scaled_grouped_mm"]
        for impl, us in results.items():
            print(f"{name:44} {impl:26} {us:9.1f} {flops / us / 1e6:7.1f} {peer / us:8.2f}x"
                  f"  {floor_mem:.1f}/{floor_math:.1f}  ({floor_mem / us * 100:.0f}% of HBM floor)")
            rows.append({"shape": name, "impl": impl, "us": us, "tflops": flops / us / 1e6,
                         "ratio_vs_torch": peer / us, "floor_mem_us": floor_mem,
                         "floor_math_us": floor_math})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--suite", default="all", choices=["all", "bf16", "fp8"])
    parser.add_argument("--configs", default="",
                        help="extra tile configs to time, 'BM,BN,BK,STAGES[,c2][,s2][,direct][,nf][,bandS][,compute][,skip][,whole][,evict_first][,stages|slots][,serial|pipelined][,eb2][,constant][,emN|emauto];...' (0,0,0,0: the chosen tile)")
    parser.add_argument("--fp8-cases", default="",
                        help="comma-separated indices of the FP8 cases to run (default: all), "
                             "e.g. 1 for masked N=7168 K=2048")
    parser.add_argument("--fp8-contiguous", default="",
                        help="FP8 contiguous shapes 'T,G,N,K[,SEED];...' (1x128 / 128x128 "
                             "block scales; Dirichlet groups of SEED, default 0, equal "
                             "groups where SEED is negative) to time instead of the FP8 "
                             "cases, e.g. 8192,8,7168,2048")
    parser.add_argument("--contiguous", default="",
                        help="bf16 contiguous shapes 'T,G,N,K;...' to time instead of the "
                             "bf16 suite, e.g. 32768,8,4096,14336 (Mixtral's down projection "
                             "at 4,096 rows a group)")
    args = parser.parse_args()
    configs = [tuple(int(x) if x.isdigit() else x for x in c.split(","))
               for c in args.configs.split(";") if c]
    torch.manual_seed(0)
    cases = [
        lambda: bench_contiguous(8192, 8, 4096, 7168, configs=configs),
        lambda: bench_contiguous(4096, 64, 2048, 7168, configs=configs),
        lambda: bench_contiguous(2048, 128, 4096, 7168, configs=configs),
        lambda: bench_masked(4, 256, 4096, 7168, configs=configs),
    ]
    rows = []
    if args.suite in ("all", "fp8"):
        print(f"{'shape':44} {'impl':26} {'us':>9} {'TFLOPS':>7} {'vs torch':>8}  floor us (mem/math)")
        only = [int(i) for i in args.fp8_cases.split(",")] if args.fp8_cases else None
        run_fp8(rows, [c for c in configs if c[2] in (0, 128)], only,
                shapes_of(args.fp8_contiguous))
    if args.contiguous:
        cases = [lambda shape=shape: bench_contiguous(*shape, configs=configs)
                 for shape in shapes_of(args.contiguous)]
    if args.suite == "fp8":
        cases = []
    print(f"{'shape':44} {'impl':18} {'us':>9} {'TFLOPS':>7} {'vs torch':>8}  floor us (mem/math)")
    for case in cases:
        name, results, flops, bytes_moved, err = case()
        floor_mem = bytes_moved / HBM_BYTES_PER_S * 1e6
        floor_math = flops / BF16_FLOPS * 1e6
        host = results.pop("ggc host overhead")
        for impl, us in results.items():
            ratio = results["torch._grouped_mm"] / us
            print(f"{name:44} {impl:18} {us:9.1f} {flops / us / 1e6:7.1f} {ratio:8.2f}x"
                  f"  {floor_mem:.1f}/{floor_math:.1f}")
            rows.append({"shape": name, "impl": impl, "us": us,
                         "tflops": flops / us / 1e6, "ratio_vs_torch": ratio,
                         "floor_mem_us": floor_mem, "floor_math_us": floor_math,
                         "rel_err_vs_torch": err, "ggc_host_us": host})
        print(f"{'':44} ggc vs torch._grouped_mm rel err {err:.2e}; "
              f"ggc host time per call {host:.1f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
