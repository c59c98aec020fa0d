"""DeepGEMM 2.x's dense GEMMs on ggc's kernels: `d = a @ b.T (+ c)` as one
group of ggc's grouped GEMM.

a is [M, K] and b [N, K] as DeepGEMM sees them; `_nt` takes each either
K-major or MN-major (by strides), and the `_nn`, `_tn` and `_tt` forms take
b (`n`), a (`t`) or both already transposed ([K, N], [K, M]), as DeepGEMM
does. d is [M, N] bf16 or f32; with `c` (any of d's shape, d itself too),
d = c + a @ b.T rounded once. FP8 (`fp8_gemm_nt`): a = (x e4m3 [M, K],
sx f32 [M, ceil(K/128)]), b = (w e4m3 [N, K], sw f32 [ceil(N/128),
ceil(K/128)]), both K-major as on sm90 (DeepGEMM's sm90 FP8 kernels take
no other: the other forms raise NotImplementedError). `cublaslt_gemm_*`
are DeepGEMM's cuBLASLt baselines, here torch's matmul (cuBLAS).
"""

from __future__ import annotations

from .. import ops
from .fast import fast_key, launched, remember
from .grouped import _checked, _fp8_pairs, _kept_scales, _require, _scales

_SPANS = {}


def _span(rows: int, device):
    """[0, rows] int32 on the device: one group of every row, made once per
    (rows, device) outside a CUDA-graph capture (by a kernel, so a capture
    may make its own)."""
    import torch
    key = (rows, str(device))
    span = _SPANS.get(key)
    if span is None:
        span = torch.arange(2, device=device, dtype=torch.int32) * rows
        capturing = span.is_cuda and torch.cuda.is_current_stream_capturing()
        if not capturing and len(_SPANS) < 256 and (
                not torch._subclasses.fake_tensor.is_fake(span)):
            _SPANS[key] = span
    return span


def _check_dense(a, b, d, c, fp8: bool):
    """DeepGEMM's dense rules for a [M, K] @ b [N, K].T -> d [M, N]; (M, N, K)."""
    import torch
    want = torch.float8_e4m3fn if fp8 else torch.bfloat16
    for name, t in (("a", a), ("b", b)):
        _require(isinstance(t, torch.Tensor) and t.dim() == 2,
                 f"{name} must be a 2-D tensor, got {getattr(t, 'shape', type(t).__name__)}")
        _require(t.dtype == want, f"{name} must be {want}, got {t.dtype}")
        _require(t.stride(1) == 1 or t.stride(0) == 1,
                 f"{name} must be K-major or MN-major, got strides {list(t.stride())}")
    (m, k), (n, kb) = a.shape, b.shape
    _require(k == kb, f"a has K = {k} but b has K = {kb}")
    _require(list(d.shape) == [m, n], f"d must be [M, N] = {[m, n]}, got {list(d.shape)}")
    _require(d.dtype in (torch.bfloat16, torch.float32),
             f"d must be bfloat16 or float32, got {d.dtype}")
    _require(d.is_contiguous(), "d must be contiguous")
    if c is not None:
        _require(list(c.shape) == [m, n], f"c must be [M, N] = {[m, n]}, got {list(c.shape)}")
    return m, n, k


def _k_major(t) -> bool:
    return t.stride(1) == 1 and (t.shape[0] == 1 or t.stride(0) >= t.shape[1])


def _weights(b, scaled: bool):
    """b [N, K] as ggc's one-group weights: [1, N, K] ("nk"), or for an
    MN-major bf16 b its [K, N] storage ("kn")."""
    if _k_major(b) or scaled:
        return b.contiguous().unsqueeze(0), "nk"
    return b.t().contiguous().unsqueeze(0), "kn"


def _product(a, b, **scales):
    """a @ b.T [M, N] in f32 by ggc, for a and b K-major or MN-major (bf16)."""
    import torch
    if _k_major(a):
        w, layout = _weights(b, bool(scales))
        return ops.grouped_gemm(a.contiguous(), w, offsets=_span(a.shape[0], a.device),
                                b_layout=layout, out_dtype=torch.float32, **scales)
    if not _k_major(b):  # both MN-major: one k-group of token-major operands
        return ops.grouped_gemm(a.t().contiguous(), b.t().contiguous(),
                                k_offsets=_span(a.shape[1], a.device))[0]
    # a MN-major, b K-major: d.T = b @ a.T, a's [K, M] storage as the weights.
    return ops.grouped_gemm(b.contiguous(), a.t().contiguous().unsqueeze(0),
                            offsets=_span(b.shape[0], a.device), b_layout="kn",
                            out_dtype=torch.float32).t()


def _into(d, c, a, b, key=None, **scales) -> None:
    """d = (c +) a @ b.T, rounded once into d: straight into d where ggc's
    layout is d's (a K-major, no c), else through an f32 product. `key`:
    the call's fast_key, under which a straight launch is remembered."""
    import torch
    m, n = d.shape
    if m == 0 or n == 0:
        return
    if a.shape[1] == 0:
        d.copy_(c) if c is not None else d.zero_()
        return
    if c is None and _k_major(a):
        w, layout = _weights(b, bool(scales))
        span = _span(m, a.device)
        ops.grouped_gemm(a.contiguous(), w, offsets=span, b_layout=layout, out=d, **scales)
        if key is not None and w.data_ptr() == b.data_ptr() and a.is_contiguous():
            remember(key, (a, w, span, None, None, None, None, scales.get("a_scale"),
                           scales.get("b_scale"), d),
                     ops.plan_options(b_layout=layout,
                                      a_scale_kind=scales.get("a_scale_kind"),
                                      b_scale_kind=scales.get("b_scale_kind")))
        return
    product = _product(a, b, **scales)
    if c is None:
        d.copy_(product)
    else:
        torch.add(product, c, out=d)


