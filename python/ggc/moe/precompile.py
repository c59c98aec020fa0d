"""Compiling a model's MoE kernels ahead of serving: `ggc.moe.warmup`.

A layer's first forward at a new batch size compiles its grouped GEMMs
(0.7-2 s each): a model with dozens of them stalls its first requests.
What a forward compiles depends on shapes alone, never on weights or
token values, so the set is known in advance. For T tokens the layer's
GEMMs see M = T * routes-per-token sorted rows (ggc.moe.layer; an
expert-parallel rank the routes it received plus one row), and each
takes the `expected_m` hint expected_rows(M, E): the even share of rows
an expert gets, rounded down to a power of two and capped at 4,096, so
token counts 1..max_tokens need at most 13 hints, each a kernel per GEMM
(layer.sorted_experts, inference):

    up    BF16: moe_up_<activation> (the activation in the epilogue,
          kernels.gated_up: SwiGLU on sm_90a, gpt-oss's everywhere, for
          hints above kernels.DECODE_TILE_ROWS, no expert biases), else
          grouped_gemm_contiguous_nk; FP8: moe_up_swiglu_fp8 (SwiGLU and
          its quantisation in the epilogue, layer.fp8_swiglu_in_epilogue's
          hints), else grouped_gemm_contiguous_nk_scaled with M-major 1x128
          activation scales ("block_mn"; a single row's scales are plain
          "block")
    down  moe_down_routed, FP8 moe_down_routed_fp8 (the routing weight in
          the epilogue)

`warmup` compiles each with ggc.spec placeholders (JITFunction.compile:
no GPU, no tensors, no forward), into the memory and disk caches, where
the forward's own lookups then find them. Kernels are compiled for the
current target, SM count and shared memory (ggc.set_target, ...; on a
GPU the device's). It also compiles, into this process's memory, the
permutation's kernels (ggc.moe.routes: gg.sort_routes, int32 ids, one GPU),
the combine's (ggc.moe.combine_kernel: gg.combine_routes), BF16 SwiGLU's
where it runs apart (ggc.moe.swiglu_kernel: gg.swiglu_rows) and the FP8
layer's quantisation kernels (ggc.moe.quant_kernel: gg.quantize_rows, x's
gathered rows and SwiGLU's output), which a forward
otherwise compiles at its first call (tens of ms each). Training's
kernels (the backward, a forward that needs gradients) are not compiled.
"""

from __future__ import annotations

import contextvars
import functools
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import torch

from .. import cache
from .. import compiler as ggc_compiler
from .. import ops
from .. import progress as progress_bars
from ..jit import JITFunction, spec
from ..runtime import compile_for_launch
from . import combine_kernel, kernels, quant_kernel, router_kernel, routes, swiglu_kernel
from .activations import ACTIVATIONS, GATED
from .layer import GATHERED_SCALE_ROWS, expected_rows, fp8_swiglu_in_epilogue
from .quant import BLOCK
from .routing import kernel_routing

# Kernels compiled at once (threads: the compiler releases the GIL).
MAX_JOBS = 8


class LayerShape(NamedTuple):
    """What decides the kernels of a MoE layer's forward."""
    hidden: int                   # H
    intermediate: int             # I
    experts: int                  # w13's experts: shared ones too; an expert-parallel rank's own
    top_k: int                    # routes per token: shared experts too
    activation: str = "swiglu"
    fp8: bool = False             # FP8 expert weights (128x128 block scales)
    expert_bias: bool = False     # w13_bias / w2_bias (gpt-oss)
    ranks: int | None = None      # expert-parallel: the group's size; None: one GPU
    # The router's kernel (gg.select_experts), where route() takes it:
    # (routed experts, their top_k, the logits' dtype "bf16"/"f16"/"f32",
    # router_kernel.KernelRouting); None: routing by torch, or not known.
    router: tuple | None = None


class KernelCall(NamedTuple):
    """One kernel lookup a forward makes: the jit function, each tensor
    argument's (shape, dtype) with None for the dims that follow the token
    count, and the constexprs."""
    fn: JITFunction
    args: Tuple[Tuple[Tuple[Optional[int], ...], str], ...]
    consts: Tuple[Tuple[str, Any], ...]

    def placeholders(self) -> Dict[str, spec]:
        return {name: spec(shape, dtype)
                for name, (shape, dtype) in zip(self.fn.tensor_params, self.args)}


