"""Hugging Face MoE models on ggc.moe.

- `from_hf(block_or_state_dict, config, prefix="")`: a `ggc.moe.MoE` with
  the router and expert weights of one MoE block of Mixtral, Qwen3-MoE,
  DeepSeek-V3 or gpt-oss (transformers 5's fused `experts.gate_up_proj`
  layout, or the per-expert checkpoint keys `experts.{e}.w1.weight` /
  `experts.{e}.gate_proj.weight`, FP8 ones with `weight_scale_inv` too,
  gpt-oss's released MXFP4 `experts.*_blocks` / `*_scales`, dequantised
  to bf16 at load by `dequantize_mxfp4`). Weights already in ggc's layout
  are shared, not copied.
- `swap_moe_blocks(model)`: every MoE block of a transformers model
  replaced by a `HuggingFaceMoE` (a MoE that returns what the block
  returned); `fp8=True` quantises the experts (128x128 block scales).

Routing is the family's: softmax top-k (Mixtral, Qwen3-MoE, with or
without renormalisation), sigmoid grouped top-k with the correction bias
and routed scaling, logits in f32 (DeepSeek-V3), top-k of biased logits
then softmax (gpt-oss). DeepSeek-V3's shared experts become extra experts
with weight 1 in the same grouped GEMMs; gpt-oss's expert biases and
clamped SwiGLU ("swigluoai") run in the layer. A swapped block hands its
router logits to transformers' output recorder (`output_router_logits`),
so the auxiliary load-balancing loss is computed as for the block it
replaced. docs/models.md has the details.

On the CPU a model runs on ggc's reference backend (ggc.reference), a
float32 one included (its layers are then float32); on CUDA the layers are
bfloat16 (or FP8), and a float32 model is refused when it is loaded.
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional

import torch
from torch import nn

from .module import MoE
from .quant import BLOCK, FP8


class Family(NamedTuple):
    """How one model family names and lays out its MoE block."""
    block: str                    # the transformers class of its MoE block
    router: str                   # the router's state-dict prefix
    legacy: tuple                 # per-expert checkpoint names: (gate, up, down)
    returns_router_scores: bool   # the block returns (hidden, router_scores)


FAMILIES = {
    "mixtral": Family("MixtralSparseMoeBlock", "gate", ("w1", "w3", "w2"), False),
    "qwen3_moe": Family("Qwen3MoeSparseMoeBlock", "gate",
                        ("gate_proj", "up_proj", "down_proj"), False),
    "deepseek_v3": Family("DeepseekV3MoE", "gate", ("gate_proj", "up_proj", "down_proj"),
                          False),
    "gpt_oss": Family("GptOssMLP", "router", (), True),
}


def family_of(config) -> Family:
    kind = getattr(config, "model_type", None)
    if kind not in FAMILIES:
        raise ValueError(f"config.model_type must be one of {sorted(FAMILIES)}, got {kind!r}")
    return FAMILIES[kind]


def layer_args(config) -> dict:
    """MoE's constructor arguments for a block of this config."""
    kind = config.model_type
    c = config
    if kind != "gpt_oss" and c.hidden_act != "silu":
        raise NotImplementedError(f"hidden_act {c.hidden_act!r}: the {kind} blocks ggc "
                                  f"loads use silu (SwiGLU)")
    if kind == "mixtral":
        return dict(hidden_size=c.hidden_size, intermediate_size=c.intermediate_size,
                    num_experts=c.num_local_experts, top_k=c.num_experts_per_tok)
    if kind == "qwen3_moe":
        return dict(hidden_size=c.hidden_size, intermediate_size=c.moe_intermediate_size,
                    num_experts=c.num_experts, top_k=c.num_experts_per_tok,
                    renormalize=bool(c.norm_topk_prob))
    if kind == "deepseek_v3":
        return dict(hidden_size=c.hidden_size, intermediate_size=c.moe_intermediate_size,
                    num_experts=c.n_routed_experts, top_k=c.num_experts_per_tok,
                    scoring="sigmoid", renormalize=bool(c.norm_topk_prob), n_group=c.n_group,
                    topk_group=c.topk_group, correction_bias=True,
                    scaling_factor=float(c.routed_scaling_factor),
                    router_dtype=torch.float32, shared_experts=c.n_shared_experts or 0)
    if getattr(c, "swiglu_limit", 7.0) != 7.0:
        raise NotImplementedError(f"swiglu_limit {c.swiglu_limit}: ggc's swigluoai clamps "
                                  f"at gpt-oss's 7.0")
    return dict(hidden_size=c.hidden_size, intermediate_size=c.intermediate_size,
                num_experts=c.num_local_experts, top_k=c.num_experts_per_tok,
                activation="swigluoai", scoring="topk_softmax", router_bias=True,
                expert_bias=True)


