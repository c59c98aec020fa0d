"""Why 2-CTA clusters lose when timed back to back (#39): the cluster
kernel against the plain one, at several persistent grid sizes, timed
sustained (10 calls between events) and one call at a time; and the
driver's own count of clusters of 2 it can keep resident
(cuOccupancyMaxActiveClusters) for the kernel.

    python benchmarks/probes/cluster_grid.py [--bf16] [--sms 132,128,120]
        [--uniform] [--variants c2:128x192:4:serial,...]

A variant is cluster:BMxBN:stages[:serial|pipelined][:direct] at 132
SMs (the plan's registers [40, 232] for serial, [24, 240] for
pipelined; direct: per-thread stores, no staged tile). --profile runs
each variant three times untimed, for ncu.
"""
import argparse
import ctypes
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from ggc.autotune import cuda_event_timer  # noqa: E402
from bench_grouped_gemm import fp8, ragged_groups, time_interleaved  # noqa: E402


class _LaunchAttr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_int), ("value", ctypes.c_ubyte * 64)]


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(_LaunchAttr)), ("numAttrs", ctypes.c_uint)]


def max_active_clusters(kernel, cluster):
    """The driver's cuOccupancyMaxActiveClusters for `kernel` in clusters
    of `cluster` CTAs (None where the query fails)."""
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.cuda.init()
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    ptx = kernel.asm["ptx"].encode() + b"\0"
    if cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(ptx)):
        return None
    if cuda.cuModuleGetFunction(ctypes.byref(function), module, kernel.name.encode()):
        return None
    shared = int(kernel.info["shared_bytes"])
    cuda.cuFuncSetAttribute(function, 8, shared)  # MAX_DYNAMIC_SHARED_SIZE_BYTES
    attr = _LaunchAttr()
    attr.id = 4  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    dims = (ctypes.c_uint * 3).from_buffer(attr.value)
    dims[0], dims[1], dims[2] = cluster, 1, 1
    block = kernel.info["block"]
    config = _LaunchConfig(cluster * 66, 1, 1, block[0] if isinstance(block, list) else block,
                           1, 1, shared, None, ctypes.pointer(attr), 1)
    count = ctypes.c_int()
    rc = cuda.cuOccupancyMaxActiveClusters(ctypes.byref(count), function, ctypes.byref(config))
    return count.value if rc == 0 else f"error {rc}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--sms", default="132,130,128,124,120")
    parser.add_argument("--shape", default="8192,8,4096,7168")
    parser.add_argument("--uniform", action="store_true",
                        help="equal groups (T/G rows each) instead of ragged ones")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--variants", default="",
                        help="cluster:BMxBN:stages[:serial|pipelined],... instead of --sms")
    args = parser.parse_args()
    t, g, n, k = map(int, args.shape.split(","))
    if args.uniform:
        offsets = torch.arange(0, t + 1, t // g, device="cuda", dtype=torch.int32)
    else:
        _, _, offsets = ragged_groups(t, g, 0)
    out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    if args.bf16:
        a = torch.randn(t, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(g, n, k, device="cuda").to(torch.bfloat16)
        extra, tensors, tile = {}, (a, b, offsets, out), "[128, 128, 64], stages = 6"
    else:
        kb = -(-k // 128)
        a, b = fp8(t, k), fp8(g, n, k)
        a_scale = torch.rand(kb, (t + 3) // 4 * 4, device="cuda") + 0.5
        b_scale = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
        extra = dict(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block")
        tensors, tile = (a, b, offsets, a_scale, b_scale, out), "[128, 128, 128], stages = 4"
    fns = {}
    block_k = 64 if args.bf16 else 128
    variants = []  # (label, config, plan)
    for v in filter(None, args.variants.split(",")):
        cluster, bmn, stages, *options = v.split(":")
        bm, bn = bmn.split("x")
        config = (f"#gg.config<block = [{bm}, {bn}, {block_k}], stages = {stages}, "
                  f"cluster = [{cluster[1:]}, 1], sms = 132>")
        direct = "direct" in options
        plan = [o for o in options if o in ("serial", "pipelined")]
        registers = "[40, 232]" if plan == ["serial"] else "[24, 240]"
        kernel_plan = (f"#gg.kernel_plan<promotion = {plan[0]}, scales = stages, registers = "
                       f"{registers}, staging = {'none' if direct else 'swizzled'}>"
                       ) if plan else None
        variants.append((v, config, kernel_plan, direct))
    if not variants:
        for cluster in (1, 2):
            for sms in map(int, args.sms.split(",")):
                if cluster == 1 and sms not in (132, 128):
                    continue
                variants.append((f"c{cluster} sms{sms}", f"#gg.config<block = {tile}, cluster = "
                                 f"[{cluster}, 1], sms = {sms}>", None, False))
    for label, config, kernel_plan, direct in variants:
        try:
            kernel = ggc.Kernel(ir.grouped_matmul(
                "k", layout="contiguous", num_groups=g, n=n, k=k, config=config,
                kernel_plan=kernel_plan, direct_stores=direct, **extra))
        except ggc.CompilationError as e:
            print(f"{label}: {str(e).splitlines()[0][:200]}")
            continue
        cluster = 2 if "cluster = [2" in config else 1
        print(f"{label}: grid bound {kernel.info['max_grid']}, registers "
              f"{kernel.resources}, max active clusters of {cluster}: "
              f"{max_active_clusters(kernel, cluster)}", flush=True)
        fns[label] = (lambda kern: (lambda: kern(*tensors)))(kernel)
    if args.profile:
        for fn in fns.values():
            for _ in range(3):
                fn()
        torch.cuda.synchronize()
        return
    sustained = time_interleaved(fns)
    # One call at a time, L2 flushed before each (ggc.autotune's timer).
    single = {label: cuda_event_timer(fn, warmup=0, reps=15) for label, fn in fns.items()}
    flops = 2.0 * t * n * k
    print(f"{'fp8' if not args.bf16 else 'bf16'} T={t} G={g} N={n} K={k}"
          f"{' uniform' if args.uniform else ' ragged'}")
    for label in fns:
        print(f"  {label:24s} sustained {sustained[label]:8.1f} us "
              f"({flops / sustained[label] / 1e6:6.1f} TFLOPS)  single {single[label]:8.1f} us")


if __name__ == "__main__":
    main()