class Compiled(NamedTuple):
    """A kernel of a warm-up and where it came from."""
    kernel: str            # the jit function's name
    specialisation: str    # as GGC_LOG shows it (ggc.cache.specialisation)
    source: str            # "compiled", "disk" (cache) or "memory" (this process had it)
    ms: float


class WarmupReport(NamedTuple):
    """What warmup() compiled, in order, and how long it took: the GEMMs
    (`kernels`), then the permutation and quantisation kernels
    (`helpers`, kept in this process's memory only)."""
    kernels: List[Compiled]
    seconds: float
    target: str            # the target, SMs and shared memory the kernels are for
    helpers: Tuple[Compiled, ...] = ()

    def count(self, source: str) -> int:
        return sum(k.source == source for k in self.kernels)

    def __str__(self) -> str:
        return (f"{len(self.kernels)} kernels for {self.target}: {self.count('compiled')} "
                f"compiled, {self.count('disk')} from the disk cache, "
                f"{self.count('memory')} already in memory"
                + (f", and {len(self.helpers)} sort, quantisation, SwiGLU and combine kernels"
                   if self.helpers else "") + f", in {self.seconds:.1f} s")


def warmup(model_or_layer, max_tokens: int, fp8: Optional[bool] = None, *,
           progress: Optional[bool] = None, jobs: Optional[int] = None) -> WarmupReport:
    """Compiles every kernel the forward of `model_or_layer` needs for 1 to
    `max_tokens` tokens a call (an expert-parallel layer: a rank's tokens),
    without running it: an nn.Module holding ggc.moe.MoE,
    HuggingFaceMoE or ExpertParallelMoE layers (a swapped transformers
    model, say), one of them, or LayerShape(s). Layers of one shape share
    their kernels. `fp8`: compile the FP8 layer's kernels (True), the
    BF16 one's (False), or each layer's own (None). `progress`: a bar
    (default: on a terminal, or GGC_PROGRESS). `jobs`: kernels compiled at
    once (default: the CPUs, at most MAX_JOBS). Works without a GPU, for
    ggc.get_target()."""
    shapes = layer_shapes(model_or_layer, fp8)
    report = precompile(kernel_calls(shapes, max_tokens), progress=progress, jobs=jobs)
    helpers = tuple(_compile_helper(name, make)
                    for name, make in helper_kernels(shapes, max_tokens))
    return report._replace(helpers=helpers,
                           seconds=report.seconds + sum(k.ms for k in helpers) / 1e3)


