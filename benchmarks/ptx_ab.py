"""Two compilers' sm_80 kernels of one op, side by side (interleaved, one
run): PTX files written by `--write` with each compiler, loaded with the
driver API on the card in hand, checked against torch and timed.

    python3 benchmarks/ptx_ab.py --write DIR TAG [--config CFG] [--warp-columns W] [--ctas-per-sm N]
                                 [--store-columns S] [--shared-memory-bytes B] [--ir-args JSON]
    python3 benchmarks/ptx_ab.py DIR TAG_A TAG_B ...   # on the GPU
    python3 benchmarks/ptx_ab.py --profile DIR TAG SHAPE   # 3 launches, for ncu

PTX_AB_SHAPES=NAME,... picks shapes. The peak micro-benchmark is timed
both alone (before and after each shape) and interleaved with the kernels.

`--config` compiles with a #gg.config (its `sms` is the persistent grid),
`--warp-columns` and `--store-columns` with gg-plan-kernel's plan but that
warp layout or per-thread store width;
`--ctas-per-sm N` is a probe, not a compiler feature: it rewrites the
PTX's `.minnctapersm 1` to N, so that ptxas fits N CTAs' registers in an
SM (give `sms` = N x the SMs). The run prints the mma.sync peak
(bench_sm80's micro-benchmark, constant and random operands) before and
after each shape, and each kernel's share of it.
"""
import ctypes
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Ragged (Dirichlet shares, as bench_grouped_gemm) and one of equal groups
# of 11 whole 128-row tiles: 2,112 tiles of 128x128 (1,056 of 128x256) fill
# 16 (8) waves of 132 CTAs exactly, so neither padded rows nor a part-filled
# last wave stand between the kernel and the peak.
SHAPES = {"T8192_G8_N4096_K4096": (8192, 8, 4096, 4096),
          "T16384_G32_N4096_K2048": (16384, 32, 4096, 2048),
          "T8448_G6_N4096_K4096_equal": (8448, 6, 4096, 4096)}


def shape_inputs(name, t, g, n, k):
    from bench_sm80 import contiguous_inputs
    return contiguous_inputs(t, g, n, k, equal=name.endswith("_equal"))


def selected_shapes():
    wanted = os.environ.get("PTX_AB_SHAPES")
    return {name: dims for name, dims in SHAPES.items()
            if not wanted or name in wanted.split(",")}


def edited_plan(plan, field, value, default):
    """`plan` (a #gg.kernel_plan's text) with `field` set to `value`."""
    plan = re.sub(rf", {field} = \d+", "", plan)
    return plan if value == default else plan[:-1] + f", {field} = {value}>"


def write(folder, tag, config=None, ctas_per_sm=1, warp_columns=None, shared_memory_bytes=0,
          ir_args=None, store_columns=None):
    import ggc
    from ggc import ir
    os.makedirs(folder, exist_ok=True)
    for name, (t, g, n, k) in SHAPES.items():
        spec = dict(layout="contiguous", num_groups=g, n=n, k=k, config=config, **(ir_args or {}))
        plan = None
        if warp_columns or store_columns:
            plan = ggc.compile_ir(ir.grouped_matmul("k", **spec), emit="gg-config",
                                  arch="sm_80", shared_memory_bytes=shared_memory_bytes
                                  ).plans[0]["attributes"]["kernel_plan"]
        if warp_columns:
            plan = edited_plan(plan, "warp_columns", warp_columns, 1)
        if store_columns:
            plan = edited_plan(plan, "store_columns", store_columns, 2)
        compiled = ggc.compile_ir(ir.grouped_matmul("k", kernel_plan=plan, **spec),
                                  emit="ptx", arch="sm_80",
                                  shared_memory_bytes=shared_memory_bytes)
        ptx = compiled.asm["ptx"]
        if ctas_per_sm != 1:
            assert ".minnctapersm 1" in ptx
            ptx = ptx.replace(".minnctapersm 1", f".minnctapersm {ctas_per_sm}")
        base = os.path.join(folder, f"{name}.{tag}")
        with open(base + ".ptx", "w") as f:
            f.write(ptx)
        with open(base + ".json", "w") as f:
            json.dump(compiled.kernel_info[0], f)


