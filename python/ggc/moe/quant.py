"""FP8 (e4m3) block quantisation in the layouts ggc's kernels read:
activations per row and 128-wide K block (1x128), weights per 128x128
block, scales f32 (DeepGEMM's sm90 recipe)."""

from __future__ import annotations

from typing import Tuple

import torch

FP8 = torch.float8_e4m3fn
FP8_MAX = 448.0
BLOCK = 128
# The columns of an FP8 operand's rows come in multiples of this: e4m3 rows
# of whole 16 bytes, as TMA reads them (a partial last scale block is fine).
FP8_ROW_ALIGNMENT = 16
# An all-zero block gets this amax instead of 0, so that its values scale
# to zeros rather than NaN.
_AMAX_FLOOR = 1e-12


def _padded(t: torch.Tensor, dims) -> torch.Tensor:
    """t with zeros appended along `dims` up to whole 128-wide blocks (the
    same tensor where they are whole already): a partial block's scale is
    its valid values' (zeros change no amax)."""
    pad = []
    for d in range(t.dim() - 1, -1, -1):
        pad += [0, -t.shape[d] % BLOCK if d in dims else 0]
    return torch.nn.functional.pad(t, pad) if any(pad) else t


def _divided_to_fp8(values: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """values / scale in f32, rounded to e4m3 as it is stored: the same
    bits as dividing and then casting, in one pass instead of two over an
    f32 copy (under torch.compile, the traced form: no out=)."""
    if torch.compiler.is_compiling():
        return (values / scale).to(FP8)
    q = torch.empty(values.shape, dtype=FP8, device=values.device)
    return torch.div(values, scale, out=q)


def _scaled_to_fp8(values: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """values * factor in f32, rounded to e4m3 as it is stored (one pass,
    as _divided_to_fp8)."""
    if torch.compiler.is_compiling():
        return (values * factor).to(FP8)
    q = torch.empty(values.shape, dtype=FP8, device=values.device)
    return torch.mul(values, factor, out=q)


def quantize_rows(x: torch.Tensor, name: str = "x") -> Tuple[torch.Tensor, torch.Tensor]:
    """x [R, K] -> (e4m3 [R, K], f32 scales [R, ceil(K/128)]), x ~ q * scale
    per row and 128-wide block of K (the last block may be partial). Each
    value is multiplied by the block's 448 / amax (one division a block,
    as DeepGEMM's per_token_cast_to_fp8 and gg.quantize_rows' kernel);
    the scale is amax times f32(1 / 448), as the kernels compute it."""
    if x.dim() != 2:
        raise ValueError(f"{name} must be [rows, K] to quantise, got shape {list(x.shape)}")
    rows, k = x.shape
    whole = _padded(x, (1,))
    blocks = whole.reshape(rows, whole.shape[1] // BLOCK, BLOCK)
    # max |x| of a block in one call (not abs, amax, then f32): exact either
    # way, and x * factor promotes to f32 itself, so x is never copied to f32.
    amax = torch.linalg.vector_norm(blocks, float("inf"), dim=-1,
                                    dtype=torch.float32).clamp_min(_AMAX_FLOOR)
    # Times f32(1 / 448), as the kernels do (and torch's division by a
    # scalar on CUDA): the same bits on the CPU, where torch divides.
    scale = amax * (1.0 / FP8_MAX)
    # An IEEE division (448 / amax as a scalar would be a reciprocal and a
    # multiply, two roundings).
    factor = torch.full_like(amax, FP8_MAX) / amax
    q = _scaled_to_fp8(blocks, factor.unsqueeze(-1)).view(rows, whole.shape[1])
    return (q if whole is x else q[:, :k].contiguous()), scale


# The f32 working copies quantize_weights makes at once: a few experts at a
# time, so that quantising a DeepSeek-V3-sized layer (15 GB of bf16 w13)
# needs about this much beside its output, not twice its size in f32.
_QUANTIZE_CHUNK_BYTES = 1 << 30


def quantize_weights(w: torch.Tensor, name: str = "w") -> Tuple[torch.Tensor, torch.Tensor]:
    """Expert weights [E, N, K] -> (e4m3 [E, N, K], f32 scales
    [E, ceil(N/128), ceil(K/128)]), one scale per 128x128 block (the last
    ones may be partial). Experts are quantised a few at a time (each on
    its own, so the bits do not depend on how many)."""
    if not isinstance(w, torch.Tensor) or w.dim() != 3:
        raise ValueError(f"{name} must be a [E, N, K] tensor to quantise, got "
                         f"{getattr(w, 'shape', type(w).__name__)}")
    if not w.is_floating_point() or w.dtype == FP8:
        raise TypeError(f"{name} must be a float tensor to quantise, got {w.dtype}")
    e, n, k = w.shape
    nb, kb = -(-n // BLOCK), -(-k // BLOCK)
    per_expert = nb * kb * BLOCK * BLOCK * 4
    step = max(1, _QUANTIZE_CHUNK_BYTES // max(1, per_expert))
    if torch.compiler.is_compiling() or step >= e:
        return _quantize_experts(w)
    q = torch.empty(w.shape, dtype=FP8, device=w.device)
    scale = torch.empty(e, nb, kb, dtype=torch.float32, device=w.device)
    for first in range(0, e, step):
        q[first:first + step], scale[first:first + step] = _quantize_experts(
            w[first:first + step])
    return q, scale


def _quantize_experts(w: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """quantize_weights of a [E, N, K] slice at once (f32 copies of it all)."""
    e, n, k = w.shape
    whole = _padded(w.float(), (1, 2))
    nb, kb = whole.shape[1] // BLOCK, whole.shape[2] // BLOCK
    blocks = whole.view(e, nb, BLOCK, kb, BLOCK)
    scale = blocks.abs().amax(dim=(2, 4)).clamp_min(_AMAX_FLOOR) / FP8_MAX
    q = _divided_to_fp8(blocks, scale[:, :, None, :, None]).view(e, nb * BLOCK, kb * BLOCK)
    return q[:, :n, :k].contiguous(), scale


def dequantize_weights(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """The f32 weights [E, N, K] that (q, 128x128 scales) stand for."""
    full = scale.repeat_interleave(BLOCK, dim=1).repeat_interleave(BLOCK, dim=2)
    return q.float() * full[:, :q.shape[1], :q.shape[2]]


def mn_major(scale: torch.Tensor, rows: torch.Tensor = None) -> torch.Tensor:
    """1x128 scales [R, K/128] (or their rows `rows`, gathered) in the M-major
    form the kernels read as "block_mn": [K/128, align4(M)], M = the rows
    taken (DeepGEMM's TMA-aligned layout; the padding columns are never
    read)."""
    m, kb = scale.shape if rows is None else (rows.shape[0], scale.shape[1])
    out = scale.new_empty(kb, (m + 3) // 4 * 4)
    if torch.compiler.is_compiling():  # the traced form: no out= into a view
        out[:, :m] = (scale if rows is None else scale.index_select(0, rows)).t()
    elif rows is None:
        out.narrow(1, 0, m).copy_(scale.t())
    else:  # gathered straight into place: one kernel, not a gather and a copy
        torch.index_select(scale.t(), 1, rows, out=out.narrow(1, 0, m))
    return out


def as_row_view(mn: torch.Tensor, m: int) -> torch.Tensor:
    """The [M, K/128] view of an M-major scale buffer (strides (1, align4(M))),
    as ggc.ops.grouped_gemm takes A's M-major block scales."""
    return mn[:, :m].t()
