"""Host time of one call: what the host spends per call when it never
waits for the GPU. On a GPU, `host us/call` times 32 calls queued behind a
long sleep kernel (the GPU is busy, so every launch returns at once);
`loop us/call` and `GPU us/call` are the wall and GPU time per call of N
calls back to back, the throughput a loop sees (bound by the slower of the
two). With --stub (no GPU), launches are no-ops and the loop is the host.

    python benchmarks/host_time.py [--calls 10000] [--json $OUT/host_time.json]

Cases: training's ops (grouped_mm's two gradients, an accumulated f32
weight gradient, a forward + backward under autograd through
torch.ops.ggc.grouped_mm and through ggc.ops.grouped_gemm, against
torch._grouped_mm's), ggc.ops.grouped_gemm (bf16 contiguous, with and without `out`; FP8
masked with block scales, DeepGEMM's drop-in), torch.ops.ggc.grouped_gemm,
torch.ops.ggc.grouped_mm, a @ggc.jit kernel with an epilogue, one whole
ggc.moe.fused_moe layer call (bf16, T=4 tokens, E=8, top-2, H=I=256; replayed
from its cached CUDA graph, the default at that size, and eagerly), and
the peers: torch._grouped_mm, and DeepGEMM when `deep_gemm` imports.

`--python-signature` keys cached calls by Python's tuples instead of
ggc._signature's C++ packing (ggc.signature), for an A/B of the two;
`--python-empty` allocates a cached call's output with torch.empty.

`--stub` runs on a machine without a GPU: CPU tensors stand in for CUDA
ones and the driver's launch is a no-op, so the numbers are ggc's host path
without cuLaunchKernelEx (and without a CUDA allocator). `--profile` adds a
cProfile of each ggc case.
"""

import argparse
import cProfile
import json
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

G, M, N, K = 8, 256, 256, 256  # tiny: a few us of GPU time a call
MOE_T, MOE_E, MOE_K, MOE_H, MOE_I = 4, 8, 2, 256, 256  # one decode step's layer


def install_stub(patch=setattr, launches=None):
    """CPU tensors look like CUDA tensors on device 0, stream 0, and every
    launch (prepared, or a launch record) does nothing but append its
    addresses to `launches` when given. `patch(obj, name, value)` sets
    each stub (a test passes monkeypatch.setattr)."""
    import ggc
    from ggc import runtime
    jit = sys.modules["ggc.jit"]
    real_describe = runtime._describe_torch

    def describe(where, obj):
        dtype = runtime._TORCH_DTYPES.get(str(obj.dtype))
        if obj.device.type != "cpu" or dtype is None:
            return real_describe(where, obj)
        return runtime._Tensor(obj.data_ptr(), tuple(obj.shape), tuple(obj.stride()), dtype,
                               0, 0)

    class Launch:
        def launch(self, addresses=(), stream=0):
            if launches is not None:
                launches.append(list(addresses))

        @property
        def raw(self):
            """What the torch ops' C++ kernels launch a record by
            (LaunchRecord.raw): without `launches`, nothing (a null
            function: no launch); with it, a C function that records."""
            return (0, 0) if launches is None else (0, _recorder_address(launches))

    class StubKernel:
        def __init__(self, *args, **kwargs):
            pass

        def prepare(self, *args, **kwargs):
            return Launch()

        def record(self, *args, **kwargs):
            return Launch()

    class StubModule:
        Kernel = StubKernel

        def driver_available(self):
            return True, ""

        def __getattr__(self, name):
            return getattr(ggc._ggc, name)

    from ggc.moe import checks
    if hasattr(checks, "require_cuda"):  # fused_moe's device rule before the CPU backend
        patch(checks, "require_cuda", lambda device: None)
    patch(runtime, "_describe_torch", describe)
    patch(runtime, "_ggc", StubModule())
    if hasattr(jit, "_runs_on_cpu"):  # CPU launches take the (stubbed) GPU path,
        patch(jit, "_runs_on_cpu", lambda tensors: False)  # not ggc.reference
    else:
        patch(jit, "_require_gpu_tensors", lambda tensors: None)
    if hasattr(runtime, "_torch_stream_getter"):  # before the launch records
        patch(runtime, "_torch_stream_getter", lambda args: (lambda: 0))
    if hasattr(runtime, "current_stream"):
        patch(runtime, "current_stream", lambda device: 0)


_RECORDERS = []  # the C functions made below, kept alive


