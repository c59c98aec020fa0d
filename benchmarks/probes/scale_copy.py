"""Where the time of the drop-in's copy of K-major A scales goes
(`get_mn_major_tma_aligned_tensor`, gg.transpose_scales' kernel): per
shape, the wall time a call costs back to back, the host's own time (calls
queued behind a sleep kernel), the kernel's GPU time (torch.profiler), a
cProfile of the host path, and torch's copy of the same storage beside it.

    python3 benchmarks/probes/scale_copy.py [--shapes R,C;...]
"""
import argparse
import cProfile
import os
import pstats
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from ggc.deepgemm.utils.layout import get_mn_major_tma_aligned_tensor  # noqa: E402

SHAPES = "8192,56;16384,64;8192,16"


def torch_copy(sf):
    mn, kb = sf.shape
    aligned = -(-mn // 4) * 4
    storage = torch.empty(kb, aligned, dtype=sf.dtype, device=sf.device)
    storage[:, :mn].copy_(sf.t())
    if aligned != mn:
        storage[:, mn:].zero_()
    return storage.t()[:mn]


def wall_us(fn, calls=2000):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e6 / calls


def host_us(fn, calls=64):
    torch.cuda._sleep(200_000_000)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - start) * 1e6 / calls
    torch.cuda.synchronize()
    return host


def gpu_us(fn, calls=200):
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    rows = [(e.key, e.device_time_total / e.count, e.count) for e in prof.key_averages()
            if e.device_time_total > 0]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=SHAPES)
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), flush=True)
    for shape in args.shapes.split(";"):
        r, c = (int(v) for v in shape.split(","))
        sf = torch.rand(r, c, device="cuda") + 0.5
        ref = torch_copy(sf)
        assert torch.equal(get_mn_major_tma_aligned_tensor(sf), ref)
        for name, fn in (("ggc", lambda: get_mn_major_tma_aligned_tensor(sf)),
                         ("torch", lambda: torch_copy(sf))):
            print(f"R={r} C={c} {name:5s} wall {wall_us(fn):7.2f} us/call  host "
                  f"{host_us(fn):7.2f} us/call", flush=True)
            for key, us, count in gpu_us(fn):
                print(f"    kernel {key[:60]:60s} {us:7.2f} us x{count}", flush=True)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(1000):
            get_mn_major_tma_aligned_tensor(sf)
        prof.disable()
        torch.cuda.synchronize()
        pstats.Stats(prof).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