def run(folder, tags):
    import torch
    from bench_grouped_gemm import time_interleaved
    from bench_sm80 import DriverKernel, PeakKernel, measure_peak
    print(torch.cuda.get_device_name())
    peak_iters = 4096
    peak_kernels = {kind: PeakKernel(operands=kind) for kind in ("constant", "random")}

    def peaks():
        return (measure_peak()[0] / 1e12, measure_peak(operands="random")[0] / 1e12)
    for name, (t, g, n, k) in selected_shapes().items():
        before = peaks()
        ends, offsets, a, b, out = shape_inputs(name, t, g, n, k)
        args = [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()),
                ctypes.c_uint64(out.data_ptr()), ctypes.c_uint64(offsets.data_ptr()),
                ctypes.c_uint64(t)]
        ref = torch._grouped_mm(a, b.transpose(1, 2), offs=ends)
        fns = {}
        for tag in tags:
            base = os.path.join(folder, f"{name}.{tag}")
            info = json.load(open(base + ".json"))
            kern = DriverKernel(open(base + ".ptx").read(), info["name"], info["shared_bytes"])
            fn = (lambda kern=kern, info=info:
                  kern.launch(info["max_grid"], info["block"], *args))
            out.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            err = ((out.double() - ref.double()).norm() / ref.double().norm()).item()
            print(f"{name} {tag}: rel err against torch {err:.1e}; grid {info['max_grid']}, "
                  f"{kern.ctas_per_sm(info['block'])} CTAs an SM")
            fns[tag] = fn
        # The peak micro-benchmark also runs interleaved with the kernels,
        # under the same clocks and power as they.
        for kind, peak_kernel in peak_kernels.items():
            fns[f"peak {kind}"] = lambda p=peak_kernel: p.launch(peak_iters)
        times = time_interleaved(fns)
        interleaved = {kind: peak_kernels[kind].flops(peak_iters) / times.pop(f"peak {kind}") / 1e6
                       for kind in peak_kernels}
        flops = 2.0 * t * n * k
        after = peaks()
        alone = max(before[0], after[0])
        print(f"{name}: mma.sync peak alone {before[0]:.0f} / {after[0]:.0f} TFLOPS (constant "
              f"operands, before / after), {before[1]:.0f} / {after[1]:.0f} (random); "
              f"interleaved {interleaved['constant']:.0f} (constant), "
              f"{interleaved['random']:.0f} (random)")
        best = max(interleaved.values())
        print(f"{name}: " + ", ".join(
            f"{tag} {us:.1f} us ({flops / us / 1e6:.0f} TFLOPS, {100 * flops / us / 1e6 / alone:.1f}% "
            f"of the peak alone, {100 * flops / us / 1e6 / best:.1f}% interleaved)"
            for tag, us in times.items()))


def profile(folder, tag, name):
    """Three launches of one kernel, for Nsight Compute (-k regex:NAME)."""
    import torch
    from bench_sm80 import DriverKernel
    t, g, n, k = SHAPES[name]
    ends, offsets, a, b, out = shape_inputs(name, t, g, n, k)
    base = os.path.join(folder, f"{name}.{tag}")
    info = json.load(open(base + ".json"))
    kern = DriverKernel(open(base + ".ptx").read(), info["name"], info["shared_bytes"])
    args = [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()),
            ctypes.c_uint64(out.data_ptr()), ctypes.c_uint64(offsets.data_ptr()),
            ctypes.c_uint64(t)]
    for _ in range(3):
        kern.launch(info["max_grid"], info["block"], *args)
    torch.cuda.synchronize()


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--write", nargs=2, metavar=("DIR", "TAG"))
        parser.add_argument("--config")
        parser.add_argument("--ctas-per-sm", type=int, default=1)
        parser.add_argument("--warp-columns", type=int)
        parser.add_argument("--store-columns", type=int)
        parser.add_argument("--shared-memory-bytes", type=int, default=0,
                            help="the card's (plans as ggc's runtime does there); 0: sm_80's")
        parser.add_argument("--ir-args", type=json.loads, default=None,
                            help='more arguments of ggc.ir.grouped_matmul, as JSON: {"m_band": 8}')
        opts = parser.parse_args()
        write(*opts.write, config=opts.config, ctas_per_sm=opts.ctas_per_sm,
              warp_columns=opts.warp_columns, shared_memory_bytes=opts.shared_memory_bytes,
              store_columns=opts.store_columns,
              ir_args=opts.ir_args)
    elif sys.argv[1] == "--profile":
        profile(*sys.argv[2:5])
    else:
        run(sys.argv[1], sys.argv[2:])
