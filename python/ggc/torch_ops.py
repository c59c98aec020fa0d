"""PyTorch integration: `torch.ops.ggc.*` custom ops with fake (meta)
implementations, so `torch.compile` traces them, and autograd for training.

    y = ggc.torch_ops.grouped_mm(x, w, offsets)   # x [M, K], w [G, N, K]

The backward is two more grouped GEMMs (seed 003's training path):
grad_x[g] = grad_y[g] @ w[g] (w read as [G, N, K] = the "kn" form, no
copy) and grad_w[g] = grad_y[g]^T @ x[g] (k_grouped: groups split the
tokens, which are the reduction there).
"""

from __future__ import annotations

import torch

from .ops import grouped_gemm


def _check(x: torch.Tensor, w: torch.Tensor, offsets: torch.Tensor) -> None:
    if x.dim() != 2 or w.dim() != 3:
        raise ValueError(f"grouped_mm takes x [M, K] and w [G, N, K]; got x "
                         f"{list(x.shape)} and w {list(w.shape)}")
    if x.shape[1] != w.shape[2]:
        raise ValueError(f"x has K = {x.shape[1]} but w has K = {w.shape[2]}")
    if offsets.dim() != 1 or offsets.shape[0] != w.shape[0] + 1:
        raise ValueError(f"offsets must be [G+1] = [{w.shape[0] + 1}], got "
                         f"{list(offsets.shape)}")
    if x.dtype != w.dtype or x.dtype not in (torch.bfloat16, torch.float16):
        raise TypeError(f"grouped_mm takes bf16 or f16 x and w of one dtype; got "
                        f"{x.dtype} and {w.dtype}")
    if offsets.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"offsets must be int32 or int64, got {offsets.dtype}")
    # The kernel's rules, checked here too so that the fake implementation
    # rejects what the real op would (the compiler's verifier says the same).
    for name, size in (("K", x.shape[1]), ("N", w.shape[1])):
        if size % 8:
            raise ValueError(f"grouped_mm needs {name} a multiple of 8 (rows of a multiple "
                             f"of 16 bytes for TMA), got {name} = {size}")
    if x.shape[0] > 2**31 - 1:
        raise ValueError(f"x has {x.shape[0]} rows; the kernel's 32-bit indices hold at "
                         f"most {2**31 - 1}")
    devices = {x.device, w.device, offsets.device}
    if len(devices) != 1:
        raise ValueError(f"x, w and offsets must be on one device, got "
                         f"{sorted(map(str, devices))}")


@torch.library.custom_op("ggc::grouped_mm", mutates_args=())
def grouped_mm(x: torch.Tensor, w: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """y[rows of g] = x[rows of g] @ w[g]^T for contiguous groups."""
    _check(x, w, offsets)
    return grouped_gemm(x.contiguous(), w.contiguous(), offsets=offsets.contiguous(),
                        out_dtype=x.dtype)


@grouped_mm.register_fake
def _(x, w, offsets):
    _check(x, w, offsets)
    return x.new_empty(x.shape[0], w.shape[1])


@torch.library.custom_op("ggc::grouped_mm_grad_x", mutates_args=())
def grouped_mm_grad_x(grad_y: torch.Tensor, w: torch.Tensor,
                      offsets: torch.Tensor) -> torch.Tensor:
    # w [G, N, K] read as the "kn" form of a product over N.
    return grouped_gemm(grad_y.contiguous(), w.contiguous(), offsets=offsets,
                        b_layout="kn", out_dtype=grad_y.dtype)


@grouped_mm_grad_x.register_fake
def _(grad_y, w, offsets):
    return grad_y.new_empty(grad_y.shape[0], w.shape[2])


@torch.library.custom_op("ggc::grouped_mm_grad_w", mutates_args=())
def grouped_mm_grad_w(grad_y: torch.Tensor, x: torch.Tensor,
                      offsets: torch.Tensor) -> torch.Tensor:
    # The tokens are the reduction: grad_y [T, N] and x [T, K] token-major.
    return grouped_gemm(grad_y.contiguous(), x.contiguous(), k_offsets=offsets,
                        out_dtype=torch.float32)


@grouped_mm_grad_w.register_fake
def _(grad_y, x, offsets):
    return x.new_empty(offsets.shape[0] - 1, grad_y.shape[1], x.shape[1],
                       dtype=torch.float32)


def _setup_context(ctx, inputs, output):
    x, w, offsets = inputs
    ctx.save_for_backward(x, w, offsets)


def _backward(ctx, grad_y):
    x, w, offsets = ctx.saved_tensors
    grad_x = grad_w = None
    if ctx.needs_input_grad[0]:
        grad_x = grouped_mm_grad_x(grad_y, w, offsets)
    if ctx.needs_input_grad[1]:
        grad_w = grouped_mm_grad_w(grad_y, x, offsets).to(w.dtype)
    return grad_x, grad_w, None


grouped_mm.register_autograd(_backward, setup_context=_setup_context)
