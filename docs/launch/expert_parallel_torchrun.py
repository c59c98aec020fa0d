"""An expert-parallel MoE layer on every GPU of one or several hosts.

One host, 4 GPUs:
    torchrun --nproc-per-node 4 docs/launch/expert_parallel_torchrun.py

Two hosts of 8 GPUs each (run on both; docs/expert-parallel.md):
    torchrun --nnodes 2 --nproc-per-node 8 --node-rank <0|1> \
        --rdzv-backend c10d --rdzv-endpoint <host0>:29500 \
        docs/launch/expert_parallel_torchrun.py

Each rank builds the same single-GPU layer from one seed (a real model
loads its checkpoint instead), keeps its share of the experts, routes its
own tokens and checks its output against the whole layer run locally.
"""

import os

import torch
import torch.distributed as dist

from ggc import moe


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(0)  # the same layer on every rank
    full = moe.MoE(hidden_size=2048, intermediate_size=768, num_experts=128, top_k=8,
                   device=device)                       # Qwen3-30B-A3B-like
    layer = moe.ExpertParallelMoE.from_moe(full)        # contiguous blocks of experts
    print(f"rank {rank}/{world}: experts {layer.local_experts[0]}.."
          f"{layer.local_experts[-1]}", flush=True)

    torch.manual_seed(1 + rank)                         # each rank's own tokens
    x = torch.randn(4, 1024, 2048, device=device, dtype=torch.bfloat16)
    with torch.no_grad():
        y = layer(x)
        ref = full(x)
    err = ((y.float() - ref.float()).norm() / ref.float().norm()).item()
    print(f"rank {rank}: output {list(y.shape)}, relative difference to the whole "
          f"layer {err:.2e}", flush=True)

    layer.quantize_fp8()                                # FP8 experts, FP8 on the wire
    layer.wire = "fp8"
    with torch.no_grad():
        y8 = layer(x)
    print(f"rank {rank}: FP8 output {list(y8.shape)}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
