"""Shared by the ggc.moe tests (CPU and GPU): the layer in fp64, and the
setup that runs ggc.moe on CPU tensors.

On the CPU every launch runs on ggc's public reference backend
(ggc.reference: the traced kernel interpreted in torch); ggc.moe's host
code, the ops' bodies, the custom ops' fakes and the autograd formulas
all run as they are. The tests hold the layer to `reference_moe`, written
here in fp64 from the definitions.
"""

import math

import torch

BLOCK = 128


def expand_blocks(scale, dims):
    """A block scale repeated over its 128-wide blocks along `dims`."""
    for d in dims:
        scale = scale.repeat_interleave(BLOCK, dim=d)
    return scale


def dequantized_weights(q, scale):
    """FP8 weights [E, N, K] with 128x128 scales, as f64."""
    return q.double() * expand_blocks(scale.double(), (1, 2))[:, :q.shape[1], :q.shape[2]]


def dequantized_rows(q, scale, kind):
    """FP8 rows [M, K] with 1x128 scales: "block" [M, K/128], "block_mn"
    [K/128, align4(M)]."""
    rows = scale if kind == "block" else scale[:, :q.shape[0]].t()
    return q.float() * expand_blocks(rows, (1,))[:, :q.shape[1]]


def activation64(h, activation):
    """The activations written out from their definitions (not ggc's code)."""
    def silu(v):
        return v / (1 + torch.exp(-v))

    def gelu_tanh(v):
        return 0.5 * v * (1 + torch.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))

    def gelu_erf(v):
        return 0.5 * v * (1 + torch.erf(v / math.sqrt(2)))
    if activation == "swigluoai":  # gpt-oss: interleaved, clamped at 7, alpha 1.702
        gate, up = h[..., 0::2].clamp(max=7.0), h[..., 1::2].clamp(-7.0, 7.0)
        return (up + 1) * gate / (1 + torch.exp(-1.702 * gate))
    if activation in ("swiglu", "geglu", "geglu_erf"):
        half = h.shape[-1] // 2
        gate, up = h[..., :half], h[..., half:]
        act = {"swiglu": silu, "geglu": gelu_tanh, "geglu_erf": gelu_erf}[activation]
        return act(gate) * up
    return {"silu": silu, "gelu": gelu_tanh, "gelu_erf": gelu_erf, "relu": torch.relu,
            "relu2": lambda v: torch.relu(v) ** 2}[activation](h)


def reference_moe(x, w13, w2, topk_weights, topk_ids, activation="swiglu", w13_bias=None,
                  w2_bias=None, expert_map=None):
    """out[t] = sum_j weight[t, j] * (w2[e] @ act(w13[e] @ x[t] + b13[e]) + b2[e]),
    e = ids[t, j] (mapped to a local expert by expert_map, -1 adding
    nothing), in the inputs' dtype (pass f64 tensors; differentiable)."""
    out = torch.zeros(x.shape[0], w2.shape[1], dtype=x.dtype, device=x.device)
    if expert_map is not None:
        topk_ids = expert_map.long()[topk_ids.long()]
    for e in topk_ids.unique().tolist():
        if e < 0:
            continue
        tokens, slots = (topk_ids == e).nonzero(as_tuple=True)
        h = x[tokens] @ w13[e].T
        if w13_bias is not None:
            h = h + w13_bias[e]
        y = activation64(h, activation) @ w2[e].T
        if w2_bias is not None:
            y = y + w2_bias[e]
        out = out.index_add(0, tokens, y * topk_weights[tokens, slots].unsqueeze(1))
    return out


def rel_err(out, ref):
    out = out.double()
    assert torch.isfinite(out).all(), "the layer's output holds NaN/Inf"
    return ((out - ref.double()).norm() / ref.double().norm()).item()


def use_reference_kernels(monkeypatch, cache_dir):
    """Runs ggc.moe on CPU tensors (ggc's reference backend takes every
    launch) with a private kernel cache and a fresh torch.compile state."""
    monkeypatch.setenv("GGC_CACHE_DIR", str(cache_dir))
    # No CUDA graph is captured on the CPU; kept off as on a GPU test run.
    monkeypatch.setenv("GGC_MOE_GRAPH_TOKENS", "0")
    torch._dynamo.reset()


def ragged_ids(tokens, top_k, experts, gen, empty=(), single=()):
    """topk_ids [T, top_k] (distinct experts per token) leaving the experts
    in `empty` with no route and those in `single` with exactly one."""
    pool = [e for e in range(experts) if e not in empty and e not in single]
    rows = [torch.tensor(pool)[torch.randperm(len(pool), generator=gen)[:top_k]]
            for _ in range(tokens)]
    ids = torch.stack(rows) if rows else torch.zeros(0, top_k, dtype=torch.long)
    for i, e in enumerate(single):  # one route each, on distinct tokens
        ids[i, 0] = e
    return ids.to(torch.int32)


def layer_inputs(tokens, hidden, inter, experts, top_k, seed, gated=True, empty=(), single=()):
    """x, w13, w2, topk_weights, topk_ids of one layer call (on the CPU)
    whose routing leaves `empty` experts with no token and `single` ones
    with one."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, hidden, generator=gen).to(torch.bfloat16)
    w13 = (torch.randn(experts, inter * (2 if gated else 1), hidden, generator=gen)
           / hidden ** 0.5).to(torch.bfloat16)
    w2 = (torch.randn(experts, hidden, inter, generator=gen) / inter ** 0.5).to(torch.bfloat16)
    weights = torch.rand(tokens, top_k, generator=gen) + 0.1
    ids = ragged_ids(tokens, top_k, experts, gen, empty=empty, single=single)
    return x, w13, w2, weights, ids


def record_launches(monkeypatch):
    """The names of the @ggc.jit functions launched from now on, in order
    (a list the caller may clear), each still run as it would be."""
    import sys
    jit = sys.modules["ggc.jit"]
    launched, run = [], jit.JITFunction._run

    def recording(fn, tensors, consts, stream, validate):
        launched.append(fn.__name__)
        return run(fn, tensors, consts, stream, validate)

    monkeypatch.setattr(jit.JITFunction, "_run", recording)
    return launched
