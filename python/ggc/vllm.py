"""vLLM's fused-experts contract on ggc's MoE layer.

`fused_experts(...)` takes the arguments of vLLM's
`vllm.model_executor.layers.fused_moe.fused_experts` (the flat-keyword
form, vLLM 0.8 to 0.10) with their meaning there, so a serving stack can
call ggc where it called vLLM's Triton path:

- `w1` [E, 2N, K] (gate rows then up rows; interleaved for "swigluoai"),
  `w2` [E, K, N]; `hidden_states` [T, K] bf16.
- `activation`: vLLM's names ("silu" is the gated SiLU: silu(gate) * up).
- `expert_map` [global_num_experts] / `global_num_experts`: topk_ids are
  global ids; experts mapped to -1 are another rank's and add nothing.
- `apply_router_weight_on_input` (top-1 only, as in vLLM): the weight
  scales the input rows instead of the output; not with `w1_bias` (vLLM
  weighs the biased product, NotImplementedError).
- `inplace`: the result is written into hidden_states, which is returned.
- FP8 (`use_fp8_w8a8`): e4m3 weights with `block_shape` [128, 128] scales
  w1_scale [E, ceil(2N/128), ceil(K/128)] (DeepSeek-V3, Qwen3 FP8) or one
  scale per expert (w1_scale [E] or [E, 1, 1]: per-tensor); activations
  quantised dynamically per 1x128 block.
- `w1_bias` [E, 2N], `w2_bias` [E, K] (gpt-oss).

What ggc does not run raises NotImplementedError naming the argument
(int8/int4/MXFP4 weights, zero points, per-channel FP8, static activation
scales a1_scale/a2_scale); errors name vLLM's arguments (`w1`,
`hidden_states`), not ggc.moe's. `fused_topk` is vLLM's softmax top-k,
`grouped_topk` its grouped (DeepSeek) top-k.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple

import torch

from .moe import fused_moe as _fused_moe
from .moe.quant import BLOCK, FP8
from .moe.routing import route

# vLLM's activation names -> ggc.moe's.
ACTIVATIONS = {"silu": "swiglu", "gelu": "geglu_erf", "swigluoai": "swigluoai",
               "silu_no_mul": "silu", "gelu_no_mul": "gelu_erf", "relu2_no_mul": "relu2"}

# ggc.moe's argument names in its errors -> the vLLM arguments they came from.
_VLLM_NAMES = (("w13_scale", "w1_scale"), ("w13_bias", "w1_bias"), ("w13", "w1"),
               ("x", "hidden_states"))
_VLLM_NAME_PATTERN = re.compile(r"\b(" + "|".join(ggc for ggc, _ in _VLLM_NAMES) + r")\b")

_UNSUPPORTED_FLAGS = ("use_int8_w8a8", "use_int8_w8a16", "use_int4_w4a16", "use_mxfp4_w4a4",
                      "per_channel_quant")


def fused_experts(hidden_states: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
                  topk_weights: torch.Tensor, topk_ids: torch.Tensor, inplace: bool = False,
                  activation: str = "silu", apply_router_weight_on_input: bool = False,
                  use_fp8_w8a8: bool = False, use_int8_w8a8: bool = False,
                  use_int8_w8a16: bool = False, use_int4_w4a16: bool = False,
                  use_mxfp4_w4a4: bool = False, per_channel_quant: bool = False,
                  global_num_experts: int = -1, expert_map: Optional[torch.Tensor] = None,
                  w1_scale: Optional[torch.Tensor] = None,
                  w2_scale: Optional[torch.Tensor] = None,
                  w1_zp: Optional[torch.Tensor] = None, w2_zp: Optional[torch.Tensor] = None,
                  a1_scale: Optional[torch.Tensor] = None,
                  a2_scale: Optional[torch.Tensor] = None,
                  block_shape: Optional[Sequence[int]] = None,
                  w1_bias: Optional[torch.Tensor] = None,
                  w2_bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """out[t] = sum_j topk_weights[t, j] * expert_{topk_ids[t, j]}(hidden_states[t]),
    as vLLM's fused_experts (module docstring: the arguments)."""
    flags = dict(use_int8_w8a8=use_int8_w8a8, use_int8_w8a16=use_int8_w8a16,
                 use_int4_w4a16=use_int4_w4a16, use_mxfp4_w4a4=use_mxfp4_w4a4,
                 per_channel_quant=per_channel_quant)
    for name in _UNSUPPORTED_FLAGS:
        if flags[name]:
            raise NotImplementedError(f"{name}=True: ggc runs bf16 and FP8 (e4m3, block or "
                                      f"per-tensor scales) experts only")
    for name, value in (("w1_zp", w1_zp), ("w2_zp", w2_zp), ("a1_scale", a1_scale),
                        ("a2_scale", a2_scale)):
        if value is not None:
            raise NotImplementedError(
                f"{name} is given: ggc has no zero points, and quantises activations "
                f"dynamically per 1x128 block (static activation scales are not taken)")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of vLLM's {sorted(ACTIVATIONS)}, got "
                         f"{activation!r}")
    _check_experts(w1, global_num_experts, expert_map)
    if not isinstance(hidden_states, torch.Tensor) or hidden_states.dtype != torch.bfloat16:
        raise TypeError(f"hidden_states must be a bfloat16 tensor (ggc's experts run bf16 "
                        f"and FP8), got {getattr(hidden_states, 'dtype', type(hidden_states))}")
    scales = {}
    if use_fp8_w8a8:
        scales = dict(w13_scale=_block_scales("w1_scale", w1_scale, w1, block_shape),
                      w2_scale=_block_scales("w2_scale", w2_scale, w2, block_shape))
    elif w1.dtype == FP8 or w1_scale is not None or w2_scale is not None:
        raise ValueError("FP8 weights or scales are given but use_fp8_w8a8 is False")
    x, weights = hidden_states, topk_weights
    if apply_router_weight_on_input:
        if w1_bias is not None:  # vLLM weighs x @ w1.T + w1_bias; ggc would weigh x alone
            raise NotImplementedError("apply_router_weight_on_input=True with w1_bias: vLLM "
                                      "multiplies the routed weight after w1's bias, ggc "
                                      "scales the input rows before w1 (leave w1_bias None)")
        x, weights = _weighted_input(hidden_states, topk_weights)
    try:
        out = _fused_moe(x, w1, w2, weights, topk_ids, ACTIVATIONS[activation],
                         w13_bias=w1_bias, w2_bias=w2_bias, expert_map=expert_map, **scales)
    except (ValueError, TypeError, NotImplementedError) as e:
        if type(e) not in (ValueError, TypeError, NotImplementedError) or len(e.args) != 1:
            raise
        raise type(e)(_in_vllm_terms(str(e))) from None
    if inplace:
        return hidden_states.copy_(out)
    return out


