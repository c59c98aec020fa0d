"""FP8 training of grouped projections: DeepSeek-V3's recipe on DeepGEMM's
sm90 layouts, as a torch autograd function.

For y[g] = x[g] @ w[g]^T over contiguous groups of x's rows (the tokens of
expert g), with BF16 master weights:

    forward   y      = q(x) @ q(w)^T       x in 1x128 blocks along K,
                                           w in 128x128 blocks
    dgrad     dx     = q(dy) @ q(w)        dy in 1x128 blocks along N; w's
                                           blocks transposed (the same scales)
    wgrad     dw[g]  = q(dy)_g^T q(x)_g    dy^T and x^T in 1x128 blocks along
                                           each group's tokens, the groups
                                           padded to whole blocks (a
                                           k-grouped GEMM); or
                                           in BF16, dy_g^T x_g (the default)

Each product is one of ggc's FP8 grouped GEMMs (ggc.ops.grouped_gemm);
each q() a quantisation to e4m3 with f32 scales (ggc.moe.quant's values:
448 / amax a block). Rows are quantised by the kernel ggc compiles from
gg.quantize_rows where it takes them (CUDA, 128-column blocks; torch ops
elsewhere), the tokens' blocks by gg.quantize_group_tokens' kernel
(transposed, each group padded to whole blocks), and the weights, with
their transposed copy, by gg.quantize_blocks' kernel (torch ops
elsewhere; the same bits).

The weight gradient runs in BF16 by default (`wgrad_dtype`): on the H200,
ggc's FP8 k-grouped GEMM with 1x128 scales on both sides runs at
1.07-1.19x the BF16 one on bench_fp8_training.py's projections, but the
two transposed token quantisations it needs cost more than that (a step
with it 0.74-0.97x; docs/performance-history.md, thirty-fourth session).
With `wgrad_dtype=torch.float8_e4m3fn`, x^T is quantised in the forward
and kept in FP8 for it: C (T + 128 G) bytes against the BF16 x's 2 C T
(half of them once the groups hold many blocks each).

The gradients are within FP8's error of fp64's (test_training.py checks
the bound), not BF16's: this is the recipe's trade.
"""

from __future__ import annotations

import weakref
from typing import Dict, NamedTuple, Optional, Tuple

import torch

from . import ops
from .moe import quant_kernel
from .moe.quant import (_AMAX_FLOOR as AMAX_FLOOR, BLOCK, FP8, FP8_MAX, FP8_ROW_ALIGNMENT,
                        _padded, as_row_view, quantize_rows)

__all__ = ["fp8_grouped_mm", "release_quantized_weights"]


