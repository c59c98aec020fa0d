"""DeepGEMM 2.x's grouped GEMMs (m-grouped contiguous and masked, k-grouped)
on ggc: each a thin translation into one `ggc.ops.grouped_gemm` call. The
rules they share are in the package's docstring (ggc.deepgemm)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from .. import groups as _groups
from .. import ops
from .. import signature as _signature
from .fast import fast_key, launched, remember
from .utils.layout import (_ALIGNMENT, _check_sf, _is_mn_major_tma_aligned,
                           get_mn_major_tma_aligned_tensor)

# ---------------------------------------------------------------------------
# Argument translation
# ---------------------------------------------------------------------------

def _recipes(sfb, recipe, recipe_a, recipe_b) -> Tuple[tuple, tuple]:
    """(gran_m, gran_k) of A and (gran_n, gran_k) of B, with DeepGEMM's
    default: (1, 128, 128) for f32 scales, (1, 1, 128) for packed UE8M0."""
    import torch
    if (recipe_a is None) != (recipe_b is None):
        raise ValueError("recipe_a and recipe_b are given together or not at all")
    if recipe is None and recipe_a is None:
        recipe = (1, 128, 128) if sfb.dtype == torch.float32 else (1, 1, 128)
    if (recipe is None) == (recipe_a is None):
        raise ValueError("pass either recipe or recipe_a + recipe_b, not both")
    if recipe is not None:
        gm, gn, gk = tuple(recipe)
        return (gm, gk), (gn, gk)
    return tuple(recipe_a), tuple(recipe_b)


def _scales(sfa, sfb, groups_a, m, n, k, num_groups, recipe, recipe_a, recipe_b):
    """DeepGEMM's scale pair as ggc.ops.grouped_gemm takes it: (a_scale,
    a_kind, b_scale, b_kind)."""
    import torch
    ops.require_tensor("a's scales", sfa)
    ops.require_tensor("b's scales", sfb)
    ra, rb = _recipes(sfb, recipe, recipe_a, recipe_b)
    if sfa.dtype != sfb.dtype:
        raise ValueError(f"a's and b's scales must both be float32 or both int32 (packed UE8M0), "
                         f"got {sfa.dtype} and {sfb.dtype}")
    if sfa.dtype == torch.float32:
        if ra != (1, 128) or rb != (128, 128):
            raise NotImplementedError(
                f"recipe: ggc takes float32 scales as (1, 128) per token for A and (128, "
                f"128) blocks for B (DeepGEMM's sm90 recipe (1, 128, 128)); got A {ra}, B {rb}")
        _check_sf("a's scales", sfa, groups_a, m, k, *ra)
        _check_sf("b's scales", sfb, num_groups, n, k, *rb)
        if not (sfa.stride(-1) == 1 or _is_mn_major_tma_aligned(sfa)):
            sfa = get_mn_major_tma_aligned_tensor(sfa)  # DeepGEMM copies too
        if not (sfb.is_contiguous() or sfb.transpose(-1, -2).is_contiguous()):
            raise ValueError("b's scales must be contiguous, or contiguous after "
                             "transposing the last two dimensions")
        return sfa, "block", sfb, "block"
    if ra[0] != 1 or rb[0] != 1 or ra[1] != rb[1] or ra[1] not in (32, 128):
        raise NotImplementedError(
            f"recipe: ggc takes packed UE8M0 scales per row of A and column of B with one "
            f"K block of 32 or 128 on both sides (ggc's MX scales); got A {ra}, B {rb}")
    _check_sf("a's scales", sfa, groups_a, m, k, *ra)
    _check_sf("b's scales", sfb, num_groups, n, k, *rb)
    kind = f"mx{ra[1]}"
    return sfa.contiguous(), kind, sfb.contiguous(), kind


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(message)


def _fp8_pairs(a, b):
    """DeepGEMM's FP8 operands, each a pair (the tensor, its scales), as
    ((x, sx), (w, sw)); a ValueError naming the argument otherwise."""
    for name, value in (("a", a), ("b", b)):
        if not (isinstance(value, (tuple, list)) and len(value) == 2):
            got = (f"a {type(value).__name__} of {len(value)}"
                   if isinstance(value, (tuple, list)) else type(value).__name__)
            raise ValueError(f"{name} must be a pair (the FP8 tensor, its scales), as "
                             f"DeepGEMM takes it; got {got}")
    return tuple(a), tuple(b)


def _check_operands(a, b, d, masked: bool, fp8: bool) -> Tuple[int, int, int, int]:
    """DeepGEMM's shape/dtype rules for `[.., M, K] @ [G, N, K].mT -> d`;
    returns (G, M, N, K)."""
    import torch
    for name, t in (("a", a), ("b", b), ("d", d)):
        ops.require_tensor(name, t)
    want = torch.float8_e4m3fn if fp8 else torch.bfloat16
    for name, t in (("a", a), ("b", b)):
        _require(t.dtype == want, f"{name} must be {want}, got {t.dtype}"
                 + (" (ggc has no FP4 operands)" if t.dtype == torch.int8 else ""))
    _require(a.dim() == (3 if masked else 2), f"a must be {'[G, M, K]' if masked else '[M, K]'}"
             f", got shape {list(a.shape)}")
    _require(b.dim() == 3, f"b must be [G, N, K], got shape {list(b.shape)}")
    _require(a.stride(-1) == 1,
             f"a must be K-major (stride 1 along K), got strides {list(a.stride())}")
    # ggc's f8 wgmma reads B only along K; bf16 B may also be MN-major.
    _require(b.stride(-1) == 1 or (not fp8 and b.stride(-2) == 1),
             "b must be K-major (stride 1 along K)" + ("" if fp8 else " or MN-major")
             + f", got strides {list(b.stride())}")
    g, n, k = b.shape
    m = a.shape[-2]
    _require(a.shape[-1] == k, f"a has K = {a.shape[-1]} but b has K = {k}")
    if masked:
        _require(a.shape[0] == g, f"a has {a.shape[0]} groups but b has {g}")
    want_d = [g, m, n] if masked else [m, n]
    _require(list(d.shape) == want_d, f"d must be {want_d}, got {list(d.shape)}")
    _require(d.dtype == torch.bfloat16, f"d must be bfloat16, got {d.dtype}")
    _require(d.is_contiguous(), "d must be contiguous (ggc stores whole rows of N)")
    _require(n > 0 and k > 0 and g > 0, f"N, K and G must be positive, got {n}, {k}, {g}")
    return g, m, n, k


def _positive_hint(expected_m, m: int) -> int:
    """DeepGEMM's masked calls: expected_m (a host int) and M_max are positive."""
    import operator
    try:
        expected_m = operator.index(expected_m)
    except TypeError:
        raise TypeError(f"expected_m must be an int, got {type(expected_m).__name__}") from None
    _require(expected_m > 0 and m > 0, f"expected_m and M must be positive, got "
             f"{expected_m} and {m}")
    return expected_m


