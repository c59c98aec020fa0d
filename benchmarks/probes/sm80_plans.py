"""sm_80 kernel plans side by side on the card in hand (interleaved, one
run), against the mma.sync peak: the planned kernel, and kernels without a
producer warpgroup (the consumers copy the stages; 256 registers a
thread) with wider tiles and 64x64 warp tiles.

    python3 benchmarks/probes/sm80_plans.py [TAG]   # JSON to $OUT/sm80-plans-TAG.json
"""
import json
import os
import re
import sys

import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ggc
from ggc import ir
from bench_grouped_gemm import time_interleaved
from bench_sm80 import measure_peak, check_and_time, contiguous_inputs

def cfg(bm, bn, stages):
    return f"#gg.config<block = [{bm}, {bn}, 64], stages = {stages}, cluster = [1, 1], sms = 132>"

def kernel(spec, target, config=None, wc=None, lag=None, producer=True, **schedule):
    spec = dict(spec, **schedule)
    text = ir.grouped_matmul("k", config=config, **spec)
    if wc is None and lag is None and producer:
        return ggc.Kernel(text, target=target)
    # The plan gg-plan-kernel makes for this config, with the variant's
    # fields; without a producer warpgroup every thread keeps the share of
    # the smaller CTA (256 registers for two consumer warpgroups).
    plan = ggc.compile_ir(text, emit="gg-config", arch=target).plans[0]["attributes"]["kernel_plan"]
    plan = plan.replace(", warp_columns = 2", "").replace(", release_lag = 0", "").rstrip(">")
    if wc and wc != 1:
        plan += f", warp_columns = {wc}"
    if lag == 0:
        plan += ", release_lag = 0"
    if not producer:
        plan = re.sub(r"registers = \[\d+, \d+\]", "registers = [256, 256]", plan)
        plan += ", producer = none"
    plan += ">"
    return ggc.Kernel(ir.grouped_matmul("k", config=config, kernel_plan=plan, **spec), target=target)

def main():
    tag = sys.argv[1] if len(sys.argv) > 1 else "run"
    t, g, n, k = 8192, 8, 4096, 4096
    ends, offsets, a, b, out = contiguous_inputs(t, g, n, k)
    spec = dict(layout="contiguous", num_groups=g, n=n, k=k)
    variants = {
        "sm_80 default": dict(),
        "sm_80 128x256 s3 wc4 no producer": dict(config=cfg(128, 256, 3), wc=4, lag=0, producer=False),
        "sm_80 128x256 s3 wc2 no producer": dict(config=cfg(128, 256, 3), wc=2, lag=0, producer=False),
        "sm_80 128x128 s5 wc2 no producer": dict(config=cfg(128, 128, 5), wc=2, lag=0, producer=False),
        "sm_80 128x128 s5 wc4 no producer": dict(config=cfg(128, 128, 5), wc=4, lag=0, producer=False),
        "sm_80 128x128 s4 wc2 no producer": dict(config=cfg(128, 128, 4), wc=2, lag=0, producer=False),
        "sm_80 64x256 s4 wc4 no producer": dict(config=cfg(64, 256, 4), wc=4, lag=0, producer=False),
    }
    kernels = {}
    for label, kw in variants.items():
        try:
            kernels[label] = kernel(spec, "sm_80", **kw)
        except Exception as e:  # noqa: BLE001
            print(f"{label}: not compiled: {str(e)[:300]}")
    kernels["sm_90a default"] = ggc.Kernel(ir.grouped_matmul("k", **spec), target="sm_90a")
    ref = torch._grouped_mm(a, b.transpose(1, 2), offs=ends).double()
    errors, fns = check_and_time(kernels, (a, b, offsets), out, ref)
    fns["torch._grouped_mm"] = lambda: torch._grouped_mm(a, b.transpose(1, 2), offs=ends)
    peak = measure_peak()[0]
    times = time_interleaved(fns)
    print(f"[{tag}] {torch.cuda.get_device_name()}: mma.sync peak {peak/1e12:.0f} TFLOPS")
    flops = 2.0 * t * n * k
    res = {}
    for name, us in times.items():
        tf = flops / (us * 1e-6) / 1e12
        res[name] = dict(us=us, tflops=tf, err=errors.get(name.replace("ggc ", "")))
        print(f"[{tag}] {name:28s} {us:8.1f} us {tf:6.0f} TFLOPS {100*tf*1e12/peak:5.1f}% of peak  err {res[name]['err']}")
    with open(os.path.join(os.environ.get("OUT", "/tmp"), f"sm80-plans-{tag}.json"), "w") as f:
        json.dump(dict(peak=peak, results=res), f, indent=1)

if __name__ == "__main__":
    main()