def helper_kernels(shapes: Iterable[LayerShape], max_tokens: Optional[int] = None
                   ) -> List[Tuple[str, Callable[[], Any]]]:
    """The layers' permutation, combine, SwiGLU and FP8 quantisation
    kernels, each once: (what it is, a call that compiles it into this
    process's memory); the token quantisation that gathers its scales only
    where `max_tokens` (None: any count) reaches layer.GATHERED_SCALE_ROWS
    sorted rows."""
    found: Dict[str, Callable[[], Any]] = {}
    target_has_fp8 = quant_kernel.converts_fp8()
    for shape in shapes:
        _check_shape(shape)
        if shape.ranks is None and 1 <= shape.experts <= routes.MAX_EXPERTS:
            found[f"sort_routes e{shape.experts} k{shape.top_k}"] = functools.partial(
                routes.kernels, shape.experts, shape.top_k, torch.int32)
        if shape.router is not None:
            experts, top_k, dtype, routing = shape.router
            found[f"select_experts e{experts} k{top_k} {dtype}{routing.tag()}"] = \
                functools.partial(router_kernel.kernel, experts, top_k,
                                  router_kernel.LOGIT_DTYPES[dtype], routing)
        if shape.hidden % 8 == 0:
            found[f"combine_routes h{shape.hidden} k{shape.top_k}"] = functools.partial(
                combine_kernel.kernel, shape.hidden, shape.top_k, torch.int64)
        lanes = quant_kernel.LANE_COLUMNS  # gg.quantize_rows takes partial last blocks
        fp8_gated = shape.fp8 and target_has_fp8 and shape.intermediate % lanes == 0
        if shape.activation == "swiglu" and shape.intermediate % 8 == 0 and not fp8_gated:
            # SwiGLU apart from the up projection (decode tiles, expert biases;
            # FP8 where the quantisation kernel cannot take it with SwiGLU).
            found[f"swiglu_rows i{shape.intermediate}"] = functools.partial(
                swiglu_kernel.kernel, shape.intermediate)
        if not (shape.fp8 and target_has_fp8):
            continue
        if shape.hidden % lanes == 0:  # each token to its routes' sorted rows
            rows = None if max_tokens is None else max_tokens * shape.top_k
            for gathered_scales in (False, True):
                if gathered_scales and rows is not None and rows < GATHERED_SCALE_ROWS:
                    continue
                found[f"quantize_rows scattered k{shape.hidden} x{shape.top_k}"
                      f"{' input scales' if gathered_scales else ''}"] = functools.partial(
                    quant_kernel.kernel, shape.hidden, False, False,
                    scatter=("i64", shape.top_k, gathered_scales))
        if shape.intermediate % lanes == 0:  # SwiGLU's output, or another activation's
            gated = shape.activation == "swiglu"
            found[f"quantize_rows{' gated' if gated else ''} k{shape.intermediate}"] = \
                functools.partial(quant_kernel.kernel, shape.intermediate, False, gated)
    return list(found.items())


def _compile_helper(name: str, make: Callable[[], Any]) -> Compiled:
    started = time.perf_counter()
    def held():
        return sum(len(m._PTX) for m in (routes, quant_kernel, combine_kernel, swiglu_kernel,
                                         router_kernel))
    before = held()
    make()
    source = "compiled" if held() > before else "memory"
    return Compiled(name, name, source, (time.perf_counter() - started) * 1e3)


def layer_shapes(model_or_layer, fp8: Optional[bool] = None) -> List[LayerShape]:
    """The distinct LayerShapes of a model's or a layer's MoE layers."""
    if isinstance(model_or_layer, LayerShape):
        return [model_or_layer]
    if isinstance(model_or_layer, (list, tuple)) and all(
            isinstance(s, LayerShape) for s in model_or_layer):
        return list(dict.fromkeys(model_or_layer))
    from .module import ExpertParallelMoE, MoE
    modules = getattr(model_or_layer, "modules", None)
    layers = [m for m in (modules() if modules else ())
              if isinstance(m, (MoE, ExpertParallelMoE))]
    if not layers:
        raise ValueError(f"no ggc.moe.MoE or ExpertParallelMoE layer in "
                         f"{type(model_or_layer).__name__}: pass a layer, a model holding "
                         f"them (a transformers model after ggc.moe.hf.swap_moe_blocks) "
                         f"or LayerShape(s)")
    shapes = []
    for layer in layers:
        shapes.append(shape_of(layer, fp8))
        shared = getattr(layer, "shared", None)  # an ExpertParallelMoE's, run as one GPU's
        if shared is not None:
            count = shared.w13.shape[0]
            shapes.append(LayerShape(layer.hidden_size, layer.intermediate_size, count, count,
                                     layer.activation, shapes[-1].fp8,
                                     shared.w13_bias is not None))
    return list(dict.fromkeys(shapes))


def shape_of(layer, fp8: Optional[bool] = None) -> LayerShape:
    """A MoE or ExpertParallelMoE layer's LayerShape (FP8 as the layer is,
    unless `fp8` says)."""
    from .module import ExpertParallelMoE
    shared = getattr(layer, "shared_experts", 0)
    ranks = layer.placement.world_size if isinstance(layer, ExpertParallelMoE) else None
    return LayerShape(layer.hidden_size, layer.intermediate_size, layer.w13.shape[0],
                      layer.top_k + shared, layer.activation,
                      layer.w13_scale is not None if fp8 is None else bool(fp8),
                      getattr(layer, "w13_bias", None) is not None, ranks, _router_of(layer))


