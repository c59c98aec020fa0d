"""What a call costs inside a Python autograd.Function's backward, which
torch's autograd engine runs on its device thread, against the same call
on the calling thread: ten of each (a ggc launch record, torch.empty, a
torch kernel, the stream lookup, a Python function call) inside the
backward of an identity, minus the identity alone.

    python3 benchmarks/probes/engine_thread_cost.py [--calls 2000]
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))

from ggc import signature  # noqa: E402
from bench_grouped_gemm import host_us  # noqa: E402
from launch_cost import quantize_launch  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    x, record, _, _, addresses, stream = quantize_launch()
    bodies = {
        "nothing": lambda: None,
        "record.launch": lambda: record.launch(addresses, stream),
        "torch.empty": lambda: torch.empty(128, 2048, device="cuda"),
        "torch.empty(dev)": lambda: torch.empty(128, 2048, dtype=torch.float8_e4m3fn,
                                                device=x.device),
        "x.new_empty": lambda: x.new_empty(128, 2048),
        "signature.empty": lambda: signature.empty((128, 2048), x),
        "x.view(-1)": lambda: x.view(-1),
        "torch.cuda.stream": lambda: torch.cuda.current_stream(),
    }
    leaf = torch.randn(64, device="cuda").requires_grad_()
    grad = torch.randn(64, device="cuda")
    print(torch.cuda.get_device_name(), flush=True)
    base = None
    for label, body in bodies.items():
        class Ten(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t.view_as(t)

            @staticmethod
            def backward(ctx, g):
                for _ in range(10):
                    body()
                return g

        def ten_here():
            for _ in range(10):
                body()

        engine = host_us(lambda: torch.autograd.grad(Ten.apply(leaf), leaf, grad), args.calls)
        torch.autograd.set_multithreading_enabled(False)
        single = host_us(lambda: torch.autograd.grad(Ten.apply(leaf), leaf, grad), args.calls)
        torch.autograd.set_multithreading_enabled(True)
        here = host_us(ten_here, args.calls)
        if base is None:
            base = (engine, single)
        print(f"  10x {label:16} in backward: engine thread {engine - base[0]:8.2f} us, "
              f"calling thread {single - base[1]:8.2f} us, outside autograd {here:8.2f} us "
              f"(the bare step: {base[0]:.1f} / {base[1]:.1f} us)", flush=True)


if __name__ == "__main__":
    main()
