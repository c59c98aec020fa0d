"""Where the sm_80 kernel's time goes between the copies and the
multiplies: the planned sm_80 kernel's own PTX (since 3b31eac without a
producer warpgroup: the consumers copy), and copies of it with one piece
taken out, timed side by side (interleaved, one run). The copies compute
wrong results (but "no sleeps"); they are timing probes only.

  as compiled                the kernel (through the driver API, as ggc's
                             runtime launches it: checks this harness)
  no sleeps                  a poll that fails polls again at once (no
                             nanosleep between polls)
  no waits                   every poll of the ring succeeds at once: the
                             consumers never wait for the copies, the
                             producer never for a free stage (one side
                             alone would lap the other and wait forever on a
                             parity that already went by)
  no copies                  the producer's cp.async are gone (its arrivals
                             stay): the ring's hand-off without memory traffic
  no multiplies              the ldmatrix and mma.sync are gone: the
                             copies and the ring alone
  no copies, no waits        both
  ..., no releases           the consumers' arrivals on the empty barrier
                             are gone too

Beside them: the kernel on inputs of zeros (the same work on data that
does not toggle the multipliers), the mma.sync peak on constant and on
random operands, and the SM clock and board power while each runs alone
(nvidia-smi, sampled every 100 ms over 2 s).

Each probe first runs once in a process of its own with a time limit, so
that one that hangs is reported and left out instead of stopping the run.

    python3 benchmarks/probes/sm80_handoff.py [CONFIG WARP_COLUMNS]

CONFIG (a #gg.config) and WARP_COLUMNS replace the planned kernel's tile
and warp layout, e.g. "#gg.config<block = [64, 256, 64], stages = 4,
cluster = [1, 1], sms = 132>" 4.
"""
import ctypes
import os
import re
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_sm80 import DriverKernel, PeakKernel, contiguous_inputs  # noqa: E402

WAIT = re.compile(r"^\s*mbarrier\.test_wait\.parity\.shared\.b64\s+(%p\d+),.*$")


def patch(ptx, skip_waits=False, drop_copies=False, drop_releases=False, drop_sleeps=False,
          drop_multiplies=False):
    lines = ptx.split("\n")
    out = []
    dropping = False  # inside a dropped statement, which may span lines
    for line in lines:
        if drop_multiplies and (dropping or line.strip().startswith(("mma.sync", "ldmatrix"))):
            dropping = not line.rstrip().endswith(";")
            continue
        if drop_sleeps and line.strip().startswith("nanosleep.u32"):
            continue
        if drop_copies and line.strip().startswith("cp.async.cg.shared.global"):
            continue
        if drop_releases and line.strip().startswith("mbarrier.arrive.shared"):
            continue
        m = WAIT.match(line)
        if m and skip_waits:
            out.append(f"\tsetp.eq.b32 {m.group(1)}, 0, 0;")
            continue
        out.append(line)
    return "\n".join(out)


PROBES = {"as compiled": {}, "no waits": dict(skip_waits=True),
          "no sleeps": dict(drop_sleeps=True),
          "no copies": dict(drop_copies=True),
          "no multiplies": dict(drop_multiplies=True),
          "no copies, no waits": dict(skip_waits=True, drop_copies=True),
          "no waits, no releases": dict(skip_waits=True, drop_releases=True),
          "no copies, no waits, no releases": dict(skip_waits=True, drop_copies=True,
                                                   drop_releases=True)}


