"""The MoE layers bench_moe.py times side by side, each a function of
(x, topk_weights, topk_ids) over weights it closes over, returning [T, H]:

- the sequential per-expert loop in torch (reads the expert sizes on the
  host, so it cannot be captured in a CUDA graph),
- a torch._grouped_mm pipeline (sort, gather, two grouped GEMMs, SwiGLU,
  weighted index_add),
- vLLM's Triton fused MoE (/work/shared/peers/vllm_fused_moe.py, imported by
  path at run time with vLLM's tuned H200 configs),
- ggc.moe.fused_moe, BF16 and FP8,
- the executor's algorithms (ggc.executor), when it is there.
"""

import importlib.util
import os

import torch
import torch.nn.functional as F

from ggc import moe


def swiglu(h):
    gate, up = h.chunk(2, dim=-1)
    return F.silu(gate) * up


def per_expert_loop(w13, w2):
    experts = w13.shape[0]

    def run(x, weights, ids):
        top_k = ids.shape[1]
        flat = ids.reshape(-1)
        order = flat.argsort(stable=True)
        sizes = torch.bincount(flat, minlength=experts).tolist()  # the host sync
        out = torch.zeros(x.shape[0], x.shape[1], dtype=torch.float32, device=x.device)
        start = 0
        for e, size in enumerate(sizes):
            if size:
                routes = order[start:start + size]
                tokens = routes // top_k
                y = swiglu(x[tokens] @ w13[e].T) @ w2[e].T
                out.index_add_(0, tokens, y.float() * weights.reshape(-1)[routes, None])
            start += size
        return out.to(x.dtype)
    return run


def torch_grouped_mm_pipeline(w13, w2):
    experts = w13.shape[0]
    w13_t, w2_t = w13.transpose(1, 2), w2.transpose(1, 2)

    def run(x, weights, ids):
        top_k = ids.shape[1]
        flat = ids.reshape(-1)
        sorted_ids, order = torch.sort(flat, stable=True)
        # Group ends without bincount (which reads its size back to the host).
        bounds = torch.arange(1, experts + 1, device=x.device, dtype=sorted_ids.dtype)
        ends = torch.searchsorted(sorted_ids, bounds, out_int32=True)
        tokens = order // top_k
        h = torch._grouped_mm(x[tokens], w13_t, offs=ends)
        y = torch._grouped_mm(swiglu(h), w2_t, offs=ends)
        y = y * weights.reshape(-1)[order, None].to(y.dtype)
        return torch.zeros_like(x).index_add_(0, tokens, y)
    return run


def load_vllm(path):
    """vLLM's module from its file (never copied into ggc); None with the
    reason when it cannot be loaded."""
    if not path or not os.path.exists(path):
        return None, f"no file at {path!r} (--vllm)"
    try:
        spec = importlib.util.spec_from_file_location("vllm_fused_moe_peer", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - reported as the column's note
        return None, f"{type(e).__name__}: {e}"
    return module, None


def vllm_fused(module, w13, w2, tokens, top_k):
    """vLLM's fused_experts with the config vLLM would pick for this token
    count (its tuned H200 table for E and I when there is one); returns the
    layer and where the config came from. Picked once, as vLLM's lookup
    is cached too."""
    experts, hidden, inter = w2.shape
    config, source = module.pick_config(tokens, experts, inter, hidden, top_k)

    def run(x, weights, ids):
        return module.fused_experts_bf16(x, w13, w2, weights, ids, config)
    return run, source


def ggc_bf16(w13, w2, graph=None):
    """fused_moe as users call it (graph=None: decode sizes replay from its
    cached CUDA graph), or with `graph` forced."""
    return lambda x, weights, ids: moe.fused_moe(x, w13, w2, weights, ids, graph=graph)


def _ggc_bf16_with(w13, w2, module, name, value, **scales):
    """fused_moe with `module.name` replaced by `value` during each call;
    never from ggc's cached graph (whose key would not tell the two
    apart). `scales`: FP8 weights' w13_scale and w2_scale."""
    def layer(x, weights, ids):
        saved = getattr(module, name)
        setattr(module, name, value)
        try:
            return moe.fused_moe(x, w13, w2, weights, ids, graph=False, **scales)
        finally:
            setattr(module, name, saved)
    return layer


def ggc_bf16_unfused_up(w13, w2):
    """fused_moe with the up projection and the activation as two steps (a
    GEMM writing 2I columns, then ggc's SwiGLU kernel), as before the
    activation moved into the GEMM's epilogue (ggc.moe.kernels.gated_up)."""
    from ggc.moe import kernels
    return _ggc_bf16_with(w13, w2, kernels, "_GATED_UP", {})


def ggc_bf16_copied_rows(w13, w2):
    """fused_moe with the tokens gathered into a sorted copy for the up
    projection, as before it read them through the routes' source list
    (gg's a_rows, ggc.moe.kernels.gathers_rows)."""
    from ggc.moe import layer as moe_layer
    return _ggc_bf16_with(w13, w2, moe_layer, "gathers_rows",
                          lambda x, w13, rows_hint=None: False)


def ggc_bf16_torch_routing(w13, w2):
    """fused_moe with the routes sorted by torch (ggc.moe.permute: about
    fifteen kernels) instead of gg.sort_routes' kernels (ggc.moe.routes)."""
    from ggc.moe import routes
    return _ggc_bf16_with(w13, w2, routes, "usable", lambda ids, experts: False)


def ggc_fp8(w13, w2, graph=None):
    (q13, s13), (q2, s2) = moe.quantize_weights(w13), moe.quantize_weights(w2)
    return lambda x, weights, ids: moe.fused_moe(x, q13, q2, weights, ids, w13_scale=s13,
                                                 w2_scale=s2, graph=graph)


def ggc_fp8_whole_block_quantisation(w13, w2):
    """The FP8 layer with gg.quantize_rows' kernel taking whole 128-column
    blocks only, as before it took a partial last block: H or I off 128
    (gpt-oss's 2,880) quantised by torch ops; eager, as
    ggc_fp8(graph=False)."""
    from ggc.moe import quant_kernel
    (q13, s13), (q2, s2) = moe.quantize_weights(w13), moe.quantize_weights(w2)
    return _ggc_bf16_with(q13, q2, quant_kernel, "LANE_COLUMNS", 128, w13_scale=s13,
                          w2_scale=s2)


def executor_layer(algorithm, w13, w2):
    """The layer through ggc.executor's public API: its mapping is made on
    the host, and the down projection's rows go back to token order and in
    again, since prepare_input takes rows in token order."""
    from ggc import executor
    experts, hidden, inter = w2.shape
    device = w13.device.index or 0
    ex = executor.GroupedGemmExecutor(group_count=experts, algorithm=algorithm,
                                      precision="bf16", device=device)
    up = executor.ExpertWeights.load(list(w13.unbind(0)), device=device)
    down = executor.ExpertWeights.load(list(w2.unbind(0)), device=device)

    def gemm(inp, weights):
        if algorithm == "cublas_sequential":
            return ex.execute_sequential(inp, weights)
        return ex.execute_grouped(inp, weights, algorithm)

    def run(x, weights, ids):
        tokens, top_k = ids.shape
        first = ex.prepare_input(x, ids)
        act = swiglu(gemm(first, up)).contiguous()
        act = ex.scatter_output(act, first).view(tokens * top_k, inter)
        second = ex.prepare_input(act, ids.reshape(-1, 1))
        y = ex.scatter_output(gemm(second, down), second).view(tokens, top_k, hidden)
        return (y.float() * weights.unsqueeze(-1)).sum(dim=1).to(x.dtype)
    return run