def _group_tensor(name: str, t, numel: int) -> None:
    import torch
    ops.require_tensor(name, t)
    _require(t.dtype == torch.int32, f"{name} must be int32, got {t.dtype}")
    _require(t.is_contiguous() and t.dim() == 1 and t.numel() == numel,
             f"{name} must be a contiguous [{numel}] tensor, got shape {list(t.shape)}")


_CHECKED = {}  # a call's signature -> what its checks found (_checked)
_MAX_CHECKED = 512


def _checked(what: str, tensors, options, check):
    """check() (the argument checks and translation of one call), once per
    signature: the tensors' (ggc.signature: all the checks read) and the
    options (recipes, flags). check returns (what the
    call needs, whether that holds for every call of the signature: not
    when it holds a copy made for this call). Nothing is kept while
    torch.compile traces or a dispatch mode runs (symbolic sizes)."""
    bridge = ops._torch_ops
    key = None
    if bridge is not None and not bridge.tracing():
        tensors_key = _signature.of(tensors)
        try:
            key = None if tensors_key is None else (what, tensors_key, options)
            found = None if key is None else _CHECKED.get(key)
        except TypeError:  # an unhashable recipe
            key = found = None
        if found is not None:
            return found
    found, keep = check()
    if key is not None and keep:
        if len(_CHECKED) >= _MAX_CHECKED:
            _CHECKED.clear()
        _CHECKED[key] = found
    return found