def from_hf(source, config, prefix: str = "", device=None) -> MoE:
    """A MoE holding the weights of one Hugging Face MoE block: `source` is
    the block (an nn.Module) or a state dict, whose keys for this block
    start with `prefix` (a whole model's: "model.layers.3.mlp.")."""
    family = family_of(config)
    frozen = False
    if isinstance(source, nn.Module):
        frozen = _all_frozen(source)
        state = source.state_dict()
    elif isinstance(source, dict):
        state = {k[len(prefix):]: v for k, v in source.items() if k.startswith(prefix)}
        if not state:
            raise KeyError(f"no key of the state dict starts with prefix {prefix!r}")
    else:
        raise TypeError(f"source must be an nn.Module or a state dict, got "
                        f"{type(source).__name__}")
    args = layer_args(config)
    tensors = _ggc_state(state, family, args, config, device)
    device = device if device is not None else tensors["gate.weight"].device
    dtype = _layer_dtype(tensors["gate.weight"].dtype, torch.device(device))
    layer = MoE(**args, device="meta", dtype=dtype)
    fp8 = tensors.pop("fp8", None)
    layer.load_state_dict(tensors, strict=True, assign=True)
    layer.shared_ids = torch.arange(layer.num_experts, layer.num_experts + layer.shared_experts,
                                    dtype=torch.int32, device=device)
    if fp8 is not None:
        layer.set_fp8_weights(*fp8)
    if frozen:  # assign=True made every parameter trainable
        layer.requires_grad_(False)
    return layer.to(device)


def _all_frozen(block: nn.Module) -> bool:
    """Whether none of the block's parameters is trained. The layer stacks
    the experts into a few tensors, so a block partly frozen is refused:
    its frozen weights would train through the stack."""
    flags = {p.requires_grad for p in block.parameters()}
    if flags == {True, False}:
        raise NotImplementedError("the MoE block's parameters are partly frozen; ggc's layer "
                                  "stacks its experts' weights: freeze all of them or none "
                                  "before swapping")
    return flags == {False}


def _layer_dtype(dtype: torch.dtype, device: torch.device) -> torch.dtype:
    """The layer's dtype, the router's: bfloat16, or float32 for a model on
    the CPU (ggc's reference backend runs it; the CUDA kernels are bf16 and
    FP8)."""
    if dtype == torch.bfloat16 or (dtype == torch.float32 and device.type == "cpu"):
        return dtype
    where = "" if dtype != torch.float32 else f" on {device.type}"
    raise TypeError(f"the router weight is {dtype}{where}: ggc's MoE layers are bfloat16 "
                    f"(float32 on the CPU only; load the model with "
                    f"torch_dtype=torch.bfloat16)")


