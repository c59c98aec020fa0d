"""Shared by the ggc.moe tests (CPU and GPU): the layer in fp64, and the
CPU stand-ins for ggc's kernels.

The stand-ins replace only a launch (JITFunction._run on tensors with
data), as test_torch_compile_reference.py does: ggc.moe's host code, the
ops' bodies, the custom ops' fakes (which trace and compile the real
kernels) and the autograd formulas all run as they are.
"""

import math
import sys

import torch

from test_torch_compile_reference import grouped_gemm_reference, groups_of, mm

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


def _run_reference(name, args, consts):
    """What one of ggc's kernels computes: f32 accumulation, the epilogue on
    it, one rounding to the output's dtype."""
    if name == "grouped_gemm_contiguous_nk_scaled":
        a, b, offsets, a_scale, b_scale, out = args
        route = None
    elif name == "moe_down_routed_fp8":
        a, b, offsets, a_scale, b_scale, route, out = args
        consts = dict(A_KIND="block_mn", B_KIND="block")
    elif name == "moe_down_routed":
        (a, b, offsets, route, out), a_scale = args, None
    elif name in ("moe_up_swiglu", "moe_up_swigluoai"):
        a, b, offsets, out = args
        for g, rows in enumerate(groups_of(offsets)):
            out[rows] = activation64(mm(a[rows], b[g].T), name[len("moe_up_"):]).to(out.dtype)
        return
    else:
        return grouped_gemm_reference(name, *args, accumulate=consts.get("ACCUMULATE", False))
    if a_scale is not None:
        assert consts["B_KIND"] == "block"
        a = dequantized_rows(a, a_scale, consts["A_KIND"])
        b = dequantized_weights(b, b_scale).float()
    for g, rows in enumerate(groups_of(offsets)):
        acc = mm(a[rows], b[g].T)
        out[rows] = (acc if route is None else acc * route[rows, None]).to(out.dtype)


def use_reference_kernels(monkeypatch, cache_dir):
    """Runs ggc.moe on CPU tensors with each launch done by _run_reference."""
    from ggc import torch_ops
    from ggc.moe import checks
    jit = sys.modules["ggc.jit"]
    monkeypatch.setenv("GGC_CACHE_DIR", str(cache_dir))
    # A graph would capture the reference kernels, and later calls of the
    # same signature would replay them.
    monkeypatch.setenv("GGC_MOE_GRAPH_TOKENS", "0")
    monkeypatch.setattr(jit, "_require_gpu_tensors", lambda tensors: None)
    monkeypatch.setattr(checks, "require_cuda", lambda device: None)
    run = jit.JITFunction._run

    def reference(fn, tensors, consts, stream, validate):
        if torch_ops.without_data(tensors.values()):
            return run(fn, tensors, consts, stream, validate)  # the fakes, as they are
        _run_reference(fn.__name__, [tensors[n] for n in fn.tensor_params], consts)

    monkeypatch.setattr(jit.JITFunction, "_run", reference)
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
