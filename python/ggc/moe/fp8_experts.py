"""A training step's SwiGLU experts in FP8 as one autograd function: the
up projection, the routed SwiGLU and the down projection, each GEMM
ggc.training's recipe (1x128 activation and 128x128 weight scales, the
input gradients FP8, the weight gradients BF16).

Chained from ggc.training.fp8_grouped_mm and swiglu_kernel.RoutedSwiGLU,
the step quantises the routed rows in a pass of their own after SwiGLU
wrote them, and h's gradient after SwiGLU's backward wrote it. Here the
kernels that write them also quantise them: gg.quantize_rows with `route`
and `activation` gives the routed rows in bf16 (for the down projection's
weight gradient) and in FP8 (for its forward) from one read of h, and
gg.swiglu_rows_backward with `quantized` gives h's gradient in bf16 (for
the up projection's weight gradient) and in FP8 (for its input gradient).
One autograd node instead of three also costs the host less in the
backward, which torch runs on its engine thread. The values are the
chained path's, bit for bit.
"""

from __future__ import annotations

import torch

from .. import ops, training
from . import quant_kernel, swiglu_kernel
from .quant import as_row_view


def usable(rows: torch.Tensor, w13: torch.Tensor) -> bool:
    """Whether swiglu_experts' kernels take this layer: CUDA bf16 rows, I
    (w13's rows / 2) a multiple of 128, eager, a target with FP8
    conversion."""
    inter = w13.shape[1] // 2
    return (quant_kernel.usable(rows) and w13.shape[1] % 2 == 0 and inter % 128 == 0
            and rows.dtype == torch.bfloat16)


def swiglu_experts(rows: torch.Tensor, w13: torch.Tensor, w2: torch.Tensor,
                   offsets: torch.Tensor, route: torch.Tensor) -> torch.Tensor:
    """y[p] = (route[p] * swiglu(rows[p] @ w13[g]^T)) @ w2[g]^T for the
    sorted rows p of expert g (offsets int32 [E+1]), differentiable in
    rows, w13, w2 and route, every GEMM in FP8 (module docstring). rows
    bf16 [M, H], w13 [E, 2I, H], w2 [E, H, I] bf16 (the master weights,
    quantised as ggc.training.quantized_weights keeps them), route f32
    [M]. Check usable(rows, w13) first."""
    return _SwiGLUExperts.apply(rows, w13, w2, offsets, route)


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
    act = swiglu_kernel.swiglu(h, route)
    act = swiglu_kernel._torch_swiglu(h, route) if act is None else act
    return (act,) + training.quantized_rows(act)


def _h_gradients(h: torch.Tensor, grad: torch.Tensor, route: torch.Tensor):
    """(h's gradient bf16, route's, h's gradient in e4m3, the scales' row
    view): one kernel where it takes them, else SwiGLU's backward and a
    quantisation."""
    made = swiglu_kernel.quantized_routed_swiglu_backward(h, grad, route)
    if made is not None:
        dh, droute, q, scales = made
        return dh, droute, q, as_row_view(scales, h.shape[0])
    made = swiglu_kernel.routed_swiglu_backward(h, grad, route)
    dh, droute = swiglu_kernel._torch_backward(h, grad, route) if made is None else made
    return (dh, droute) + training.quantized_rows(dh)


class _SwiGLUExperts(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rows, w13, w2, offsets, route):
        rows, route = rows.detach().contiguous(), route.detach().contiguous()
        # h's gradient is needed for rows', w13's and route's.
        wants_h = any(ctx.needs_input_grad[i] for i in (0, 1, 4))
        xq, xs = training.quantized_rows(rows)
        up = training.quantized_weights(w13, transposed=ctx.needs_input_grad[0])
        h = _gemm(xq, xs, up.q, up.scales, offsets)
        act, aq, scales = _routed_rows(h, route)
        down = training.quantized_weights(w2, transposed=wants_h)
        y = _gemm(aq, scales, down.q, down.scales, offsets)
        ctx.save_for_backward(rows, h, act, route, offsets, up.qt, up.scales_t, down.qt,
                              down.scales_t)
        ctx.wants_h = wants_h
        ctx.weight_dtypes = (w13.dtype, w2.dtype)
        return y

    @staticmethod
    def backward(ctx, dy):
        rows, h, act, route, offsets, up_t, up_scales_t, down_t, down_scales_t = \
            ctx.saved_tensors
        dy = dy.contiguous()
        d_rows = d_w13 = d_w2 = d_route = None
        if ctx.needs_input_grad[2]:
            d_w2 = ops.grouped_gemm(dy, act, k_offsets=offsets, out_dtype=ctx.weight_dtypes[1],
                                    validate=False)
        if not ctx.wants_h:
            return d_rows, d_w13, d_w2, None, d_route
        dyq, dys = training.quantized_rows(dy)
        # Rows outside every group get zeros, which the kernel writes.
        d_act = _gemm(dyq, dys, down_t, down_scales_t, offsets, zero_ungrouped=True)
        dh, d_route, dhq, dh_scales = _h_gradients(h, d_act, route)
        if ctx.needs_input_grad[0]:
            d_rows = _gemm(dhq, dh_scales, up_t, up_scales_t, offsets, zero_ungrouped=True)
        if ctx.needs_input_grad[1]:
            d_w13 = ops.grouped_gemm(dh, rows, k_offsets=offsets,
                                     out_dtype=ctx.weight_dtypes[0], validate=False)
        return d_rows, d_w13, d_w2, None, d_route if ctx.needs_input_grad[4] else None
