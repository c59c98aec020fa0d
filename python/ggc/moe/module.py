"""ggc.moe.MoE: the layer as an nn.Module (router, routing, experts)."""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import nn

from .checks import ACTIVATIONS, GATED
from .layer import fused_moe
from .quant import quantize_weights
from .routing import route


class MoE(nn.Module):
    """A Mixture-of-Experts feed-forward layer.

    `gate` (nn.Linear H -> E, no bias) gives the router logits, `route`
    picks top_k experts per token (`scoring`, `renormalize`, grouped top-k
    with `n_group` / `topk_group`, `correction_bias=True` for
    DeepSeek-V3's learned e_score_correction_bias, `scaling_factor`), and
    `fused_moe` runs the experts: `w13` [E, 2I, H] (gate rows, then up
    rows; [E, I, H] for a plain activation) and `w2` [E, H, I].
    `quantize_fp8()` turns the expert weights into FP8 with 128x128 block
    scales for inference. Input [..., H] bf16, output the same shape."""

    def __init__(self, hidden_size: int, intermediate_size: int, num_experts: int,
                 top_k: int, *, activation: str = "swiglu", scoring: str = "softmax",
                 renormalize: bool = True, n_group: Optional[int] = None,
                 topk_group: Optional[int] = None, correction_bias: bool = False,
                 scaling_factor: float = 1.0, device=None, dtype=torch.bfloat16):
        super().__init__()
        for name, value in (("hidden_size", hidden_size),
                            ("intermediate_size", intermediate_size),
                            ("num_experts", num_experts), ("top_k", top_k)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
        if dtype != torch.bfloat16:
            raise TypeError(f"dtype must be torch.bfloat16 (quantize_fp8() makes FP8 "
                            f"weights), got {dtype}")
        self.hidden_size, self.intermediate_size = hidden_size, intermediate_size
        self.num_experts, self.top_k, self.activation = num_experts, top_k, activation
        self.routing = dict(scoring=scoring, renormalize=renormalize, n_group=n_group,
                            topk_group=topk_group, scaling_factor=scaling_factor)
        up_rows = intermediate_size * (2 if activation in GATED else 1)
        factory = dict(device=device, dtype=dtype)
        self.gate = nn.Linear(hidden_size, num_experts, bias=False, **factory)
        self.w13 = nn.Parameter(torch.empty(num_experts, up_rows, hidden_size, **factory))
        self.w2 = nn.Parameter(torch.empty(num_experts, hidden_size, intermediate_size,
                                           **factory))
        self.correction_bias = (nn.Parameter(torch.zeros(num_experts, device=device))
                                if correction_bias else None)
        # FP8 block scales, set by quantize_fp8 (buffers, so .to() moves them).
        self.register_buffer("w13_scale", None)
        self.register_buffer("w2_scale", None)
        self.reset_parameters()
        # Argument checks of route() now rather than on the first batch.
        route(torch.zeros(1, num_experts, device="meta"), top_k,
              correction_bias=(None if self.correction_bias is None
                               else torch.zeros(num_experts, device="meta")),
              **self.routing)

    def reset_parameters(self) -> None:
        """Experts as nn.Linear initialises its weights: U(+-1/sqrt(fan_in))."""
        if self.w13.dtype == torch.float8_e4m3fn:
            raise RuntimeError("reset_parameters on an FP8 layer: quantize_fp8() is one-way")
        for weight in (self.w13, self.w2):
            bound = 1.0 / math.sqrt(weight.shape[-1])
            with torch.no_grad():
                weight.uniform_(-bound, bound)
        self.gate.reset_parameters()

    @torch.no_grad()
    def quantize_fp8(self) -> "MoE":
        """Replaces the expert weights by FP8 (e4m3) with f32 128x128 block
        scales (buffers, not parameters: the FP8 layer is inference only).
        H and I must be multiples of 128."""
        if self.w13_scale is not None:
            raise RuntimeError("quantize_fp8: the weights are FP8 already")
        w13, w13_scale = quantize_weights(self.w13.detach(), "w13")
        w2, w2_scale = quantize_weights(self.w2.detach(), "w2")
        del self.w13, self.w2
        self.register_buffer("w13", w13)
        self.register_buffer("w2", w2)
        self.w13_scale, self.w2_scale = w13_scale, w2_scale
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.shape[-1:] != (self.hidden_size,):
            raise ValueError(f"x must be [..., H = {self.hidden_size}], got "
                             f"{list(getattr(x, 'shape', [])) or type(x).__name__}")
        tokens = x.reshape(-1, self.hidden_size)
        topk_weights, topk_ids = route(self.gate(tokens), self.top_k,
                                       correction_bias=self.correction_bias, **self.routing)
        out = fused_moe(tokens, self.w13, self.w2, topk_weights, topk_ids, self.activation,
                        w13_scale=self.w13_scale, w2_scale=self.w2_scale)
        return out.view(x.shape)

    def extra_repr(self) -> str:
        fp8 = ", fp8" if self.w13_scale is not None else ""
        return (f"hidden_size={self.hidden_size}, intermediate_size={self.intermediate_size}, "
                f"num_experts={self.num_experts}, top_k={self.top_k}, "
                f"activation={self.activation!r}{fp8}")