def _recorder_address(launches) -> int:
    """The address of a C function with LaunchRecord.raw's signature
    (python/src/op_kernels.cpp's LaunchFn) that appends its addresses to
    `launches`: what the stub's records give the torch ops' C++ kernels."""
    import ctypes
    for made_for, function in _RECORDERS:
        if made_for is launches:
            return ctypes.cast(function, ctypes.c_void_p).value
    signature = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                                 ctypes.c_size_t, ctypes.c_uint64, ctypes.c_char_p,
                                 ctypes.c_size_t)

    def record(_record, addresses, count, _stream, _error, _error_size):
        launches.append([addresses[i] for i in range(count)])
        return 0
    function = signature(record)
    _RECORDERS.append((launches, function))
    return ctypes.cast(function, ctypes.c_void_p).value


def stub_for_test(monkeypatch, cache_dir):
    """install_stub for a test: its own disk cache, ggc.ops' kernels and
    plans of this test only (the recorder must not outlive it: call
    ggc.signature.forget_op_plans() after the test); returns the list every
    launch's addresses go to."""
    from ggc import ops, signature
    monkeypatch.setenv("GGC_CACHE_DIR", str(cache_dir))
    # The torch ops' C++ kernels keep launches of the stub's records, which
    # record to this test's list: none may outlive it (a CPU call of a
    # later test would take one). The test's fixture forgets them after it.
    signature.forget_op_plans()
    seen = []
    install_stub(monkeypatch.setattr, seen)
    monkeypatch.setattr(ops, "_PLANS", {})
    monkeypatch.setattr(ops, "_KERNELS", {})
    return seen