def _router_of(layer) -> Tuple[int, int, str, Any] | None:
    """LayerShape.router of a MoE or ExpertParallelMoE layer."""
    gate = getattr(layer, "gate", None)
    routing = getattr(layer, "routing", None)
    if gate is None or routing is None:
        return None
    kernel = kernel_routing(routing["scoring"], routing["renormalize"], routing["n_group"],
                            routing["topk_group"], layer.correction_bias is not None,
                            routing["scaling_factor"])
    dtype = getattr(layer, "router_dtype", None) or gate.weight.dtype
    names = router_kernel.LOGIT_TAGS
    if (kernel is None or dtype not in names
            or not router_kernel.shape_fits(gate.out_features, layer.top_k, kernel)):
        return None
    return gate.out_features, layer.top_k, names[dtype], kernel


def layer_shapes_of(hidden_size: int, intermediate_size: int, num_experts: int, top_k: int,
                    *, shared_experts: int = 0, activation: str = "swiglu", fp8: bool = False,
                    expert_bias: bool = False, ranks: Optional[int] = None
                    ) -> List[LayerShape]:
    """The LayerShapes of a layer given by MoE's arguments: a MoE, or with
    `ranks` the ranks of an ExpertParallelMoE over that many ranks with the
    default placement (contiguous blocks: some ranks have an expert more;
    those with none run no kernels), and its shared experts, which every
    rank runs as a one-GPU layer of S experts and S routes a token."""
    if ranks is None:
        return [LayerShape(hidden_size, intermediate_size, num_experts + shared_experts,
                           top_k + shared_experts, activation, fp8, expert_bias)]
    from .placement import ExpertPlacement
    placement = ExpertPlacement.of(None, num_experts, ranks)
    counts = sorted({len(placement.local_experts(r)) for r in range(ranks)} - {0})
    shapes = [LayerShape(hidden_size, intermediate_size, count, top_k, activation, fp8,
                         expert_bias, ranks=ranks) for count in counts]
    if shared_experts:
        shapes.append(LayerShape(hidden_size, intermediate_size, shared_experts,
                                 shared_experts, activation, fp8, expert_bias))
    return shapes


def config_shapes(config, fp8: bool = False, ranks: Optional[int] = None) -> List[LayerShape]:
    """The LayerShapes of a Hugging Face config's MoE blocks (the families
    ggc.moe.hf loads; every block of a model has the same)."""
    from .hf import layer_args
    args = layer_args(config)
    return layer_shapes_of(
        args["hidden_size"], args["intermediate_size"], args["num_experts"], args["top_k"],
        shared_experts=args.get("shared_experts", 0),
        activation=args.get("activation", "swiglu"), fp8=fp8,
        expert_bias=args.get("expert_bias", False), ranks=ranks)


def kernel_calls(shapes: Iterable[LayerShape], max_tokens: int) -> List[KernelCall]:
    """Every kernel lookup the layers' forwards make for 1 to max_tokens
    tokens, each once."""
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    calls: Dict[KernelCall, None] = {}
    for shape in shapes:
        calls.update(dict.fromkeys(layer_kernels(shape, max_tokens)))
    return list(calls)


def layer_kernels(shape: LayerShape, max_tokens: int) -> List[KernelCall]:
    """One layer's kernel lookups, by hint: its up and down projections."""
    _check_shape(shape)
    if shape.experts == 0:  # an expert-parallel rank without experts runs none
        return []
    first, _, _ = _rows(shape, max_tokens)
    calls = []
    for hint in expected_m_hints(shape, max_tokens):
        calls += [_up(shape, hint), _down(shape, hint)]
    if shape.fp8 and first <= 1:
        # One row's scales are not an M-major view (ops._physical_block_scale).
        calls.append(_up(shape, expected_rows(1, shape.experts), a_kind="block"))
    return calls


