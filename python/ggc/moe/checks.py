"""fused_moe's argument checks: every bad argument is an error that names
it and says what was expected, before anything is launched."""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

import torch

from .. import signature
from .activations import ACTIVATIONS, GATED
from .quant import BLOCK, FP8, FP8_ROW_ALIGNMENT


class Problem(NamedTuple):
    """The sizes of one fused_moe call."""
    tokens: int
    hidden: int
    intermediate: int
    experts: int
    top_k: int
    fp8: bool
    # The ids topk_ids may hold: E, or expert_map's length (global ids).
    id_range: int
    # Whether some experts are another rank's (expert_map): their routes
    # add nothing.
    mapped: bool = False


def _tensor(name: str, value, rank: int, what: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor {what}, got {type(value).__name__}")
    if value.dim() != rank:
        raise ValueError(f"{name} must be {what}, got shape {list(value.shape)}")
    return value


def check_fused_moe(x, w13, w2, topk_weights, topk_ids, activation, w13_scale,
                    w2_scale, x_scale=None, w13_bias=None, w2_bias=None,
                    expert_map=None) -> Problem:
    """The call's sizes, or the first problem with its arguments."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    _tensor("x", x, 2, "[T, H]")
    _tensor("w13", w13, 3, _W13_LAYOUT.get(activation, "[E, I, H]"))
    _tensor("w2", w2, 3, "[E, H, I]")
    _tensor("topk_ids", topk_ids, 2, "[T, top_k]")
    _tensor("topk_weights", topk_weights, 2, "[T, top_k]")
    tokens, hidden = x.shape
    experts, up_rows, _ = w13.shape
    intermediate = _check_weight_shapes(x, w13, w2, activation)
    top_k = topk_ids.shape[1]
    if tuple(topk_ids.shape) != (tokens, top_k) or top_k < 1:
        raise ValueError(f"topk_ids must be [T, top_k] with T = {tokens} (x's rows) and "
                         f"top_k >= 1, got shape {list(topk_ids.shape)}")
    if tuple(topk_weights.shape) != tuple(topk_ids.shape):
        raise ValueError(f"topk_weights must have topk_ids' shape {list(topk_ids.shape)}, "
                         f"got {list(topk_weights.shape)}")
    _check_dtypes(x, w13, w2, topk_weights, topk_ids, x_scale)
    fp8 = w13.dtype == FP8
    _check_scales(fp8, w13, w2, w13_scale, w2_scale)
    _check_x_scale(x, x_scale)
    _check_biases(w13, w2, w13_bias, w2_bias)
    id_range = _check_expert_map(expert_map, experts)
    _check_devices(x=x, w13=w13, w2=w2, topk_weights=topk_weights, topk_ids=topk_ids,
                   w13_scale=w13_scale, w2_scale=w2_scale, x_scale=x_scale,
                   w13_bias=w13_bias, w2_bias=w2_bias, expert_map=expert_map)
    for name, t in (("w13", w13), ("w2", w2)):
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (a copy per call would cost a pass "
                             f"over every expert's weights); call .contiguous() once")
    # TMA's rows are multiples of 16 bytes: 8 bf16 or 16 e4m3 elements
    # (block scales take a partial last block: H = 2,880 of gpt-oss).
    multiple = 16 if fp8 else 8
    for label, size in (("E (w13.shape[0])", experts), ("H (x.shape[1])", hidden),
                        ("I (w2.shape[2])", intermediate)):
        if size < 1:
            raise ValueError(f"{label} must be at least 1, got {size}")
    for label, size in (("H (x.shape[1])", hidden), ("I (w2.shape[2])", intermediate)):
        if size % multiple:
            raise ValueError(f"{label} = {size} must be a multiple of {multiple} "
                             f"({'e4m3' if fp8 else 'bf16'} rows of a multiple of 16 "
                             f"bytes, for TMA)")
    return Problem(tokens, hidden, intermediate, experts, top_k, fp8, id_range,
                   expert_map is not None)


def check_fp8_compute(compute_dtype, sizes, dtype) -> bool:
    """Whether compute_dtype asks for FP8 GEMMs on bf16 master weights
    (torch.float8_e4m3fn: ggc.training's recipe; None: the weights'
    dtype), or the problem with asking for it: `dtype` the activations'
    and weights', `sizes` {label: size} the hidden and intermediate
    sizes, which must be multiples of 16 (ggc.training.fp8_grouped_mm's
    e4m3 rows; the last scale blocks are partial where they are not of
    128)."""
    if compute_dtype is None:
        return False
    if compute_dtype != FP8:
        raise TypeError(f"compute_dtype must be None (the weights' dtype) or "
                        f"torch.float8_e4m3fn (FP8 GEMMs on bf16 weights), got {compute_dtype!r}")
    if dtype != torch.bfloat16:
        raise TypeError(f"compute_dtype=torch.float8_e4m3fn takes bf16 activations and "
                        f"weights, got {dtype}")
    for label, size in sizes.items():
        if size % FP8_ROW_ALIGNMENT:
            raise ValueError(f"compute_dtype=torch.float8_e4m3fn needs {label} = {size} a "
                             f"multiple of {FP8_ROW_ALIGNMENT} (e4m3 rows of whole 16 bytes)")
    return True


def check_compute_dtype(compute_dtype, problem: Problem, x) -> bool:
    """check_fp8_compute for a fused_moe call."""
    if compute_dtype is not None and problem.fp8:
        raise ValueError(f"compute_dtype={compute_dtype!r}: these weights are FP8 already "
                         f"(leave compute_dtype None; torch.float8_e4m3fn quantises bf16 "
                         f"master weights on each call)")
    if compute_dtype is not None and problem.mapped:
        raise ValueError(f"compute_dtype={compute_dtype!r} does not take an expert_map "
                         f"(ggc.moe.ExpertParallelMoE runs FP8 experts across ranks)")
    return check_fp8_compute(compute_dtype, {"H (x.shape[1])": problem.hidden,
                                             "I (w2.shape[2])": problem.intermediate}, x.dtype)


_W13_LAYOUT = {"swigluoai": "[E, 2I, H] (gate and up rows interleaved: gate even, up odd)"}
_W13_LAYOUT.update({name: "[E, 2I, H] (gate rows, then up rows)"
                    for name in GATED if name not in _W13_LAYOUT})


def _check_biases(w13, w2, w13_bias, w2_bias) -> None:
    """Expert biases (gpt-oss): w13_bias [E, N], w2_bias [E, H], bf16 or f32."""
    for name, weight, bias in (("w13_bias", w13, w13_bias), ("w2_bias", w2, w2_bias)):
        if bias is None:
            continue
        want = list(weight.shape[:2])
        if not isinstance(bias, torch.Tensor) or list(bias.shape) != want:
            raise ValueError(f"{name} must be [E, {'N' if name == 'w13_bias' else 'H'}] = "
                             f"{want} (one bias row per expert), got "
                             f"{list(getattr(bias, 'shape', [])) or type(bias).__name__}")
        if bias.dtype not in (torch.bfloat16, torch.float32):
            raise TypeError(f"{name} must be bfloat16 or float32, got {bias.dtype}")


def _check_expert_map(expert_map, experts: int) -> int:
    """The range of topk_ids: expert_map's length (global ids) if given."""
    if expert_map is None:
        return experts
    if not isinstance(expert_map, torch.Tensor) or expert_map.dim() != 1 or (
            expert_map.shape[0] < experts):
        raise ValueError(f"expert_map must be [global E] (the local index of each global "
                         f"expert, -1 where another rank holds it), at least E = {experts} "
                         f"long, got {list(getattr(expert_map, 'shape', [])) or type(expert_map).__name__}")
    if expert_map.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"expert_map must be int32 or int64, got {expert_map.dtype}")
    return expert_map.shape[0]


