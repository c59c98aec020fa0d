"""FlashInfer's grouped GEMM entry points on ggc's kernels (drop-ins).

- `SegmentGEMMWrapper` (`flashinfer.gemm.SegmentGEMMWrapper`): segment GEMM
  over token-packed rows, each segment with its own (or a selected) weight.
- `moe_gemm_mxfp8_nt_groupwise`: MXFP8 zero-padding grouped GEMM.

Each translates its arguments into one `ggc.ops.grouped_gemm` call; what
FlashInfer accepts and ggc cannot serve raises ValueError naming the
argument, before anything is launched.
"""

from __future__ import annotations

from . import ops


class SegmentGEMMWrapper:
    """FlashInfer's `SegmentGEMMWrapper(float_workspace_buffer, backend="auto")`.

    `run(x, weights, batch_size, weight_column_major, out=None,
    seg_lens=None, seg_indptr=None, weight_indices=None)` computes, for each
    segment i < batch_size of the token-packed rows of x,

        y[seg_indptr[i]:seg_indptr[i+1]] = x[seg_indptr[i]:seg_indptr[i+1]] @ W_i

    with W_i = weights[i], or weights[weight_indices[i]] when weight_indices
    is given. weights is [num_weights, d_out, d_in] when weight_column_major
    (ggc's "nk", the NT form) and [num_weights, d_in, d_out] otherwise ("kn").
    seg_indptr ([batch_size + 1], seg_indptr[0] = 0 in FlashInfer's docs)
    wins over seg_lens ([batch_size]), which is turned into it on the device.
    x is [rows, d_in]; y, allocated as zeros when `out` is None (bf16 for f8
    x, else x's dtype), is [rows, d_out]; rows outside every segment are
    never written. Returns y.

    ggc needs no workspace: the buffer is kept (as FlashInfer does) and
    unused. Cost: with weight_indices on the GPU, the selected weights are
    gathered into a [batch_size, ...] stack first (one read and write of
    batch_size weight matrices); ggc runs one weight per group, and checking
    for the identity would need a host synchronisation. On the CPU an identity
    weight_indices gathers nothing.
    """

    def __init__(self, float_workspace_buffer, backend: str = "auto") -> None:
        if backend not in ("auto", "sm90"):
            raise ValueError(f"backend must be 'auto' or 'sm90' (ggc's kernels are Hopper's), "
                             f"got {backend!r}")
        self._float_workspace_buffer = float_workspace_buffer
        self.backend = backend

    def reset_workspace_buffer(self, float_workspace_buffer, int_workspace_buffer) -> None:
        """FlashInfer's namesake; ggc uses neither buffer."""
        self._float_workspace_buffer = float_workspace_buffer
        self._int_workspace_buffer = int_workspace_buffer

    def run(self, x, weights, batch_size: int, weight_column_major: bool, out=None,
            seg_lens=None, seg_indptr=None, weight_indices=None):
        import torch
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 0:
            raise ValueError(f"batch_size must be an int >= 0, got {batch_size!r}")
        for name, t in (("seg_lens", seg_lens), ("seg_indptr", seg_indptr),
                        ("weight_indices", weight_indices)):
            _integer_tensor(name, t)
        b_layout = "nk" if weight_column_major else "kn"
        _check_shapes(x, weights, b_layout)
        d_out = weights.shape[1] if weight_column_major else weights.shape[2]
        offsets = _segment_offsets(batch_size, seg_lens, seg_indptr)
        w = _segment_weights(weights, batch_size, weight_indices)
        if out is None:
            dtype = torch.bfloat16 if ops.is_f8(x.dtype) else x.dtype
            out = torch.zeros(x.shape[0], d_out, dtype=dtype, device=x.device)
        elif tuple(out.shape) != (x.shape[0], d_out):
            raise ValueError(f"out must be {(x.shape[0], d_out)} (x's rows by d_out), got "
                             f"{tuple(out.shape)}")
        if x.shape[0] == 0 or batch_size == 0:
            return out
        return ops.grouped_gemm(x.contiguous(), w, offsets=offsets, b_layout=b_layout, out=out)

    forward = run


def _integer_tensor(name: str, t) -> None:
    """None, or an integer tensor: a float one would be truncated into
    lengths, offsets or indices."""
    import torch
    if t is None:
        return
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of integers, got {type(t).__name__}")
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"{name} must hold integers, got {t.dtype}")


def _check_shapes(x, weights, b_layout: str) -> None:
    if x.dim() != 2 or weights.dim() != 3:
        raise ValueError(f"x must be [rows, d_in] and weights 3-D, got {list(x.shape)} and "
                         f"{list(weights.shape)}")
    d_in = weights.shape[2] if b_layout == "nk" else weights.shape[1]
    if x.shape[1] != d_in:
        raise ValueError(f"x has d_in = {x.shape[1]} but weights have d_in = {d_in} "
                         f"(weight_column_major={b_layout == 'nk'})")
    if ops.is_f8(x.dtype) and b_layout == "kn":
        raise ValueError("f8 x needs weight_column_major=True: ggc's f8 kernels read the "
                         "weights along d_in")