def _kept_scales(m: int, scales, sx, sw, x, w):
    """An FP8 call's translation as _checked keeps it: (M, a's scale, its
    kind, b's scale, its kind, whether x and w are contiguous), a scale
    None where it is the call's own tensor; kept when neither was copied."""
    a_scale, a_kind, b_scale, b_kind = scales
    found = (m, None if a_scale is sx else a_scale, a_kind, None if b_scale is sw else b_scale,
             b_kind, x.is_contiguous() and w.is_contiguous())
    return found, found[1] is None and found[3] is None


def _psum_to_m_indices(psum, m: int):
    """DeepGEMM's psum layout (`psum[g]`: the end of group g; group g starts at
    `align(psum[g-1], 128)`) as ggc's padded layout: each row's group, -1 in
    the gaps and past the end. A few small device kernels and an [M] int32
    tensor; no host synchronisation (so CUDA-graph capturable) but under
    validation (GGC_VALIDATE), which reads the ends."""
    import torch
    if _groups.VALIDATE_BY_DEFAULT:  # m_indices made from unsorted ends mis-group rows
        found = psum.tolist()
        _require(all(0 <= e <= m for e in found) and found == sorted(found),
                 f"grouped_layout (psum layout) must hold non-decreasing group ends "
                 f"within M = {m}, got {found[:8]}")
    ends = psum.long()
    starts = torch.cat([ends.new_zeros(1), (ends[:-1] + _ALIGNMENT - 1) // _ALIGNMENT * _ALIGNMENT])
    rows = torch.arange(m, device=psum.device)
    group = torch.searchsorted(ends, rows, right=True)  # first group ending past the row
    inside = (group < ends.numel()) & (rows >= starts[group.clamp(max=ends.numel() - 1)])
    return torch.where(inside, group, -1).to(torch.int32)


def _check_grouped_layout(grouped_layout, m: int, g: int, use_psum_layout: bool,
                          expected_m) -> None:
    if use_psum_layout:
        _group_tensor("grouped_layout (psum layout)", grouped_layout, g)
        return
    _require(expected_m is None, "expected_m_for_psum_layout goes with use_psum_layout=True")
    _group_tensor("grouped_layout (m_indices)", grouped_layout, m)


# ---------------------------------------------------------------------------
# M-grouped GEMMs
# ---------------------------------------------------------------------------

def m_grouped_fp8_gemm_nt_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None,
                                     recipe_b=None, compiled_dims: str = "nk",
                                     disable_ue8m0_cast: bool = False,
                                     use_psum_layout: bool = False,
                                     ensure_zero_padding: bool = True,
                                     expected_m_for_psum_layout: Optional[int] = None) -> None:
    """DeepGEMM's `m_grouped_fp8_gemm_nt_contiguous` (alias of
    `m_grouped_fp8_fp4_gemm_nt_contiguous`): `d[r] = a[r] @ b[g].T` for each
    row r of group g, with a = (x [M, K] e4m3, sx), b = (w [G, N, K] e4m3,
    sw), d [M, N] bf16. `grouped_layout` is m_indices [M] int32 (row's group,
    -1 for padding; each group starts on a multiple of 128 rows) or, with
    `use_psum_layout`, [G] int32 ends (group g: rows `align(psum[g-1], 128)
    .. psum[g]`), which ggc turns into m_indices on the device first.
    -> `ggc.ops.grouped_gemm(x, w, m_indices=..., a_scale, b_scale, out=d)`."""
    (x, sx), (w, sw) = _fp8_pairs(a, b)
    key = None if use_psum_layout else fast_key(
        ("fp8 contiguous", recipe, recipe_a, recipe_b, expected_m_for_psum_layout),
        (x, sx, w, sw, d, grouped_layout))
    if launched(key, (x, w, None, None, grouped_layout, None, None, sx, sw, d)):
        return

    def check():
        g, m, n, k = _check_operands(x, w, d, masked=False, fp8=True)
        _check_grouped_layout(grouped_layout, m, g, use_psum_layout,
                              expected_m_for_psum_layout)
        return _kept_scales(m, _scales(sx, sw, None, m, n, k, g, recipe, recipe_a, recipe_b),
                            sx, sw, x, w)

    m, a_scale, a_kind, b_scale, b_kind, as_given = _checked(
        "fp8 contiguous", (x, sx, w, sw, d, grouped_layout),
        (recipe, recipe_a, recipe_b, use_psum_layout, expected_m_for_psum_layout), check)
    if m == 0:  # DeepGEMM does nothing either
        return
    m_indices = _psum_to_m_indices(grouped_layout, m) if use_psum_layout else grouped_layout
    if not as_given:
        x, w = x.contiguous(), w.contiguous()
    a_scale = sx if a_scale is None else a_scale
    # MN-major f32 scales of A ride with each stage as one TMA box of the
    # tile's rows; K-major ones would ride as boxes four K blocks wide or in
    # the warps' slots, both slower on the GPU than this copy (ggc's
    # gg.transpose_scales kernel) and the MN-major kernel together (H200:
    # docs/performance.md, fortieth and forty-fourth sessions). DeepGEMM
    # transposes them too. The copy is each call's own, the fast path's too:
    # the signature says whether to copy, never what.
    copied = a_kind == "block" and not _is_mn_major_tma_aligned(a_scale)
    if copied:
        a_scale = get_mn_major_tma_aligned_tensor(a_scale)
    call = (x, w, None, None, m_indices, None, None, a_scale,
            sw if b_scale is None else b_scale, d)
    ops.grouped_gemm(x, w, m_indices=m_indices, a_scale=call[7], a_scale_kind=a_kind,
                     b_scale=call[8], b_scale_kind=b_kind, out=d)
    if key is not None and as_given:
        remember(key, call, ops.plan_options(a_scale_kind=a_kind, b_scale_kind=b_kind),
                 _copy_a_scale if copied else None)


def _copy_a_scale(call):
    """The fast path's copy of A's K-major scales (slot 7), as the full
    call makes it."""
    return call[:7] + (get_mn_major_tma_aligned_tensor(call[7]),) + call[8:]


def m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m: int, recipe=None,
                                 recipe_a=None, recipe_b=None, compiled_dims: str = "nk",
                                 disable_ue8m0_cast: bool = False) -> None:
    """DeepGEMM's `m_grouped_fp8_gemm_nt_masked`: `d[g, :masked_m[g]] =
    a[g, :masked_m[g]] @ b[g].T`, with a = (x [G, M_max, K] e4m3, sx
    [G, M_max, ceil(K/128)]), b = (w [G, N, K] e4m3, sw), d [G, M_max, N]
    bf16, masked_m [G] int32 on the device, expected_m a host hint (> 0).
    -> `ggc.ops.grouped_gemm(x, w, masked_m=..., expected_m=..., out=d)`."""
    (x, sx), (w, sw) = _fp8_pairs(a, b)
    key = fast_key(("fp8 masked", recipe, recipe_a, recipe_b, expected_m, type(expected_m)),
                   (x, sx, w, sw, d, masked_m))
    if launched(key, (x, w, None, masked_m, None, None, None, sx, sw, d)):
        return

    def check():
        g, m, n, k = _check_operands(x, w, d, masked=True, fp8=True)
        _group_tensor("masked_m", masked_m, g)
        _positive_hint(expected_m, m)
        return _kept_scales(m, _scales(sx, sw, g, m, n, k, g, recipe, recipe_a, recipe_b),
                            sx, sw, x, w)

    m, a_scale, a_kind, b_scale, b_kind, as_given = _checked(
        "fp8 masked", (x, sx, w, sw, d, masked_m), (recipe, recipe_a, recipe_b), check)
    expected_m = _positive_hint(expected_m, m)  # a value: checked on every call
    if not as_given:
        x, w = x.contiguous(), w.contiguous()
    call = (x, w, None, masked_m, None, None, None, sx if a_scale is None else a_scale,
            sw if b_scale is None else b_scale, d)
    ops.grouped_gemm(x, w, masked_m=masked_m, expected_m=expected_m, a_scale=call[7],
                     a_scale_kind=a_kind, b_scale=call[8], b_scale_kind=b_kind, out=d)
    if key is not None and as_given:
        remember(key, call, ops.plan_options(expected_m=expected_m, a_scale_kind=a_kind,
                                             b_scale_kind=b_kind))