def _in_vllm_terms(message: str) -> str:
    """ggc.moe's error as the vLLM caller wrote the call: its argument names
    (w1, w1_scale, w1_bias, hidden_states) for ggc's (w13, ..., x)."""
    names = dict(_VLLM_NAMES)
    return _VLLM_NAME_PATTERN.sub(lambda m: names[m.group(1)], message)


def _check_experts(w1, global_num_experts, expert_map) -> None:
    if not isinstance(global_num_experts, int) or isinstance(global_num_experts, bool):
        raise TypeError(f"global_num_experts must be an int, got "
                        f"{type(global_num_experts).__name__}")
    if expert_map is not None and not isinstance(expert_map, torch.Tensor):
        raise TypeError(f"expert_map must be an int32 tensor (vLLM's: the local index of "
                        f"each global expert, -1 where another rank holds it) or None, got "
                        f"{type(expert_map).__name__}")
    if isinstance(w1, torch.Tensor) and w1.dim() >= 1 and w1.shape[0] == 0:
        raise ValueError("w1 holds no experts (w1.shape[0] = 0): a layer needs at least one")
    if global_num_experts == -1 or not isinstance(w1, torch.Tensor):
        return
    held = w1.shape[0] if expert_map is None else getattr(expert_map, "shape", [None])[0]
    if global_num_experts != held:
        what = "w1.shape[0]" if expert_map is None else "expert_map's length"
        raise ValueError(f"global_num_experts = {global_num_experts} must equal {what} = "
                         f"{held} (or be -1)")


