"""DeepGEMM's `deep_gemm.utils.layout` (and the alignment settings of its
top level): group alignment, TMA-aligned sizes and the scale-factor
layouts ggc's kernels read."""

from __future__ import annotations

from typing import Optional

_ALIGNMENT = 128  # rows per group start; ggc's padded layout and DeepGEMM's sm90 block M


def get_mk_alignment_for_contiguous_layout() -> int:
    """DeepGEMM's `get_mk_alignment_for_contiguous_layout()`: each group of
    the contiguous (m_indices, psum) layouts starts on a multiple of this
    many rows, and each k-grouped group holds a multiple of it in K: 128,
    as DeepGEMM on sm90."""
    return _ALIGNMENT


def get_theoretical_mk_alignment_for_contiguous_layout(expected_m: Optional[int] = None) -> int:
    """DeepGEMM's namesake: 128 on sm90 (the hint matters only on sm100)."""
    return _ALIGNMENT


def set_mk_alignment_for_contiguous_layout(new_value: int) -> None:
    """DeepGEMM's setter. ggc's padded layout tiles assume 128-row groups, so
    only 128 is accepted (what DeepGEMM's sm90 kernels use)."""
    if new_value != _ALIGNMENT:
        raise ValueError(f"set_mk_alignment_for_contiguous_layout: ggc supports only "
                         f"{_ALIGNMENT} (DeepGEMM's sm90 value), got {new_value}")


get_m_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout
get_k_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout


def get_tma_aligned_size(x: int, element_size: int) -> int:
    """DeepGEMM's `get_tma_aligned_size`: x rounded up to 16 bytes of elements."""
    per = 16 // element_size
    return -(-x // per) * per


def _is_mn_major_tma_aligned(sf) -> bool:
    mn, kb = sf.shape[-2:]
    aligned = get_tma_aligned_size(mn, sf.element_size())
    return (sf.stride(-2) == 1 and sf.stride(-1) == aligned
            and (sf.dim() == 2 or sf.stride(-3) == aligned * kb))


def get_mn_major_tma_aligned_tensor(sf):
    """DeepGEMM's `get_mn_major_tma_aligned_tensor`: f32 scales `[.., MN, SF_K]`
    as a view of `[.., SF_K, align4(MN)]` storage (strides `(1, align4(MN))`),
    the MN-major layout ggc's "block_mn" kind reads. Returned as is when
    already in it, else copied."""
    import torch
    if sf.dtype != torch.float32 or sf.dim() not in (2, 3):
        raise ValueError(f"sf must be a 2-D or 3-D float32 tensor, got {sf.dim()}-D "
                         f"{sf.dtype}")
    if _is_mn_major_tma_aligned(sf):
        return sf
    mn, kb = sf.shape[-2:]
    aligned = get_tma_aligned_size(mn, 4)
    # On CUDA one kernel that ggc compiles (gg.transpose_scales) writes the
    # storage, padding included; else torch's copy, and a fill of the
    # padding only where there is some.
    from ...moe.quant_kernel import transposed_scales
    storage = transposed_scales(sf, aligned)
    if storage is None:
        storage = torch.empty(*sf.shape[:-2], kb, aligned, dtype=sf.dtype, device=sf.device)
        storage[..., :mn].copy_(sf.transpose(-1, -2))
        if aligned != mn:
            storage[..., mn:].zero_()
    return storage.transpose(-1, -2)[..., :mn, :]


def _check_sf(name: str, sf, groups: Optional[int], mn: int, k: int, gran_mn: int,
              gran_k: int) -> None:
    """DeepGEMM's shape rule for a scale tensor: `[G?, ceil(MN/gran_mn),
    ceil(K/gran_k)]`, or ceil(K/(4 gran_k)) int32 words of packed UE8M0."""
    import torch
    if sf.dtype not in (torch.float32, torch.int32):
        raise ValueError(f"{name} must be float32 (or int32 packed UE8M0), got {sf.dtype}")
    words = 4 if sf.dtype == torch.int32 else 1
    want = ([] if groups is None else [groups]) + [-(-mn // gran_mn), -(-k // (gran_k * words))]
    if list(sf.shape) != want:
        raise ValueError(f"{name} must be {want} for MN = {mn}, K = {k} and granularity "
                         f"({gran_mn}, {gran_k}){' in int32 words' if words == 4 else ''}, "
                         f"got {list(sf.shape)}")


def transform_sf_into_required_layout(sf, mn: int, k: int, recipe, num_groups=None,
                                      is_sfa=None, disable_ue8m0_cast: bool = False,
                                      psum_layout=None):
    """DeepGEMM's `transform_sf_into_required_layout`, for the layouts ggc's
    kernels take. `recipe` is `(gran_m, gran_n, gran_k)` with `is_sfa`
    picking the side, or `(gran_mn, gran_k)` without it. f32 `(1, 128)` ->
    MN-major TMA-aligned (as DeepGEMM on sm90); f32 `(128, 128)` -> checked
    and returned as is; int32 packed UE8M0 `(1, 32 or 128)` -> K-major words
    (ggc's MX layout; DeepGEMM's sm100 keeps them MN-major). `psum_layout`
    and `disable_ue8m0_cast` change nothing for these (sm90 casts nothing)."""
    import torch
    recipe = tuple(recipe)
    if len(recipe) == 3:
        if is_sfa is None:
            raise ValueError("a 3-element recipe needs is_sfa (which side's granularity)")
        gran_mn, gran_k = (recipe[0] if is_sfa else recipe[1]), recipe[2]
    elif len(recipe) == 2:
        if is_sfa is not None:
            raise ValueError("is_sfa goes with a 3-element recipe only")
        gran_mn, gran_k = recipe
    else:
        raise ValueError(f"recipe must have 2 or 3 elements, got {recipe}")
    _check_sf("sf", sf, num_groups, mn, k, gran_mn, gran_k)
    if sf.dtype == torch.float32 and (gran_mn, gran_k) == (1, 128):
        return get_mn_major_tma_aligned_tensor(sf)
    if sf.dtype == torch.float32 and (gran_mn, gran_k) == (128, 128):
        if not (sf.is_contiguous() or sf.transpose(-1, -2).is_contiguous()):
            raise ValueError("128x128 scales must be contiguous, or contiguous after "
                             "transposing the last two dimensions")
        return sf
    if sf.dtype == torch.int32 and gran_mn == 1 and gran_k in (32, 128):
        return sf.contiguous()
    raise NotImplementedError(
        f"no ggc scale layout for {sf.dtype} scales with granularity ({gran_mn}, {gran_k}): "
        f"ggc takes float32 (1, 128) and (128, 128), int32 UE8M0 (1, 32) and (1, 128)")