def _bf16_weights(b) -> Tuple[object, str]:
    """B as ggc takes it: [G, N, K] K-major ("nk"), or an MN-major view of one
    (DeepGEMM's sm90 bf16 kernels take both) as its [G, K, N] storage ("kn")."""
    if b.stride(-1) != 1:
        return b.transpose(1, 2).contiguous(), "kn"  # a view of contiguous storage: no copy
    return b.contiguous(), "nk"


def m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims: str = "nk",
                                      use_psum_layout: bool = False,
                                      ensure_zero_padding: bool = True,
                                      expected_m_for_psum_layout: Optional[int] = None) -> None:
    """DeepGEMM's `m_grouped_bf16_gemm_nt_contiguous`: as the FP8 call, with
    a [M, K], b [G, N, K] (K-major, or MN-major) and d [M, N] all bf16, no
    scales. -> `ggc.ops.grouped_gemm(a, b, m_indices=..., b_layout=..., out=d)`."""
    def check():
        g, m, n, k = _check_operands(a, b, d, masked=False, fp8=False)
        _check_grouped_layout(grouped_layout, m, g, use_psum_layout,
                              expected_m_for_psum_layout)
        return m, True

    key = None if use_psum_layout else fast_key(("bf16 contiguous", expected_m_for_psum_layout),
                                                (a, b, d, grouped_layout))
    if launched(key, (a, b, None, None, grouped_layout, None, None, None, None, d)):
        return
    m = _checked("bf16 contiguous", (a, b, d, grouped_layout),
                 (use_psum_layout, expected_m_for_psum_layout), check)
    if m == 0:
        return
    m_indices = _psum_to_m_indices(grouped_layout, m) if use_psum_layout else grouped_layout
    w, b_layout = _bf16_weights(b)
    call = (a.contiguous(), w, None, None, m_indices, None, None, None, None, d)
    ops.grouped_gemm(call[0], w, m_indices=m_indices, b_layout=b_layout, out=d)
    if key is not None and call[0] is a and w.data_ptr() == b.data_ptr():
        remember(key, call, ops.plan_options(b_layout=b_layout))