def cases(device):
    import ggc
    import ggc.language as gl
    import ggc.moe  # noqa: F401 - ggc.moe.fused_moe below
    from ggc import deepgemm, torch_ops
    bf16, f8 = torch.bfloat16, torch.float8_e4m3fn
    a = torch.randn(M, K, device=device).to(bf16)
    b = torch.randn(G, N, K, device=device).to(bf16)
    offsets = torch.arange(0, M + 1, M // G, device=device, dtype=torch.int32)
    out = torch.empty(M, N, device=device, dtype=bf16)
    route = torch.rand(M, device=device)

    @ggc.jit
    def routed(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, r: gl.RowVector, y: gl.Out):
        gl.store(y, gl.grouped_dot(x, w, offs) * r)

    m_max = 128
    x8 = torch.randn(G, m_max, K, device=device).to(f8)
    sx = torch.rand(G, m_max, K // 128, device=device) + 0.5
    w8 = torch.randn(G, N, K, device=device).to(f8)
    sw = torch.rand(G, N // 128, K // 128, device=device) + 0.5
    counts = torch.full((G,), m_max, dtype=torch.int32, device=device)
    out8 = torch.empty(G, m_max, N, device=device, dtype=bf16)
    # Dense (DeepGEMM's fp8_gemm_nt, bf16_gemm_nt): a decode-sized M.
    xd, sxd = deepgemm.per_token_cast_to_fp8(torch.randn(m_max, K, device=device), False)
    wd, swd = deepgemm.per_block_cast_to_fp8(torch.randn(N, K, device=device), False)
    dense_out = torch.empty(m_max, N, device=device, dtype=bf16)
    ad, bd = a[:m_max].contiguous(), b[0].contiguous()
    # Training (#40): one projection's backward ops, an accumulated f32
    # weight gradient, and a whole autograd step.
    dw32 = torch.zeros(G, N, K, device=device)
    a_leaf, b_leaf = a.clone().requires_grad_(), b.clone().requires_grad_()

    def ggc_step():
        y = torch.ops.ggc.grouped_mm(a_leaf, b_leaf, offsets)
        return torch.autograd.grad(y, (a_leaf, b_leaf), out)

    def ops_step():  # the MoE layers' path: ggc.ops under autograd
        y = ggc.ops.grouped_gemm(a_leaf, b_leaf, offsets=offsets)
        return torch.autograd.grad(y, (a_leaf, b_leaf), out)

    ggc_cases = {
        "torch.ops.ggc.grouped_mm_grad_x bf16":
            lambda: torch_ops.grouped_mm_grad_x(out, b, offsets),
        "torch.ops.ggc.grouped_mm_grad_w bf16":
            lambda: torch_ops.grouped_mm_grad_w(out, a, offsets),
        "ggc.ops.grouped_gemm k_offsets, f32 out += (accumulate)":
            lambda: ggc.ops.grouped_gemm(out, a, k_offsets=offsets, out=dw32, accumulate=True),
        "grouped_mm forward + backward (autograd, 3 GEMMs)": ggc_step,
        "ggc.ops.grouped_gemm forward + backward (autograd)": ops_step,
        "ggc.deepgemm fp8_gemm_nt (drop-in)":
            lambda: deepgemm.fp8_gemm_nt((xd, sxd), (wd, swd), dense_out),
        "ggc.deepgemm bf16_gemm_nt (drop-in)":
            lambda: deepgemm.bf16_gemm_nt(ad, bd, dense_out),
        "ggc.deepgemm bf16 contiguous (drop-in)":
            lambda: deepgemm.m_grouped_bf16_gemm_nt_contiguous(a, b, out, tags),
        "ggc.ops.grouped_gemm bf16 (allocates out)":
            lambda: ggc.ops.grouped_gemm(a, b, offsets=offsets),
        "ggc.ops.grouped_gemm bf16 out=":
            lambda: ggc.ops.grouped_gemm(a, b, offsets=offsets, out=out),
        "ggc.deepgemm fp8 masked (drop-in)":
            lambda: deepgemm.m_grouped_fp8_gemm_nt_masked((x8, sx), (w8, sw), out8, counts,
                                                          m_max),
        "torch.ops.ggc.grouped_gemm bf16":
            lambda: torch.ops.ggc.grouped_gemm(a, b, offsets=offsets),
        "torch.ops.ggc.grouped_mm bf16":
            lambda: torch.ops.ggc.grouped_mm(a, b, offsets),
        "@ggc.jit kernel with an epilogue":
            lambda: routed(a, b, offsets, route, out),
        f"ggc.moe.fused_moe bf16 (T={MOE_T}, E={MOE_E}, top-{MOE_K}), graph replay":
            lambda: ggc.moe.fused_moe(*layer),
        f"ggc.moe.fused_moe bf16 (T={MOE_T}, E={MOE_E}, top-{MOE_K}), graph=False":
            lambda: ggc.moe.fused_moe(*layer, graph=False),
    }
    tags = torch.arange(G, device=device, dtype=torch.int32).repeat_interleave(M // G)
    layer = moe_layer(device)
    peers = {}
    if device == "cuda":  # the FP8 recipe's quantisation kernels are CUDA's
        from ggc import training

        def fp8_step():  # the FP8 MoE layer's projections (weights kept)
            y = training.fp8_grouped_mm(a_leaf, b_leaf, offsets)
            return torch.autograd.grad(y, (a_leaf, b_leaf), out)
        ggc_cases["ggc.training.fp8_grouped_mm forward (weights kept)"] = (
            lambda: training.fp8_grouped_mm(a, b, offsets))
        ggc_cases["ggc.training.fp8_grouped_mm forward + backward (autograd)"] = fp8_step
        ends = offsets[1:].contiguous()
        peers["torch._grouped_mm bf16"] = lambda: torch._grouped_mm(a, b.transpose(1, 2),
                                                                    offs=ends)

        def torch_step():
            y = torch._grouped_mm(a_leaf, b_leaf.transpose(1, 2), offs=ends)
            return torch.autograd.grad(y, (a_leaf, b_leaf), out)
        peers["torch._grouped_mm forward + backward (autograd)"] = torch_step
        try:
            import deep_gemm
            peers["deep_gemm fp8 masked"] = lambda: deep_gemm.m_grouped_fp8_gemm_nt_masked(
                (x8, sx), (w8, sw), out8, counts, m_max)
            peers["deep_gemm bf16 contiguous"] = (
                lambda: deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, out, tags))
            peers["deep_gemm fp8_gemm_nt"] = lambda: deep_gemm.fp8_gemm_nt(
                (xd, sxd), (wd, swd), dense_out)
            peers["deep_gemm bf16_gemm_nt"] = lambda: deep_gemm.bf16_gemm_nt(ad, bd, dense_out)
        except Exception as e:  # noqa: BLE001 - a missing or broken peer is reported
            print(f"deep_gemm not measured: {e}", file=sys.stderr)
    return ggc_cases, peers


def moe_layer(device):
    """A decode-sized layer call's inputs: routing weights and ids as a
    router gives them (distinct experts per token)."""
    x = torch.randn(MOE_T, MOE_H, device=device).to(torch.bfloat16)
    w13 = (torch.randn(MOE_E, 2 * MOE_I, MOE_H, device=device) / MOE_H ** 0.5).to(torch.bfloat16)
    w2 = (torch.randn(MOE_E, MOE_H, MOE_I, device=device) / MOE_I ** 0.5).to(torch.bfloat16)
    weights = torch.rand(MOE_T, MOE_K, device=device).softmax(-1)
    ids = torch.stack([torch.randperm(MOE_E)[:MOE_K] for _ in range(MOE_T)]).to(device)
    return x, w13, w2, weights, ids.to(torch.int32)


# Calls queued behind one sleep kernel: few enough that their launches fit
# in the launch queue (a MoE layer makes about 20), so none waits for room.
QUEUED_CALLS = 32
# About 0.3 s of the H200's SM clock: longer than QUEUED_CALLS of any case.
SLEEP_CYCLES = 600_000_000


def warm(fn, device):
    for _ in range(20):  # compile, load, fill the caches
        fn()
    if device == "cuda":
        torch.cuda.synchronize()


def queued_host_us(fn, calls=QUEUED_CALLS):
    """Host time per call with the GPU held busy by a sleep kernel, so that
    no call waits for the GPU: the host's own cost. None when the sleep
    ended before the calls did (a call that synchronises, or launches that
    filled the queue: the figure would include waiting)."""
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP_CYCLES)
    sleeping = torch.cuda.Event()
    sleeping.record()
    begin = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - begin) / calls * 1e6
    still_queued = not sleeping.query()
    torch.cuda.synchronize()
    return host if still_queued else None


def back_to_back_us(fn, calls, device):
    """Wall and GPU time per call of `calls` back to back: the throughput a
    loop sees, bound by the host or by the GPU, whichever is slower."""
    if device == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
    begin = time.perf_counter()
    for _ in range(calls):
        fn()
    wall = (time.perf_counter() - begin) / calls * 1e6
    gpu = None
    if device == "cuda":
        end.record()
        end.synchronize()
        gpu = start.elapsed_time(end) * 1e3 / calls
    return wall, gpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many loops")
    parser.add_argument("--stub", action="store_true", help="no GPU: CPU tensors, no-op launch")
    parser.add_argument("--profile", action="store_true", help="cProfile each ggc case")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--cases", default="", help="only the cases whose label has this")
    parser.add_argument("--python-signature", action="store_true",
                        help="key cached calls by Python's tuples, not ggc._signature's "
                             "C++ packing (an A/B of the two)")
    parser.add_argument("--python-empty", action="store_true",
                        help="allocate a cached call's output with torch.empty, not "
                             "ggc._signature's empty() (an A/B of the two)")
    args = parser.parse_args()
    device = "cpu" if args.stub else "cuda"
    if args.python_signature:
        import ggc.signature
        ggc.signature._native = None
        ggc.signature._native_addresses = ggc.signature._native_empty = None
    if args.python_empty:
        import ggc.signature
        ggc.signature.of([])  # loads the module, then sets its allocator aside
        ggc.signature._native_empty = None
    if args.stub:
        install_stub()
    ggc_cases, peers = cases(device)
    from ggc.signature import op_kernel_hits
    results = {}
    # C++/call: launches the torch ops' C++ kernels ran without Python, a
    # call (which path the ops took: 0 where they ran Python).
    print(f"{'case':48} {'host us/call':>12} {'loop us/call':>12} {'GPU us/call':>12} "
          f"{'C++/call':>8}")
    for label, fn in {**ggc_cases, **peers}.items():
        if args.cases not in label:
            continue
        warm(fn, device)
        hits = op_kernel_hits()
        loops = [back_to_back_us(fn, args.calls, device) for _ in range(args.repeats)]
        cpp = (op_kernel_hits() - hits) / (args.calls * args.repeats)
        wall, gpu = min(loops, key=lambda r: r[0])
        if device == "cuda":
            queued = [h for h in (queued_host_us(fn) for _ in range(args.repeats)) if h]
            host = min(queued) if queued else None
        else:  # the stub's launches cost nothing: the loop is the host's time
            host = wall
        results[label] = {"host_us": host, "loop_us": wall, "gpu_us": gpu,
                          "cpp_launches_per_call": cpp}
        shown = "n/a (sleep too short)" if host is None else f"{host:12.2f}"
        print(f"{label:48} {shown:>12} {wall:12.2f} {'' if gpu is None else f'{gpu:12.2f}':>12} "
              f"{cpp:8.2f}", flush=True)
        if args.profile and label in ggc_cases:
            profile = cProfile.Profile()
            profile.runcall(lambda: [fn() for _ in range(args.calls)])
            pstats.Stats(profile).sort_stats("tottime").print_stats(12)
    if args.json:
        import ggc.signature
        meta = {"device": torch.cuda.get_device_name() if device == "cuda" else "cpu (stub)",
                "torch": torch.__version__, "calls": args.calls, "shape": [G, M, N, K],
                "signature": "python" if ggc.signature._native is None else "native"}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
