"""DeepGEMM's `deep_gemm.utils.math`: the integer helpers and the FP8
casts its callers quantise with (e4m3, f32 scales = amax / 448 of each
block, or those rounded up to a power of two with `use_ue8m0`)."""

from __future__ import annotations

from typing import Tuple

_E4M3_MAX = 448.0


def ceil_div(x: int, y: int) -> int:
    return (x + y - 1) // y


def align(x: int, y: int) -> int:
    return ceil_div(x, y) * y


def _cast_blocks(x, block_rows: int, gran_k: int, use_ue8m0: bool):
    """x [R, K] in blocks of block_rows x gran_k (the edges padded with
    zeros): (e4m3 [R, K], f32 scales [ceil(R/block_rows), ceil(K/gran_k)])."""
    import torch
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D [rows, K], got shape {list(x.shape)}")
    rows, k = x.shape
    padded = x.new_zeros(align(rows, block_rows), align(k, gran_k))
    padded[:rows, :k] = x
    blocks = padded.float().view(padded.shape[0] // block_rows, block_rows,
                                 padded.shape[1] // gran_k, gran_k)
    amax = blocks.abs().amax(dim=(1, 3)).clamp_min(1e-4)
    scale = amax / _E4M3_MAX
    if use_ue8m0:
        scale = torch.pow(2.0, torch.ceil(torch.log2(scale)))
    q = (blocks / scale[:, None, :, None]).to(torch.float8_e4m3fn)
    return q.view(padded.shape)[:rows, :k].contiguous(), scale


def per_token_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128) -> Tuple[object, object]:
    """x [M, K] -> (e4m3 [M, K], f32 scales [M, ceil(K/gran_k)]) per row and
    gran_k-wide block (DeepGEMM's A-side recipe (1, gran_k))."""
    return _cast_blocks(x, 1, gran_k, use_ue8m0)


def per_block_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128) -> Tuple[object, object]:
    """x [N, K] -> (e4m3 [N, K], f32 scales [ceil(N/128), ceil(K/gran_k)]) per
    128 x gran_k block (DeepGEMM's B-side recipe)."""
    return _cast_blocks(x, 128, gran_k, use_ue8m0)
