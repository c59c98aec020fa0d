"""Two compilers' sm_80 kernels of one op, side by side (interleaved, one
run): PTX files written by `--write` with each compiler, loaded with the
driver API on the card in hand, checked against torch and timed.

    python3 benchmarks/ptx_ab.py --write DIR TAG   # here, with one compiler
    python3 benchmarks/ptx_ab.py DIR TAG_A TAG_B   # on the GPU
"""
import ctypes
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SHAPES = {"T8192_G8_N4096_K4096": (8192, 8, 4096, 4096),
          "T16384_G32_N4096_K2048": (16384, 32, 4096, 2048)}


def write(folder, tag):
    import ggc
    from ggc import ir
    os.makedirs(folder, exist_ok=True)
    for name, (t, g, n, k) in SHAPES.items():
        compiled = ggc.compile_ir(ir.grouped_matmul("k", layout="contiguous", num_groups=g,
                                                    n=n, k=k), emit="ptx", arch="sm_80")
        base = os.path.join(folder, f"{name}.{tag}")
        with open(base + ".ptx", "w") as f:
            f.write(compiled.asm["ptx"])
        with open(base + ".json", "w") as f:
            json.dump(compiled.kernel_info[0], f)


def run(folder, tags):
    import torch
    from bench_grouped_gemm import time_interleaved
    from bench_sm80 import DriverKernel, contiguous_inputs
    print(torch.cuda.get_device_name())
    for name, (t, g, n, k) in SHAPES.items():
        ends, offsets, a, b, out = contiguous_inputs(t, g, n, k)
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
            print(f"{name} {tag}: rel err against torch {err:.1e}")
            fns[tag] = fn
        times = time_interleaved(fns)
        flops = 2.0 * t * n * k
        print(f"{name}: " + ", ".join(f"{tag} {us:.1f} us ({flops / us / 1e6:.0f} TFLOPS)"
                                      for tag, us in times.items()))


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[1], sys.argv[2:])
