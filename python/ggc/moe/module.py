"""ggc.moe.MoE: the layer as an nn.Module (router, routing, experts)."""

from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from . import checks
from .checks import ACTIVATIONS, GATED
from .layer import fused_moe
from .quant import quantize_weights
from .routing import route


class MoE(nn.Module):
    """A Mixture-of-Experts feed-forward layer.

    `gate` (nn.Linear H -> E; with a bias if `router_bias`, as gpt-oss's)
    gives the router logits (computed in `router_dtype` if given:
    torch.float32 for DeepSeek-V3), `route` picks top_k experts per token
    (`scoring`, `renormalize`, grouped top-k with `n_group` / `topk_group`,
    `correction_bias=True` for DeepSeek-V3's learned
    e_score_correction_bias, `scaling_factor`), and `fused_moe` runs the
    experts: `w13` [E + S, 2I, H] (gate rows, then up rows; [E + S, I, H]
    for a plain activation) and `w2` [E + S, H, I], where the last S =
    `shared_experts` experts are shared: every token goes through each with
    weight 1 (DeepSeek-V3's shared experts, split into S experts of size
    I), in the same grouped GEMMs. `expert_bias` adds w13_bias [E + S, 2I]
    and w2_bias [E + S, H] (gpt-oss). `quantize_fp8()` turns the expert
    weights into FP8 with 128x128 block scales for inference;
    `compute_dtype=torch.float8_e4m3fn` keeps them bf16 and runs the expert
    GEMMs in FP8 on them, quantised per call, forward and backward
    (ggc.training's recipe: FP8 training). Input
    [..., H] in the layer's dtype, output the same shape. ggc.moe.hf loads
    Hugging Face models' blocks into it. `dtype` is bf16, or torch.float32
    for a layer on the CPU (ggc's reference backend; the CUDA kernels are
    bf16 and FP8)."""

    def __init__(self, hidden_size: int, intermediate_size: int, num_experts: int,
                 top_k: int, *, activation: str = "swiglu", scoring: str = "softmax",
                 renormalize: bool = True, n_group: Optional[int] = None,
                 topk_group: Optional[int] = None, correction_bias: bool = False,
                 scaling_factor: float = 1.0, router_bias: bool = False,
                 router_dtype: Optional[torch.dtype] = None, expert_bias: bool = False,
                 shared_experts: int = 0, compute_dtype: Optional[torch.dtype] = None,
                 device=None, dtype=torch.bfloat16):
        super().__init__()
        _check_layer_args(hidden_size, intermediate_size, num_experts, top_k, activation,
                          dtype, cpu_float32=True)
        _check_shared_and_router(shared_experts, router_dtype)
        _check_compute_dtype(compute_dtype, hidden_size, intermediate_size, dtype)
        self.compute_dtype = compute_dtype
        self.hidden_size, self.intermediate_size = hidden_size, intermediate_size
        self.num_experts, self.top_k, self.activation = num_experts, top_k, activation
        self.shared_experts, self.router_dtype = shared_experts, router_dtype
        self.routing = dict(scoring=scoring, renormalize=renormalize, n_group=n_group,
                            topk_group=topk_group, scaling_factor=scaling_factor)
        total = num_experts + shared_experts
        factory = dict(device=device, dtype=dtype)
        self.gate = nn.Linear(hidden_size, num_experts, bias=router_bias, **factory)
        _add_experts(self, total, hidden_size, intermediate_size, activation, expert_bias,
                     factory)
        self.correction_bias = (nn.Parameter(torch.zeros(num_experts, device=device))
                                if correction_bias else None)
        # FP8 block scales, set by quantize_fp8 (buffers, so .to() moves them).
        self.register_buffer("w13_scale", None)
        self.register_buffer("w2_scale", None)
        self.register_buffer("shared_ids", torch.arange(
            num_experts, total, dtype=torch.int32, device=device), persistent=False)
        self.reset_parameters()
        # Argument checks of route() now rather than on the first batch.
        route(torch.zeros(1, num_experts, device="meta"), top_k,
              correction_bias=(None if self.correction_bias is None
                               else torch.zeros(num_experts, device="meta")),
              **self.routing)

    def reset_parameters(self) -> None:
        """Experts as nn.Linear initialises its weights: U(+-1/sqrt(fan_in));
        expert biases zero."""
        if self.w13.dtype == torch.float8_e4m3fn:
            raise RuntimeError("reset_parameters on an FP8 layer: quantize_fp8() is one-way")
        with torch.no_grad():
            for weight in (self.w13, self.w2):
                bound = 1.0 / math.sqrt(weight.shape[-1])
                weight.uniform_(-bound, bound)
            for bias in (getattr(self, "w13_bias", None), getattr(self, "w2_bias", None)):
                if bias is not None:
                    bias.zero_()
        self.gate.reset_parameters()

    @torch.no_grad()
    def quantize_fp8(self) -> "MoE":
        """Replaces the expert weights by FP8 (e4m3) with f32 128x128 block
        scales (buffers, not parameters: the FP8 layer is inference only).
        H and I must be multiples of 16 (e4m3 rows of 16 bytes); where they
        are not of 128 the last blocks are partial. Expert biases stay
        bf16."""
        if self.w13_scale is not None:
            raise RuntimeError("quantize_fp8: the weights are FP8 already")
        if self.w13.dtype != torch.bfloat16:
            raise TypeError(f"quantize_fp8: FP8 layers take bfloat16 activations; this layer "
                            f"is {self.w13.dtype} (convert it with .to(torch.bfloat16) first)")
        w13, w13_scale = quantize_weights(self.w13.detach(), "w13")
        w2, w2_scale = quantize_weights(self.w2.detach(), "w2")
        return self.set_fp8_weights(w13, w2, w13_scale, w2_scale)

    def set_fp8_weights(self, w13, w2, w13_scale, w2_scale) -> "MoE":
        """Takes FP8 expert weights with their 128x128 block scales (an FP8
        checkpoint's, say) in place of the bf16 ones (compute_dtype goes
        back to None: the GEMMs are FP8 on these)."""
        for name, weight, scale in (("w13", w13, w13_scale), ("w2", w2, w2_scale)):
            want = tuple(getattr(self, name).shape)  # the experts' (shared ones included)
            if not isinstance(weight, torch.Tensor) or weight.dtype != torch.float8_e4m3fn or (
                    tuple(weight.shape) != want):
                raise ValueError(f"set_fp8_weights: {name} must be a float8_e4m3fn "
                                 f"{list(want)} tensor, got {_described(weight)}")
            if not isinstance(scale, torch.Tensor):
                raise TypeError(f"set_fp8_weights: {name}_scale must be a tensor of "
                                f"{name}'s 128x128 block scales, got {type(scale).__name__}")
        del self.w13, self.w2
        self.compute_dtype = None
        self.register_buffer("w13", w13)
        self.register_buffer("w2", w2)
        self.w13_scale, self.w2_scale = w13_scale, w2_scale
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_routed(x)[0]

    def forward_routed(self, x: torch.Tensor, on_logits=None):
        """(output, topk_weights, topk_ids): the output and the routing of
        the routed experts (the shared ones not included). `on_logits`, if
        given, is called with the router's logits [T, E] (what an auxiliary
        load-balancing loss reads; differentiable)."""
        weight = self.gate.weight
        if not isinstance(x, torch.Tensor) or x.shape[-1:] != (self.hidden_size,) or (
                x.dtype != weight.dtype or x.device != weight.device):
            raise ValueError(f"x must be a [..., H = {self.hidden_size}] {weight.dtype} "
                             f"tensor on {weight.device}, got " + _described(x))
        tokens = x.reshape(-1, self.hidden_size)
        logits = self.router_logits(tokens)
        if on_logits is not None:
            on_logits(logits)
        topk_weights, topk_ids = route(logits, self.top_k,
                                       correction_bias=self.correction_bias, **self.routing)
        weights, ids = topk_weights, topk_ids
        if self.shared_experts:
            count = tokens.shape[0]
            ids = torch.cat([ids, self.shared_ids.expand(count, -1)], dim=1)
            weights = torch.cat([weights, weights.new_ones(count, self.shared_experts)], dim=1)
        out = fused_moe(tokens, self.w13, self.w2, weights, ids, self.activation,
                        w13_scale=self.w13_scale, w2_scale=self.w2_scale,
                        w13_bias=self.w13_bias, w2_bias=self.w2_bias,
                        compute_dtype=self.compute_dtype)
        return out.view(x.shape), topk_weights, topk_ids

    def router_logits(self, tokens: torch.Tensor) -> torch.Tensor:
        """The router's logits [T, E], in router_dtype if set."""
        if self.router_dtype is None or self.router_dtype == tokens.dtype:
            return self.gate(tokens)
        bias = self.gate.bias
        return F.linear(tokens.to(self.router_dtype), self.gate.weight.to(self.router_dtype),
                        None if bias is None else bias.to(self.router_dtype))

    def extra_repr(self) -> str:
        return _layer_repr(self)


