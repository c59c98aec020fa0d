"""fused_moe: a whole MoE layer's experts on ggc's grouped GEMMs.

    sorted rows   xs = x[source]                      (permute: by expert)
    up            h  = xs @ w13[g]^T                  (ggc.ops.grouped_gemm)
    activation    a  = silu(h_gate) * h_up            (gg.swiglu_rows, or torch;
                                                       BF16 inference: in the up
                                                       GEMM's epilogue, a written
                                                       and h never)
    down          y  = route * (a @ w2[g]^T)          (ggc epilogue: ggc::moe_down)
    combine       out[t] = sum_j y[position[t, j]]    (gg.combine_routes, or torch:
                                                       a fixed-order f32 sum)

On CUDA and outside torch.compile, the permutation is one or two kernels
ggc compiles from gg.sort_routes (ggc.moe.routes, up to 512 experts; in
training the sorted weights are differentiable through
permute._SortedWeights), the combine one from gg.combine_routes
(ggc.moe.combine_kernel) and SwiGLU, where the up projection's epilogue
does not compute it, one from gg.swiglu_rows (ggc.moe.swiglu_kernel),
forward and backward; elsewhere torch ops.

No step synchronises with the host and every buffer has T * top_k rows,
so the layer runs inside a CUDA graph and under torch.compile(fullgraph=True).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import torch

from .. import compiler as ggc_compiler
from .. import ops
from .. import training
from . import checks, combine_kernel, fp8_experts, graphs, quant_kernel, routes, swiglu_kernel
from .activations import activate
from .kernels import (RouteWeighted, fp8_gated_up, gated_up, gathered_up, gathers_rows,
                      output_dtype, routed_down)
from .permute import (Permutation, _CombineRows, _GatherRows, _SortedWeights,
                      constant_arange, sort_routes, summed_routes)
from .quant import as_row_view, mn_major, quantize_rows


def fused_moe(x: torch.Tensor, w13: torch.Tensor, w2: torch.Tensor,
              topk_weights: torch.Tensor, topk_ids: torch.Tensor,
              activation: str = "swiglu", *, w13_scale: Optional[torch.Tensor] = None,
              w2_scale: Optional[torch.Tensor] = None, x_scale: Optional[torch.Tensor] = None,
              w13_bias: Optional[torch.Tensor] = None, w2_bias: Optional[torch.Tensor] = None,
              expert_map: Optional[torch.Tensor] = None,
              validate: Optional[bool] = None, graph: Optional[bool] = None,
              compute_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """out[t] = sum_j topk_weights[t, j] * expert_{topk_ids[t, j]}(x[t]).

    x [T, H] bf16; w13 [E, 2I, H] (gate rows then up rows; [E, I, H] for a
    plain activation) and w2 [E, H, I], bf16, or float8_e4m3fn with f32
    128x128 block scales w13_scale [E, 2I/128, H/128] and w2_scale
    [E, H/128, I/128] (x and the activation are then quantised per 1x128
    block); topk_weights and topk_ids [T, top_k]. x may come quantised
    already (FP8 weights only): e4m3 [T, H] with `x_scale` its f32 1x128
    scales [T, H/128] (an expert-parallel dispatch's FP8 rows, say).
    `activation`: one of ggc.moe.activations.ACTIVATIONS: "swiglu"
    (silu(gate) * up), "geglu" (tanh gelu), "geglu_erf", "swigluoai"
    (gpt-oss's clamped SwiGLU, gate/up rows interleaved), "silu", "gelu",
    "gelu_erf", "relu", "relu2". Returns [T, H] bf16. On CPU tensors the
    layer runs on ggc's reference backend (ggc.reference), which also takes
    float32 x, w13 and w2 (and returns float32); on CUDA float32 is refused.

    `w13_bias` [E, N] and `w2_bias` [E, H] (gpt-oss): each expert's biases,
    added to its up projection and, before the routing weight, to its down
    projection. `expert_map` [global E] int (vLLM's): topk_ids are global
    ids, expert_map[id] the local expert (a row of w13) or -1 for an
    expert another rank holds, whose routes add nothing (their rows are
    never computed); inference only.

    An id outside [0, E) makes its token's output NaN (never a plausible
    wrong result). `validate` (default $GGC_VALIDATE) reads topk_ids back
    and raises ValueError naming the bad entry instead: a host sync, so not
    under torch.compile or a CUDA-graph capture. BF16 is differentiable in
    x, w13, w2 and topk_weights; FP8 weights are inference only.

    `compute_dtype=torch.float8_e4m3fn` (bf16 x and weights, H and I
    multiples of 16; off 128 the last scale blocks are partial): both projections run as FP8 GEMMs on the bf16
    weights quantised per call (ggc.training.fp8_grouped_mm: DeepSeek-V3's
    recipe, 1x128 activation and 128x128 weight scales, the input
    gradients in FP8 too, the weight gradients BF16), differentiable as
    BF16 is;
    the activation and the combine stay bf16/f32. Results within FP8's
    error, not BF16's.

    `graph`: an eager call with nothing to differentiate replays the layer
    from a CUDA graph cached per signature and weights (captured on the
    signature's second call; ggc.moe.graphs): None (default) for at most
    $GGC_MOE_GRAPH_TOKENS (64) tokens, where the host path outlasts the
    kernels, True at any size, False never. The same kernels, the same
    bits."""
    problem, signature = checks.check_fused_moe_once(x, w13, w2, topk_weights, topk_ids,
                                                     activation, w13_scale, w2_scale, x_scale,
                                                     w13_bias, w2_bias, expert_map)
    grad = torch.is_grad_enabled() and any(
        t is not None and t.requires_grad for t in (x, topk_weights, w13, w2, w13_bias, w2_bias))
    fp8_compute = checks.check_compute_dtype(compute_dtype, problem, x)
    if problem.fp8 and grad:  # FP8 weights: nothing of the layer has a backward
        raise ValueError("FP8 fused_moe is inference only: x, topk_weights and the biases "
                         "must not require grad (run it under torch.no_grad(), or use "
                         "bf16 weights)")
    if problem.mapped and grad:
        raise ValueError("fused_moe with expert_map is inference only: run it under "
                         "torch.no_grad() (ggc.moe.ExpertParallelMoE trains across ranks)")
    graphs.check_argument(graph)
    validating = checks.validating(validate, x)
    if validating:
        checks.check_ids(topk_ids, problem.id_range)
        if expert_map is not None:
            checks.check_expert_map(expert_map, problem.experts)
    weights = Weights(w13, w2, w13_scale, w2_scale, w13_bias, w2_bias)
    if fp8_compute:  # no graph replay: the weights' quantisation is host state
        return _experts(problem, grad, x, topk_weights, topk_ids, x_scale, weights,
                        activation, expert_map, fp8_compute=True)
    if signature is not None and graphs.wanted(graph, problem.tokens, x, grad, validating):
        # The graph reads the weights (and the map) where they lie now.
        # The kernels a graph captured are those planned for the settings
        # of the time (target, SMs, shared memory, DRAM bandwidth).
        key = (signature, ggc_compiler.plan_settings()) + tuple(
            None if t is None else t.data_ptr() for t in weights + (expert_map,))
        inputs = (x, topk_weights, topk_ids) + (() if x_scale is None else (x_scale,))
        return graphs.replay(key, inputs,
                             lambda x, w, ids, scale=None: _experts(
                                 problem, grad, x, w, ids, scale, weights, activation,
                                 expert_map))
    return _experts(problem, grad, x, topk_weights, topk_ids, x_scale, weights, activation,
                    expert_map)


class Weights(NamedTuple):
    """The experts' weights, FP8 scales and biases (each but w13 and w2 may
    be None)."""
    w13: torch.Tensor
    w2: torch.Tensor
    w13_scale: Optional[torch.Tensor] = None
    w2_scale: Optional[torch.Tensor] = None
    w13_bias: Optional[torch.Tensor] = None
    w2_bias: Optional[torch.Tensor] = None


# Training's SwiGLU experts apply the routing weight in the SwiGLU kernel
# (_routed_swiglu_down), whose backward also gives the weights' gradient.
# False takes the path before it (the weight in the down projection's
# epilogue; the FP8 layer a pass of its own): benchmarks/probes/
# routed_swiglu_step.py times the two in one run.
ROUTED_SWIGLU_IN_TRAINING = True

# Training sorts the routes by gg.sort_routes' kernels as inference does
# (the sorted weights differentiable through permute._SortedWeights), where
# torch's sort, searchsorted, scatter and gathers took about ten kernels
# and their launches. The same bits both ways, but for an invalid expert
# id's weight, whose gradient the kernel path passes on and torch's zeroes
# (its token's output and gradients are NaN either way). False: torch's
# sort (benchmarks/probes/routed_swiglu_step.py --flag
# KERNEL_SORT_IN_TRAINING times the two).
KERNEL_SORT_IN_TRAINING = True

# The FP8 layer's SwiGLU experts, with the tokens' gather and the
# combine, as one autograd function whose kernels also quantise what they
# write (ggc.moe.fp8_experts; BF16 weight gradients, no expert biases).
# False: the gather, fp8_grouped_mm, the routed SwiGLU, fp8_grouped_mm and
# the combine chained (routed_swiglu_step.py --flag FUSED_FP8_EXPERTS
# times the two).
FUSED_FP8_EXPERTS = True

# The fused FP8 experts take topk_weights and gather its gradient in
# their own backward, where permute._SortedWeights was an autograd node
# of its own. False: _SortedWeights (routed_swiglu_step.py --flag
# SORTED_WEIGHTS_IN_EXPERTS times the two).
SORTED_WEIGHTS_IN_EXPERTS = True

# The FP8 layer's weight gradients run in FP8 (ggc.training's
# wgrad_dtype) from this many rows an expert on average (the `hint`,
# a power of two), BF16 below it; None: BF16 always.
# benchmarks/probes/routed_swiglu_step.py --fp8-wgrad times both.
FP8_WEIGHT_GRADIENT_ROWS: Optional[int] = None

# The FP8 layer's SwiGLU up projection quantises its output in its own
# epilogue (kernels.fp8_gated_up), where the FP8 GEMM wrote h [M, 2I] in
# bf16 and gg.quantize_rows read it back: where experts expect
# FP8_SWIGLU_EPILOGUE_ROWS rows (the hint). Its 64x256 tile (two
# warpgroups a 1x128 block) wastes less of a small group's last tile and
# does more instructions a multiply: the layer (eager, H100,
# docs/performance-history.md, fifty-ninth session) at 32-512 rows an
# expert 1.007-1.078x (Qwen3-like at 64 / 256, DeepSeek-V3-like at 32 /
# 128 / 512), at 1,024 0.930x (Qwen3-like T 16,384), at 8 and 16 rows
# 1.033x and 0.929x (left off, as BF16's decode tiles are).
# benchmarks/probes/layer_flag.py times the layer off against on,
# benchmarks/probes/quantized_out.py the kernels.
FP8_SWIGLU_IN_EPILOGUE = True
FP8_SWIGLU_EPILOGUE_ROWS = (32, 512)

# Sorted rows from which the FP8 layer's token quantisation writes each
# token's scales once and gathers them (one more kernel, a fixed cost)
# instead of storing every sorted row's scales from the scatter (4-byte
# stores at random rows, whose cost grows with the rows): where the
# measured gain starts (docs/performance-history.md, twentieth session).
GATHERED_SCALE_ROWS = 65536


def _sorted_routes(problem: checks.Problem, grad: bool, topk_weights, topk_ids, expert_map,
                   weights_graph: bool = True):
    """(offsets, order, source, position, route): the routes sorted by
    local expert, each sorted row's weight (NaN for an invalid id, 0 for
    another rank's expert). Without `weights_graph` the kernel's sorted
    weights come without their autograd node (the caller differentiates
    them itself: fp8_experts' topk_weights); torch's sort's always carry
    theirs."""
    if expert_map is None:
        if (not grad or KERNEL_SORT_IN_TRAINING) and routes.usable(topk_ids, problem.experts):
            sorted_routes = routes.sort_routes(topk_ids, topk_weights.detach(), problem.experts)
            if sorted_routes is not None:
                if not (grad and topk_weights.requires_grad and weights_graph):
                    return sorted_routes
                offsets, order, source, position, route = sorted_routes
                return (offsets, order, source, position,
                        _SortedWeights.apply(topk_weights, route, position))
        offsets, order, source, position, invalid = sort_routes(topk_ids, problem.experts)
        return offsets, order, source, position, _poisoned(topk_weights, invalid).index_select(
            0, order)
    local, skipped = _local_ids(topk_ids, expert_map, problem.experts)
    offsets, order, source, position, invalid = sort_routes(local, problem.experts, skipped)
    route = _poisoned(topk_weights, invalid).masked_fill(skipped, 0.0).index_select(0, order)
    return offsets, order, source, position, route


def _local_ids(topk_ids: torch.Tensor, expert_map: torch.Tensor, experts: int):
    """Global ids to local ones by expert_map: (local ids, routes to
    another rank's expert). A global id outside the map becomes E (invalid,
    so its token is poisoned)."""
    flat = topk_ids.reshape(-1).long()
    clamped = flat.clamp(0, expert_map.shape[0] - 1)
    local = expert_map.index_select(0, clamped).long().masked_fill(clamped != flat, experts)
    return local.view(topk_ids.shape), (local == -1)


def _experts(problem: checks.Problem, grad: bool, x, topk_weights, topk_ids, x_scale,
             weights: Weights, activation, expert_map,
             fp8_compute: bool = False) -> torch.Tensor:
    """fused_moe's work once its arguments are checked (`fp8_compute`:
    sorted_experts' FP8 GEMMs on bf16 weights)."""
    top_k = problem.top_k
    hint = expected_rows(topk_ids.numel(), problem.experts)
    fused = fp8_compute and _fused_fp8_experts(x, weights, activation, hint)
    offsets, order, source, position, route = _sorted_routes(
        problem, grad, topk_weights, topk_ids, expert_map,
        weights_graph=not (fused and SORTED_WEIGHTS_IN_EXPERTS))
    x = x.contiguous()
    # Each token quantised once and written to its routes' sorted rows
    # (position names each sorted row once); from GATHERED_SCALE_ROWS sorted
    # rows its scales are written once and gathered by source.
    sources = source if source.shape[0] >= GATHERED_SCALE_ROWS else None
    if fused:
        by_expert = fp8_experts.Routes(offsets, source, position, route, top_k,
                                       gathered_scales=sources is not None)
        # The kernel's sorted weights without their node: the function
        # takes topk_weights' gradient itself.
        by_token = grad and topk_weights.requires_grad and not route.requires_grad
        return fp8_experts.swiglu_experts(x, weights.w13, weights.w2, by_expert,
                                          topk_weights if by_token else None)
    quantized = (quant_kernel.rows_mn(x, positions=position, sources=sources)
                 if problem.fp8 and x_scale is None and quant_kernel.usable(x) else None)
    if quantized is not None:
        y = sorted_experts(*quantized, offsets, route, weights, activation, hint, grad,
                           problem.mapped)
    elif problem.fp8:
        # x is quantised once per token (not per route; unless it comes
        # quantised with x_scale), then its rows and scales gathered.
        q, scale = quantize_rows(x, "x") if x_scale is None else (x, x_scale)
        y = sorted_experts(q.index_select(0, source), mn_major(scale, source), offsets, route,
                           weights, activation, hint, grad, problem.mapped)
    elif not grad and not fp8_compute and gathers_rows(x, weights.w13, hint):
        # The up projection reads each sorted row's token through `source`
        # (gg's a_rows): no gathered copy of x is written.
        y = sorted_experts(x, None, offsets, route, weights, activation, hint, grad,
                           problem.mapped, source=source.to(torch.int32))
    else:
        # Nothing to differentiate: the autograd.Function's forward without
        # its wrapper (the same values, a few us less a call).
        rows = (_GatherRows.apply(x, source, position, top_k) if grad
                else x.index_select(0, source))
        y = sorted_experts(rows, None, offsets, route, weights, activation, hint, grad,
                           problem.mapped, fp8_compute=fp8_compute)
    if grad:
        return _CombineRows.apply(y, source, position, top_k)
    return summed_routes(y, position, top_k)


def _fp8_weight_gradient_dtype(hint: Optional[int]) -> torch.dtype:
    """The FP8 layer's weight gradients' GEMM dtype (FP8_WEIGHT_GRADIENT_ROWS)."""
    if FP8_WEIGHT_GRADIENT_ROWS is not None and hint and hint >= FP8_WEIGHT_GRADIENT_ROWS:
        return torch.float8_e4m3fn
    return torch.bfloat16


def _fused_fp8_experts(x, weights: Weights, activation: str, hint: Optional[int]) -> bool:
    """Whether the FP8 layer takes ggc.moe.fp8_experts (FUSED_FP8_EXPERTS):
    SwiGLU on the routed path, BF16 weight gradients, no expert biases,
    the kernels taking x and w13."""
    return (FUSED_FP8_EXPERTS and ROUTED_SWIGLU_IN_TRAINING and activation == "swiglu"
            and _fp8_weight_gradient_dtype(hint) == torch.bfloat16
            and weights.w13_bias is None and weights.w2_bias is None
            and fp8_experts.usable(x, weights.w13))


def expected_rows(routes, experts: int) -> Optional[int]:
    """The rows an expert gets when routing is even (T * top_k / E), as the
    grouped GEMMs' `expected_m` hint (ops.mean_hint, capped at 4,096)."""
    return ops.mean_hint(routes, experts, 4096)


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


def _trained(h: torch.Tensor, activation: str) -> torch.Tensor:
    """activate(h, activation), differentiable: SwiGLU by ggc's kernels
    forward and backward (swiglu_kernel.SwiGLU), the others by torch."""
    if activation == "swiglu":
        return swiglu_kernel.SwiGLU.apply(h.contiguous())
    return activate(h, activation)


def _activated(h: torch.Tensor, activation: str, fused: bool) -> torch.Tensor:
    """activate(h, activation), by ggc's SwiGLU kernel where `fused` (no
    gradient) and the kernel take it (ggc.moe.swiglu_kernel)."""
    if fused and activation == "swiglu":
        a = swiglu_kernel.swiglu(h)
        if a is not None:
            return a
    return activate(h, activation)


def sorted_experts(rows: torch.Tensor, rows_scale: Optional[torch.Tensor],
                   offsets: torch.Tensor, route: torch.Tensor, weights: Weights,
                   activation: str, hint: Optional[int], grad: bool,
                   mapped: bool = False, source: Optional[torch.Tensor] = None,
                   fp8_compute: bool = False) -> torch.Tensor:
    """route[p] * expert_g(rows[p]) for rows [M, H] sorted by expert
    (expert g owns rows offsets[g] .. offsets[g+1]): the up projection,
    the activation, the down projection with the routing weight in its
    epilogue (in SwiGLU training, in the SwiGLU kernel:
    _routed_swiglu_down). FP8: rows e4m3 with rows_scale their 1x128 scales in the
    M-major form (quant.mn_major); the activation is quantised again
    before the down projection. `mapped`: rows past offsets[E] belong to
    no expert here and come out zero. `source` (int32 [M], BF16 inference:
    kernels.gathers_rows): `rows` are the tokens, sorted row p is token
    source[p], read by the up projection through the list. `fp8_compute`
    (bf16 rows and weights, nothing `mapped`): both projections are
    ggc.training.fp8_grouped_mm, FP8 GEMMs on the weights quantised per
    call, differentiable."""
    w2, w2_scale, w2_bias = weights.w2, weights.w2_scale, weights.w2_bias
    m = rows.shape[0] if source is None else source.shape[0]
    expert = None
    if weights.w13_bias is not None or w2_bias is not None:
        expert = row_experts(offsets, m, rows.device)
    if grad and activation == "swiglu" and rows_scale is None and ROUTED_SWIGLU_IN_TRAINING:
        y = _routed_swiglu_down(rows, offsets, route, weights, hint, expert, mapped,
                                fp8_compute)
    elif fp8_compute:
        h = _biased(training.fp8_grouped_mm(rows, weights.w13, offsets), weights, expert)
        act = _trained(h, activation)
        # route * (act @ w2^T) = (route * act) @ w2^T: the routing weight
        # goes on the narrower side (I or H columns).
        if act.shape[1] <= w2.shape[1]:
            y = training.fp8_grouped_mm(RouteWeighted.apply(act, route), w2, offsets)
        else:
            y = RouteWeighted.apply(training.fp8_grouped_mm(act, w2, offsets), route)
    elif rows_scale is None:
        act = _activated_up(rows, offsets, weights, activation, hint, grad, expert, source)
        y = routed_down(act, w2, offsets, route, expected_m=hint, zero_ungrouped=mapped)
    else:
        act, act_mn = _fp8_up(rows, rows_scale, offsets, weights, activation, hint, expert)
        y = routed_down(act, w2, offsets, route, act_mn, w2_scale, hint, mapped)
    if w2_bias is not None:
        # route * (a @ w2^T + b2): the bias weighted like the product.
        y = (y.float() + route.unsqueeze(1) * w2_bias.index_select(0, expert).float()).to(
            y.dtype)
    return y


def _routed_swiglu_down(rows, offsets, route, weights: Weights, hint, expert, mapped: bool,
                        fp8_compute: bool) -> torch.Tensor:
    """Training's SwiGLU experts: the up projection, then the routed rows
    route * silu(gate) * up in one kernel (swiglu_kernel.RoutedSwiGLU),
    which the down projection reads as they are. Backward, one kernel
    gives h's gradient and the routing weights' where the weight applied
    in the down projection's epilogue took three passes over [M, I] and
    SwiGLU's gradient a fourth (docs/performance-history.md, thirty-sixth
    session). `fp8_compute`: both projections ggc.training.fp8_grouped_mm."""
    if fp8_compute:
        wgrad = _fp8_weight_gradient_dtype(hint)
        h = training.fp8_grouped_mm(rows, weights.w13, offsets, wgrad_dtype=wgrad)
    else:
        h = ops.grouped_gemm(rows, weights.w13, offsets=offsets, expected_m=hint,
                             validate=False, out_dtype=output_dtype(rows))
    routed = swiglu_kernel.RoutedSwiGLU.apply(_biased(h, weights, expert), route)
    if fp8_compute:
        return training.fp8_grouped_mm(routed, weights.w2, offsets, wgrad_dtype=wgrad)
    # Rows past offsets[E] (another rank's routes, `mapped`) come out zero.
    return ops.grouped_gemm(routed, weights.w2, offsets=offsets, expected_m=hint,
                            validate=False, out_dtype=output_dtype(routed),
                            zero_ungrouped=mapped)


def _activated_up(rows, offsets, weights: Weights, activation: str, hint, grad: bool, expert,
                  source=None) -> torch.Tensor:
    """The BF16 up projection and its activation: one GEMM with the
    activation in its epilogue where a kernel takes it
    (ggc.moe.kernels.gated_up: inference without expert biases), else the
    GEMM, the bias and the activation; rows read through `source` where it
    is given."""
    if not grad and weights.w13_bias is None:
        act = gated_up(rows, weights.w13, offsets, activation, hint, source)
        if act is not None:
            return act
    if source is not None:
        h = gathered_up(rows, source, weights.w13, offsets, hint)
    else:
        h = ops.grouped_gemm(rows, weights.w13, offsets=offsets, expected_m=hint,
                             validate=False, out_dtype=output_dtype(rows))
    h = _biased(h, weights, expert)
    return _trained(h, activation) if grad else _activated(h, activation, fused=True)


def _fp8_up(rows, rows_scale, offsets, weights: Weights, activation: str, hint, expert):
    """The FP8 up projection, its activation and the activation quantised
    again for the down projection: (e4m3 [M, I], its 1x128 scales M-major).
    SwiGLU without an expert bias, experts expecting
    FP8_SWIGLU_EPILOGUE_ROWS rows: in the GEMM's epilogue
    (kernels.fp8_gated_up, FP8_SWIGLU_IN_EPILOGUE). Else SwiGLU and the
    quantisation are one kernel (ggc.moe.quant_kernel) where it takes the
    GEMM's output; another activation (gpt-oss's swigluoai, an expert bias
    added first) runs apart and the same kernel quantises its output."""
    if fp8_swiglu_in_epilogue(activation, weights.w13_bias is not None, hint):
        made = fp8_gated_up(rows, rows_scale, weights.w13, weights.w13_scale, offsets, hint)
        if made is not None:
            return made
    h = ops.grouped_gemm(rows, weights.w13, offsets=offsets,
                         a_scale=as_row_view(rows_scale, rows.shape[0]),
                         b_scale=weights.w13_scale, expected_m=hint, validate=False)
    h = _biased(h, weights, expert)
    if activation == "swiglu" and quant_kernel.usable(h, gated=True):
        quantized = quant_kernel.rows_mn(h, gated=True)
        if quantized is not None:
            return quantized
    act = _activated(h, activation, fused=True)
    quantized = quant_kernel.rows_mn(act) if quant_kernel.usable(act) else None
    if quantized is not None:
        return quantized
    act, scale = quantize_rows(act, "activation")
    return act, mn_major(scale)


def fp8_swiglu_in_epilogue(activation: str, expert_bias: bool, hint: Optional[int]) -> bool:
    """Whether the FP8 up projection computes SwiGLU and quantises it in
    its epilogue (FP8_SWIGLU_IN_EPILOGUE, FP8_SWIGLU_EPILOGUE_ROWS), where
    kernels.fp8_gated_up takes the call."""
    low, high = FP8_SWIGLU_EPILOGUE_ROWS
    return (activation == "swiglu" and not expert_bias and FP8_SWIGLU_IN_EPILOGUE
            and hint is not None and low <= hint <= high)


def _biased(h, weights: Weights, expert):
    """h plus each row's expert's up-projection bias, where there is one."""
    if weights.w13_bias is None:
        return h
    return h + weights.w13_bias.index_select(0, expert).to(h.dtype)


def row_experts(offsets: torch.Tensor, rows: int, device) -> torch.Tensor:
    """The expert of each sorted row (int64 [rows]) from the group offsets
    [E+1]; rows past offsets[E] (another rank's routes) get the last
    expert, whose bias their zero weight cancels."""
    index = constant_arange(rows, offsets.dtype, device)
    expert = torch.searchsorted(offsets, index, right=True) - 1
    return expert.clamp_(0, offsets.shape[0] - 2)