def _ggc_state(state: Dict[str, torch.Tensor], family: Family, args: dict, config,
               device=None) -> dict:
    """The block's tensors under MoE's names (w13 [E + S, 2I, H] gate rows
    then up rows, or interleaved for gpt-oss; w2 [E + S, H, I]), and
    "fp8": (w13, w2, w13_scale, w2_scale) for an FP8 checkpoint. MXFP4
    experts are dequantised on `device` (None: where their blocks are)."""
    out = {"gate.weight": _take(state, f"{family.router}.weight")}
    if args.get("router_bias"):
        out["gate.bias"] = _take(state, f"{family.router}.bias")
    if args.get("correction_bias"):
        out["correction_bias"] = _take(state, "gate.e_score_correction_bias").float()
    experts = args["num_experts"]
    inter = args["intermediate_size"]
    # gpt-oss stores both transposed: [E, H, 2I] and [E, I, H].
    transposed = bool(args.get("expert_bias"))
    mxfp4 = transposed and any(f"experts.{name}_{part}" in state for name in _GPT_OSS_EXPERTS
                               for part in ("blocks", "scales"))
    fused = "experts.gate_up_proj" in state or mxfp4
    if fused:  # transformers 5's fused experts
        if transposed:
            w13, w2 = (_gpt_oss_experts(state, name, args, device) for name in _GPT_OSS_EXPERTS)
        else:
            w13, w2 = _take(state, "experts.gate_up_proj"), _take(state, "experts.down_proj")
        _check_fused_shapes(w13, w2, args, transposed)
        if transposed:
            w13, w2 = w13.transpose(1, 2), w2.transpose(1, 2)
            out["w13_bias"] = _take(state, "experts.gate_up_proj_bias")
            out["w2_bias"] = _take(state, "experts.down_proj_bias")
        scales = None
    elif family.legacy:
        w13, w2, scales = _per_expert(state, family.legacy, "experts.{e}.", range(experts))
    else:
        raise KeyError("the state dict has no 'experts.gate_up_proj' (bf16) nor gpt-oss's "
                       "MXFP4 'experts.gate_up_proj_blocks' and '_scales': a model transformers "
                       "loaded with its MXFP4 Triton kernels keeps its experts out of its "
                       "state dict (load it with Mxfp4Config(dequantize=True), or give from_hf "
                       "the checkpoint's state dict)")
    dtype = out["gate.weight"].dtype
    _check_expert_dtypes(w13, w2, scales, "experts.gate_up_proj and experts.down_proj"
                         if fused else "experts.*", dtype)
    if args.get("shared_experts"):
        shared = _per_expert(state, family.legacy, "shared_experts.", [None])
        _check_expert_dtypes(*shared, "shared_experts.*", dtype)
        w13, w2, scales = _with_shared(w13, w2, scales, shared, args["shared_experts"], inter)
    if scales is not None:
        out["fp8"] = (w13.contiguous(), w2.contiguous()) + scales
        # Placeholders of the bf16 parameters, replaced by the FP8 buffers.
        w13 = torch.empty(w13.shape, dtype=torch.bfloat16, device="meta")
        w2 = torch.empty(w2.shape, dtype=torch.bfloat16, device="meta")
    out["w13"], out["w2"] = w13.contiguous(), w2.contiguous()
    return out


def _take(state, key):
    if key not in state:
        sample = ", ".join(sorted(state)[:6])
        raise KeyError(f"the state dict has no {key!r} (its keys start: {sample}, ...)")
    if not isinstance(state[key], torch.Tensor):
        raise TypeError(f"the state dict's {key!r} must be a tensor, got "
                        f"{type(state[key]).__name__}")
    return state[key]


_GPT_OSS_EXPERTS = ("gate_up_proj", "down_proj")

# MXFP4 (OCP microscaling): 32 FP4 e2m1 values share one UE8M0 scale.
MXFP4_GROUP = 32


def _e2m1_values() -> list:
    """The 16 FP4 e2m1 values by code: bit 3 the sign, bits 2-1 the
    exponent (bias 1; 0 is subnormal), bit 0 the mantissa."""
    values = []
    for code in range(16):
        exponent, mantissa = (code >> 1) & 3, code & 1
        magnitude = mantissa / 2 if exponent == 0 else 2.0 ** (exponent - 1) * (1 + mantissa / 2)
        values.append(-magnitude if code & 8 else magnitude)  # -0.0 for code 8
    return values


def _mxfp4_tables(device):
    """(pairs [256, 2], powers [256]) in f32: the two values a byte of
    blocks holds (its low nibble first), and the power of two each UE8M0
    scale byte means (2 ** (byte - 127); 255 is NaN)."""
    values = torch.tensor(_e2m1_values(), dtype=torch.float32)
    byte = torch.arange(256)
    pairs = torch.stack((values[byte & 15], values[byte >> 4]), dim=1)
    powers = torch.tensor([2.0 ** (b - 127) for b in range(255)] + [float("nan")],
                          dtype=torch.float32)
    return pairs.to(device), powers.to(device)