def _layer_repr(layer) -> str:
    extras = ", fp8" if layer.w13_scale is not None else ""
    if getattr(layer, "shared_experts", 0):
        extras += f", shared_experts={layer.shared_experts}"
    if getattr(layer, "w13_bias", None) is not None:
        extras += ", expert_bias=True"
    if getattr(layer, "compute_dtype", None) is not None:
        extras += f", compute_dtype={layer.compute_dtype}"
    return (f"hidden_size={layer.hidden_size}, intermediate_size={layer.intermediate_size}, "
            f"num_experts={layer.num_experts}, top_k={layer.top_k}, "
            f"activation={layer.activation!r}{extras}")


def _check_layer_args(hidden_size, intermediate_size, num_experts, top_k, activation,
                      dtype, cpu_float32: bool = False) -> None:
    """`cpu_float32`: the layer may be float32 (it then runs on the CPU)."""
    for name, value in (("hidden_size", hidden_size),
                        ("intermediate_size", intermediate_size),
                        ("num_experts", num_experts), ("top_k", top_k)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    if dtype != torch.bfloat16 and not (cpu_float32 and dtype == torch.float32):
        raise TypeError(f"dtype must be torch.bfloat16 (quantize_fp8() makes FP8 weights"
                        + ("; torch.float32 for the CPU" if cpu_float32 else "")
                        + f"), got {dtype}")


class ExpertParallelMoE(nn.Module):
    """MoE with its experts spread over the ranks of a torch.distributed
    group (ggc.moe.expert_parallel_moe; docs/expert-parallel.md).

    Every rank builds it with the same arguments. The router (`gate`, and
    the correction bias) is replicated: each rank routes its own tokens,
    and training must keep the copies equal (DDP over the router, or an
    all-reduce of its gradients). `w13` [E_local, 2I, H] and `w2`
    [E_local, H, I] hold this rank's experts, `local_experts` their global
    ids (`placement`: default contiguous blocks, the first E % W ranks one
    more; or the rank of each expert, or each rank's list). `wire`,
    `chunks` and `sync_free` as expert_parallel_moe takes them (sync_free
    None: none while a CUDA graph captures the layer). `timeout`: the
    seconds a rank waits for the others in each call's agreement (None:
    $GGC_EP_TIMEOUT, else 300), then ExpertParallelError naming the ranks
    that did not come. `router_bias`, `router_dtype` and `expert_bias` as
    MoE takes them (`w13_bias` [E_local, 2I] and `w2_bias` [E_local, H]
    hold this rank's experts' biases). `shared_experts` S experts every
    token goes through with weight 1 (`shared`, a SharedExperts) are
    replicated: each rank runs them on its own tokens, beside the routed
    experts' exchange, and training must keep the copies equal as it does
    the router's. `from_moe(layer, ...)` takes a single-GPU MoE's router,
    its shared experts and this rank's share of its routed experts.
    The arguments are checked on every rank together, so a bad one is an
    error on every rank."""

    def __init__(self, hidden_size: int, intermediate_size: int, num_experts: int,
                 top_k: int, *, group=None, placement=None, activation: str = "swiglu",
                 scoring: str = "softmax", renormalize: bool = True,
                 n_group: Optional[int] = None, topk_group: Optional[int] = None,
                 correction_bias: bool = False, scaling_factor: float = 1.0,
                 wire: str = "bf16", chunks: int = 1, sync_free: Optional[bool] = None,
                 timeout: Optional[float] = None, router_bias: bool = False,
                 router_dtype: Optional[torch.dtype] = None, expert_bias: bool = False,
                 shared_experts: int = 0, compute_dtype: Optional[torch.dtype] = None,
                 device=None, dtype=torch.bfloat16):
        super().__init__()
        from . import dispatch
        from .placement import ExpertPlacement
        self.group, self.timeout = group, timeout
        rank, world = dispatch.rank_and_size(group)
        problem = None
        try:
            _check_layer_args(hidden_size, intermediate_size, num_experts, top_k, activation,
                              dtype)
            self.placement = ExpertPlacement.of(placement, num_experts, world)
            if wire not in dispatch.WIRES:
                raise ValueError(f"wire must be one of {dispatch.WIRES}, got {wire!r}")
            if not isinstance(chunks, int) or isinstance(chunks, bool) or not (
                    1 <= chunks <= dispatch.MAX_CHUNKS):
                raise ValueError(f"chunks must be an int in [1, {dispatch.MAX_CHUNKS}], got "
                                 f"{chunks!r}")
            _check_shared_and_router(shared_experts, router_dtype)
            _check_compute_dtype(compute_dtype, hidden_size, intermediate_size, dtype)
            route(torch.zeros(1, num_experts, device="meta"), top_k,
                  correction_bias=(torch.zeros(num_experts, device="meta")
                                   if correction_bias else None),
                  scoring=scoring, renormalize=renormalize, n_group=n_group,
                  topk_group=topk_group, scaling_factor=scaling_factor)
        except (TypeError, ValueError) as error:
            problem = str(error)
        fields = () if problem else (
            ("hidden size H", hidden_size), ("expert count E", num_experts),
            ("intermediate size I", intermediate_size), ("top_k", top_k),
            ("wire format", dispatch.WIRES.index(wire)), ("placement", self.placement.digest()),
            ("shared experts S", shared_experts), ("expert biases", int(bool(expert_bias))))
        device_of = None if device is None else torch.device(device)
        dispatch.agree(group, None, fields, problem, _collective_device(group, device_of),
                       None if problem else self.placement, timeout)
        self.rank = rank
        self.hidden_size, self.intermediate_size = hidden_size, intermediate_size
        self.num_experts, self.top_k, self.activation = num_experts, top_k, activation
        self.wire, self.chunks, self.sync_free = wire, chunks, sync_free
        self.routing = dict(scoring=scoring, renormalize=renormalize, n_group=n_group,
                            topk_group=topk_group, scaling_factor=scaling_factor)
        self.router_dtype, self.compute_dtype = router_dtype, compute_dtype
        self.local_experts = self.placement.local_experts(rank)
        factory = dict(device=device, dtype=dtype)
        self.gate = nn.Linear(hidden_size, num_experts, bias=router_bias, **factory)
        _add_experts(self, len(self.local_experts), hidden_size, intermediate_size, activation,
                     expert_bias, factory)
        self.correction_bias = (nn.Parameter(torch.zeros(num_experts, device=device))
                                if correction_bias else None)
        self.register_buffer("w13_scale", None)
        self.register_buffer("w2_scale", None)
        self.shared = (SharedExperts(shared_experts, hidden_size, intermediate_size, activation,
                                     expert_bias, device=device, dtype=dtype,
                                     compute_dtype=compute_dtype)
                       if shared_experts else None)
        MoE.reset_parameters(self)

    @classmethod
    def from_moe(cls, layer: MoE, group=None, placement=None, wire: str = "bf16",
                 chunks: int = 1, sync_free: Optional[bool] = None,
                 timeout: Optional[float] = None) -> "ExpertParallelMoE":
        """This rank's share of a single-GPU `layer`: the same router (its
        bias and router_dtype too), its shared experts, and the weights,
        biases and FP8 scales of the routed experts the placement gives it."""
        routing = dict(layer.routing)
        device = layer.w13.device
        ep = cls(layer.hidden_size, layer.intermediate_size, layer.num_experts, layer.top_k,
                 group=group, placement=placement, activation=layer.activation,
                 correction_bias=layer.correction_bias is not None, wire=wire, chunks=chunks,
                 sync_free=sync_free, timeout=timeout, router_bias=layer.gate.bias is not None,
                 router_dtype=layer.router_dtype, expert_bias=layer.w13_bias is not None,
                 shared_experts=layer.shared_experts,
                 compute_dtype=getattr(layer, "compute_dtype", None), device=device, **routing)
        with torch.no_grad():
            ep.gate.load_state_dict(layer.gate.state_dict())
            if layer.correction_bias is not None:
                ep.correction_bias.copy_(layer.correction_bias)
            _take_experts(ep, layer, ep.local_experts)
            if ep.shared is not None:
                _take_experts(ep.shared, layer, range(layer.num_experts,
                                                      layer.num_experts + layer.shared_experts))
        return ep

    @torch.no_grad()
    def quantize_fp8(self) -> "ExpertParallelMoE":
        """MoE.quantize_fp8 for this rank's experts and the shared ones."""
        MoE.quantize_fp8(self)
        if self.shared is not None:
            self.shared.quantize_fp8()
        return self

    set_fp8_weights = MoE.set_fp8_weights
    reset_parameters = MoE.reset_parameters
    router_logits = MoE.router_logits

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from . import dispatch
        from .expert_parallel import expert_parallel_moe
        weight = self.gate.weight
        if not isinstance(x, torch.Tensor) or x.shape[-1:] != (self.hidden_size,) or (
                x.dtype != weight.dtype or x.device != weight.device):
            dispatch.fail(self.group, f"x must be a [..., H = {self.hidden_size}] {weight.dtype} "
                          f"tensor on {weight.device}, got " + _described(x),
                          _collective_device(self.group, weight.device), self.timeout)
        tokens = x.reshape(-1, self.hidden_size)
        topk_weights, topk_ids = route(self.router_logits(tokens), self.top_k,
                                       correction_bias=self.correction_bias, **self.routing)
        out = expert_parallel_moe(tokens, topk_weights, topk_ids, self.w13, self.w2,
                                  num_experts=self.num_experts, group=self.group,
                                  placement=self.placement, activation=self.activation,
                                  w13_scale=self.w13_scale, w2_scale=self.w2_scale,
                                  wire=self.wire, chunks=self.chunks,
                                  sync_free=self.sync_free, timeout=self.timeout,
                                  w13_bias=self.w13_bias, w2_bias=self.w2_bias,
                                  compute_dtype=self.compute_dtype)
        if self.shared is not None:
            # The routed experts' sum comes back rounded; the shared ones'
            # join it in f32 and the total is rounded once more.
            out = (out.float() + self.shared(tokens).float()).to(out.dtype)
        return out.view(x.shape)

    def extra_repr(self) -> str:
        return (_layer_repr(self) + f", rank={self.rank}, local_experts="
                f"{len(self.local_experts)}, wire={self.wire!r}")


def _described(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"{list(x.shape)} {x.dtype} on {x.device}"
    return type(x).__name__


def _collective_device(group, device):
    from .expert_parallel import _collective_device as where
    return where(group, device)


class SharedExperts(nn.Module):
    """Experts every token goes through with weight 1 (DeepSeek-V3's shared
    experts, split into `count` experts of size I), as an
    ExpertParallelMoE's ranks each hold them: `w13` [S, 2I, H], `w2`
    [S, H, I], with `expert_bias` w13_bias [S, 2I] and w2_bias [S, H];
    FP8 after quantize_fp8() (inference)."""

    def __init__(self, count: int, hidden_size: int, intermediate_size: int, activation: str,
                 expert_bias: bool = False, device=None, dtype=torch.bfloat16,
                 compute_dtype: Optional[torch.dtype] = None):
        super().__init__()
        _check_compute_dtype(compute_dtype, hidden_size, intermediate_size, dtype)
        self.activation, self.compute_dtype = activation, compute_dtype
        _add_experts(self, count, hidden_size, intermediate_size, activation, expert_bias,
                     dict(device=device, dtype=dtype))
        self.register_buffer("w13_scale", None)
        self.register_buffer("w2_scale", None)
        self.register_buffer("ids", torch.arange(count, dtype=torch.int32, device=device),
                             persistent=False)
        with torch.no_grad():
            for weight in (self.w13, self.w2):
                bound = 1.0 / math.sqrt(weight.shape[-1])
                weight.uniform_(-bound, bound)

    quantize_fp8 = MoE.quantize_fp8
    set_fp8_weights = MoE.set_fp8_weights

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """The sum of the shared experts' outputs for tokens [T, H]."""
        count = tokens.shape[0]
        weights = torch.ones(count, self.ids.shape[0], device=tokens.device)
        return fused_moe(tokens, self.w13, self.w2, weights, self.ids.expand(count, -1),
                         self.activation, w13_scale=self.w13_scale, w2_scale=self.w2_scale,
                         w13_bias=self.w13_bias, w2_bias=self.w2_bias,
                         compute_dtype=self.compute_dtype)


def _add_experts(module: nn.Module, count: int, hidden_size: int, intermediate_size: int,
                 activation: str, expert_bias: bool, factory) -> None:
    """`count` experts' parameters on `module`: w13 [count, 2I (I for a
    plain activation), H], w2 [count, H, I] (uninitialised), and with
    `expert_bias` w13_bias and w2_bias (zeros), else None."""
    up_rows = intermediate_size * (2 if activation in GATED else 1)
    module.w13 = nn.Parameter(torch.empty(count, up_rows, hidden_size, **factory))
    module.w2 = nn.Parameter(torch.empty(count, hidden_size, intermediate_size, **factory))
    module.w13_bias = (nn.Parameter(torch.zeros(count, up_rows, **factory))
                       if expert_bias else None)
    module.w2_bias = (nn.Parameter(torch.zeros(count, hidden_size, **factory))
                      if expert_bias else None)


def _take_experts(target: nn.Module, layer: MoE, experts) -> None:
    """Copies `layer`'s experts `experts` (global ids) into `target`'s w13,
    w2 and biases; FP8 weights and their scales become `target`'s buffers."""
    ids = torch.tensor(list(experts), dtype=torch.long, device=layer.w13.device)
    for name in ("w13_bias", "w2_bias"):
        if getattr(layer, name) is not None:
            getattr(target, name).copy_(getattr(layer, name).index_select(0, ids))
    if layer.w13_scale is None:
        target.w13.copy_(layer.w13.index_select(0, ids))
        target.w2.copy_(layer.w2.index_select(0, ids))
        return
    del target.w13, target.w2
    for name in ("w13", "w2", "w13_scale", "w2_scale"):
        target.register_buffer(name, getattr(layer, name).index_select(0, ids))


def _check_compute_dtype(compute_dtype, hidden_size: int, intermediate_size: int,
                         dtype) -> None:
    checks.check_fp8_compute(compute_dtype, {"hidden_size": hidden_size,
                                             "intermediate_size": intermediate_size}, dtype)


def _check_shared_and_router(shared_experts, router_dtype) -> None:
    """MoE's own rules for shared_experts and router_dtype."""
    if not isinstance(shared_experts, int) or isinstance(shared_experts, bool) or (
            shared_experts < 0):
        raise ValueError(f"shared_experts must be an int >= 0, got {shared_experts!r}")
    if router_dtype not in (None, torch.float32, torch.bfloat16):
        raise ValueError(f"router_dtype must be None (the layer's dtype) or "
                         f"torch.float32, got {router_dtype!r}")
