"""A SwiGLU MoE layer's experts with compute_dtype=FP8 as one autograd
function: the tokens' gather, the up projection, the routed SwiGLU, the
down projection and the combine, each GEMM ggc.training's recipe (1x128
activation and 128x128 weight scales, the input gradients FP8, the
weight gradients BF16).

Chained from ggc.training.fp8_grouped_mm and swiglu_kernel.RoutedSwiGLU,
the step quantises the routed rows in a pass of their own after SwiGLU
wrote them, and h's gradient after SwiGLU's backward wrote it. Here the
kernels that write them also quantise them: gg.quantize_rows with `route`
and `activation` gives the routed rows in bf16 (for the down projection's
weight gradient) and in FP8 (for its forward) from one read of h, and
gg.swiglu_rows_backward with `quantized` gives h's gradient in bf16 (for
the up projection's weight gradient) and in FP8 (for its input gradient).
The function also takes the tokens' gather and the combine: the up
projection's FP8 rows are quantised from the tokens, each token once and
written to its routes' sorted rows (gg.quantize_rows' `scatter`), and
backward the down projection's from the output's gradient likewise,
where the chain quantised the gathered [M, H] rows (top_k times the
bytes). One autograd node instead of five also costs the host less in
the backward, which torch runs on its engine thread. The values are the
chained path's, bit for bit.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import torch

from .. import ops, training
from . import quant_kernel, swiglu_kernel
from .permute import sorted_weights_gradient, summed_routes
from .quant import as_row_view


def usable(x: torch.Tensor, w13: torch.Tensor) -> bool:
    """Whether swiglu_experts' kernels take this layer: CUDA bf16 tokens
    x, I (w13's rows / 2) a multiple of 128, eager, a target with FP8
    conversion."""
    inter = w13.shape[1] // 2
    return (quant_kernel.usable(x) and x.dtype == torch.bfloat16 and w13.shape[1] % 2 == 0
            and inter % 128 == 0)


def swiglu_experts(x: torch.Tensor, w13: torch.Tensor, w2: torch.Tensor,
                   routes: Routes, topk_weights: Optional[torch.Tensor] = None
                   ) -> torch.Tensor:
    """out[t] = sum over t's routes p of (route[p] * swiglu(x[t] @
    w13[g]^T)) @ w2[g]^T, g the route's expert: a SwiGLU MoE layer's
    experts and combine, differentiable in x, w13, w2 and route, every
    GEMM in FP8 (module docstring). x bf16 [T, H], w13 [E, 2I, H], w2
    [E, H, I] bf16 (the master weights, quantised as
    ggc.training.quantized_weights keeps them); `routes` the sorted
    routes. `topk_weights` [T, top_k], if given, is what the sorted
    weights routes.route were gathered from (route[position[r]] =
    topk_weights.flatten()[r], as gg.sort_routes' kernel writes them): the
    function is then differentiable in topk_weights instead, its gradient
    gathered by position in the function's own backward (one autograd
    node less than permute._SortedWeights before it). Returns bf16 [T, H].
    Check usable(x, w13) first."""
    _check(x, w13, w2, routes, topk_weights)
    by_token = topk_weights is not None
    weights = topk_weights if by_token else routes.route
    return _SwiGLUExperts.apply(x, w13, w2, weights, routes, torch.is_grad_enabled(), by_token)


def _check(x, w13, w2, routes, topk_weights=None) -> None:
    """ValueError or TypeError naming the argument that does not fit."""
    if x.dim() != 2 or w13.dim() != 3 or w2.dim() != 3:
        raise ValueError(f"swiglu_experts takes x [T, H], w13 [E, 2I, H] and w2 [E, H, I]; "
                         f"got x {list(x.shape)}, w13 {list(w13.shape)}, w2 {list(w2.shape)}")
    (tokens, hidden), (experts, two_inter, _) = x.shape, w13.shape
    if (w13.shape[2] != hidden or two_inter % 2
            or w2.shape != (experts, hidden, two_inter // 2)):
        raise ValueError(f"w13 must be [E, 2I, H = {hidden}] and w2 [E, H, I] with w13's E "
                         f"and I; got w13 {list(w13.shape)}, w2 {list(w2.shape)}")
    for name, t in (("x", x), ("w13", w13), ("w2", w2)):
        if t.dtype != torch.bfloat16:
            raise TypeError(f"swiglu_experts: {name} must be bf16, got {t.dtype}")
    rows = tokens * routes.top_k
    if routes.offsets.shape != (experts + 1,) or routes.offsets.dtype != torch.int32:
        raise ValueError(f"routes.offsets must be int32 [E+1] = [{experts + 1}], got "
                         f"{routes.offsets.dtype} {list(routes.offsets.shape)}")
    for name in ("source", "position", "route"):
        if getattr(routes, name).shape != (rows,):
            raise ValueError(f"routes.{name} must hold T * top_k = {rows} entries, got "
                             f"{list(getattr(routes, name).shape)}")
    if routes.route.dtype != torch.float32:
        raise TypeError(f"routes.route must be f32, got {routes.route.dtype}")
    if topk_weights is not None and (topk_weights.shape != (tokens, routes.top_k)
                                     or not topk_weights.is_floating_point()
                                     or topk_weights.device != x.device):
        raise ValueError(f"topk_weights must be floating point [T, top_k] = "
                         f"[{tokens}, {routes.top_k}] on x's device {x.device}, got "
                         f"{topk_weights.dtype} {list(topk_weights.shape)} on "
                         f"{topk_weights.device}")
    if topk_weights is not None and routes.route.requires_grad:
        # Its graph would be dropped: the gradient goes to topk_weights.
        raise ValueError("with topk_weights, routes.route must be the sorted weights' values "
                         "(no autograd graph): differentiate one of them, not both")
    for name in ("source", "position"):
        index = getattr(routes, name)
        if index.dtype not in (torch.int32, torch.int64) or index.device != x.device:
            raise TypeError(f"routes.{name} must be int32 or int64 on x's device {x.device}, "
                            f"got {index.dtype} on {index.device}")


class Routes(NamedTuple):
    """The routes sorted by expert (layer._sorted_routes'): group offsets
    int32 [E+1], each sorted row's token `source` [M] and each route's
    sorted row `position` [M], the routing weights `route` f32 [M] (by
    sorted row), top_k routes a token; `gathered_scales`: quantise each
    token's scales once and gather them (layer.GATHERED_SCALE_ROWS)."""
    offsets: torch.Tensor
    source: torch.Tensor
    position: torch.Tensor
    route: torch.Tensor
    top_k: int
    gathered_scales: bool


def _token_rows(x: torch.Tensor, routes: Routes):
    """x's tokens in e4m3 on their routes' sorted rows, with the scales'
    [M, H/128] row view: each token quantised once and scattered where
    the kernel takes x, else the gathered rows quantised."""
    if quant_kernel.usable(x):
        sources = routes.source if routes.gathered_scales else None
        made = quant_kernel.rows_mn(x, positions=routes.position, sources=sources)
        if made is not None:
            q, scales = made
            return q, as_row_view(scales, routes.source.shape[0])
    return training.quantized_rows(x.index_select(0, routes.source))


def _gemm(a, a_scale, b, b_scale, offsets, **kw):
    """A bf16 FP8 grouped GEMM, A's scales the [M, K/128] row view."""
    return ops.grouped_gemm(a, b, offsets=offsets, a_scale=a_scale, b_scale=b_scale,
                            out_dtype=torch.bfloat16, validate=False, **kw)


def _routed_rows(h: torch.Tensor, route: torch.Tensor):
    """(routed rows bf16, their e4m3 values, the scales' row view): one
    kernel where it takes them, else SwiGLU's kernel (or torch) and a
    quantisation."""
    made = quant_kernel.routed_swiglu(h, route)
    if made is not None:
        act, q, scales = made
        return act, q, as_row_view(scales, h.shape[0])
    act = swiglu_kernel.swiglu_values(h, route)
    return (act,) + training.quantized_rows(act)


def _h_gradients(h: torch.Tensor, grad: torch.Tensor, route: torch.Tensor):
    """(h's gradient bf16, route's, h's gradient in e4m3, the scales' row
    view): one kernel where it takes them, else SwiGLU's backward and a
    quantisation."""
    made = swiglu_kernel.quantized_routed_swiglu_backward(h, grad, route)
    if made is not None:
        dh, droute, q, scales = made
        return dh, droute, q, as_row_view(scales, h.shape[0])
    dh, droute = swiglu_kernel.swiglu_gradients(h, grad, route)
    return (dh, droute) + training.quantized_rows(dh)


class _SwiGLUExperts(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w13, w2, weights, routes, grad_enabled, by_token):
        # `weights` is routes.route, or (by_token) the topk_weights it was
        # gathered from: the gradient goes to it either way.
        ctx.weights_shape = (weights.shape, weights.dtype) if by_token else None
        x, route = x.detach().contiguous(), routes.route.detach().contiguous()
        # needs_input_grad follows requires_grad even under torch.no_grad:
        # without grad mode (inference) nothing is kept for a backward.
        wants = [grad_enabled and needed for needed in ctx.needs_input_grad[:4]]
        # h's gradient is needed for x's, w13's and route's.
        wants_h = wants[0] or wants[1] or wants[3]
        offsets = routes.offsets
        xq, xs = _token_rows(x, routes)
        up = training.quantized_weights(w13, transposed=wants[0])
        h = _gemm(xq, xs, up.q, up.scales, offsets)
        act, aq, scales = _routed_rows(h, route)
        down = training.quantized_weights(w2, transposed=wants_h)
        y = _gemm(aq, scales, down.q, down.scales, offsets)
        # The up projection's weight gradient reads the bf16 sorted rows,
        # gathered in the backward: kept until then are x's T rows, not the
        # T * top_k sorted ones.
        ctx.save_for_backward(x if wants[1] else None, h if wants_h else None,
                              act if wants[2] else None,
                              route, up.qt, up.scales_t, down.qt, down.scales_t, offsets,
                              routes.source, routes.position)
        ctx.wants, ctx.wants_h = wants, wants_h
        ctx.top_k, ctx.gathered_scales = routes.top_k, routes.gathered_scales
        ctx.weight_dtypes = (w13.dtype, w2.dtype)
        return summed_routes(y, routes.position, routes.top_k)

    @staticmethod
    def backward(ctx, grad):
        (x, h, act, route, up_t, up_scales_t, down_t, down_scales_t, offsets, source,
         position) = ctx.saved_tensors
        routes = Routes(offsets, source, position, route, ctx.top_k, ctx.gathered_scales)
        wants = ctx.wants
        grad = grad.contiguous()
        d_x = d_w13 = d_w2 = d_route = None
        if wants[2]:
            # Each sorted row's gradient is its token's.
            dy = grad.index_select(0, source)
            d_w2 = ops.grouped_gemm(dy, act, k_offsets=offsets, out_dtype=ctx.weight_dtypes[1],
                                    validate=False)
        if not ctx.wants_h:
            return d_x, d_w13, d_w2, d_route, None, None, None
        dyq, dys = _token_rows(grad, routes)
        # Rows outside every group get zeros, which the kernel writes.
        d_act = _gemm(dyq, dys, down_t, down_scales_t, offsets, zero_ungrouped=True)
        dh, d_route, dhq, dh_scales = _h_gradients(h, d_act, route)
        if wants[0]:
            d_rows = _gemm(dhq, dh_scales, up_t, up_scales_t, offsets, zero_ungrouped=True)
            d_x = summed_routes(d_rows, position, ctx.top_k)
        if wants[1]:
            rows = x.index_select(0, source)
            d_w13 = ops.grouped_gemm(dh, rows, k_offsets=offsets,
                                     out_dtype=ctx.weight_dtypes[0], validate=False)
        if wants[3] and ctx.weights_shape is not None:
            d_route = sorted_weights_gradient(d_route, position, *ctx.weights_shape)
        return d_x, d_w13, d_w2, d_route if wants[3] else None, None, None, None