def m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m: int,
                                  compiled_dims: str = "nk") -> None:
    """DeepGEMM's `m_grouped_bf16_gemm_nt_masked`: as the FP8 call, with
    a [G, M_max, K], b [G, N, K] and d [G, M_max, N] all bf16, no scales.
    -> `ggc.ops.grouped_gemm(a, b, masked_m=..., expected_m=..., out=d)`."""
    def check():
        g, m, n, k = _check_operands(a, b, d, masked=True, fp8=False)
        _group_tensor("masked_m", masked_m, g)
        return m, True

    key = fast_key(("bf16 masked", expected_m, type(expected_m)), (a, b, d, masked_m))
    if launched(key, (a, b, None, masked_m, None, None, None, None, None, d)):
        return
    expected_m = _positive_hint(expected_m, _checked("bf16 masked", (a, b, d, masked_m), (),
                                                     check))
    w, b_layout = _bf16_weights(b)
    call = (a.contiguous(), w, None, masked_m, None, None, None, None, None, d)
    ops.grouped_gemm(call[0], w, masked_m=masked_m, expected_m=expected_m,
                     b_layout=b_layout, out=d)
    if key is not None and call[0] is a and w.data_ptr() == b.data_ptr():
        remember(key, call, ops.plan_options(b_layout=b_layout, expected_m=expected_m))