def _segment_offsets(batch_size: int, seg_lens, seg_indptr):
    """[batch_size + 1] offsets: seg_indptr (which FlashInfer prefers), or the
    running sum of seg_lens, on the device."""
    import torch
    if seg_indptr is not None:
        if seg_indptr.dim() != 1 or seg_indptr.numel() < batch_size + 1:
            raise ValueError(f"seg_indptr must hold batch_size + 1 = {batch_size + 1} "
                             f"offsets, got shape {list(seg_indptr.shape)}")
        offsets = seg_indptr[:batch_size + 1]
    elif seg_lens is not None:
        if seg_lens.dim() != 1 or seg_lens.numel() < batch_size:
            raise ValueError(f"seg_lens must hold batch_size = {batch_size} lengths, got "
                             f"shape {list(seg_lens.shape)}")
        lens = seg_lens[:batch_size].long()
        offsets = torch.cat([lens.new_zeros(1), lens.cumsum(0)])
    else:
        raise ValueError("either seg_lens or seg_indptr must be given")
    if offsets.dtype not in (torch.int32, torch.int64):
        offsets = offsets.long()
    return offsets.contiguous()


def _segment_weights(weights, batch_size: int, weight_indices):
    """One weight matrix per segment, [batch_size, ...]: a view of the first
    batch_size, or the gathered selection."""
    import torch
    if weight_indices is None:
        if weights.shape[0] < batch_size:
            raise ValueError(f"weights holds {weights.shape[0]} matrices, fewer than the "
                             f"batch_size = {batch_size} segments (pass weight_indices)")
        return weights[:batch_size].contiguous()
    if weight_indices.dim() != 1 or weight_indices.numel() < batch_size:
        raise ValueError(f"weight_indices must hold batch_size = {batch_size} indices, got "
                         f"shape {list(weight_indices.shape)}")
    from . import groups
    index = weight_indices[:batch_size].long()
    if index.device.type == "cpu":
        if bool((index == torch.arange(batch_size)).all()) and weights.shape[0] >= batch_size:
            return weights[:batch_size].contiguous()
    # On the GPU the range is read back only when validating (a host sync):
    # an index out of range trips index_select's device assert there.
    if (index.device.type == "cpu" or groups.VALIDATE_BY_DEFAULT) and index.numel() and (
            int(index.min()) < 0 or int(index.max()) >= weights.shape[0]):
        raise ValueError(f"weight_indices must be in [0, {weights.shape[0]}), got values "
                         f"from {int(index.min())} to {int(index.max())}")
    return weights.index_select(0, index.to(weights.device)).contiguous()


def moe_gemm_mxfp8_nt_groupwise(a, b, a_scale, b_scale, m_indptr,
                                scale_granularity_mnk=(1, 1, 128), scale_major_mode="MN",
                                backend="cute", out=None, out_dtype=None):
    """FlashInfer's signature: MXFP8 zero-padding grouped GEMM. a [cum_m, K]
    e4m3 token-packed, b [G, N, K] e4m3, a_scale int32
    [(cum_m + 3G)/4*4, ceil(K/(4 k_gran))] (each group's rows start on a
    multiple of 4), b_scale int32 [G, N, ceil(K/(4 k_gran))], m_indptr [G+1]
    int32. Returns out [cum_m, N] (bf16)."""
    import torch
    for name, t in (("a", a), ("b", b), ("a_scale", a_scale), ("b_scale", b_scale),
                    ("m_indptr", m_indptr)):
        ops.require_tensor(name, t)
    if out is not None and out_dtype is not None and out.dtype != out_dtype:
        raise ValueError(f"out is {out.dtype} but out_dtype says {out_dtype}: give one, or "
                         f"both alike")
    try:
        granularity = tuple(scale_granularity_mnk)
    except TypeError:
        granularity = scale_granularity_mnk
    if granularity not in ((1, 1, 32), (1, 1, 128)):
        raise ValueError(f"scale_granularity_mnk must be (1, 1, 32) or (1, 1, 128), got "
                         f"{granularity}")
    if scale_major_mode != "MN":
        raise ValueError(f"scale_major_mode must be 'MN' (per-token scales), got "
                         f"{scale_major_mode!r}")
    if backend != "cute":
        raise ValueError(f"backend must be 'cute', got {backend!r}")
    if a_scale.dtype != torch.int32 or b_scale.dtype != torch.int32:
        raise TypeError(f"a_scale and b_scale must be int32 (four UE8M0 exponents each), "
                        f"got {a_scale.dtype} and {b_scale.dtype}")
    kind = f"mx{granularity[2]}"
    return ops.grouped_gemm(a, b, offsets=m_indptr, a_scale=a_scale, b_scale=b_scale,
                            out=out, out_dtype=out_dtype or torch.bfloat16,
                            a_scale_kind=kind, b_scale_kind=kind)