_CHECKED = {}
_MAX_CHECKED = 256


def check_fused_moe_once(x, w13, w2, topk_weights, topk_ids, activation, w13_scale,
                         w2_scale, x_scale=None, w13_bias=None, w2_bias=None,
                         expert_map=None) -> Tuple[Problem, Optional[tuple]]:
    """check_fused_moe, run once per call signature (the tensors'
    ggc.signature, and the activation): every check but
    the device rule reads those alone, so a signature that passed once
    passes again. The device rule runs every call (a test replaces it).
    While torch.compile traces, every check runs (a cache is not traced).
    Returns the sizes and the signature (None while tracing)."""
    if torch.compiler.is_compiling():
        return check_fused_moe(x, w13, w2, topk_weights, topk_ids, activation, w13_scale,
                               w2_scale, x_scale, w13_bias, w2_bias, expert_map), None
    tensors_key = signature.of((x, w13, w2, topk_weights, topk_ids, w13_scale, w2_scale,
                                x_scale, w13_bias, w2_bias, expert_map))
    try:
        key = None if tensors_key is None else (activation, tensors_key)
        problem = None if key is None else _CHECKED.get(key)
    except TypeError:  # an unhashable activation
        key = problem = None
    if problem is None:
        problem = check_fused_moe(x, w13, w2, topk_weights, topk_ids, activation,
                                  w13_scale, w2_scale, x_scale, w13_bias, w2_bias, expert_map)
        if key is not None:
            if len(_CHECKED) >= _MAX_CHECKED:
                _CHECKED.clear()
            _CHECKED[key] = problem
        return problem, key
    require_device(x.device)
    return problem, key