# ---------------------------------------------------------------------------
# K-grouped GEMMs (MoE weight gradients)
# ---------------------------------------------------------------------------

def _k_groups(ks_cpu, grouped_layout, d, use_psum_layout: bool) -> List[int]:
    """DeepGEMM's k-grouped metadata: ks_cpu (host) and grouped_layout [G]
    int32 (device), both each group's K, a multiple of 128."""
    import torch
    if use_psum_layout:
        raise NotImplementedError("use_psum_layout: ggc's k-grouped calls take K-grouped "
                                  "tokens without gaps (DeepGEMM's psum form is sm100-only)")
    ops.require_tensor("d", d)
    _require(d.dim() == 3 and d.dtype == torch.float32 and d.is_contiguous(),
             f"d must be a contiguous float32 [G, M, N], got {d.dtype} {list(d.shape)}")
    g = d.shape[0]
    _require(ks_cpu is not None and len(ks_cpu) == g,
             f"ks_cpu must list the K of each of the {g} groups")
    bad = [kg for kg in ks_cpu if kg < 0 or kg % _ALIGNMENT]
    _require(not bad, f"each ks_cpu entry must be a multiple of {_ALIGNMENT} (its scale "
             f"blocks are then those of the concatenated K), got {bad[:4]}")
    _group_tensor("grouped_layout", grouped_layout, g)
    ks = [int(kg) for kg in ks_cpu]
    if _groups.VALIDATE_BY_DEFAULT:  # the kernel reads grouped_layout, the checks ks_cpu
        found = grouped_layout.tolist()
        _require(found == ks, f"grouped_layout must hold ks_cpu's values {ks[:8]}, got "
                 f"{found[:8]}")
    return ks


def _k_offsets(grouped_layout):
    """[G+1] token offsets from the per-group K on the device (what DeepGEMM's
    kernel reads), so no host copy is needed."""
    import torch
    return torch.cat([grouped_layout.new_zeros(1), grouped_layout.cumsum(0, dtype=torch.int32)])


def _k_scale(name: str, sf, rows: int, kb: int, blocks_first: bool):
    """A k-grouped f32 scale as ggc takes it, `[rows, sum_k/128]`: row-major,
    or the transposed view of `[sum_k/128, rows]` storage (no copy), else
    copied. DeepGEMM's tn form passes `[sum_k/128, rows]` (`blocks_first`)."""
    import torch
    ops.require_tensor(name, sf)
    _require(sf.dtype == torch.float32, f"{name} must be float32 (ggc takes no packed "
             f"UE8M0 k-grouped scales in DeepGEMM's layout), got {sf.dtype}")
    want = [kb, rows] if blocks_first else [rows, kb]
    _require(list(sf.shape) == want, f"{name} must be {want} (sum(ks)/128 blocks by "
             f"{rows} rows), got {list(sf.shape)}")
    sf = sf.T if blocks_first else sf
    if sf.is_contiguous() or sf.T.is_contiguous():
        return sf
    return sf.contiguous()


def _accumulate(d, c, run) -> None:
    """d = c + A @ B (DeepGEMM's `D = C + A @ B`) by `run(out, accumulate)`,
    which writes or adds to every group's [M, N] of out (an empty group:
    zeros, or nothing added). c aliasing d is added to in place, by the
    kernel; another c is copied to d first."""
    if c is None:
        run(d, False)
        return
    if not _check_c(d, c):
        d.copy_(c)
    run(d, True)


def _check_c(d, c) -> bool:
    """c as DeepGEMM's `D = C + A @ B` takes it: d's shape (never
    broadcast), and d's strides where it shares d's storage; whether it
    does."""
    ops.require_tensor("c", c)
    if c.data_ptr() == d.data_ptr():
        _require(c.shape == d.shape and c.stride() == d.stride(),
                 "c sharing d's storage must have d's shape and strides")
        return True
    _require(c.shape == d.shape, f"c must be {list(d.shape)}, got {list(c.shape)}")
    return False


