"""An expert-parallel MoE layer on every GPU of one or several hosts, or on
CPU processes.

One host, 4 GPUs:
    torchrun --nproc-per-node 4 docs/launch/expert_parallel_torchrun.py

Two hosts of 8 GPUs each (run on both; docs/expert-parallel.md):
    torchrun --nnodes 2 --nproc-per-node 8 --node-rank <0|1> \
        --rdzv-backend c10d --rdzv-endpoint <host0>:29500 \
        docs/launch/expert_parallel_torchrun.py

CPUs (gloo; the default where CUDA is absent, or with --backend gloo):
    torchrun --standalone --nproc-per-node 2 docs/launch/expert_parallel_torchrun.py

Each rank builds the same layer from one seed (a real model loads its
checkpoint instead), keeps its share of the experts, routes its own tokens
and checks its output against the whole layer run locally. On GPUs (NCCL)
the experts run in ggc's grouped-GEMM kernels, in BF16 and then FP8 with
FP8 on the wire. On CPUs (gloo) the same layer, smaller, runs on ggc's
reference backend (ggc.reference: the kernels interpreted in torch, slow),
and the FP8 part is skipped: the routing, agreement, dispatch and combine
run as on GPUs, over gloo.
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist

from ggc import moe


def main():
    backend = parse_args().backend
    if backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device)
        on_gpus(device)
    else:
        dist.init_process_group("gloo")
        on_cpus()
    dist.destroy_process_group()


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto",
                        help="auto: NCCL on GPUs where CUDA is available, else gloo on CPUs")
    args = parser.parse_args()
    if args.backend == "auto":
        args.backend = "nccl" if torch.cuda.is_available() else "gloo"
    if args.backend == "nccl" and not torch.cuda.is_available():
        parser.error("--backend nccl needs CUDA GPUs, and torch sees none: use --backend gloo")
    return args


def on_gpus(device):
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same layer on every rank
    full = moe.MoE(hidden_size=2048, intermediate_size=768, num_experts=128, top_k=8,
                   device=device)                       # Qwen3-30B-A3B-like
    layer = moe.ExpertParallelMoE.from_moe(full)        # contiguous blocks of experts
    say(f"rank {rank}/{world}: experts {layer.local_experts[0]}.."
        f"{layer.local_experts[-1]}")

    torch.manual_seed(1 + rank)                         # each rank's own tokens
    x = torch.randn(4, 1024, 2048, device=device, dtype=torch.bfloat16)
    with torch.no_grad():
        y = layer(x)
        ref = full(x)
    say(f"rank {rank}: output {list(y.shape)}, relative difference to the whole "
        f"layer {relative_difference(y, ref):.2e}")

    layer.quantize_fp8()                                # FP8 experts, FP8 on the wire
    layer.wire = "fp8"
    with torch.no_grad():
        y8 = layer(x)
    say(f"rank {rank}: FP8 output {list(y8.shape)}")


def on_cpus():
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        say("gloo on CPUs: ggc's reference backend runs the experts (ggc.reference: "
            "torch, f32 sums); the routing, agreement, dispatch and combine are ggc's. "
            "FP8 needs a GPU: skipped.")
    torch.manual_seed(0)  # the same layer on every rank; small, for torch on CPUs
    full = moe.MoE(hidden_size=256, intermediate_size=128, num_experts=16, top_k=4)
    layer = moe.ExpertParallelMoE.from_moe(full)
    say(f"rank {rank}/{world}: experts {layer.local_experts[0]}.."
        f"{layer.local_experts[-1]}")

    torch.manual_seed(1 + rank)
    x = torch.randn(2, 64, 256, dtype=torch.bfloat16)
    with torch.no_grad():
        y = layer(x)
        tokens = x.reshape(-1, layer.hidden_size)
        weights, ids = moe.route(layer.gate(tokens), layer.top_k,
                                 correction_bias=layer.correction_bias, **layer.routing)
        ref = whole_layer(full, tokens, weights, ids)
    say(f"rank {rank}: output {list(y.shape)}, relative difference to the "
        f"whole layer {relative_difference(y.reshape(tokens.shape), ref):.2e}")


def whole_layer(full, tokens, weights, ids):
    """Every expert of `full` on this rank's tokens, in f32."""
    out = torch.zeros(tokens.shape, dtype=torch.float32)
    for e in ids.unique().tolist():
        token, slot = (ids == e).nonzero(as_tuple=True)
        y = expert(full.w13[e], full.w2[e], tokens[token], full.activation)
        out.index_add_(0, token, y * weights[token, slot, None])
    return out


def expert(w13, w2, rows, activation):
    h = rows.float() @ w13.float().T
    return moe.activate(h, activation) @ w2.float().T


def say(line):
    """One write per line, so that the ranks' lines do not interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def relative_difference(y, ref):
    return ((y.float() - ref.float()).norm() / ref.float().norm()).item()


if __name__ == "__main__":
    main()
