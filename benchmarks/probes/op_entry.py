"""Where a cached torch-op call's host time goes on the GPU's host: the
op through its C++ kernel (a kept launch), beside the pieces it is made
of and torch's own entry costs, each timed as host_time.py times a call
(queued behind a sleep kernel, so no call waits for the GPU), median of
many rounds, the cases interleaved round by round.

    PYTHONPATH=python python3 benchmarks/probes/op_entry.py [--rounds 40]
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import host_time  # noqa: E402

import torch  # noqa: E402

import ggc  # noqa: E402
from ggc import ops, signature, torch_ops  # noqa: E402

G, M, N, K = host_time.G, host_time.M, host_time.N, host_time.K


def cases():
    bf16 = torch.bfloat16
    a = torch.randn(M, K, device="cuda").to(bf16)
    b = torch.randn(G, N, K, device="cuda").to(bf16)
    offsets = torch.arange(0, M + 1, M // G, device="cuda", dtype=torch.int32)
    out = torch.empty(M, N, device="cuda", dtype=bf16)
    torch.ops.ggc.grouped_mm(a, b, offsets)
    tensors = (a, b, offsets, *torch_ops._LEFT_OUT)
    _, plan = ops.remembered(tensors, ops.plan_options(out_dtype=bf16))
    full = [a, b, offsets, *(None,) * 6, out, None, *plan.constants]
    addresses = signature.addresses(full, plan.sources)
    raw_stream = torch._C._cuda_getCurrentRawStream
    return {
        "torch.ops.ggc.grouped_mm (C++ kernel)": lambda: torch.ops.ggc.grouped_mm(a, b, offsets),
        "its Python body (torch_ops._grouped_mm)": lambda: torch_ops._grouped_mm(a, b, offsets),
        "ggc.ops.grouped_gemm out=": lambda: ggc.ops.grouped_gemm(a, b, offsets=offsets,
                                                                   out=out),
        "the kept launch alone (Launch.run)": lambda: plan.launch.run(addresses, None),
        "LaunchRecord.launch alone": lambda: plan.launch.record.launch(addresses, raw_stream(0)),
        "torch.ops.aten.view.default (entry)": lambda: torch.ops.aten.view.default(a, [-1]),
        "torch.ops.aten.empty_like.default": lambda: torch.ops.aten.empty_like.default(out),
        "torch.empty_like": lambda: torch.empty_like(out),
        "a.view(-1)": lambda: a.view(-1),
        "torch._grouped_mm": lambda: torch._grouped_mm(a, b.transpose(1, 2),
                                                       offs=offsets[1:]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    found = cases()
    for fn in found.values():
        host_time.warm(fn, "cuda")
    hits = signature.op_kernel_hits()
    times = {label: [] for label in found}
    for _ in range(args.rounds):
        for label, fn in found.items():
            us = host_time.queued_host_us(fn)
            if us is not None:
                times[label].append(us)
    print(f"C++ kernel hits during the rounds: {signature.op_kernel_hits() - hits}")
    print(f"{'case':44} {'median us':>10} {'min us':>8} {'rounds':>7}")
    for label, values in times.items():
        if values:
            print(f"{label:44} {statistics.median(values):10.2f} {min(values):8.2f} "
                  f"{len(values):7d}")
        else:
            print(f"{label:44} {'-':>10}")


if __name__ == "__main__":
    main()