def _check_k_grouped_fp8(x, y, recipe) -> None:
    import torch
    ops.require_tensor("a[0]", x)
    ops.require_tensor("b[0]", y)
    if tuple(recipe) != (1, 1, 128):
        raise NotImplementedError(f"recipe: ggc's k-grouped FP8 takes float32 (1, 1, 128) "
                                  f"scales, got {tuple(recipe)}")
    for name, t in (("a", x), ("b", y)):
        _require(t.dtype == torch.float8_e4m3fn, f"{name} must be float8_e4m3fn, got {t.dtype}")


def _trivial(d, c, m: int, n: int, sum_k: int) -> bool:
    """DeepGEMM's early return: nothing to do for an empty d; d = c (or
    zeros) when no group has tokens."""
    if m == 0 or n == 0:
        return True
    if sum_k == 0:
        if c is None:
            d.zero_()
        elif not _check_c(d, c):
            d.copy_(c)
        return True
    return False


def _k_grouped_fp8(a_km, sfa, b_km, sfb, d, c, grouped_layout) -> None:
    offsets = _k_offsets(grouped_layout)
    hint = ops.expected_group_tokens(a_km.shape[1], d.shape[0])
    _accumulate(d, c, lambda out, accumulate: ops.grouped_gemm(
        a_km, b_km, k_offsets=offsets, k_major=True, a_scale=sfa, b_scale=sfb, out=out,
        accumulate=accumulate, expected_m=hint))


def k_grouped_fp8_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c=None,
                                     recipe=(1, 1, 128), compiled_dims: str = "mn",
                                     use_psum_layout: bool = False) -> None:
    """DeepGEMM's `k_grouped_fp8_gemm_tn_contiguous` (sm100-only there):
    `d[g] = c[g] + a_g.T @ b_g` over group g's tokens, with a = (x [sum_k, M]
    e4m3, sx [sum_k/128, M] f32), b = (y [sum_k, N] e4m3, sy [sum_k/128, N]),
    d and c [G, M, N] f32 (c may be d; DeepGEMM requires c, ggc also takes
    None), ks_cpu the host list and grouped_layout [G] int32 of each group's
    K (multiples of 128). Cost: ggc's f8 wgmma reads only along K, so both
    operands are transposed to K-major first (one read and write of each);
    `ggc.ops.grouped_gemm(k_offsets=..., k_major=True)` on K-major operands
    avoids it. -> that call."""
    (x, sx), (y, sy) = _fp8_pairs(a, b)
    _check_k_grouped_fp8(x, y, recipe)
    ks = _k_groups(ks_cpu, grouped_layout, d, use_psum_layout)
    g, m, n = d.shape
    sum_k = sum(ks)
    _require(list(x.shape) == [sum_k, m] and list(y.shape) == [sum_k, n],
             f"a must be [sum(ks) = {sum_k}, M = {m}] and b [{sum_k}, N = {n}], got "
             f"{list(x.shape)} and {list(y.shape)}")
    kb = sum_k // _ALIGNMENT
    sfa = _k_scale("a's scales", sx, m, kb, blocks_first=True)
    sfb = _k_scale("b's scales", sy, n, kb, blocks_first=True)
    if not _trivial(d, c, m, n, sum_k):
        _k_grouped_fp8(x.T.contiguous(), sfa, y.T.contiguous(), sfb, d, c, grouped_layout)