def expected_m_hints(shape: LayerShape, max_tokens: int) -> List[int]:
    """The distinct expected_m hints of a layer's GEMMs for 1 to
    max_tokens tokens (layer.expected_rows of each row count M)."""
    first, last, step = _rows(shape, max_tokens)
    return _distinct(lambda i: expected_rows(first + i * step, shape.experts),
                     (last - first) // step)


def _rows(shape: LayerShape, max_tokens: int) -> Tuple[int, int, int]:
    """(first, last, step): the rows M the GEMMs see for 1..max_tokens tokens."""
    k = shape.top_k
    if shape.ranks is None:  # fused_moe: every route of every token
        return k, max_tokens * k, k
    if shape.ranks == 1:  # every route is local, plus expert_parallel_moe's dummy row
        return k + 1, max_tokens * k + 1, k
    # Routes received from every rank's tokens (sync_free: every slot), and
    # the dummy; a rank gets a row only for a route of its own.
    return 2, shape.ranks * max_tokens * k + 1, 1


def _distinct(f: Callable[[int], int], last: int) -> List[int]:
    """The values of a non-decreasing f over 0..last, each step found by
    bisection (expected_rows takes at most 13 values; the range may span
    millions of rows)."""
    values, i = [], 0
    while i <= last:
        value = f(i)
        values.append(value)
        low, high = i, last + 1  # f(low) == value; high: past it, or the end
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if f(middle) == value else (low, middle)
        i = high
    return values


def _check_shape(shape: LayerShape) -> None:
    """What the forward would reject, rejected before compiling."""
    for name in ("hidden", "intermediate", "top_k"):
        value = getattr(shape, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if not isinstance(shape.experts, int) or shape.experts < 0:
        raise ValueError(f"experts must be an int >= 0, got {shape.experts!r}")
    if shape.activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {shape.activation!r}")
    # The layer's own rule (checks.check_fused_moe): TMA rows of a multiple
    # of 16 bytes; FP8's block scales take a partial last block.
    multiple = 16 if shape.fp8 else 8
    for name in ("hidden", "intermediate"):
        if getattr(shape, name) % multiple:
            raise ValueError(f"{name} = {getattr(shape, name)} must be a multiple of "
                             f"{multiple} for {'FP8' if shape.fp8 else 'BF16'} experts")


def _up(shape: LayerShape, hint: int, a_kind: str = "block_mn") -> KernelCall:
    """The up projection's kernel (layer._activated_up): BF16 reads its
    tokens through the routes' source list where that pays (_gathers)."""
    h, e = shape.hidden, shape.experts
    n = shape.intermediate * (2 if shape.activation in GATED else 1)
    groups = ((e + 1,), "i32")
    rows = ((None, h), "bf16"),
    if _gathers(shape, hint):
        rows += ((None,), "i32"),  # the source list
    fused = _gated_up_kernel(shape, hint)
    if fused is not None:
        return KernelCall(fused, rows + (((e, n, h), "bf16"), groups,
                                         ((None, n // 2), "bf16")), (("EXPECTED_M", hint),))
    blocks = -(-h // BLOCK)
    if (shape.fp8 and fp8_swiglu_in_epilogue(shape.activation, shape.expert_bias, hint)
            and kernels.fp8_gated_up_takes(shape.intermediate)):
        i = shape.intermediate
        return KernelCall(kernels.moe_up_swiglu_fp8,
                          (((None, h), "f8e4m3fn"), ((e, n, h), "f8e4m3fn"), groups,
                           ((blocks, None), "f32"), ((e, n // BLOCK, blocks), "f32"),
                           ((None, i), "f8e4m3fn"), ((i // BLOCK, None), "f32")),
                          (("EXPECTED_M", hint),))
    if not shape.fp8:
        plain = (kernels.moe_up_gathered if _gathers(shape, hint)
                 else ops._kernel_for("contiguous", "nk", False))
        return KernelCall(plain, rows + (((e, n, h), "bf16"), groups, ((None, n), "bf16")),
                          (("EXPECTED_M", hint),))
    a_scale = (blocks, None) if a_kind == "block_mn" else (None, blocks)
    return KernelCall(ops._kernel_for("contiguous", "nk", True),
                      (((None, h), "f8e4m3fn"), ((e, n, h), "f8e4m3fn"), groups,
                       (a_scale, "f32"), ((e, -(-n // BLOCK), blocks), "f32"),
                       ((None, n), "bf16")),
                      (("A_KIND", a_kind), ("B_KIND", "block"), ("EXPECTED_M", hint)))


def _gated_up_kernel(shape: LayerShape, hint: int) -> Optional[JITFunction]:
    """The kernel kernels.gated_up launches for this layer and hint, or
    None where it takes the plain GEMM (FP8 and expert biases always do)."""
    if shape.fp8 or shape.expert_bias:
        return None
    return kernels.gated_up_kernel(shape.activation, hint, gathered=_gathers(shape, hint))


def _gathers(shape: LayerShape, hint: int) -> bool:
    """Whether the layer's up projection reads its tokens through the
    routes' source list (kernels.gathers_rows): one GPU's layer, where it
    pays for experts expecting `hint` rows; an expert-parallel rank's
    experts get their rows sorted already."""
    n = shape.intermediate * (2 if shape.activation in GATED else 1)
    return (shape.ranks is None and not shape.fp8
            and kernels.gather_pays(n, shape.hidden, hint))


def _down(shape: LayerShape, hint: int) -> KernelCall:
    """The down projection's kernel, the routing weight in its epilogue
    (kernels.routed_down)."""
    h, i, e = shape.hidden, shape.intermediate, shape.experts
    groups, route, out = ((e + 1,), "i32"), ((None,), "f32"), ((None, h), "bf16")
    if not shape.fp8:
        return KernelCall(kernels.moe_down_routed,
                          (((None, i), "bf16"), ((e, h, i), "bf16"), groups, route, out),
                          (("EXPECTED_M", hint),))
    return KernelCall(kernels.moe_down_routed_fp8,
                      (((None, i), "f8e4m3fn"), ((e, h, i), "f8e4m3fn"), groups,
                       ((-(-i // BLOCK), None), "f32"),
                       ((e, -(-h // BLOCK), -(-i // BLOCK)), "f32"), route, out),
                      (("EXPECTED_M", hint),))


def precompile(calls: List[KernelCall], *, progress: Optional[bool] = None,
               jobs: Optional[int] = None) -> WarmupReport:
    """Compiles the calls' kernels (`jobs` at once), with one bar over them."""
    started = time.perf_counter()
    jobs = max(1, min(jobs or MAX_JOBS, os.cpu_count() or 1, len(calls) or 1))
    with progress_bars.bar(len(calls), "ggc: warm-up", progress) as bar, \
            progress_bars.quiet(), ThreadPoolExecutor(jobs) as pool:
        # Each job in a copy of this context: the quiet bars, and any
        # cache.recording() of the caller.
        futures = [pool.submit(contextvars.copy_context().run, _compile, call)
                   for call in calls]
        for future in as_completed(futures):
            # Drawn by update(): a postfix drawn at once would show before
            # the bar's delay.
            bar.set_postfix_str(future.result().kernel, refresh=False)
            bar.update(1)
    target = ggc_compiler.describe_target(
        ggc_compiler.get_target(), ggc_compiler.get_num_sms(),
        ggc_compiler.get_shared_memory_bytes(), ggc_compiler.get_memory_gbps())
    return WarmupReport([f.result() for f in futures], time.perf_counter() - started, target)


def _compile(call: KernelCall) -> Compiled:
    """One call's kernel: compiled into the caches by its IR first, outside
    the jit function's lock (which would compile one function's kernels one
    at a time), then looked up as the forward looks it up, a memory hit."""
    fn = call.fn
    tensors, consts = fn._bind((), {**call.placeholders(), **dict(call.consts)})
    text, fn_spec = fn._trace(tensors, consts)
    subject = cache.specialisation(fn.__name__, fn_spec.args, consts)
    started = time.perf_counter()
    with cache.recording() as events:
        with cache.compiling(subject):
            compile_for_launch(text, fn.num_sms, f"{fn.__name__} (traced)")
        fn.compile(**tensors, **consts)
    source = {None: "compiled", "disk": "disk"}.get(events[0].source, "memory")
    return Compiled(fn.__name__, subject, source, (time.perf_counter() - started) * 1e3)