def setup():
    # GGC_HANDOFF_EQUAL=1: bench_sm80's equal groups (T=8448 G=6, whole
    # tiles and waves) instead of the ragged T=8192 G=8.
    equal = os.environ.get("GGC_HANDOFF_EQUAL") == "1"
    t, g, n, k = (8448, 6, 4096, 4096) if equal else (8192, 8, 4096, 4096)
    ends, offsets, a, b, out = contiguous_inputs(t, g, n, k, equal=equal)
    spec = dict(layout="contiguous", num_groups=g, n=n, k=k)
    text = ir.grouped_matmul("k", **spec)
    # Planned for the card in hand, as ggc's runtime plans it.
    shared = ggc.compiler.device_shared_memory_bytes()
    if os.environ.get("GGC_HANDOFF_CONFIG"):
        config = os.environ["GGC_HANDOFF_CONFIG"]
        plan = ggc.compile_ir(ir.grouped_matmul("k", config=config, **spec), emit="gg-config",
                              arch="sm_80", shared_memory_bytes=shared).plans[0]["attributes"]
        plan = re.sub(r"warp_columns = \d",
                      f"warp_columns = {os.environ['GGC_HANDOFF_WARP_COLUMNS']}",
                      plan["kernel_plan"])
        text = ir.grouped_matmul("k", config=config, kernel_plan=plan, **spec)
    compiled = ggc.compile_ir(text, emit="ptx", arch="sm_80", shared_memory_bytes=shared)
    print(f"{'equal groups T=8448 G=6' if equal else 'T=8192 G=8'} N=K=4096: "
          f"{compiled.plans[0]['attributes']['config']}", file=sys.stderr)
    ptx, info = compiled.asm["ptx"], compiled.kernel_info[0]
    args = [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()),
            ctypes.c_uint64(out.data_ptr()), ctypes.c_uint64(offsets.data_ptr()),
            ctypes.c_uint64(t)]
    def probe(label):
        text_ = patch(ptx, **PROBES[label])
        assert label == "as compiled" or text_ != ptx, f"{label}: nothing patched"
        kern = DriverKernel(text_, info["name"], info["shared_bytes"])
        return lambda: kern.launch(info["max_grid"], info["block"], *args)
    runtime = ggc.Kernel(text, target="sm_80")
    zeros = (torch.zeros_like(a), torch.zeros_like(b))
    fns = {"ggc runtime": lambda: runtime(a, b, offsets, out),
           "ggc runtime, zero inputs": lambda: runtime(zeros[0], zeros[1], offsets, out)}
    return fns, probe, 2.0 * t * n * k


def clock_and_power(fn, seconds=2.0):
    """Median SM clock (MHz) and board power (W) while `fn` runs back to
    back, from nvidia-smi's samples after the first half second."""
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw",
                            "--format=csv,noheader,nounits", "-lms", "100"],
                           stdout=subprocess.PIPE, text=True)
    start = time.time()
    while time.time() - start < seconds:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
    smi.terminate()
    rows = [line.split(",") for line in smi.communicate()[0].strip().split("\n")]
    rows = [(float(c), float(w)) for c, w in rows[5:]] or [(0.0, 0.0)]
    return (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))


def main():
    if len(sys.argv) == 3 and sys.argv[1] != "--once":
        os.environ["GGC_HANDOFF_CONFIG"], os.environ["GGC_HANDOFF_WARP_COLUMNS"] = sys.argv[1:]
    if len(sys.argv) > 2 and sys.argv[1] == "--once":
        setup()[1](sys.argv[2])()
        torch.cuda.synchronize()
        return
    safe = []
    for label in PROBES:
        try:
            subprocess.run([sys.executable, __file__, "--once", label], timeout=60, check=True,
                           capture_output=True)
            safe.append(label)
        except (subprocess.TimeoutExpired, subprocess.CalledProcessError) as e:
            print(f"{label}: left out ({type(e).__name__})")
    fns, probe, flops = setup()
    fns.update({label: probe(label) for label in safe})
    peaks = {operands: PeakKernel(operands=operands) for operands in ("constant", "random")}
    peak_fns = {f"peak, {o} operands": (lambda k=k: k.launch(4096)) for o, k in peaks.items()}
    times = time_interleaved({**fns, **peak_fns})
    rates = {label: flops / (us * 1e-6) for label, us in times.items() if label in fns}
    rates.update({f"peak, {o} operands": k.flops(4096) / (times[f"peak, {o} operands"] * 1e-6)
                  for o, k in peaks.items()})
    peak = rates["peak, constant operands"]
    print(f"{torch.cuda.get_device_name()}: mma.sync peak {peak / 1e12:.0f} TFLOPS "
          f"(constant operands), {rates['peak, random operands'] / 1e12:.0f} (random)")
    for label, us in times.items():
        mhz, watts = clock_and_power({**fns, **peak_fns}[label])
        print(f"{label:34s} {us:8.1f} us {rates[label] / 1e12:6.0f} TFLOPS "
              f"{100 * rates[label] / peak:5.1f}% of the constant peak; {mhz:.0f} MHz {watts:.0f} W")


if __name__ == "__main__":
    main()