def dequantize_mxfp4(blocks: torch.Tensor, scales: torch.Tensor, *, dtype=torch.bfloat16,
                     device=None, chunk: int = 1 << 22) -> torch.Tensor:
    """MXFP4 weights as gpt-oss's checkpoints store them, dequantised:
    `blocks` uint8 [..., G, 16] (two FP4 e2m1 values a byte, the low nibble
    first) and `scales` uint8 [..., G] (one UE8M0 exponent byte, bias 127,
    per 32 values) give [..., 32 G] of `dtype` on `device` (None: the
    blocks'). Every value is exact in bf16 (2 significant bits, scales
    2**-127 to 2**127), or +-inf past its range (2 or more times 2**127),
    as in transformers' dequantisation. It runs `chunk` values at a time,
    so the f32 and index temporaries stay small whatever the tensor's
    size, and moves only the uint8 bytes of each chunk to `device`."""
    if blocks.dtype != torch.uint8 or scales.dtype != torch.uint8:
        raise TypeError(f"MXFP4 blocks and scales are uint8, got {blocks.dtype} and "
                        f"{scales.dtype}")
    if blocks.dim() < 2 or blocks.shape[-1] != MXFP4_GROUP // 2 or \
            tuple(blocks.shape[:-1]) != tuple(scales.shape):
        raise ValueError(f"MXFP4 blocks [..., G, 16] take scales [..., G]: got blocks "
                         f"{list(blocks.shape)} and scales {list(scales.shape)}")
    device = torch.device(device) if device is not None else blocks.device
    out = torch.empty(*scales.shape[:-1], scales.shape[-1] * MXFP4_GROUP, dtype=dtype,
                      device=device)
    groups = scales.numel()
    codes, exponents = blocks.reshape(groups, MXFP4_GROUP // 2), scales.reshape(groups)
    rows = out.view(groups, MXFP4_GROUP)
    pairs, powers = _mxfp4_tables(device)
    step = max(1, chunk // MXFP4_GROUP)
    for g in range(0, groups, step):
        values = pairs[codes[g:g + step].to(device).long()].view(-1, MXFP4_GROUP)
        values *= powers[exponents[g:g + step].to(device).long()].unsqueeze(1)
        rows[g:g + step] = values  # exact: the product needs no rounding
    return out


def _gpt_oss_experts(state, name: str, args: dict, device) -> torch.Tensor:
    """gpt-oss's fused expert weight `name` in transformers' layout
    (gate_up_proj [E, H, 2I], down_proj [E, I, H]): the state dict's bf16
    tensor, or its MXFP4 blocks and scales dequantised to bf16 (stored
    [E, 2I, H/32, 16] and [E, H, I/32, 16]: ggc's layout, returned as the
    transposed view, so the layer takes it without a copy)."""
    key = f"experts.{name}"
    parts = [f"{key}_blocks", f"{key}_scales"]
    present = [p for p in parts if p in state]
    if key in state:
        if present:
            raise ValueError(f"the state dict has both {key!r} and its MXFP4 {present[0]!r}: "
                             f"give one of the two")
        return _take(state, key)
    if not present:
        raise KeyError(f"the state dict has no {key!r} (bf16) nor its MXFP4 {parts[0]!r} and "
                       f"{parts[1]!r}")
    if len(present) == 1:
        lacking = parts[1 - parts.index(present[0])]
        raise KeyError(f"the state dict has {present[0]!r} but no {lacking!r}: an MXFP4 "
                       f"checkpoint gives each expert weight its blocks (two FP4 values a "
                       f"byte) and its scales (one exponent byte per {MXFP4_GROUP} values)")
    blocks, scales = _take(state, parts[0]), _take(state, parts[1])
    for part, tensor in zip(parts, (blocks, scales)):
        if tensor.dtype != torch.uint8:
            raise TypeError(f"the state dict's {part!r} is {tensor.dtype}: MXFP4 blocks and "
                            f"scales are uint8")
    e, i, h = args["num_experts"], args["intermediate_size"], args["hidden_size"]
    rows, cols = (2 * i, h) if name == "gate_up_proj" else (h, i)
    if cols % MXFP4_GROUP:
        raise ValueError(f"{parts[0]!r}: MXFP4 experts need their input dimension ({cols}, "
                         f"from the config) a multiple of {MXFP4_GROUP}")
    wants = ((e, rows, cols // MXFP4_GROUP, MXFP4_GROUP // 2), (e, rows, cols // MXFP4_GROUP))
    for part, tensor, want in zip(parts, (blocks, scales), wants):
        if tuple(tensor.shape) != want:
            raise ValueError(f"the state dict's {part!r} must be {list(want)} (MXFP4 of the "
                             f"[E, {rows}, {cols}] weight: E = {e} experts, hidden size H = "
                             f"{h} and intermediate size I = {i} from the config), got "
                             f"{list(tensor.shape)}")
    return dequantize_mxfp4(blocks, scales, device=device).transpose(1, 2)


def _check_fused_shapes(w13, w2, args, transposed: bool) -> None:
    """transformers 5's fused expert tensors have the shapes the config
    gives ([E, 2I, H] and [E, H, I], or gpt-oss's transposes), named by
    their checkpoint keys: a wrong one failed later in torch's cat."""
    e, i, h = args["num_experts"], args["intermediate_size"], args["hidden_size"]
    wants = ((e, h, 2 * i), (e, i, h)) if transposed else ((e, 2 * i, h), (e, h, i))
    for key, w, want in (("experts.gate_up_proj", w13, wants[0]),
                         ("experts.down_proj", w2, wants[1])):
        if tuple(w.shape) != want:
            raise ValueError(f"the state dict's {key!r} must be {list(want)} (E = {e} experts, "
                             f"hidden size H = {h} and intermediate size I = {i} from the "
                             f"config), got {list(w.shape)}")


def _check_expert_dtypes(w13, w2, scales, where: str, dtype=torch.bfloat16) -> None:
    """Expert weights the layer takes: the router's dtype (bfloat16, or
    float32 on the CPU), or float8_e4m3fn with their scales. Anything else
    (int8, say) was promoted into a layer of zeros by the concatenations,
    with no error."""
    for name, w in (("gate/up", w13), ("down", w2)):
        if scales is not None and w.dtype == FP8:
            continue
        if w.dtype == FP8:
            raise ValueError(f"the {name} weights of {where} are float8_e4m3fn without their "
                             f"weight_scale_inv: an FP8 checkpoint gives every expert weight "
                             f"its block scales")
        if w.dtype != dtype:
            layer = str(dtype).replace("torch.", "")
            raise TypeError(f"the {name} weights of {where} are {w.dtype}: ggc's MoE layers "
                            f"take {layer} experts (the router's dtype), or float8_e4m3fn "
                            f"ones with weight_scale_inv (load the model with "
                            f"torch_dtype=torch.bfloat16 or dequantise the experts first)")


def _per_expert(state, names, pattern, experts):
    """Per-expert Linear weights (gate [I, H], up [I, H], down [H, I])
    stacked: (w13, w2, FP8 scales or None)."""
    gate, up, down = names
    parts = {name: [] for name in names}
    scales = {name: [] for name in names}
    for e in experts:
        base = pattern.format(e=e)
        for name in names:
            parts[name].append(_take(state, f"{base}{name}.weight"))
            scale = state.get(f"{base}{name}.weight_scale_inv")
            if scale is not None:
                scales[name].append(scale)
    w13 = torch.stack([torch.cat([g, u]) for g, u in zip(parts[gate], parts[up])])
    w2 = torch.stack(parts[down])
    if not scales[gate]:
        return w13, w2, None
    if w13.dtype != FP8 or any(len(v) != len(experts) for v in scales.values()):
        raise ValueError("an FP8 checkpoint gives every expert weight in float8_e4m3fn with "
                         "its weight_scale_inv")
    if parts[gate][0].shape[0] % BLOCK:
        raise ValueError(f"FP8 experts need I = {parts[gate][0].shape[0]} a multiple of 128 "
                         f"(the gate's and the up's 128-row scale blocks are joined)")
    s13 = torch.stack([torch.cat([g, u]) for g, u in zip(scales[gate], scales[up])]).float()
    return w13, w2, (s13, torch.stack(scales[down]).float())


def _with_shared(w13, w2, scales, shared, count, inter):
    """The shared MLP (intermediate count * I) split into `count` experts of
    intermediate I, after the routed ones: a gated MLP is the sum of its
    column blocks' MLPs."""
    s13, s2, sscales = shared
    if (scales is None) != (sscales is None):
        raise ValueError("the routed and the shared experts must both be FP8 or both not")
    gate, up = s13[0].chunk(2)
    pieces13 = [torch.cat([g, u]) for g, u in zip(gate.split(inter), up.split(inter))]
    pieces2 = list(s2[0].split(inter, dim=1))
    if len(pieces13) != count:
        raise ValueError(f"the shared experts' intermediate {gate.shape[0]} is not "
                         f"n_shared_experts = {count} times I = {inter}")
    w13 = torch.cat([w13, torch.stack(pieces13)])
    w2 = torch.cat([w2, torch.stack([p.contiguous() for p in pieces2])])
    if scales is None:
        return w13, w2, None
    rows = inter // BLOCK
    g_s, u_s = sscales[0][0].chunk(2)
    blocks13 = [torch.cat([g, u]) for g, u in zip(g_s.split(rows), u_s.split(rows))]
    blocks2 = [b.contiguous() for b in sscales[1][0].split(rows, dim=1)]
    return w13, w2, (torch.cat([scales[0], torch.stack(blocks13)]),
                     torch.cat([scales[1], torch.stack(blocks2)]))


_RECORDERS: Dict[type, type] = {}


def _logits_recorder(router_class: type) -> nn.Module:
    """A module of the replaced block's router class that passes ggc's
    router logits through: transformers' output recorder
    (`output_router_logits`) hooks the modules of that class and keeps their
    first output, so it records these logits as it did the block's."""
    recorder = _RECORDERS.get(router_class)
    if recorder is None:
        def __init__(self):
            nn.Module.__init__(self)  # no weights: the router is ggc's

        def forward(self, logits):
            return logits
        recorder = _RECORDERS.setdefault(router_class, type(
            f"Ggc{router_class.__name__}", (router_class,),
            {"__init__": __init__, "forward": forward, "__module__": __name__}))
    return recorder()


class HuggingFaceMoE(nn.Module):
    """A MoE in a transformers model's place of an MoE block: returns what
    the block returned (gpt-oss's: the output and the router scores), and
    hands the router logits to `router_logits` (an instance of the replaced
    block's router class, which transformers' output recorder hooks)."""

    def __init__(self, layer: MoE, returns_router_scores: bool = False,
                 router_class: Optional[type] = None, jitter_noise: float = 0.0):
        super().__init__()
        self.moe = layer
        self.returns_router_scores = returns_router_scores
        self.router_logits = None if router_class is None else _logits_recorder(router_class)
        self.jitter_noise = jitter_noise

    def forward(self, hidden_states: torch.Tensor):
        if self.training and self.jitter_noise > 0:  # transformers would jitter the inputs
            raise NotImplementedError(
                f"router_jitter_noise = {self.jitter_noise}: the block jitters its router's "
                f"inputs in training, which ggc's layer does not (it runs in eval mode, or "
                f"with router_jitter_noise = 0)")
        out, topk_weights, _ = self.moe.forward_routed(hidden_states,
                                                       on_logits=self.router_logits)
        if self.returns_router_scores:
            return out, topk_weights.to(hidden_states.dtype)
        return out


def swap_moe_blocks(model: nn.Module, config=None, fp8: bool = False) -> int:
    """Replaces each MoE block of `model` (its config's family) by a
    HuggingFaceMoE holding the block's weights; returns how many. `fp8`:
    the experts quantised to FP8 with 128x128 block scales (H and I
    multiples of 16; a partial last block where they are not of 128, as
    gpt-oss's 2,880)."""
    config = config if config is not None else getattr(model, "config", None)
    family = family_of(config)
    found = [(name, module) for name, module in model.named_modules()
             if type(module).__name__ == family.block]
    for name, block in found:
        layer = from_hf(block, config)
        if fp8:
            layer.quantize_fp8()
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        swapped = HuggingFaceMoE(layer, family.returns_router_scores,
                                 type(getattr(block, family.router)),
                                 float(getattr(config, "router_jitter_noise", 0.0) or 0.0))
        setattr(parent, child, swapped)
    _hook_recorders(model)
    return len(found)


def _hook_recorders(model: nn.Module) -> None:
    """transformers hooks a model's modules for its output recorder once,
    at the first forward that records: where that already happened, the
    swapped blocks' recorders get the hook the replaced routers had."""
    hooked = [m for m in model.modules() if getattr(m, "_output_capturing_hooks_installed", False)]
    if not hooked:
        return
    from transformers.utils import output_capturing as capturing
    install = getattr(capturing, "install_output_capuring_hook", None)
    if install is None or not hasattr(capturing, "_CAN_RECORD_REGISTRY"):
        raise RuntimeError("this model recorded outputs before swap_moe_blocks and this "
                           "transformers version's recorder cannot be reached: swap the "
                           "blocks before the model's first forward")
    for submodel in hooked:
        for spec in _router_logit_specs(capturing, submodel):
            for module in submodel.modules():
                if isinstance(module, HuggingFaceMoE) and module.router_logits is not None and \
                        isinstance(module.router_logits, spec.target_class) and \
                        not module.router_logits._forward_hooks:
                    install(module.router_logits, "router_logits", spec.index)


def _router_logit_specs(capturing, submodel) -> list:
    specs = (capturing._CAN_RECORD_REGISTRY.get(str(submodel.__class__)) or {}).get(
        "router_logits", [])
    specs = specs if isinstance(specs, list) else [specs]
    return [s for s in specs if isinstance(s, capturing.OutputRecorder) and
            s.target_class is not None]


def swapped_layers(model: nn.Module) -> list:
    """The MoE layers swap_moe_blocks put in `model`."""
    return [m.moe for m in model.modules() if isinstance(m, HuggingFaceMoE)]
