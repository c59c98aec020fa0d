"""The host's cost of each layer of one small ggc.moe kernel launch (the
FP8 row quantisation): rows_mn's call, ptx.launch, the launch record's
C++ launch, the stream lookup, the output's allocation; beside them a
torch kernel launch and a cached ggc.ops.grouped_gemm; then the FP8
recipe's projection (ggc.training.fp8_grouped_mm) call by call, its
forward + backward with the backward on torch's engine thread and on the
calling one (a cProfile of the latter). Many calls each, the GPU kept
idle (small rows). Lists the process's threads.

    python3 benchmarks/probes/launch_cost.py [--calls 2000]
"""

import argparse
import cProfile
import pstats
import os
import sys
import threading

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from ggc import ops, runtime, training  # noqa: E402
from ggc.moe import ptx, quant_kernel  # noqa: E402
from bench_grouped_gemm import host_us  # noqa: E402


def quantize_launch():
    """(x [128, 2048] bf16, the kept launch record of rows_mn(x), its key,
    the addresses of x and an output pair, the current stream): one small
    ggc.moe kernel's launch, layer by layer."""
    x = torch.randn(128, 2048, device="cuda").bfloat16()
    quant_kernel.rows_mn(x)
    key = next(k for k in ptx._RECORDS if k[0].startswith("ggc_moe_quantize_k2048"))
    out = torch.empty(128, 2048, dtype=torch.float8_e4m3fn, device="cuda")
    scales = torch.empty(16, 128, dtype=torch.float32, device="cuda")
    tensors = (x, out, scales)
    return (x, ptx._RECORDS[key], key, tensors, tuple(t.data_ptr() for t in tensors),
            runtime.current_stream(0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    x, record, key, tensors, addresses, stream = quantize_launch()
    name, device, grid, params = key
    code = quant_kernel.kernel(2048, False, False)[1]
    a = torch.randn(512, 256, device="cuda").bfloat16()
    b = torch.randn(4, 256, 256, device="cuda").bfloat16()
    offsets = torch.tensor([0, 128, 256, 384, 512], device="cuda", dtype=torch.int32)
    cases = {
        "quant_kernel.rows_mn(x)": lambda: quant_kernel.rows_mn(x),
        "ptx.launch (kept record)": lambda: ptx.launch(name, code, quant_kernel.THREADS, grid,
                                                        list(params), tensors, device),
        "record.launch(addresses, stream)": lambda: record.launch(addresses, stream),
        "runtime.current_stream(0)": lambda: runtime.current_stream(0),
        "torch.empty(128, 2048, fp8)": lambda: torch.empty(128, 2048, dtype=torch.float8_e4m3fn,
                                                           device="cuda"),
        "x * 2 (a torch kernel)": lambda: x * 2,
        "ops.grouped_gemm bf16 (cached)": lambda: ops.grouped_gemm(a, b, offsets=offsets,
                                                                    validate=False),
        "torch.ops.ggc.grouped_gemm bf16": lambda: torch.ops.ggc.grouped_gemm(a, b,
                                                                              offsets=offsets),
    }
    w = torch.randn(4, 256, 256, device="cuda").bfloat16()
    xq, xs = training.quantized_rows(a)
    wq = training.quantized_weights(w, transposed=True)
    cases.update({
        "training.quantized_rows(a)": lambda: training.quantized_rows(a),
        "training.quantized_weights (kept)": lambda: training.quantized_weights(w, True),
        "ops.grouped_gemm fp8 (cached)": lambda: ops.grouped_gemm(
            xq, wq.q, offsets=offsets, a_scale=xs, b_scale=wq.scales, out_dtype=torch.bfloat16,
            validate=False),
        "fp8_grouped_mm forward (no grad)": lambda: training.fp8_grouped_mm(a, w, offsets),
    })
    wl = w.clone().requires_grad_()
    al = a.clone().requires_grad_()
    dy = torch.randn(512, 256, device="cuda").bfloat16()
    cases["fp8_grouped_mm forward + backward"] = lambda: torch.autograd.grad(
        training.fp8_grouped_mm(al, wl, offsets), (al, wl), dy)
    cases["ops.grouped_gemm bf16 forward + backward"] = lambda: torch.autograd.grad(
        ops.grouped_gemm(al, wl, offsets=offsets), (al, wl), dy)
    # The FP8 backward's calls one by one, on the tensors it sees.
    dyq, dys = training.quantized_rows(dy)
    cases.update({
        "_check(a, w, offsets)": lambda: training._check(a, w, offsets),
        "offsets.to(int32)": lambda: offsets.to(torch.int32),
        "quantized_rows(dy)": lambda: training.quantized_rows(dy),
        "dgrad ops.grouped_gemm fp8 zero_ungrouped": lambda: ops.grouped_gemm(
            dyq, wq.qt, offsets=offsets, a_scale=dys, b_scale=wq.scales_t,
            out_dtype=torch.bfloat16, validate=False, zero_ungrouped=True),
        "wgrad ops.grouped_gemm bf16 k_offsets": lambda: ops.grouped_gemm(
            dy, a, k_offsets=offsets, out_dtype=torch.bfloat16, validate=False),
    })
    with torch.no_grad():
        fwd = host_us(lambda: training._FP8GroupedMM.apply(a, w, offsets, False), args.calls)
    print(f"  _FP8GroupedMM.apply, no grad          {fwd:8.2f} us a call", flush=True)
    cases["autograd.grad of al * 2 (C++ node)"] = lambda: torch.autograd.grad(al * 2, al, dy)
    step = cases["fp8_grouped_mm forward + backward"]
    torch.autograd.set_multithreading_enabled(False)
    single = host_us(step, args.calls)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(200):
        step()
    profiler.disable()
    torch.autograd.set_multithreading_enabled(True)
    print(f"  fp8 forward + backward, backward on this thread {single:8.2f} us a call",
          flush=True)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    print(torch.cuda.get_device_name(), flush=True)
    for label, fn in cases.items():
        print(f"  {label:36} {host_us(fn, args.calls):8.2f} us a call", flush=True)
    print("threads:", [(t.name, t.daemon) for t in threading.enumerate()], flush=True)
    print("switch interval:", sys.getswitchinterval(), flush=True)


if __name__ == "__main__":
    main()
