"""The activations between the experts' two GEMMs, by name.

Gated ones read the up projection's 2I columns as a gate half and an up
half and give I columns:

- "swiglu": silu(gate) * up, gate columns first (Mixtral, Qwen3-MoE,
  DeepSeek-V3; vLLM's "silu").
- "geglu": gelu(gate) * up with tanh-approximated gelu.
- "geglu_erf": gelu(gate) * up with the exact (erf) gelu (vLLM's "gelu").
- "swigluoai": gpt-oss's clamped SwiGLU on interleaved columns (gate in
  the even columns, up in the odd ones, as gpt-oss and vLLM store them):
  g = min(gate, 7), u = clamp(up, -7, 7), (u + 1) * g * sigmoid(1.702 g).

Plain ones keep the I columns: "silu", "gelu" (tanh), "gelu_erf", "relu",
"relu2" (relu(h)^2).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

GATED = ("swiglu", "geglu", "geglu_erf", "swigluoai")
ACTIVATIONS = GATED + ("silu", "gelu", "gelu_erf", "relu", "relu2")

# gpt-oss's constants (its GptOssExperts, vLLM's swigluoai_and_mul).
SWIGLUOAI_ALPHA = 1.702
SWIGLUOAI_LIMIT = 7.0


def halves(h: torch.Tensor, activation: str):
    """A gated activation's (gate, up) columns of h."""
    if activation == "swigluoai":
        return h[..., 0::2], h[..., 1::2]
    return h.chunk(2, dim=-1)


def activate(h: torch.Tensor, activation: str) -> torch.Tensor:
    """The activation of the up projection's rows h (torch ops, so
    differentiable and traceable); gated ones halve the columns."""
    if activation in GATED:
        gate, up = halves(h, activation)
        if activation == "swiglu":
            return F.silu(gate) * up
        if activation == "swigluoai":
            gate = gate.clamp(max=SWIGLUOAI_LIMIT)
            up = up.clamp(-SWIGLUOAI_LIMIT, SWIGLUOAI_LIMIT)
            return (up + 1) * (gate * torch.sigmoid(gate * SWIGLUOAI_ALPHA))
        approximate = "tanh" if activation == "geglu" else "none"
        return F.gelu(gate, approximate=approximate) * up
    if activation == "silu":
        return F.silu(h)
    if activation in ("gelu", "gelu_erf"):
        return F.gelu(h, approximate="tanh" if activation == "gelu" else "none")
    if activation == "relu2":
        return torch.square(F.relu(h))
    return F.relu(h)
