"""The router's softmax and top-k by gg.select_experts' kernel
(ggc.moe.routing.ROUTER_KERNEL, the default) against route()'s torch
path: route() alone (GPU us with an L2 flush, interleaved; the host's us
a call with the GPU kept busy), then a MoE layer's forward (the router's
linear, route(), fused_moe; inference) eager and replayed from a CUDA
graph, Qwen3-, Mixtral- and DeepSeek-V3-like (sigmoid scores,
correction bias, grouped top-k, scaling), off against on in one run.

    python3 benchmarks/probes/router_kernel.py [--tokens 1,16,128,1024,4096]
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
from ggc import moe  # noqa: E402
from ggc.moe import routing  # noqa: E402
from bench_moe import captured, host_time_us, time_interleaved_flushed  # noqa: E402

# (label, E, top_k, route()'s arguments)
DEEPSEEK = dict(scoring="sigmoid", n_group=8, topk_group=4, scaling_factor=2.5)
ROUTERS = (("qwen3", 128, 8, {}), ("mixtral", 8, 2, {}), ("softmax", 256, 8, {}),
           ("deepseek-v3", 256, 8, DEEPSEEK))
# (E, top_k, H, I, MoE's routing arguments)
LAYERS = {"qwen3": (128, 8, 2048, 768, {}), "mixtral": (8, 2, 4096, 14336, {}),
          "deepseek": (256, 8, 7168, 2048, dict(DEEPSEEK, correction_bias=True))}


def switched(fn, on):
    def call():
        saved, routing.ROUTER_KERNEL = routing.ROUTER_KERNEL, on
        try:
            return fn()
        finally:
            routing.ROUTER_KERNEL = saved
    return call


def route_alone(tokens_list):
    print("route() alone, bf16 logits: GPU us (L2 flushed) | host us")
    for label, experts, top_k, args in ROUTERS:
        bias = torch.randn(experts, device="cuda") * 0.1 if args else None
        for tokens in tokens_list:
            logits = torch.randn(tokens, experts, device="cuda").bfloat16()
            fns = {on: switched(lambda: moe.route(logits, top_k, correction_bias=bias, **args), on)
                   for on in (False, True)}
            (w0, i0), (w1, i1) = fns[False](), fns[True]()
            same = torch.equal(i0, i1)
            tokens_apart = int((i0.sort(1).values != i1.sort(1).values).any(1).sum())
            err = ((w1 - w0).norm() / w0.norm()).item()
            gpu = time_interleaved_flushed(fns, rounds=21)
            host = {on: host_time_us(fn, calls=200) for on, fn in fns.items()}
            print(f"  {label} E{experts} k{top_k} T={tokens:6d}: torch {gpu[False]:7.1f} us, host "
                  f"{host[False] or float('nan'):6.1f} | kernel {gpu[True]:6.1f} us, host "
                  f"{host[True] or float('nan'):6.1f} | {gpu[False] / gpu[True]:5.2f}x GPU, "
                  f"ids {'equal' if same else 'in another order'}, {tokens_apart} tokens with "
                  f"other experts, weights {err:.1e}", flush=True)


def layer_forward(tokens_list):
    print("MoE layer forward (router linear + route + fused_moe), bf16, inference: us")
    for name, (experts, top_k, hidden, inter, args) in LAYERS.items():
        torch.manual_seed(0)
        layer = moe.MoE(hidden, inter, experts, top_k, device="cuda", **args)
        if layer.correction_bias is not None:
            with torch.no_grad():
                layer.correction_bias.normal_(0, 0.1)
        for tokens in tokens_list if name != "deepseek" else [t for t in tokens_list if t <= 1024]:
            x = torch.randn(tokens, hidden, device="cuda").bfloat16()
            fns = {}
            with torch.no_grad():
                for on in (False, True):
                    eager = switched(lambda: layer(x), on)
                    fns[f"{'kernel' if on else 'torch'} eager"] = eager
                    replay, _, graph = captured(eager)
                    fns[f"{'kernel' if on else 'torch'} graph"] = replay
                    fns[f"_graph{on}"] = graph  # kept alive
                timed = {k: v for k, v in fns.items() if not k.startswith("_")}
                out0 = switched(lambda: layer(x), False)()
                out1 = switched(lambda: layer(x), True)()
                err = ((out1.float() - out0.float()).norm() / out0.float().norm()).item()
                t = time_interleaved_flushed(timed, rounds=15)
            print(f"  {name} T={tokens:6d}: eager {t['torch eager']:8.1f} -> "
                  f"{t['kernel eager']:8.1f} ({t['torch eager'] / t['kernel eager']:.3f}x) | "
                  f"graph {t['torch graph']:8.1f} -> {t['kernel graph']:8.1f} "
                  f"({t['torch graph'] / t['kernel graph']:.3f}x) | out diff {err:.1e}",
                  flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="1,16,128,1024,4096")
    args = parser.parse_args()
    tokens = [int(t) for t in args.tokens.split(",")]
    print(torch.cuda.get_device_name(), flush=True)
    route_alone(tokens + [16384])
    layer_forward(tokens)


if __name__ == "__main__":
    main()