def _block_scales(name, scale, weight, block_shape) -> torch.Tensor:
    """vLLM's FP8 weight scales as ggc's 128x128 block scales: block scales
    as they are, a per-expert (per-tensor) scale repeated over the blocks."""
    if block_shape is not None and list(block_shape) != [BLOCK, BLOCK]:
        raise NotImplementedError(f"block_shape must be [128, 128] (DeepSeek-V3's) or None "
                                  f"(per-tensor scales), got {list(block_shape)}")
    if not isinstance(scale, torch.Tensor):
        raise TypeError(f"{name} must be a float32 tensor with use_fp8_w8a8, got "
                        f"{type(scale).__name__}")
    if block_shape is not None:
        return scale
    experts, n, k = weight.shape
    if scale.numel() != experts:
        raise ValueError(f"{name} must hold one scale per expert ([E] or [E, 1, 1], E = "
                         f"{experts}) without block_shape, got shape {list(scale.shape)} "
                         f"(per-channel scales: not supported)")
    blocks = (experts, -(-n // BLOCK), -(-k // BLOCK))
    return scale.reshape(experts, 1, 1).expand(blocks).contiguous()


def _weighted_input(x: torch.Tensor, topk_weights: torch.Tensor) -> Tuple[torch.Tensor,
                                                                          torch.Tensor]:
    """apply_router_weight_on_input: the rows scaled by their (single)
    weight, and unit weights for the output."""
    if topk_weights.dim() != 2 or topk_weights.shape[1] != 1:
        raise ValueError(f"apply_router_weight_on_input needs top-1 routing (as in vLLM): "
                         f"topk_weights must be [T, 1], got {list(topk_weights.shape)}")
    scaled = (x.float() * topk_weights.float()).to(x.dtype)
    return scaled, torch.ones_like(topk_weights)


def fused_topk(hidden_states: torch.Tensor, gating_output: torch.Tensor, topk: int,
               renormalize: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """vLLM's fused_topk: softmax over the router logits, then top-k
    (renormalised if asked); returns (topk_weights f32, topk_ids int32)."""
    if gating_output.shape[0] != hidden_states.shape[0]:
        raise ValueError(f"gating_output must have one row per token ({hidden_states.shape[0]}), "
                         f"got {list(gating_output.shape)}")
    return route(gating_output, topk, scoring="softmax", renormalize=renormalize)


def grouped_topk(hidden_states: torch.Tensor, gating_output: torch.Tensor, topk: int,
                 renormalize: bool, num_expert_group: int = 0, topk_group: int = 0,
                 scoring_func: str = "softmax", routed_scaling_factor: float = 1.0,
                 e_score_correction_bias: Optional[torch.Tensor] = None
                 ) -> Tuple[torch.Tensor, torch.Tensor]:
    """vLLM's grouped_topk (DeepSeek-V2/V3's routing): softmax or sigmoid
    scores, the correction bias added for choosing, each token's best
    `topk_group` of `num_expert_group` expert groups (ranked by their best
    score, with a bias by their two best), top-k among their experts,
    renormalised if asked, times `routed_scaling_factor`; returns
    (topk_weights f32, topk_ids int32). On CUDA one kernel
    (gg.select_experts) computes it all."""
    if gating_output.shape[0] != hidden_states.shape[0]:
        raise ValueError(f"gating_output must have one row per token ({hidden_states.shape[0]}), "
                         f"got {list(gating_output.shape)}")
    if scoring_func not in ("softmax", "sigmoid"):
        raise NotImplementedError(f"scoring_func={scoring_func!r}: ggc's grouped_topk takes "
                                  f"'softmax' or 'sigmoid' (vLLM's)")
    for name, value in (("num_expert_group", num_expert_group), ("topk_group", topk_group)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    return route(gating_output, topk, scoring=scoring_func, renormalize=renormalize,
                 n_group=num_expert_group, topk_group=topk_group,
                 correction_bias=e_score_correction_bias,
                 scaling_factor=routed_scaling_factor)