def fp8_grouped_mm(x: torch.Tensor, w: torch.Tensor, offsets: torch.Tensor, *,
                   wgrad_dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """y[offsets[g]:offsets[g+1]] = x[offsets[g]:offsets[g+1]] @ w[g]^T, its
    three GEMMs in FP8 (module docstring), differentiable in x and w.

    x [T, K] and w [G, N, K] bf16 (w the master weights: quantised on each
    call, or kept from an earlier call while w is unchanged:
    quantized_weights); offsets [G+1] int32 or int64, non-decreasing from
    0, the groups covering x's rows (rows past offsets[G] get unspecified
    values and no gradient). K and N must be multiples of 16 (e4m3 rows of
    whole 16 bytes); where they are not of 128 the last scale blocks are
    partial (gpt-oss's 2,880).
    Returns y [T, N] bf16; dx comes back bf16, dw in w's dtype.
    `wgrad_dtype`: the weight gradient's GEMM, torch.bfloat16 (default) or
    torch.float8_e4m3fn (the module docstring says why BF16)."""
    _check(x, w, offsets)
    if wgrad_dtype not in (torch.bfloat16, FP8):
        raise TypeError(f"wgrad_dtype must be torch.bfloat16 or torch.float8_e4m3fn, got "
                        f"{wgrad_dtype!r}")
    # Under no_grad nothing is differentiated, whatever the inputs ask:
    # the backward's operands (w transposed, x's tokens) are not made.
    return _FP8GroupedMM.apply(x, w, offsets.to(torch.int32), wgrad_dtype == FP8,
                               torch.is_grad_enabled())


def _check(x, w, offsets) -> None:
    for name, t in (("x", x), ("w", w), ("offsets", offsets)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"fp8_grouped_mm: {name} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
    if x.dim() != 2 or w.dim() != 3:
        raise ValueError(f"fp8_grouped_mm takes x [T, K] and w [G, N, K]; got x "
                         f"{list(x.shape)} and w {list(w.shape)}")
    if x.dtype != torch.bfloat16 or w.dtype != torch.bfloat16:
        raise TypeError(f"fp8_grouped_mm takes bf16 x and w (the master weights, quantised "
                        f"per call); got x {x.dtype} and w {w.dtype}")
    if x.shape[1] != w.shape[2]:
        raise ValueError(f"x has K = {x.shape[1]} but w has K = {w.shape[2]}")
    if min(w.shape) < 1:
        raise ValueError(f"fp8_grouped_mm needs w [G, N, K] with G, N and K at least 1, "
                         f"got {list(w.shape)}")
    for name, size in (("K", w.shape[2]), ("N", w.shape[1])):
        if size % FP8_ROW_ALIGNMENT:
            raise ValueError(f"fp8_grouped_mm needs {name} a multiple of {FP8_ROW_ALIGNMENT} "
                             f"(e4m3 rows of whole 16 bytes, as TMA reads them), got "
                             f"{name} = {size}")
    if offsets.dim() != 1 or offsets.shape[0] != w.shape[0] + 1:
        raise ValueError(f"offsets must be [G+1] = [{w.shape[0] + 1}], got "
                         f"{list(offsets.shape)}")
    if offsets.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"offsets must be int32 or int64, got {offsets.dtype}")
    devices = {x.device, w.device, offsets.device}
    if len(devices) != 1:
        raise ValueError(f"x, w and offsets must be on one device, got "
                         f"{sorted(map(str, devices))}")


def quantized_rows(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """x [R, C] in 1x128 blocks along C: (e4m3 [R, C], f32 scales [R, ceil(C/128)],
    the M-major view where ggc's kernel made them)."""
    if quant_kernel.usable(x):
        made = quant_kernel.rows_mn(x)
        if made is not None:
            q, scales = made
            return q, as_row_view(scales, x.shape[0])
    return quantize_rows(x.contiguous())


def quantized_tokens(x: torch.Tensor, offsets: torch.Tensor
                     ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x [T, C], its rows the groups `offsets` ([G+1] int32 or int64), in
    1x128 blocks along each group's tokens, transposed for a weight
    gradient's K-major operand, each group padded to whole blocks: (e4m3
    [C, P], f32 scales [C, P/128], int32 padded offsets [G+1]), group g's
    tokens at columns [padded[g], padded[g] + size_g), zeros to the next
    multiple of 128 and past the last group; P = T rounded up to 128 plus
    128 G, which no padding exceeds (no host synchronisation).
    Offsets are clamped to [0, T] and made non-decreasing (each the
    largest so far), as the groups' sizes are taken.
    No 128-token block holds two groups' tokens, so the weight gradient
    over the padded offsets reads every K block whole: a group starting
    anywhere made it clear the neighbours' tokens in shared memory, 1.6-2.4x
    slower on skewed loads (docs/performance-history.md, thirty-fourth
    session). By gg.quantize_group_tokens' kernel on CUDA (one read of
    x; the scales an M-major view); torch ops elsewhere and while
    torch.compile traces (the same bits)."""
    _check_tokens(x, offsets)
    return _group_tokens(x, token_bounds(offsets, x.shape[0]))


def token_bounds(offsets: torch.Tensor, tokens: int) -> torch.Tensor:
    """The groups' bounds quantized_tokens takes: `offsets` clamped to
    [0, tokens] and made non-decreasing (each the largest so far), int32,
    on the device."""
    return torch.cummax(offsets.clamp(0, tokens), 0).values.to(torch.int32)


def _group_tokens(x: torch.Tensor, bounds: torch.Tensor):
    """quantized_tokens over token_bounds' `bounds`."""
    tokens, groups = x.shape[0], bounds.shape[0] - 1
    capacity = max(BLOCK, -(-tokens // BLOCK) * BLOCK + BLOCK * groups)
    if capacity >= 2 ** 31:
        raise ValueError(f"quantized_tokens: {tokens} tokens in {groups} groups pad to up to "
                         f"{capacity} tokens, past the kernel's 2**31")
    made = quant_kernel.group_tokens(x, bounds, capacity)
    if made is not None:
        q, scales, padded = made
        return q, scales.t(), padded
    return _torch_group_tokens(x, bounds, capacity)


def _check_tokens(x, offsets) -> None:
    for name, t in (("x", x), ("offsets", offsets)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"quantized_tokens: {name} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
    if x.dim() != 2:
        raise ValueError(f"quantized_tokens takes x [T, C], got shape {list(x.shape)}")
    if offsets.dim() != 1 or offsets.shape[0] < 1:
        raise ValueError(f"quantized_tokens: offsets must be [G+1] with G >= 0, got shape "
                         f"{list(offsets.shape)}")
    if offsets.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"quantized_tokens: offsets must be int32 or int64, got {offsets.dtype}")
    if offsets.device != x.device:
        raise ValueError(f"quantized_tokens: offsets must be on x's device {x.device}, got "
                         f"{offsets.device}")


def _torch_group_tokens(x: torch.Tensor, bounds: torch.Tensor, capacity: int):
    """quantized_tokens by torch ops over non-decreasing `bounds` in [0, T]:
    each column of out finds its group on the device (no host sync, so
    torch.compile traces it)."""
    tokens, groups = x.shape[0], bounds.shape[0] - 1
    sizes = (bounds[1:] - bounds[:-1]).long()
    padded = torch.cat([bounds.new_zeros(1),
                        ((sizes + BLOCK - 1) // BLOCK * BLOCK).cumsum(0).to(torch.int32)])
    if not groups:
        rows = x.new_zeros(capacity, x.shape[1])
    else:
        position = torch.arange(capacity, device=x.device)
        group = torch.searchsorted(padded[1:].long(), position, right=True).clamp(max=groups - 1)
        local = position - padded[group].long()
        valid = (position < padded[-1].long()) & (local < sizes[group])
        # A row of zeros past x's for the positions holding no token.
        source = torch.where(valid, bounds[group].long() + local, tokens)
        rows = torch.cat([x, x.new_zeros(1, x.shape[1])])[source]
    q, scales = quantize_rows(rows.t().contiguous())
    return q, scales, padded


class QuantizedWeights(NamedTuple):
    """w [G, N, K] in 128x128 blocks: e4m3 `q` [G, N, K] with f32 `scales`
    [G, N/128, K/128], and the same values transposed (`qt` [G, K, N],
    `scales_t` [G, K/128, N/128]) where the input gradient needs them."""
    q: torch.Tensor
    scales: torch.Tensor
    qt: Optional[torch.Tensor]
    scales_t: Optional[torch.Tensor]

    @classmethod
    def of(cls, q, scales, qt) -> "QuantizedWeights":
        """With the transposed scales (a small copy) where qt is given."""
        return cls(q, scales, qt, None if qt is None else scales.transpose(1, 2).contiguous())


def quantized_weights(w: torch.Tensor, transposed: bool) -> QuantizedWeights:
    """w [G, N, K] in 128x128 blocks (the last partial where N or K is not
    a multiple of 128), each value
    times the block's 448 / amax (quant.quantize_rows' rule, over 128 x 128
    values); with `transposed`, the transposed copy too. Kept for w's
    current version (torch bumps it on every in-place update, an
    optimiser's step included), so that micro-batches between two steps
    quantise a weight once. Not while torch.compile traces: a graph
    quantises on every call (the cache's checks are host state a graph
    cannot hold); nor for an inference tensor, which keeps no version. A
    write torch does not count (through `w.data`, by a kernel outside
    torch) is not seen: release_quantized_weights() after one."""
    keeps = not (torch.compiler.is_compiling() or w.is_inference())
    cached = _WEIGHTS.get(id(w)) if keeps else None
    if cached is not None:
        ref, version, pointer, made = cached
        if (ref() is w and version == w._version and pointer == w.data_ptr()
                and (made.qt is not None or not transposed)):
            return made
    made = _kernel_weights(w, transposed) or _torch_weights(w, transposed)
    if keeps:
        _WEIGHTS[id(w)] = (weakref.ref(w, lambda _, key=id(w): _WEIGHTS.pop(key, None)),
                           w._version, w.data_ptr(), made)
    return made


def _kernel_weights(w: torch.Tensor, transposed: bool) -> Optional[QuantizedWeights]:
    """quantized_weights by gg.quantize_blocks' kernel (one pass over w),
    where it takes w."""
    made = quant_kernel.weight_blocks(w, transposed)
    if made is None:
        return None
    return QuantizedWeights.of(*made)


def _torch_weights(w: torch.Tensor, transposed: bool) -> QuantizedWeights:
    """quantized_weights by torch ops: the kernel's values. N or K off 128:
    w with zeros appended to whole blocks (which change no amax), the
    padding cut off the result."""
    g, n, k = w.shape
    detached = w.detach()
    whole = _padded(detached, (1, 2))
    nb, kb = whole.shape[1] // BLOCK, whole.shape[2] // BLOCK
    blocks = whole.view(g, nb, BLOCK, kb, BLOCK)
    # Each row's amax over its 128-column blocks (a reduction along
    # contiguous memory, one pass), then the max of 128 rows' (small).
    row_amax = torch.linalg.vector_norm(whole.view(g, nb * BLOCK, kb, BLOCK), float("inf"),
                                        dim=-1, dtype=torch.float32)
    amax = row_amax.view(g, nb, BLOCK, kb).amax(dim=2).clamp_min(AMAX_FLOOR)
    factor = torch.full_like(amax, FP8_MAX) / amax
    q = torch.empty(whole.shape, dtype=FP8, device=w.device)
    torch.mul(blocks, factor[:, :, None, :, None], out=q.view(blocks.shape))
    if whole is not detached:
        q = q[:, :n, :k].contiguous()
    return QuantizedWeights.of(q, amax / FP8_MAX,
                               q.transpose(1, 2).contiguous() if transposed else None)


# id(w) -> (weak reference to w, its version, its address, QuantizedWeights)
_WEIGHTS: Dict[int, tuple] = {}


def release_quantized_weights() -> None:
    """Drops every kept quantisation of weights (quantized_weights' cache:
    2 bytes a weight while the weight lives unchanged), say after the last
    micro-batch of a run; the next call quantises again."""
    _WEIGHTS.clear()


class _FP8GroupedMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor, offsets: torch.Tensor,
                fp8_wgrad: bool, grad_enabled: bool) -> torch.Tensor:
        wants_x = grad_enabled and ctx.needs_input_grad[0]
        wants_w = grad_enabled and ctx.needs_input_grad[1]
        xq, xs = quantized_rows(x.detach())
        # dgrad reads w^T's blocks: the same quantised values, transposed.
        quantized = quantized_weights(w, transposed=wants_x)
        y = ops.grouped_gemm(xq, quantized.q, offsets=offsets, a_scale=xs,
                             b_scale=quantized.scales, out_dtype=x.dtype, validate=False)
        saved = [offsets]
        if wants_x:
            saved += [quantized.qt, quantized.scales_t]
        if wants_w and fp8_wgrad:
            # The bounds once for x's tokens and dy's, whose padded offsets
            # (the weight gradient's groups) are the same.
            bounds = token_bounds(offsets, x.shape[0])
            xtq, xts, _ = _group_tokens(x.detach(), bounds)
            saved += [xtq, xts, bounds]
        elif wants_w:
            saved += [x.detach().contiguous()]
        ctx.save_for_backward(*saved)
        ctx.w_dtype, ctx.fp8_wgrad = w.dtype, fp8_wgrad
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        offsets, *rest = ctx.saved_tensors
        dy = dy.contiguous()
        dx = dw = None
        if ctx.needs_input_grad[0]:
            wtq, wts = rest[:2]
            rest = rest[2:]
            dyq, dys = quantized_rows(dy)
            # Rows of x outside every group get zeros, which the kernel
            # writes (zero_ungrouped): every row is written.
            dx = ops.grouped_gemm(dyq, wtq, offsets=offsets, a_scale=dys, b_scale=wts,
                                  out_dtype=dy.dtype, validate=False, zero_ungrouped=True)
        if ctx.needs_input_grad[1] and ctx.fp8_wgrad:
            xtq, xts, bounds = rest
            dytq, dyts, padded = _group_tokens(dy, bounds)
            hint = ops.expected_group_tokens(dy.shape[0], offsets.numel() - 1)
            dw = ops.grouped_gemm(dytq, xtq, k_offsets=padded, k_major=True, a_scale=dyts,
                                  b_scale=xts, out_dtype=ctx.w_dtype, validate=False,
                                  expected_m=hint)
        elif ctx.needs_input_grad[1]:
            (x,) = rest  # token-major dy and x, as they are
            dw = ops.grouped_gemm(dy, x, k_offsets=offsets, out_dtype=ctx.w_dtype,
                                  validate=False)
        return dx, dw, None, None, None

