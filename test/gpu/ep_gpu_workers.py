"""The GPU ranks of test_expert_parallel_gpu.py: NCCL, one GPU a rank,
ggc's kernels for the local experts."""

import torch
import torch.distributed as dist


def _err(a, b):
    a, b = a.detach().double(), b.detach().double()
    return float((a - b).norm() / max(float(b.norm()), 1e-30)) if b.numel() else 0.0


def matches_single_gpu_layer(rank, world):
    """ExpertParallelMoE.from_moe(layer) against `layer` on one GPU, on the
    same tokens and weights: BF16 forward and gradients, FP8 with bf16 and
    fp8 rows on the wire, chunked; ragged token counts (one rank with
    none, one with a single token), fresh random inputs, uneven experts."""
    from ggc import moe
    device = torch.device("cuda", rank)
    torch.manual_seed(1234)  # the same layer on every rank
    layer = moe.MoE(1024, 512, 30, 6, scoring="sigmoid", n_group=6, topk_group=3,
                    correction_bias=True, scaling_factor=2.5, device=device)
    with torch.no_grad():
        layer.correction_bias.uniform_(-0.05, 0.05)
    report = {}
    ep = moe.ExpertParallelMoE.from_moe(layer)  # 30 experts: uneven over 4 ranks
    torch.manual_seed(rank + 7)
    tokens = [300, 0, 1, 517][rank % 4]
    x = torch.randn(tokens, 1024, device=device, dtype=torch.bfloat16)
    out, ref = ep(x), layer(x)
    grad = torch.randn_like(out)
    out.backward(grad)
    if ref.requires_grad:  # (no tokens here: nothing to differentiate)
        ref.backward(grad)
    g13, g2 = (torch.zeros_like(w, dtype=torch.float32) if w.grad is None else w.grad.float()
              for w in (layer.w13, layer.w2))
    dist.all_reduce(g13)
    dist.all_reduce(g2)
    local = torch.tensor(ep.local_experts, dtype=torch.long, device=device)
    report["bf16"] = _err(out, ref)
    report["deterministic"] = bool(torch.equal(ep(x), out))
    report["x_grad"] = 0.0  # x needs no grad here; the weights' do
    report["w13_grad"] = _err(ep.w13.grad, g13.index_select(0, local))
    report["w2_grad"] = _err(ep.w2.grad, g2.index_select(0, local))
    xg = x.clone().requires_grad_()
    ep(xg).backward(grad)
    xr = x.clone().requires_grad_()
    ref = layer(xr)
    if ref.requires_grad:
        ref.backward(grad)
    report["x_grad"] = _err(xg.grad, xr.grad if xr.grad is not None else torch.zeros_like(x))
    layer.quantize_fp8()
    with torch.no_grad():
        ref8 = layer(x)
        for wire in ("bf16", "fp8"):
            for chunks in (1, 3):
                ep8 = moe.ExpertParallelMoE.from_moe(layer, wire=wire, chunks=chunks)
                outs = [ep8(x) for _ in range(3)]  # eager, captured plan, replayed plan
                report[f"fp8_{wire}_{chunks}"] = _err(outs[0], ref8)
                report[f"replays_{wire}_{chunks}"] = all(torch.equal(o, outs[0]) for o in outs)
    return report


def bad_input_everywhere(rank, world):
    """A dtype that differs on one rank: every rank raises, and the group
    still works afterwards."""
    from ggc import moe
    device = torch.device("cuda", rank)
    torch.manual_seed(0)
    layer = moe.MoE(256, 128, 8, 2, device=device)
    ep = moe.ExpertParallelMoE.from_moe(layer)
    x = torch.randn(5, 256, device=device, dtype=torch.bfloat16)
    messages = []
    for bad in (x.half(), x.cpu()):
        try:
            ep(bad if rank == 1 else x)
            messages.append("no error")
        except moe.ExpertParallelError as error:
            messages.append(str(error))
    messages.append(_err(ep(x), layer(x)))
    return messages
