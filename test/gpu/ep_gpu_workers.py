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


def shared_experts_and_biases(rank, world):
    """from_moe of a layer with a router bias in f32, expert biases and a
    shared expert (gpt-oss's and DeepSeek-V3's kinds) against the layer on
    one GPU, on the same tokens: BF16 forward and the biases' gradients,
    then FP8; ragged token counts (one rank with none)."""
    from ggc import moe
    device = torch.device("cuda", rank)
    torch.manual_seed(99)  # the same layer on every rank
    layer = moe.MoE(1024, 512, 16, 4, router_bias=True, router_dtype=torch.float32,
                    expert_bias=True, shared_experts=1, device=device)
    with torch.no_grad():
        for bias in (layer.gate.bias, layer.w13_bias, layer.w2_bias):
            bias.uniform_(-0.1, 0.1)
    ep = moe.ExpertParallelMoE.from_moe(layer)
    torch.manual_seed(rank + 3)
    x = torch.randn([200, 0, 37, 1][rank % 4], 1024, device=device, dtype=torch.bfloat16)
    out, ref = ep(x), layer(x)
    grad = torch.randn_like(out)
    out.backward(grad)
    if ref.requires_grad:
        ref.backward(grad)
    g = {name: (torch.zeros_like(getattr(layer, name), dtype=torch.float32)
                if getattr(layer, name).grad is None else getattr(layer, name).grad.float())
         for name in ("w13_bias", "w2_bias")}
    for t in g.values():
        dist.all_reduce(t)
    local = torch.tensor(ep.local_experts, dtype=torch.long, device=device)
    report = {"bf16": _err(out, ref),
              "w13_bias_grad": _err(ep.w13_bias.grad, g["w13_bias"].index_select(0, local)),
              "w2_bias_grad": _err(ep.w2_bias.grad, g["w2_bias"].index_select(0, local))}
    layer.quantize_fp8()
    with torch.no_grad():
        report["fp8"] = _err(moe.ExpertParallelMoE.from_moe(layer)(x), layer(x))
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


def captured_in_a_graph(rank, world):
    """The layer captured in a CUDA graph (sync_free while capturing: no
    host synchronisation) and replayed with new tokens: the same bits as
    an eager sync_free call on them, and the counted exchanges' values
    within BF16 rounding; FP8 with fp8 rows too."""
    from ggc import moe
    device = torch.device("cuda", rank)
    torch.manual_seed(5)
    layer = moe.MoE(512, 256, 12, 4, device=device)
    report = {}
    for name in ("bf16", "fp8"):
        if name == "fp8":
            layer.quantize_fp8()
        ep = moe.ExpertParallelMoE.from_moe(layer, wire=name)
        torch.manual_seed(50 + rank)
        static_x = torch.randn(16, 512, device=device, dtype=torch.bfloat16)
        with torch.no_grad():
            ep.sync_free = True
            ep(static_x)  # the signature's first call: the agreement, the kernels compiled
            ep.sync_free = None
            stream = torch.cuda.Stream(device)
            stream.wait_stream(torch.cuda.current_stream(device))
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local"):
                out = ep(static_x)
            same, errs = [], []
            for _ in range(2):
                new = torch.randn_like(static_x)
                static_x.copy_(new)
                graph.replay()
                torch.cuda.synchronize(device)
                ep.sync_free = True
                eager_free = ep(new)
                ep.sync_free = False
                counted = ep(new)
                ep.sync_free = None
                same.append(bool(torch.equal(out, eager_free)))
                errs.append(_err(out, counted))
        report[name] = dict(same=all(same), err=max(errs))
    return report