def k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks_cpu, grouped_layout, c=None,
                                     recipe=(1, 1, 128), compiled_dims: str = "mn",
                                     use_psum_layout: bool = False) -> None:
    """DeepGEMM's `k_grouped_fp8_gemm_nt_contiguous` (its sm90 weight
    gradient): as the tn call, but each group's operands are K-major blocks
    laid one after another: a = (x, sx) with x holding `[M, k_g]` row-major
    per group (sum(ks) x M elements) and sx `[M, sum_k/128]`; b likewise with
    N. Cost: the blocks are gathered into one K-major `[M, sum_k]` (and
    `[N, sum_k]`) first, one read and write of each operand."""
    (x, sx), (y, sy) = _fp8_pairs(a, b)
    _check_k_grouped_fp8(x, y, recipe)
    ks = _k_groups(ks_cpu, grouped_layout, d, use_psum_layout)
    g, m, n = d.shape
    sum_k = sum(ks)
    _require(x.numel() == sum_k * m and y.numel() == sum_k * n and x.is_contiguous()
             and y.is_contiguous(), f"a and b must be contiguous with sum(ks) x M = "
             f"{sum_k * m} and sum(ks) x N = {sum_k * n} elements, got {x.numel()} and "
             f"{y.numel()}")
    kb = sum_k // _ALIGNMENT
    sfa = _k_scale("a's scales", sx, m, kb, blocks_first=False)
    sfb = _k_scale("b's scales", sy, n, kb, blocks_first=False)
    if not _trivial(d, c, m, n, sum_k):
        _k_grouped_fp8(_gather_k_major(x, ks, m), sfa, _gather_k_major(y, ks, n), sfb, d, c,
                       grouped_layout)


def _gather_k_major(flat, ks: Sequence[int], rows: int):
    """Per-group `[rows, k_g]` blocks, one after another, as one K-major
    `[rows, sum(ks)]` (one copy)."""
    import torch
    flat = flat.reshape(-1)
    out = torch.empty(rows, sum(ks), dtype=flat.dtype, device=flat.device)
    start = col = 0
    for kg in ks:  # copy_, not cat: plain copies take every f8 dtype
        out[:, col:col + kg].copy_(flat[start:start + rows * kg].view(rows, kg))
        start, col = start + rows * kg, col + kg
    return out


def k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c=None,
                                      compiled_dims: str = "mn",
                                      use_psum_layout: bool = False) -> None:
    """DeepGEMM's `k_grouped_bf16_gemm_tn_contiguous`: `d[g] = c[g] + a_g.T @
    b_g`, a [sum_k, M] and b [sum_k, N] bf16 token-major, d and c [G, M, N]
    f32, ks multiples of 128. ggc reads this layout as it is (no copy).
    -> `ggc.ops.grouped_gemm(a, b, k_offsets=...)`."""
    import torch
    ops.require_tensor("a", a)
    ops.require_tensor("b", b)
    ks = _k_groups(ks_cpu, grouped_layout, d, use_psum_layout)
    g, m, n = d.shape
    sum_k = sum(ks)
    _require(a.dtype == torch.bfloat16 and b.dtype == torch.bfloat16,
             f"a and b must be bfloat16, got {a.dtype} and {b.dtype}")
    _require(list(a.shape) == [sum_k, m] and list(b.shape) == [sum_k, n],
             f"a must be [sum(ks) = {sum_k}, M = {m}] and b [{sum_k}, N = {n}], got "
             f"{list(a.shape)} and {list(b.shape)}")
    if _trivial(d, c, m, n, sum_k):
        return
    offsets = _k_offsets(grouped_layout)
    _accumulate(d, c, lambda out, accumulate: ops.grouped_gemm(
        a.contiguous(), b.contiguous(), k_offsets=offsets, out=out, accumulate=accumulate))


def m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims: str = "nk",
                                      use_psum_layout: bool = False,
                                      ensure_zero_padding: bool = True,
                                      expected_m_for_psum_layout: Optional[int] = None) -> None:
    """DeepGEMM's `m_grouped_bf16_gemm_nn_contiguous`: b is given as
    [G, K, N] (read as it is, ggc's "kn" weights)."""
    m_grouped_bf16_gemm_nt_contiguous(a, b.transpose(1, 2), d, grouped_layout, compiled_dims,
                                      use_psum_layout, ensure_zero_padding,
                                      expected_m_for_psum_layout)


# DeepGEMM's other names for the same calls.
m_grouped_fp8_fp4_gemm_nt_contiguous = m_grouped_fp8_gemm_nt_contiguous
m_grouped_fp8_fp4_gemm_nt_masked = m_grouped_fp8_gemm_nt_masked
fp8_m_grouped_gemm_nt_masked = m_grouped_fp8_gemm_nt_masked
bf16_m_grouped_gemm_nt_masked = m_grouped_bf16_gemm_nt_masked
