"""The MoE layer's GEMMs with work in ggc's epilogues.

The up projection with the gated activation in its epilogue (inference):
a[p] = act(x[p] @ w13_gate[g]^T, x[p] @ w13_up[g]^T), one GEMM writing I
columns where the plain GEMM wrote 2I for an activation pass to read.

The down projection with the routing weight in its epilogue, as a torch
custom op (`torch.ops.ggc.moe_down`) with a BF16 backward: y[p] = route[p]
* (a[p] @ w[g]^T) for the sorted rows p of expert g: the weight multiplies
the f32 accumulator before the bf16 store, so the weighted rows never take
an extra pass through memory.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

from .. import compiler as ggc_compiler
from .. import language as gl
from .. import torch_ops
from ..jit import jit
from .activations import SWIGLUOAI_ALPHA, SWIGLUOAI_LIMIT


def _swiglu(acc):
    # w13's gate rows first, then its up rows (column j pairs with j + I).
    gate, up = gl.column_halves(acc)
    return gl.silu(gate) * up


def _swigluoai(acc):
    # gpt-oss interleaves w13's gate and up rows (column 2j pairs with 2j + 1).
    gate, up = gl.column_pairs(acc)
    gate = gl.minimum(gate, SWIGLUOAI_LIMIT)
    up = gl.maximum(gl.minimum(up, SWIGLUOAI_LIMIT), -SWIGLUOAI_LIMIT)
    return (up + 1.0) * (gate * gl.sigmoid(gate * SWIGLUOAI_ALPHA))


@jit
def moe_up_swiglu(x: gl.Rows, w13: gl.Weights, offsets: gl.Offsets, h: gl.Out,
                  EXPECTED_M: gl.constexpr = None):
    gl.store(h, _swiglu(gl.grouped_dot(x, w13, offsets, expected_m=EXPECTED_M)))


@jit
def moe_up_swigluoai(x: gl.Rows, w13: gl.Weights, offsets: gl.Offsets, h: gl.Out,
                     EXPECTED_M: gl.constexpr = None):
    gl.store(h, _swigluoai(gl.grouped_dot(x, w13, offsets, expected_m=EXPECTED_M)))


# The same with the tokens read through the sorted routes' source rows
# (gg's a_rows): no gathered copy of x is written.
@jit
def moe_up_gathered(x: gl.Rows, source: gl.RowIndices, w13: gl.Weights, offsets: gl.Offsets,
                    h: gl.Out, EXPECTED_M: gl.constexpr = None):
    gl.store(h, gl.grouped_dot(x, w13, offsets, a_rows=source, expected_m=EXPECTED_M))


@jit
def moe_up_swiglu_gathered(x: gl.Rows, source: gl.RowIndices, w13: gl.Weights,
                           offsets: gl.Offsets, h: gl.Out, EXPECTED_M: gl.constexpr = None):
    gl.store(h, _swiglu(gl.grouped_dot(x, w13, offsets, a_rows=source,
                                       expected_m=EXPECTED_M)))


@jit
def moe_up_swigluoai_gathered(x: gl.Rows, source: gl.RowIndices, w13: gl.Weights,
                              offsets: gl.Offsets, h: gl.Out, EXPECTED_M: gl.constexpr = None):
    gl.store(h, _swigluoai(gl.grouped_dot(x, w13, offsets, a_rows=source,
                                          expected_m=EXPECTED_M)))


# gg-select-config's contiguous decode tiles (64x64) take groups expected
# to hold at most this many rows on sm_90a (its kWgmmaDecodeGroupRows).
DECODE_TILE_ROWS = 16

# The activations an up projection's epilogue computes, and the targets
# whose kernels pair their columns that way (column_halves needs TMA and
# wgmma; column_pairs lowers everywhere).
_GATED_UP = {"swiglu": (moe_up_swiglu, ("sm_90a",)),
             "swigluoai": (moe_up_swigluoai, None)}
_GATED_UP_GATHERED = {"swiglu": moe_up_swiglu_gathered,
                      "swigluoai": moe_up_swigluoai_gathered}


# The up projection reads its tokens through the source list where w13 has
# at most GATHER_MAX_N rows (N) and H is at most GATHER_MAX_H. The sorted
# copy costs one pass over the routes' rows; reading them by cp.async
# instead costs the GEMM a share of its time that does not shrink as N
# grows (while the copy's share does) and that grows with H. Measured on
# the H200, up projection at T = 4,096 and top-8 of 128 experts, gathered
# against copy + GEMM (docs/performance-history.md, thirteenth session,
# call 5): H = 2,048 N = 1,536 (Qwen3-like) 1.19x; H = 4,096 N = 1,536
# 1.05x; H = 2,048 N = 4,096 1.01x; H = 7,168 N = 1,536 0.93x; DeepSeek-
# V3-like H = 7,168 N = 4,096 0.84x; Mixtral-like H = 4,096 N = 28,672 at
# T = 1,024 (call 4) 0.89x. The Qwen3-like layer gained 1-12% at every T
# (call 4).
GATHER_MAX_N = 2048
GATHER_MAX_H = 4096

# On a card of narrow memory (ggc.compiler.memory_plan_class: an H100),
# wider up projections read through the list too where experts expect
# GATHER_WIDE_ROWS rows (the layer's hint): there the copy's pass over the
# rows costs more than the GEMM's cp.async copies. Measured on an H100
# (copy + GEMM over gathered; docs/performance-history.md, sixty-first
# session, calls 3-4): Mixtral-like 128 / 256 / 512 rows 1.013x /
# 1.019-1.020x / 1.010x, 1,024 rows 0.988x; DeepSeek-V3-like 128 rows
# 1.041-1.055x, 32 and 64 rows 0.962x. Not measured on an H200, which
# keeps the copy (0.89x on the Mixtral-like layer at 256 rows in the
# thirteenth session, older kernels).
GATHER_WIDE_ROWS = (128, 512)


def gather_pays(n: int, h: int, rows_hint: Optional[int] = None) -> bool:
    """Whether an up projection of N = `n` columns over H = `h`, its experts
    expecting `rows_hint` rows, reads its rows through the source list
    (GATHER_MAX_N's, GATHER_MAX_H's and GATHER_WIDE_ROWS' rules) on the
    card that kernels are planned for (ggc.compiler.get_memory_gbps)."""
    if n <= GATHER_MAX_N and h <= GATHER_MAX_H:
        return True
    low, high = GATHER_WIDE_ROWS
    return (rows_hint is not None and low <= rows_hint <= high
            and ggc_compiler.memory_plan_class(ggc_compiler.get_memory_gbps()) != 0)


def gathers_rows(x: Tensor, w13: Tensor, rows_hint: Optional[int] = None) -> bool:
    """Whether the up projection reads x's rows through the routes' source
    list (gg's a_rows) instead of a gathered copy: BF16 inference launched
    directly (torch's dispatch sees the gathered copy's ops) where it pays
    for experts expecting `rows_hint` rows (gather_pays); on CPU tensors
    the reference backend runs the same kernels. Not FP8: the tokens quantised once and read through the list
    (a_rows with the sorted rows' scales) measured 0.94x / 0.97x / 1.01x
    the gathered quantised copy on the Qwen3-like layer at T = 1,024 /
    4,096 / 16,384 (H200, docs/performance-history.md, fifteenth session,
    call 2): its cp.async copies cost a GEMM twice as fast per K block
    more than the copy's pass saves (the layer now scatters each token's
    quantised row instead, gg.quantize_rows' scatter)."""
    return (x.dtype == torch.bfloat16 and w13.dtype == torch.bfloat16
            and gather_pays(w13.shape[1], w13.shape[2], rows_hint)
            and not torch_ops.wants_op((x, w13), grad=True))


def gated_up_kernel(activation: str, expected_m: Optional[int], gathered: bool = False):
    """The @ggc.jit kernel that computes `activation` in the up
    projection's epilogue for experts expected to get `expected_m` rows on
    the current target, or None where the GEMM and the activation run
    apart (BF16 inference; ggc.moe.precompile warms the same)."""
    fused = _GATED_UP.get(activation)
    # Experts expected to get at most DECODE_TILE_ROWS rows take
    # gg-select-config's 64x64 decode tiles, whose halves (32 rows of B a
    # box, 64-byte output rows) measured no faster than the GEMM and ggc's
    # SwiGLU kernel (Qwen3-like layer on the H200 at 8 rows an expert:
    # 0.995x); on 128-row tiles fusing measured 1.02-1.04x
    # (docs/performance.md, twelfth session).
    if fused is None or (expected_m is not None and expected_m <= DECODE_TILE_ROWS):
        return None
    kernel, targets = fused
    if targets is not None and ggc_compiler.get_target() not in targets:
        return None
    return _GATED_UP_GATHERED[activation] if gathered else kernel


def gated_up(x: Tensor, w13: Tensor, offsets: Tensor, activation: str,
             expected_m: Optional[int], source: Optional[Tensor] = None) -> Optional[Tensor]:
    """act(x @ w13[g]^T) for the sorted rows x [M, H] bf16 of each expert
    g in one GEMM whose epilogue computes the activation (inference, eager:
    no custom op wraps it), or None where no such kernel takes the call
    (gated_up_kernel's rules, other dtypes, or a call torch's dispatch must
    see). `source` (int32 [M]): x holds the tokens and row p reads token
    source[p] (gathers_rows)."""
    if x.dtype != torch.bfloat16 or w13.dtype != torch.bfloat16:
        return None
    kernel = gated_up_kernel(activation, expected_m, gathered=source is not None)
    if kernel is None or torch_ops.wants_op((x, w13), grad=True):
        return None
    if source is None:
        h = x.new_empty(x.shape[0], w13.shape[1] // 2)
        kernel(x, w13, offsets, h, EXPECTED_M=expected_m, validate=False)
    else:
        h = x.new_empty(source.shape[0], w13.shape[1] // 2)
        kernel(x, source, w13, offsets, h, EXPECTED_M=expected_m, validate=False)
    return h


def _fp8_dot(a, w, offsets, a_scale, w_scale, expected_m):
    # The FP8 layer's GEMMs: A's 1x128 scales M-major (quant.mn_major's),
    # the weights' 128x128.
    return gl.grouped_dot(a, w, offsets, a_scale=a_scale, b_scale=w_scale,
                          a_scale_kind="block_mn", b_scale_kind="block", expected_m=expected_m)


@jit
def moe_up_swiglu_fp8(x: gl.Rows, w13: gl.Weights, offsets: gl.Offsets, x_scale: gl.Scale,
                      w13_scale: gl.Scale, a: gl.Out, a_scale: gl.OutScale,
                      EXPECTED_M: gl.constexpr = None):
    gl.store(a, _swiglu(_fp8_dot(x, w13, offsets, x_scale, w13_scale, EXPECTED_M)),
             scale=a_scale)


def fp8_gated_up_takes(inter: int) -> bool:
    """Whether moe_up_swiglu_fp8 has a tile for I = `inter` on the current
    target: sm_90a (column_halves), I a multiple of 128 (gg-select-config's
    64x256 tiles, two warpgroups a 1x128 block)."""
    return ggc_compiler.get_target() == "sm_90a" and inter % 128 == 0


def fp8_gated_up(x: Tensor, x_scale: Tensor, w13: Tensor, w13_scale: Tensor,
                 offsets: Tensor, expected_m: Optional[int]
                 ) -> Optional[Tuple[Tensor, Tensor]]:
    """(silu(gate) * up in e4m3 [M, I], its 1x128 scales M-major [I/128,
    align4(M)]) for the sorted e4m3 rows x [M, H] (x_scale their scales
    M-major) of each expert g against w13[g] (e4m3 [E, 2I, H], gate rows
    then up rows, 128x128 scales w13_scale): one FP8 GEMM that quantises
    in its epilogue (gg's out_scale over column_halves: 64x256 tiles whose
    two warpgroups share each block's amax), where the GEMM wrote h [M, 2I]
    in bf16 for gg.quantize_rows to read. None where no kernel takes the
    call: a target other than sm_90a, I not a multiple of 128, a call
    torch's dispatch must see."""
    inter = w13.shape[1] // 2
    if not fp8_gated_up_takes(inter) or torch_ops.wants_op((x, w13), grad=True):
        return None
    m = x.shape[0]
    a = x.new_empty(m, inter)
    a_scale = torch.empty(inter // 128, (m + 3) // 4 * 4, device=x.device,
                          dtype=torch.float32)
    moe_up_swiglu_fp8(x, w13, offsets, x_scale, w13_scale, a, a_scale, EXPECTED_M=expected_m,
                      validate=False)
    return a, a_scale


def gathered_up(x: Tensor, source: Tensor, w13: Tensor, offsets: Tensor,
                expected_m: Optional[int]) -> Tensor:
    """x[source[p]] @ w13[g]^T for the sorted rows p of each expert g: the
    up projection without its activation, reading the tokens through the
    list (gathers_rows)."""
    h = x.new_empty(source.shape[0], w13.shape[1])
    moe_up_gathered(x, source, w13, offsets, h, EXPECTED_M=expected_m, validate=False)
    return h


@jit
def moe_down_routed(a: gl.Rows, w: gl.Weights, offsets: gl.Offsets, route: gl.RowVector,
                    y: gl.Out, EXPECTED_M: gl.constexpr = None):
    gl.store(y, gl.grouped_dot(a, w, offsets, expected_m=EXPECTED_M) * route)


@jit
def moe_down_routed_fp8(a: gl.Rows, w: gl.Weights, offsets: gl.Offsets, a_scale: gl.Scale,
                        w_scale: gl.Scale, route: gl.RowVector, y: gl.Out,
                        EXPECTED_M: gl.constexpr = None):
    gl.store(y, _fp8_dot(a, w, offsets, a_scale, w_scale, EXPECTED_M) * route)


def _down(a: Tensor, w: Tensor, offsets: Tensor, route: Tensor,
          a_scale: Optional[Tensor] = None, w_scale: Optional[Tensor] = None,
          expected_m: Optional[int] = None, zero_ungrouped: bool = False) -> Tensor:
    """The op's body, real and fake: a fake call traces and checks the
    kernel as a launch would (ggc.torch_ops), a real one launches it.
    `zero_ungrouped`: rows past offsets[E] (routes to another rank's
    experts) read as zeros; the kernel never writes them."""
    shape, dtype = (a.shape[0], w.shape[1]), output_dtype(a)
    y = a.new_zeros(shape, dtype=dtype) if zero_ungrouped else a.new_empty(shape, dtype=dtype)
    # The offsets come from searchsorted over every route, so they always
    # cover the M rows in order (or the first of them, with
    # zero_ungrouped): checking them would only add a host sync.
    with torch_ops._op_body():
        if a_scale is None:
            moe_down_routed(a, w, offsets, route, y, EXPECTED_M=expected_m, validate=False)
        else:
            moe_down_routed_fp8(a, w, offsets, a_scale, w_scale, route, y,
                                EXPECTED_M=expected_m, validate=False)
    return y


def output_dtype(a: Tensor) -> torch.dtype:
    """What the layer's GEMMs write: bf16, or float32 for a float32 layer
    (the CPU's reference backend only)."""
    return torch.float32 if a.dtype == torch.float32 else torch.bfloat16


moe_down_op = torch.library.custom_op("ggc::moe_down", _down, mutates_args=(),
                                      tags=torch_ops._TAGS)
moe_down_op.register_fake(_down)


def _setup_context(ctx, inputs, output):
    a, w, offsets, route, a_scale = inputs[:5]
    ctx.fp8 = a_scale is not None
    ctx.save_for_backward(a, w, offsets, route)


def _backward(ctx, grad):
    if ctx.fp8:
        raise RuntimeError("ggc.moe: the FP8 down projection has no backward (train in "
                           "BF16)")
    a, w, offsets, route = ctx.saved_tensors
    grad = grad.contiguous()
    # y = route * (a @ w^T) row by row. The route goes with a's [M, I] rows
    # (I columns, not y's H), and its gradient <grad, a @ w^T> is
    # <grad @ w, a>: no pass over an f32 copy of [M, H] and no GEMM of the
    # product again.
    grad_a = grad_w = grad_route = None
    if ctx.needs_input_grad[0] or ctx.needs_input_grad[3]:
        # grad @ w, zero on rows past every group (the kernel's zeros:
        # zero_ungrouped, no fill before it)
        unweighted = torch.empty_like(a, memory_format=torch.contiguous_format)
        torch.ops.ggc.grouped_gemm_out(grad, w.contiguous(), unweighted, offsets=offsets,
                                       b_layout="kn", zero_ungrouped=True)
        if ctx.needs_input_grad[0]:
            grad_a = row_scaled(unweighted, route)
        if ctx.needs_input_grad[3]:
            grad_route = row_dot(unweighted, a)
    if ctx.needs_input_grad[1]:
        # grad^T (route * a): written in the weight's dtype by the kernel.
        grad_w = torch.ops.ggc.grouped_gemm(grad, row_scaled(a.contiguous(), route),
                                            k_offsets=offsets, out_dtype=w.dtype)
    return grad_a, grad_w, None, grad_route, None, None, None, None


class RouteWeighted(torch.autograd.Function):
    """y [M, C] times route [M] per row (row_scaled), differentiable in
    both: the FP8 training path's routing weight, which its GEMM's
    epilogue does not apply."""

    @staticmethod
    def forward(ctx, y, route):
        ctx.save_for_backward(y, route)
        return row_scaled(y, route)

    @staticmethod
    def backward(ctx, grad):
        y, route = ctx.saved_tensors
        grad = grad.contiguous()
        return (row_scaled(grad, route) if ctx.needs_input_grad[0] else None,
                row_dot(grad, y) if ctx.needs_input_grad[1] else None)


def row_scaled(rows: Tensor, scale: Tensor) -> Tensor:
    """rows [M, C] times scale [M] per row, the scale rounded to rows'
    dtype first: one vectorised pass (an f32 scale against bf16 rows takes
    torch's mixed-dtype path, which is not); for backward formulas and the
    FP8 path, whose gradients are bf16 anyway."""
    return rows * scale.to(rows.dtype).unsqueeze(1)


def row_dot(a: Tensor, b: Tensor) -> Tensor:
    """sum_c a[p, c] * b[p, c] for each row, f32 [M]: each product exact in
    f32 (a 16-bit product would round first), then summed."""
    return (a.float() * b).sum(dim=-1)


moe_down_op.register_autograd(_backward, setup_context=_setup_context)
torch_ops.lean_eager(moe_down_op, _down, formula=(_setup_context, _backward))


def routed_down(a: Tensor, w: Tensor, offsets: Tensor, route: Tensor,
                a_scale: Optional[Tensor] = None, w_scale: Optional[Tensor] = None,
                expected_m: Optional[int] = None, zero_ungrouped: bool = False) -> Tensor:
    """moe_down, launched directly in eager inference (no custom-op
    dispatch on the host path), through the op when compiling, tracing or
    differentiating. `expected_m`: the rows an expert typically gets (the
    tile choice's hint)."""
    if torch_ops.wants_op((a, w, route), grad=True):
        return torch.ops.ggc.moe_down(a, w, offsets, route, a_scale, w_scale, expected_m,
                                      zero_ungrouped)
    return _down(a, w, offsets, route, a_scale, w_scale, expected_m, zero_ungrouped)
