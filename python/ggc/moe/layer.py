"""fused_moe: a whole MoE layer's experts on ggc's grouped GEMMs.

    sorted rows   xs = x[source]                      (permute: by expert)
    up            h  = xs @ w13[g]^T                  (ggc.ops.grouped_gemm)
    activation    a  = silu(h_gate) * h_up            (ggc_moe_swiglu, or torch)
    down          y  = route * (a @ w2[g]^T)          (ggc epilogue: ggc::moe_down)
    combine       out[t] = sum_j y[position[t, j]]    (ggc_moe_combine, or torch:
                                                       a fixed-order f32 sum)

Without gradients, on CUDA and outside torch.compile, the permutation
(ggc.moe.routes, up to 1,024 routes), SwiGLU and the combine
(ggc.moe.elementwise) are ggc's own PTX kernels; elsewhere torch ops.

No step synchronises with the host and every buffer has T * top_k rows,
so the layer runs inside a CUDA graph and under torch.compile(fullgraph=True).
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F

from .. import ops
from . import checks, elementwise, graphs, routes
from .kernels import routed_down
from .permute import Permutation, _CombineRows, _GatherRows, _sum_routes, sort_routes
from .quant import as_row_view, mn_major, quantize_rows


def fused_moe(x: torch.Tensor, w13: torch.Tensor, w2: torch.Tensor,
              topk_weights: torch.Tensor, topk_ids: torch.Tensor,
              activation: str = "swiglu", *, w13_scale: Optional[torch.Tensor] = None,
              w2_scale: Optional[torch.Tensor] = None, x_scale: Optional[torch.Tensor] = None,
              validate: Optional[bool] = None, graph: Optional[bool] = None) -> torch.Tensor:
    """out[t] = sum_j topk_weights[t, j] * expert_{topk_ids[t, j]}(x[t]).

    x [T, H] bf16; w13 [E, 2I, H] (gate rows then up rows; [E, I, H] for a
    plain activation) and w2 [E, H, I], bf16, or float8_e4m3fn with f32
    128x128 block scales w13_scale [E, 2I/128, H/128] and w2_scale
    [E, H/128, I/128] (x and the activation are then quantised per 1x128
    block); topk_weights and topk_ids [T, top_k]. x may come quantised
    already (FP8 weights only): e4m3 [T, H] with `x_scale` its f32 1x128
    scales [T, H/128] (an expert-parallel dispatch's FP8 rows, say). `activation`: "swiglu"
    (silu(gate) * up), "geglu" (tanh-approximated gelu(gate) * up), "silu",
    "gelu", "relu". Returns [T, H] bf16.

    An id outside [0, E) makes its token's output NaN (never a plausible
    wrong result). `validate` (default $GGC_VALIDATE) reads topk_ids back
    and raises ValueError naming the bad entry instead: a host sync, so not
    under torch.compile or a CUDA-graph capture. BF16 is differentiable in
    x, w13, w2 and topk_weights; FP8 is inference only.

    `graph`: an eager call with nothing to differentiate replays the layer
    from a CUDA graph cached per signature and weights (captured on the
    signature's second call; ggc.moe.graphs): None (default) for at most
    $GGC_MOE_GRAPH_TOKENS (64) tokens, where the host path outlasts the
    kernels, True at any size, False never. The same kernels, the same
    bits."""
    problem, signature = checks.check_fused_moe_once(x, w13, w2, topk_weights, topk_ids,
                                                     activation, w13_scale, w2_scale, x_scale)
    grad = torch.is_grad_enabled() and (x.requires_grad or topk_weights.requires_grad
                                        or w13.requires_grad or w2.requires_grad)
    if problem.fp8 and grad and (x.requires_grad or topk_weights.requires_grad):
        raise ValueError("FP8 fused_moe is inference only: x and topk_weights must not "
                         "require grad (run it under torch.no_grad(), or use bf16 weights)")
    validating = checks.validating(validate, x)
    if validating:
        checks.check_ids(topk_ids, problem.experts)
    if signature is not None and graphs.wanted(graph, problem.tokens, x, grad, validating):
        # The graph reads the weights where they lie now.
        key = (signature, w13.data_ptr(), w2.data_ptr(),
               None if w13_scale is None else w13_scale.data_ptr(),
               None if w2_scale is None else w2_scale.data_ptr())
        inputs = (x, topk_weights, topk_ids) + (() if x_scale is None else (x_scale,))
        return graphs.replay(key, inputs,
                             lambda x, w, ids, scale=None: _experts(
                                 problem, grad, x, w, ids, scale, w13, w2, activation,
                                 w13_scale, w2_scale))
    return _experts(problem, grad, x, topk_weights, topk_ids, x_scale, w13, w2, activation,
                    w13_scale, w2_scale)


def _experts(problem: checks.Problem, grad: bool, x, topk_weights, topk_ids, x_scale, w13,
             w2, activation, w13_scale, w2_scale) -> torch.Tensor:
    """fused_moe's work once its arguments are checked."""
    top_k = problem.top_k
    sorted_routes = None
    if not grad and routes.usable(topk_ids, problem.experts):
        sorted_routes = routes.sort_routes(topk_ids, topk_weights, problem.experts)
    if sorted_routes is None:
        offsets, order, source, position, invalid = sort_routes(topk_ids, problem.experts)
        route = _poisoned(topk_weights, invalid).index_select(0, order)
    else:  # one kernel, the same values
        offsets, order, source, position, route = sorted_routes
    x = x.contiguous()
    hint = expected_rows(source.shape[0], problem.experts)
    if problem.fp8:
        # x is quantised once per token (not per route; unless it comes
        # quantised with x_scale), then its rows and scales gathered.
        q, scale = quantize_rows(x, "x") if x_scale is None else (x, x_scale)
        y = sorted_experts(q.index_select(0, source), mn_major(scale, source), offsets, route,
                           w13, w2, activation, w13_scale, w2_scale, hint, grad)
    else:
        # Nothing to differentiate: the autograd.Function's forward without
        # its wrapper (the same values, a few us less a call).
        rows = (_GatherRows.apply(x, source, position, top_k) if grad
                else x.index_select(0, source))
        y = sorted_experts(rows, None, offsets, route, w13, w2, activation, None, None, hint,
                           grad)
    if grad:
        return _CombineRows.apply(y, source, position, top_k)
    combined = elementwise.combine(y, position, top_k)
    return _sum_routes(y, position, top_k) if combined is None else combined


def expected_rows(routes, experts: int) -> Optional[int]:
    """The rows an expert gets when routing is even (T * top_k / E), as the
    grouped GEMMs' `expected_m` hint: rounded down to a power of two and
    capped at 4,096, so that the hints of every batch size compile at most
    13 kernels per GEMM (each distinct hint is a kernel of its own). None
    (no hint) where the row count is symbolic (torch.compile's dynamic
    shapes), which a hint would specialise."""
    if not isinstance(routes, int):
        return None
    return 1 << min(12, max(1, routes // experts).bit_length() - 1)


def routing_weights(topk_weights: torch.Tensor, perm: Permutation) -> torch.Tensor:
    """Each sorted row's routing weight (f32 [M]); NaN for a route whose
    expert id was out of range, so its token's output shows it."""
    return _poisoned(topk_weights, ~perm.valid).index_select(0, perm.order)


def _poisoned(topk_weights: torch.Tensor, invalid: torch.Tensor) -> torch.Tensor:
    """The routes' weights as f32 [M], NaN where the expert id is invalid
    (masked_fill: one kernel, where a scalar torch.where fills a tensor
    first)."""
    flat = topk_weights.reshape(-1)
    if flat.dtype != torch.float32:
        flat = flat.float()
    return flat.masked_fill(invalid, float("nan"))


def activate(h: torch.Tensor, activation: str) -> torch.Tensor:
    """The activation of the up projection's rows; gated ones halve the
    columns (gate first, up second)."""
    if activation in checks.GATED:
        gate, up = h.chunk(2, dim=-1)
        if activation == "swiglu":
            return F.silu(gate) * up
        return F.gelu(gate, approximate="tanh") * up
    if activation == "silu":
        return F.silu(h)
    if activation == "gelu":
        return F.gelu(h, approximate="tanh")
    return F.relu(h)


def _activated(h: torch.Tensor, activation: str, fused: bool) -> torch.Tensor:
    """activate(h, activation), by ggc's SwiGLU kernel where `fused` (no
    gradient) and the kernel take it (ggc.moe.elementwise)."""
    if fused and activation == "swiglu":
        a = elementwise.swiglu(h)
        if a is not None:
            return a
    return activate(h, activation)


def sorted_experts(rows: torch.Tensor, rows_scale: Optional[torch.Tensor],
                   offsets: torch.Tensor, route: torch.Tensor, w13: torch.Tensor,
                   w2: torch.Tensor, activation: str, w13_scale: Optional[torch.Tensor],
                   w2_scale: Optional[torch.Tensor], hint: Optional[int],
                   grad: bool) -> torch.Tensor:
    """route[p] * expert_g(rows[p]) for rows [M, H] sorted by expert
    (expert g owns rows offsets[g] .. offsets[g+1]): the up projection,
    the activation, the down projection with the routing weight in its
    epilogue. FP8: rows e4m3 with rows_scale their 1x128 scales in the
    M-major form (quant.mn_major); the activation is quantised again
    before the down projection."""
    if rows_scale is None:
        h = ops.grouped_gemm(rows, w13, offsets=offsets, expected_m=hint, validate=False)
        act = activate(h, activation) if grad else _activated(h, activation, fused=True)
        return routed_down(act, w2, offsets, route, expected_m=hint)
    m = rows.shape[0]
    h = ops.grouped_gemm(rows, w13, offsets=offsets, a_scale=as_row_view(rows_scale, m),
                         b_scale=w13_scale, expected_m=hint, validate=False)
    act, act_scale = quantize_rows(_activated(h, activation, not grad), "activation")
    return routed_down(act, w2, offsets, route, mn_major(act_scale), w2_scale, hint)
