"""Whether a call synchronises with the GPU: the host time of five calls
queued behind a 50 ms sleep kernel (a call that waits for the GPU takes
the sleep's time), for torch.ops.ggc.grouped_mm_grad_x and the same
kernel through ggc.ops, with torch's sync debug mode on (it warns on the
synchronising calls torch itself makes).

    python3 benchmarks/probes/op_sync.py
"""
import os
import sys
import time
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from ggc import ops, torch_ops  # noqa: E402
from bench_training import projection_problem  # noqa: E402

_, _, offsets, _, w, dy = projection_problem(32768, 128, 1536, 2048, "uniform", 0)
w = w.detach()
kept = dy.new_empty(dy.shape[0], w.shape[2])
fns = {"op": lambda: torch_ops.grouped_mm_grad_x(dy, w, offsets),
       "ops": lambda: ops.grouped_gemm(dy, w, offsets=offsets, b_layout="kn", out=kept,
                                       zero_ungrouped=True)}
for fn in fns.values():
    fn()
torch.cuda.synchronize()
torch.cuda.set_sync_debug_mode("warn")
for name, fn in fns.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda._sleep(50_000_000)
        start = time.perf_counter()
        for _ in range(5):
            fn()
        host = (time.perf_counter() - start) / 5 * 1e6
        torch.cuda.synchronize()
    print(f"{name}: {host:.1f} us a call behind the sleep; torch's sync warnings: "
          f"{[str(c.message)[:120] for c in caught][:3]}", flush=True)
