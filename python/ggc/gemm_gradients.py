"""grouped_gemm's backward (torch.ops.ggc.grouped_gemm under autograd):
its two gradients as calls of the op itself, stated once
(gradient_calls) and run either by the Python formula (setup_context,
backward) or, described per call (gradient_ops), by the torch ops' C++
autograd node (python/src/op_gradients.cpp)."""

from __future__ import annotations

from typing import Optional

import torch

from .ops import _from_torch_offsets, default_out_dtype


def _schema():
    """grouped_gemm's schema (registered by torch_ops before any call)."""
    return torch.ops.ggc.grouped_gemm.default._schema


def no_backward(inputs) -> Optional[str]:
    """Why grouped_gemm has no backward for these arguments, or None."""
    a, b, offsets, masked_m, m_indices, k_offsets, offs, a_scale, b_scale = inputs[:9]
    if offsets is None and (offs is None or b.dim() != 3):
        return "this layout (only contiguous groups: offsets, or offs with b [G, N, K])"
    if a_scale is not None or b_scale is not None:
        return "scaled (f8) inputs"
    # float32 on the CPU too, where ggc's reference backend runs its two
    # GEMMs (not enabled on CUDA: untested there).
    cpu_float32 = a.dtype == torch.float32 and a.device.type == "cpu"
    if (a.dtype not in (torch.bfloat16, torch.float16) and not cpu_float32) or (
            b.dtype != a.dtype):
        return f"a {a.dtype} and b {b.dtype} (only bf16 or f16, both alike; float32 on the CPU)"
    return None


class _Forward(int):
    """A gradient call's argument that is the forward's argument at this
    position (an int subclass, so that it is not taken for a constant)."""


_GRAD = object()  # a gradient call's argument that is the incoming gradient


def gradient_calls(b_layout: str, dtype: torch.dtype):
    """grouped_gemm's backward (contiguous groups by `offsets`, a and b of
    `dtype`, the incoming gradient cast to it) as calls of itself:
    [(input, keyword arguments)], each argument _GRAD, a _Forward position
    (0: a, 1: b, 2: offsets) or a constant. The input gradient writes zeros
    to rows outside every group (the kernel's, not what the memory held);
    the weight gradient reduces over each group's rows. Both are written
    in `dtype`."""
    rows, cols = (_GRAD, _Forward(0)) if b_layout == "nk" else (_Forward(0), _GRAD)
    return [(0, dict(a=_GRAD, b=_Forward(1), offsets=_Forward(2), out_dtype=dtype,
                     b_layout="kn" if b_layout == "nk" else "nk", zero_ungrouped=True)),
            (1, dict(a=rows, b=cols, k_offsets=_Forward(2), out_dtype=dtype))]


def setup_context(ctx, inputs, output):
    ctx.no_backward = no_backward(inputs)
    a, b, offsets, offs, b_layout = inputs[0], inputs[1], inputs[2], inputs[6], inputs[10]
    ctx.b_layout = b_layout
    if ctx.no_backward is None:
        if offsets is None:  # torch's convention, as the forward read it
            offsets = _from_torch_offsets(offs, b, None, None)[0]
        ctx.save_for_backward(a, b, offsets)


def backward(ctx, grad):
    if ctx.no_backward is not None:
        raise RuntimeError(f"ggc.grouped_gemm: no backward for {ctx.no_backward}")
    a, b, offsets = ctx.saved_tensors
    forward = (a.contiguous(), b.contiguous(), offsets)
    grad = grad.to(a.dtype).contiguous()
    grads = [None] * len(_schema().arguments)
    for input, call in gradient_calls(ctx.b_layout, a.dtype):
        if ctx.needs_input_grad[input]:
            grads[input] = torch.ops.ggc.grouped_gemm(**{
                name: grad if v is _GRAD else forward[v] if isinstance(v, _Forward) else v
                for name, v in call.items()})
    return tuple(grads)


def gradient_ops(*args):
    """torch_ops.lean_eager's gradient_ops for a grouped_gemm call that
    needs a gradient: gradient_calls as the C++ kernels' autograd node runs
    them,
    [(input, "ggc::grouped_gemm", sources, constants)] with every argument
    a source (_GRAD, a position of the forward's, or -2 - i for constant
    i), or None where the node cannot run the call's backward as
    backward would (torch's offs, inputs backward makes contiguous, an
    output, and so an incoming gradient, in a dtype other than a's, which
    backward casts: f16 inputs with the default bf16 output, or no
    backward at all)."""
    a, b, offsets, out_dtype = args[0], args[1], args[2], args[9]
    if (no_backward(args) is not None or offsets is None or not a.is_contiguous()
            or not b.is_contiguous() or default_out_dtype(out_dtype) != a.dtype):
        return None
    schema = _schema()
    ops = []
    for input, call in gradient_calls(args[10], a.dtype):
        sources, constants = [], []
        for argument in schema.arguments:
            value = call.get(argument.name, argument.default_value)
            if value is _GRAD:
                sources.append(-1)
            elif isinstance(value, _Forward):
                sources.append(int(value))
            else:
                sources.append(-2 - len(constants))
                constants.append(value)
        ops.append((input, "ggc::grouped_gemm", sources, constants))
    return ops