def bf16_gemm_nt(a, b, d, c=None, compiled_dims: str = "nk") -> None:
    """DeepGEMM's `bf16_gemm_nt`: d = a @ b.T (+ c), a [M, K], b [N, K]
    bf16 (each K- or MN-major), d [M, N] bf16 or f32. `compiled_dims` is
    DeepGEMM's JIT hint, unused."""
    key = fast_key("bf16", (a, b, d), c)
    if launched(key, (a, b, None, None, None, None, None, None, None, d)):
        return
    _checked("bf16 dense", _given(a, b, d, c), (),
             lambda: (_check_dense(a, b, d, c, fp8=False), True))
    _into(d, c, a, b, key)


def bf16_gemm_nn(a, b, d, c=None, compiled_dims: str = "nk") -> None:
    """DeepGEMM's `bf16_gemm_nn`: b is given as [K, N]."""
    bf16_gemm_nt(a, b.t(), d, c, compiled_dims)


def bf16_gemm_tn(a, b, d, c=None, compiled_dims: str = "mn") -> None:
    """DeepGEMM's `bf16_gemm_tn`: a is given as [K, M], b as [K, N]."""
    bf16_gemm_nt(a.t(), b.t(), d, c, compiled_dims)


def bf16_gemm_tt(a, b, d, c=None, compiled_dims: str = "mn") -> None:
    """DeepGEMM's `bf16_gemm_tt`: a is given as [K, M]."""
    bf16_gemm_nt(a.t(), b, d, c, compiled_dims)


def fp8_gemm_nt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None,
                compiled_dims: str = "nk", disable_ue8m0_cast: bool = False) -> None:
    """DeepGEMM's `fp8_gemm_nt` (alias `fp8_fp4_gemm_nt`) on sm90: d = a @ b.T
    (+ c), a = (x [M, K], sx [M, ceil(K/128)]), b = (w [N, K], sw
    [ceil(N/128), ceil(K/128)]), e4m3 K-major with f32 scales (or packed
    UE8M0 words, ggc's MX scales), d [M, N] bf16 or f32."""
    (x, sx), (w, sw) = _fp8_pairs(a, b)
    key = fast_key(("fp8", recipe, recipe_a, recipe_b), (x, sx, w, sw, d), c)
    if launched(key, (x, w, None, None, None, None, None, sx, sw, d)):
        return

    def check():
        m, n, k = _check_dense(x, w, d, c, fp8=True)
        _require(_k_major(x) and _k_major(w), "sm90 FP8 operands must be K-major (as "
                 "DeepGEMM's sm90 kernels take them)")
        one_group = sw.unsqueeze(0)
        scales = _scales(sx, one_group, None, m, n, k, 1, recipe, recipe_a, recipe_b)
        return _kept_scales(m, scales, sx, one_group, x, w)

    _, a_scale, a_kind, b_scale, b_kind, _ = _checked(
        "fp8 dense", _given(x, sx, w, sw, d, c), (recipe, recipe_a, recipe_b), check)
    as_given = a_scale is None and b_scale is None
    _into(d, c, x, w, key if as_given else None, a_scale=sx if a_scale is None else a_scale,
          a_scale_kind=a_kind, b_scale=sw.unsqueeze(0) if b_scale is None else b_scale,
          b_scale_kind=b_kind)


def _given(*tensors):
    """The call's tensors that are given (c may be None), for _checked."""
    return tuple(t for t in tensors if t is not None)


def _fp8_k_major_only(name: str):
    def unsupported(*args, **kwargs):
        raise NotImplementedError(f"{name}: sm90 FP8 operands are K-major only (DeepGEMM's "
                                  f"sm90 kernels reject these layouts too); use fp8_gemm_nt "
                                  f"with K-major a and b")
    unsupported.__name__ = name
    unsupported.__doc__ = f"DeepGEMM's `{name}`: not on sm90 (raises NotImplementedError)."
    return unsupported


fp8_gemm_nn = _fp8_k_major_only("fp8_gemm_nn")
fp8_gemm_tn = _fp8_k_major_only("fp8_gemm_tn")
fp8_gemm_tt = _fp8_k_major_only("fp8_gemm_tt")
m_grouped_fp8_gemm_nn_contiguous = _fp8_k_major_only("m_grouped_fp8_gemm_nn_contiguous")
fp8_fp4_gemm_nt = fp8_gemm_nt


def cublaslt_gemm_nt(a, b, d, c=None) -> None:
    """DeepGEMM's cuBLASLt baseline `cublaslt_gemm_nt`: d = a @ b.T (+ c) by
    torch (cuBLAS, in f32 then rounded once), to compare the GEMMs above with."""
    import torch
    _require(list(d.shape) == [a.shape[0], b.shape[0]],
             f"d must be [M, N] = {[a.shape[0], b.shape[0]]}, got {list(d.shape)}")
    product = a.float() @ b.float().t()
    torch.add(product, c, out=d) if c is not None else d.copy_(product)


def cublaslt_gemm_nn(a, b, d, c=None) -> None:
    cublaslt_gemm_nt(a, b.t(), d, c)


def cublaslt_gemm_tn(a, b, d, c=None) -> None:
    cublaslt_gemm_nt(a.t(), b.t(), d, c)


def cublaslt_gemm_tt(a, b, d, c=None) -> None:
    cublaslt_gemm_nt(a.t(), b, d, c)