def _check_weight_shapes(x, w13, w2, activation) -> int:
    """The intermediate size I."""
    hidden = x.shape[1]
    experts, up_rows, w13_hidden = w13.shape
    if w13_hidden != hidden:
        raise ValueError(f"w13 must be [E, N, H] with H = {hidden} (x.shape[1]), got shape "
                         f"{list(w13.shape)}")
    if activation in GATED:
        if up_rows % 2:
            raise ValueError(f"activation {activation!r} is gated: w13 must be [E, 2I, H] "
                             f"(gate rows, then up rows), got an odd N = {up_rows}")
        intermediate = up_rows // 2
    else:
        intermediate = up_rows
    if tuple(w2.shape) != (experts, hidden, intermediate):
        raise ValueError(f"w2 must be [E, H, I] = [{experts}, {hidden}, {intermediate}] "
                         f"(E and I from w13 {list(w13.shape)}, H from x), got "
                         f"{list(w2.shape)}")
    return intermediate


def _check_dtypes(x, w13, w2, topk_weights, topk_ids, x_scale) -> None:
    if x_scale is not None:
        if x.dtype != FP8 or w13.dtype != FP8:
            raise TypeError(f"x_scale is given, so x must be float8_e4m3fn (quantised 1x128) "
                            f"for float8_e4m3fn weights; got x {x.dtype}, w13 {w13.dtype}")
    elif w13.dtype == torch.float32:
        _check_float32(x)
    elif x.dtype != torch.bfloat16:
        raise TypeError(f"x must be bfloat16 (FP8 layers quantise it themselves, or take "
                        f"x in float8_e4m3fn with its x_scale), got {x.dtype}")
    if w13.dtype not in (torch.bfloat16, FP8, torch.float32):
        raise TypeError(f"w13 must be bfloat16 or float8_e4m3fn (float32 on the CPU), got "
                        f"{w13.dtype}")
    if w2.dtype != w13.dtype:
        raise TypeError(f"w2 must have w13's dtype {w13.dtype}, got {w2.dtype}")
    if topk_ids.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"topk_ids must be int32 or int64, got {topk_ids.dtype}")
    if not topk_weights.is_floating_point():
        raise TypeError(f"topk_weights must be floating point, got {topk_weights.dtype}")


def _check_float32(x) -> None:
    """float32 layers run on the CPU only, on ggc's reference backend:
    the CUDA kernels of the layer (the down projection's bf16 output, the
    SwiGLU and combine kernels) are bfloat16 and FP8."""
    if x.dtype != torch.float32:
        raise TypeError(f"x must be float32 for float32 weights, got {x.dtype}")
    if x.device.type != "cpu":
        raise TypeError(f"a float32 layer runs on the CPU only (ggc's reference backend); "
                        f"on {x.device.type} ggc's MoE kernels are bfloat16 and FP8: convert "
                        f"the layer with .to(torch.bfloat16)")


