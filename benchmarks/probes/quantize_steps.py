"""gg.quantize_rows' `steps` (a warp's steps of a row loaded together) on
the FP8 Qwen3-like layer's quantisations at T = 4,096 (#38:
quant_kernel.steps_for). Graph replay, L2 flushed, interleaved, us. (At
c3be81f this probe, as fp8_gather.py, also timed the layer with its up
projection reading the quantised tokens through a_rows.)

    python3 benchmarks/probes/quantize_steps.py
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_moe import captured, time_interleaved_flushed  # noqa: E402
from ggc.moe import quant_kernel  # noqa: E402


def quantisation_rows(rounds):
    """The Qwen3-like layer's quantisations at T = 4,096 by `steps`."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    tokens = torch.randn(4096, 2048, device="cuda", generator=gen).to(torch.bfloat16)
    source = torch.randint(0, 4096, (32768,), device="cuda", generator=gen, dtype=torch.int32)
    h = torch.randn(32768, 1536, device="cuda", generator=gen).to(torch.bfloat16)
    cases = {"tokens 4096 x 2048": lambda s: quant_kernel.rows_mn(tokens, steps=s),
             "gathered 32768 x 2048": lambda s: quant_kernel.rows_mn(tokens, source, steps=s),
             "gated 32768 x 768": lambda s: quant_kernel.rows_mn(h, gated=True, steps=s)}
    steps = (1, 2, 3, 4)
    print("| quantisation | " + " | ".join(f"steps {s}" for s in steps) + " |")
    print("|---|" + "---:|" * len(steps))
    for label, fn in cases.items():
        calls, outs, graphs = {}, {}, []
        for s in steps:
            replay, outs[s], graph = captured(lambda s=s: fn(s))
            calls[s], graphs = replay, graphs + [graph]
        times = time_interleaved_flushed(calls, rounds)
        for s in steps[1:]:
            assert torch.equal(outs[s][0].view(torch.uint8), outs[1][0].view(torch.uint8))
            assert torch.equal(outs[s][1], outs[1][1])
        print(f"| {label} | " + " | ".join(f"{times[s]:.1f}" for s in steps) + " |",
              flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), flush=True)
    quantisation_rows(args.rounds)