def _check_scales(fp8, w13, w2, w13_scale, w2_scale) -> None:
    if not fp8:
        for name, scale in (("w13_scale", w13_scale), ("w2_scale", w2_scale)):
            if scale is not None:
                raise ValueError(f"{name} is given but the weights are {w13.dtype}: scales "
                                 f"go with float8_e4m3fn weights")
        return
    for name, weight, scale in (("w13_scale", w13, w13_scale), ("w2_scale", w2, w2_scale)):
        e, n, k = weight.shape
        want = (e, -(-n // BLOCK), -(-k // BLOCK))
        if not isinstance(scale, torch.Tensor):
            raise TypeError(f"{name} must be the f32 128x128 block scales {list(want)} of "
                            f"the FP8 weights, got {type(scale).__name__}")
        if tuple(scale.shape) != want:
            raise ValueError(f"{name} must be [E, ceil(N/128), ceil(K/128)] = {list(want)}, "
                             f"got {list(scale.shape)}")
        if scale.dtype != torch.float32:
            raise TypeError(f"{name} must be float32, got {scale.dtype}")


def _check_x_scale(x, x_scale) -> None:
    if x_scale is None:
        return
    want = [x.shape[0], -(-x.shape[1] // BLOCK)]
    if not isinstance(x_scale, torch.Tensor) or list(x_scale.shape) != want:
        raise ValueError(f"x_scale must be x's f32 1x128 block scales [T, ceil(H/128)] = "
                         f"{want}, got {list(getattr(x_scale, 'shape', [])) or type(x_scale).__name__}")
    if x_scale.dtype != torch.float32:
        raise TypeError(f"x_scale must be float32, got {x_scale.dtype}")


def _check_devices(**named) -> None:
    device = named["x"].device
    require_device(device)
    for name, t in named.items():
        if t is not None and t.device != device:
            raise ValueError(f"{name} is on {t.device} but x on {device}: every tensor "
                             f"of the layer must be on one device")


def require_device(device: torch.device) -> None:
    """The layer runs on CUDA devices, and on the CPU by ggc's reference
    backend (ggc.reference: each launch in torch, the PTX helper kernels'
    torch fallbacks)."""
    if device.type not in ("cuda", "cpu"):
        raise ValueError(f"x must be on a CUDA device, or on the CPU for ggc's reference "
                         f"backend, but is on {device}")


def check_ids(topk_ids: torch.Tensor, experts: int) -> None:
    """Reads topk_ids back (a host sync) and names the first id outside
    [0, E)."""
    bad = (topk_ids < 0) | (topk_ids >= experts)
    if bool(bad.any()):
        t, j = bad.nonzero()[0].tolist()
        raise ValueError(f"topk_ids[{t}, {j}] = {int(topk_ids[t, j])} is not an expert: "
                         f"ids must be in [0, E = {experts}) (E = w13.shape[0], or "
                         f"expert_map's length)")


def check_expert_map(expert_map: torch.Tensor, experts: int) -> None:
    """Reads expert_map back (a host sync) and names the first entry that
    is neither -1 nor a local expert in [0, E), or two entries that name
    the same local expert."""
    bad = (expert_map < -1) | (expert_map >= experts)
    if bool(bad.any()):
        g = int(bad.nonzero()[0, 0])
        raise ValueError(f"expert_map[{g}] = {int(expert_map[g])} is neither -1 (another "
                         f"rank's expert) nor a local expert in [0, E = {experts}) "
                         f"(E = w13.shape[0])")
    local = expert_map[expert_map >= 0]
    values, counts = torch.unique(local, return_counts=True)
    if bool((counts > 1).any()):  # two global experts would share one's weights
        shared = int(values[counts > 1][0])
        first, second = (expert_map == shared).nonzero().flatten().tolist()[:2]
        raise ValueError(f"expert_map[{first}] and expert_map[{second}] are both local "
                         f"expert {shared}: each local expert is one global expert")


def validating(validate: Optional[bool], x: torch.Tensor) -> bool:
    """Whether to check topk_ids on the host: `validate`, else $GGC_VALIDATE,
    never while torch.compile traces or a CUDA graph captures (both forbid
    the sync; an explicit validate=True there is an error)."""
    from .. import groups
    if validate is False:  # whatever the context: no capture or tracing query
        return False
    if validate is not None and validate is not True:  # "no" would be truthy
        raise TypeError(f"validate must be None, True or False, got {validate!r}")
    busy = torch.compiler.is_compiling() or (
        x.is_cuda and torch.cuda.is_current_stream_capturing())
    if validate is None:
        return groups.VALIDATE_BY_DEFAULT and not busy
    if validate and busy:
        raise ValueError("validate=True reads topk_ids back to the host, which torch.compile "
                         "and CUDA-graph capture forbid: pass validate=False there")
    return bool(validate)
