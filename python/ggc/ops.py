"""Ready-made grouped GEMM ops, written with the DSL itself.

- `grouped_gemm(a, b, ...)`: every layout and scale kind the lowering has.
- Drop-in replacements for DeepGEMM v1's
  `m_grouped_gemm_fp8_fp8_bf16_nt_contiguous` and `..._nt_masked`.
  FlashInfer's are ggc.flashinfer, DeepGEMM 2.x's ggc.deepgemm, the torch
  custom ops ggc.torch_ops: each sits above this module, which imports none
  of them (ggc.torch_ops installs itself here as `_torch_ops` when torch
  and ggc are both imported).

All take torch tensors on one CUDA device and launch on the current stream,
or CPU tensors, which ggc's reference backend computes in torch
(ggc.reference: slow, for CI and laptops; f32 accumulation).
"""

from __future__ import annotations

import inspect
from typing import Optional

from . import compiler as _compiler
from . import language as gl
from . import groups as _groups
from . import signature as _signature
from .jit import JITFunction

_LAYOUT_ANNOTATIONS = {
    "contiguous": (gl.Rows, gl.Offsets),
    "masked": (gl.MaskedRows, gl.MaskedCounts),
    "padded_contiguous": (gl.PaddedRows, gl.RowGroups),
    "k_grouped": (gl.TokenMajor, gl.Offsets),
}


def _kernel_body(a, b, groups, a_scale=None, b_scale=None, out=None, A_KIND="block_mn",
                 B_KIND="block", EXPECTED_M=None, ACCUMULATE=False, ZERO_UNGROUPED=False):
    gl.store(out, gl.grouped_dot(a, b, groups, a_scale=a_scale, b_scale=b_scale,
                                 a_scale_kind=A_KIND, b_scale_kind=B_KIND,
                                 expected_m=EXPECTED_M), accumulate=ACCUMULATE,
             zero_ungrouped=ZERO_UNGROUPED)


def _make_kernel(layout: str, b_layout: str, scaled: bool) -> JITFunction:
    """One DSL kernel per (layout, B layout, scaled): the annotations say
    what each argument is, the body is shared."""
    rows, groups = _LAYOUT_ANNOTATIONS[layout]
    if layout == "k_grouped":  # both operands token-major, or both K-major
        rows = weights = gl.TokenMajor if b_layout == "kn" else gl.KMajor
    else:
        weights = gl.Weights if b_layout == "nk" else gl.WeightsKN
    P = inspect.Parameter
    params = [P("a", P.POSITIONAL_OR_KEYWORD, annotation=rows),
              P("b", P.POSITIONAL_OR_KEYWORD, annotation=weights),
              P("groups", P.POSITIONAL_OR_KEYWORD, annotation=groups)]
    if scaled:
        params += [P("a_scale", P.POSITIONAL_OR_KEYWORD, annotation=gl.Scale),
                   P("b_scale", P.POSITIONAL_OR_KEYWORD, annotation=gl.Scale)]
    params.append(P("out", P.POSITIONAL_OR_KEYWORD, annotation=gl.Out))
    params += [P(n, P.KEYWORD_ONLY, annotation=gl.constexpr, default=d)
               for n, d in (("A_KIND", "block_mn"), ("B_KIND", "block"),
                            ("EXPECTED_M", None), ("ACCUMULATE", False),
                            ("ZERO_UNGROUPED", False))]

    def kernel(**kwargs):
        _kernel_body(**kwargs)

    kernel.__name__ = f"grouped_gemm_{layout}_{b_layout}" + ("_scaled" if scaled else "")
    kernel.__signature__ = inspect.Signature(params)
    return JITFunction(kernel)


_KERNELS = {}
_ONES = {}


def _ones(count: int, device):
    """Unit scales, made once per size and device (no allocation per call)."""
    import torch
    if not isinstance(count, int):  # a symbolic size: torch.compile is tracing
        return torch.ones(count, device=device)
    key = (count, str(device))
    ones = _ONES.get(key)
    if ones is None:
        ones = torch.ones(count, device=device)
        # A fake tensor (torch.compile's tracing) is never kept: a real call
        # would find it here.
        if not torch._subclasses.fake_tensor.is_fake(ones):
            ones = _ONES.setdefault(key, ones)
    return ones


def _kernel_for(layout: str, b_layout: str, scaled: bool) -> JITFunction:
    key = (layout, b_layout, scaled)
    kernel = _KERNELS.get(key)
    if kernel is None:  # setdefault: threads racing here share one kernel
        kernel = _KERNELS.setdefault(key, _make_kernel(*key))
    return kernel


def _physical_block_scale(scale):
    """A block scale tensor as the kernel takes it: row-major as it is
    (K-major, "block"; copied where it does not start 16-byte aligned), or,
    for a view whose last two dims are transposed in
    memory (DeepGEMM's M-major, 4-aligned [M, K/128] view of a
    [K/128, align4(M)] buffer), its storage ("block_mn")."""
    import torch
    if scale.numel() == 0:
        # torch calls any empty tensor contiguous, whatever its strides; the
        # launch checks them (an M-major view of no rows, for one).
        return scale.new_empty(scale.shape), "block"
    if scale.stride(-2) == 1 and scale.shape[-2] > 1 and scale.stride(-1) != 1:
        rows_padded = scale.stride(-1)
        physical = torch.as_strided(
            scale, (*scale.shape[:-2], scale.shape[-1], rows_padded),
            (*scale.stride()[:-2], rows_padded, 1))
        return physical, "block_mn"
    scale = scale.contiguous()
    # Every tensor a kernel takes starts 16-byte aligned (the runtime's
    # rule; TMA's where K-major scales ride the stages as boxes): a view
    # into a larger buffer that does not is copied to a fresh allocation.
    # A fake tensor's address is its storage offset, as the runtime's
    # checks of fake tensors read it.
    if _torch_ops is not None and _torch_ops.without_data((scale,)):
        misaligned = scale.storage_offset() * scale.element_size() % 16
    else:
        misaligned = scale.data_ptr() % 16
    return (scale.clone() if misaligned else scale), "block"


def _scale_kind(side: str, scale, a, b, layout: str, kind: Optional[str]):
    """The scale tensor as the kernel takes it, and its kind: `kind` when
    given, else read off the rank (and, for A's 1-D scales, the length)."""
    g = b.shape[0]
    rank = scale.dim()
    _require_mx_kind(side, scale, kind)
    if kind is None:
        if side == "b":
            kind = {1: "tensor", 2: "channel", 3: "block"}.get(rank)
        elif layout == "masked":
            kind = {1: "tensor", 2: "channel", 3: "block"}.get(rank)
        elif rank == 2:
            kind = "block"
        elif rank == 1:
            m = a.shape[0]
            if m == g and scale.shape[0] == g:
                raise ValueError("a_scale of length G = M is ambiguous: pass "
                                 "a_scale_kind='tensor' or 'channel'")
            kind = "tensor" if scale.shape[0] == g else "channel"
        if kind is None:
            raise ValueError(f"{side}_scale has rank {rank}, which matches no scale kind "
                             f"for this layout")
    if kind not in ("tensor", "channel", "block", "mx32", "mx128"):
        raise ValueError(f"{side}_scale_kind must be 'tensor', 'channel', 'block', 'mx32' "
                         f"or 'mx128', got {kind!r}")
    if kind == "block":
        return _physical_block_scale(scale)
    return scale.contiguous(), kind


def _require_mx_kind(side: str, scale, kind: Optional[str]):
    """Packed UE8M0 words carry no K block in their shape: the kind must say it."""
    import torch
    if kind is None and scale.dtype == torch.int32:
        raise ValueError(f"{side}_scale holds packed UE8M0 exponents (int32): pass "
                         f"{side}_scale_kind='mx32' or 'mx128' for its K block")


def _k_grouped_scale_kind(side: str, scale, rows: int, g: int, kind: Optional[str]):
    """A weight gradient's scale as the kernel takes it, and its kind: 1-D
    per tensor ([G]) or per channel ([rows]); 2-D blocks over the
    concatenated K: 1x128 ([rows, ceil(K/128)], or its transposed view) or,
    for B, 128x128 ([ceil(rows/128), ceil(K/128)]); or MX words ([rows,
    ceil(K/(4 x 32 or 4 x 128))], int32), whose kind must be given."""
    _require_mx_kind(side, scale, kind)
    if kind is None:
        if scale.dim() == 1:
            if rows == g and scale.shape[0] == g:
                raise ValueError(f"{side}_scale of length G = {g} = its rows is ambiguous: "
                                 f"pass {side}_scale_kind='tensor' or 'channel'")
            kind = "tensor" if scale.shape[0] == g else "channel"
        elif scale.dim() == 2:
            # Row-major as it is, or a transposed view of [ceil(K/128), rows].
            physical, storage = _physical_block_scale(scale)
            if scale.shape[0] == rows:  # 1x128: per row of A / column of B
                kind = storage if side == "a" else storage.replace("block", "block1x128")
            elif side == "b" and scale.shape[0] == -(-rows // 128):  # 128x128
                kind = storage
            else:
                raise ValueError(
                    f"{side}_scale of shape {list(scale.shape)} matches no block scale of "
                    f"{rows} rows: 1x128 blocks are [{rows}, ceil(K/128)]"
                    + (f", 128x128 blocks [{-(-rows // 128)}, ceil(K/128)]"
                       if side == "b" else ""))
            return physical, kind
        else:
            raise ValueError(f"{side}_scale has rank {scale.dim()}; a weight gradient's "
                             f"scales are 1-D (tensor, channel) or 2-D (blocks)")
    return scale.contiguous(), kind


def grouped_gemm(a, b, *, offsets=None, masked_m=None, m_indices=None, k_offsets=None,
                 offs=None, a_scale=None,
                 b_scale=None, out=None, out_dtype=None, b_layout: str = "nk",
                 expected_m: Optional[int] = None, a_scale_kind: Optional[str] = None,
                 b_scale_kind: Optional[str] = None, k_major: bool = False,
                 accumulate: bool = False, validate: Optional[bool] = None,
                 zero_ungrouped: bool = False):
    """out[g] = scale(a[g]) @ scale(b[g])^T for every group (with
    `accumulate=True`, out[g] += ...: summed in f32, rounded once to out's
    dtype, the same bits on every run; `out` must be given).

    Exactly one of `offsets` ([G+1], contiguous rows of a [M, K]),
    `masked_m` ([G], a is [G, M_max, K]), `m_indices` ([M] group per row,
    DeepGEMM's contiguous layout) or `k_offsets` ([G+1] over the tokens of
    a weight gradient: a is [K, M], b is [K, N], out[g] = a_g^T @ b_g is
    [G, M, N], f32 by default; with `k_major=True`, a is [M, K] and b is
    [N, K], the form f8 needs, and scales are per tensor, per channel,
    1x128 blocks over the concatenated K, [M or N, ceil(K/128)], or MX
    words over it with `*_scale_kind="mx32"/"mx128"`) says how
    the work splits into groups. b is
    [G, N, K] (`b_layout="nk"`) or [G, K, N] (`"kn"`). f8 inputs take
    scales: [G] per tensor, per row/column, or blockwise (A [M, K/128] or its
    M-major form, B [G, N/128, K/128] or its N-major form); the kind is read
    off the rank unless `a_scale_kind`/`b_scale_kind` say it. Returns `out`
    (allocated as out_dtype, default bf16, when not given; its rows outside
    every group are then uninitialised, unless `zero_ungrouped=True`:
    contiguous groups only, the kernel then writes zeros to the rows before
    offsets[0] and from offsets[G] on, with no pass of its own). `validate` (default:
    $GGC_VALIDATE) checks the group metadata on the device first, and that
    the groups cover every row of an `out` allocated here (ggc.groups).
    `offs` takes torch._grouped_mm's convention instead: G cumulative ends
    ([G]), for a's rows (b 3-D) or, b 2-D, the tokens of a weight gradient.
    `expected_m`, a host int, is the rows a group typically holds: it
    chooses the tiles and their walk; contiguous and f8 padded
    (m_indices) calls of two or more groups without it take
    mean_hint(a.shape[0], G, 4096), and FP8 weight
    gradients (k_offsets) with 1x128 scales of b
    expected_group_tokens(K, G).

    With `out`, the result takes no part in autograd (as torch's out=
    functions): inputs that need a gradient under grad mode are an error.

    Under torch.compile, make_fx or fake tensors, and for inputs that need a
    gradient, the call goes through torch.ops.ggc.grouped_gemm[_out]
    (ggc.torch_ops), whose body comes back here.
    """
    tensors = (a, b, offsets, masked_m, m_indices, k_offsets, offs, a_scale, b_scale, out)
    key, plan = remembered(tensors, plan_options(out_dtype, b_layout, expected_m,
                                                 a_scale_kind, b_scale_kind, k_major,
                                                 accumulate, zero_ungrouped), validate)
    if plan is not None:
        result = plan.run(tensors)
        if result is not None:
            return result
    _check_accumulate(accumulate, out)
    if not isinstance(k_major, bool):
        raise ValueError(f"k_major must be True or False, got {k_major!r}")
    _check_zero_ungrouped(zero_ungrouped, accumulate, offsets, offs, b)
    bridge = _bridge(a)
    if bridge is not None and bridge.wants_op((a, b), grad=out is None):
        return bridge.call_grouped_gemm(
            a, b, offsets=offsets, masked_m=masked_m, m_indices=m_indices,
            k_offsets=k_offsets, offs=offs, a_scale=a_scale, b_scale=b_scale, out=out,
            out_dtype=out_dtype, b_layout=b_layout, expected_m=expected_m,
            a_scale_kind=a_scale_kind, b_scale_kind=b_scale_kind, k_major=k_major,
            validate=validate, accumulate=accumulate, zero_ungrouped=zero_ungrouped)
    if out is not None and bridge is not None and bridge.out_loses_grad((a, b)):
        # As torch's out= functions: the product would reach no gradient.
        raise ValueError("out= takes no part in autograd, but a or b requires grad: call "
                         "without out= (the result then has a grad_fn), or under "
                         "torch.no_grad()")
    call = _checked_call(tensors, out_dtype=out_dtype, b_layout=b_layout,
                         expected_m=expected_m, a_scale_kind=a_scale_kind,
                         b_scale_kind=b_scale_kind, k_major=k_major, validate=validate,
                         accumulate=accumulate, zero_ungrouped=zero_ungrouped)
    fn, args, consts, _, out, validate = call
    fn(*args, validate=validate, **consts)
    if key is not None and isinstance(fn, JITFunction) and not _wants_grad(tensors):
        _remember(key, call, tensors)
    return out


def default_out_dtype(out_dtype):
    """What grouped_gemm writes for row layouts (contiguous, masked,
    padded): `out_dtype`, or bf16 without one, whatever a's type."""
    import torch
    return out_dtype or torch.bfloat16

# Slots of grouped_gemm's tensors in a plan's list of them: its arguments
# in order, then the G+1 offsets made from `offs`, then unit scales.
_A, _B, _A_SCALE, _B_SCALE, _OUT, _CSR, _CONSTANTS = 0, 1, 7, 8, 9, 10, 11
_GROUP_SLOTS = {"offsets": 2, "masked_m": 3, "m_indices": 4, "k_offsets": 5}
_PLANS = {}
_MAX_PLANS = 512
# ggc.torch_ops, which sets this when imported (it imports this module; ggc
# imports it once torch is imported: ggc._torch_hook).
_torch_ops = None


def mean_hint(count, groups: int, cap: int) -> Optional[int]:
    """An `expected_m` hint: count / groups rounded down to a power of two
    and capped at `cap` (a power of two), so that every count compiles at
    most log2(cap) + 1 kernels (each distinct hint is a kernel of its own).
    None (no hint) where the count is symbolic (torch.compile's dynamic
    shapes), which a hint would specialise."""
    if not isinstance(count, int):
        return None
    mean = max(1, count // max(1, int(groups)))
    return 1 << min(cap.bit_length() - 1, mean.bit_length() - 1)


def _contiguous_hint(a, b) -> Optional[int]:
    """The expected_m a grouped contiguous call (or an f8 call over
    DeepGEMM's padded layout) without one compiles with:
    the rows of `a` over the groups (mean_hint, capped at 4,096, as
    ggc.moe passes it). The kernels' tile and schedule rules are measured
    at such hints, and without one a call took rules made for no knowledge
    of the rows (FP8 on ragged groups measured 1-7% slower:
    docs/performance.md). Rows of `a` outside every group count too, so a
    buffer much taller than its groups reads as taller groups (a
    performance hint only). None for one group (a dense GEMM: its tiles
    were measured without a hint), for symbolic sizes (torch.compile's
    dynamic shapes, which a hint would specialise) and for shapes the
    layout's checks refuse."""
    if a.dim() != 2 or b.dim() != 3:
        return None
    rows, groups = a.shape[0], b.shape[0]
    if not isinstance(rows, int) or not isinstance(groups, int) or groups < 2:
        return None
    return mean_hint(rows, groups, 4096)


def expected_group_tokens(tokens, groups: int) -> Optional[int]:
    """A weight gradient's `expected_m` (k_offsets): the tokens a group
    holds on average (mean_hint, capped at 8,192)."""
    return mean_hint(tokens, groups, 8192)


def plan_options(out_dtype=None, b_layout: str = "nk", expected_m: Optional[int] = None,
                 a_scale_kind: Optional[str] = None, b_scale_kind: Optional[str] = None,
                 k_major: bool = False, accumulate: bool = False,
                 zero_ungrouped: bool = False) -> tuple:
    """grouped_gemm's options as its plan key holds them (the drop-ins'
    fast path looks plans up by the same tuple). The checked values' types
    are part of it: Python finds 1 == True and 128.0 == 128, so a call
    with accumulate=1 would otherwise take accumulate=True's plan past the
    checks that refuse it."""
    return (out_dtype, b_layout, expected_m, a_scale_kind, b_scale_kind, k_major, accumulate,
            zero_ungrouped, type(expected_m), type(k_major), type(accumulate),
            type(zero_ungrouped))


def _bridge(value):
    """ggc.torch_ops (installed as _torch_ops by ggc's import hook once
    torch is imported), or None where `value` is no torch tensor and torch
    may not be imported. A torch tensor without the bridge means torch was
    imported past the hook: registering now keeps autograd and
    torch.compile from being skipped without a word."""
    if _torch_ops is None and type(value).__module__.startswith("torch"):
        from ._torch_hook import register_torch_ops_with_torch
        register_torch_ops_with_torch()
    return _torch_ops


def _plan_key(tensors, options, validate):
    """What decides every check, the kernel and its launch of a call: the
    tensors' type, dtype, shape, strides, device and requires_grad, the
    options, and grad mode; None for a call that takes the full path every
    time (validation, torch.compile tracing or a dispatch mode, arguments
    that are not tensors)."""
    bridge = _bridge(tensors[0])
    if bridge is None:  # no torch tensor: no plan
        return None
    if (validate if validate is not None else _groups.VALIDATE_BY_DEFAULT) or (
            bridge.tracing()):
        return None
    tensors_key = _signature.of(tensors)
    if tensors_key is None:
        return None
    return (tensors_key, options, bridge.torch.is_grad_enabled(), _compiler.plan_settings())


def remembered(tensors, options, validate=None):
    """(key, plan) of a call of grouped_gemm's `tensors` (its arguments in
    order, None where not given) and `options` (plan_options): the key its
    launch is kept under once a call has run (None: such a call takes the
    full path every time) and that plan, when one is kept. The torch ops'
    bodies look their calls up here before their own checks."""
    key = _plan_key(tensors, options, validate)
    if key is None:
        return None, None
    try:
        return key, _PLANS.get(key)
    except TypeError:  # an unhashable option: no plan for it
        return None, None


def _wants_grad(tensors) -> bool:
    """Whether the custom op (its autograd) would take a call of these
    tensors in another context (outside an op's body): never cached."""
    return tensors[_OUT] is None and _torch_ops.needs_grad((tensors[_A], tensors[_B]))


class _Plan:
    """A call signature's launch: where each kernel argument comes from
    (a slot of the call's tensors), the unit scales it uses, and the output
    it allocates (when the call gives none)."""

    __slots__ = ("launch", "sources", "constants", "out_shape", "out_like",
                 "csr")

    def run(self, tensors):
        """Launches; returns the output, or None when an address is not
        16-byte aligned (the full path then says which)."""
        torch = _torch_ops.torch
        out = tensors[_OUT]
        if out is None:
            out = _signature.empty(self.out_shape, self.out_like)
        full = [*tensors[:_OUT], out, None, *self.constants]
        if self.csr:
            offs = tensors[6]
            full[_CSR] = torch.cat([offs.new_zeros(1), offs])
        if not self.launch.run(_signature.addresses(full, self.sources), None):
            return None
        return out

    def describe(self, positions):
        """This plan as a torch op's C++ kernel keeps it (its learn():
        python/src/op_kernels.cpp), or None where it cannot run it (offsets
        made from `offs` on every call; a launch record without a raw
        launch). `positions`: the op's argument position of each slot of
        the call's tensors it takes; the output's is absent where the call
        allocates it."""
        record = self.launch.record
        raw = (0, 0) if record is None else getattr(record, "raw", None)
        if self.csr or raw is None:
            return None
        sources = []
        for slot in self.sources:
            if slot >= _CONSTANTS:
                sources.append(-2 - (slot - _CONSTANTS))  # op_kernels.cpp's kConstant
            elif slot in positions:
                sources.append(positions[slot])
            elif slot == _OUT:
                sources.append(-1)  # op_kernels.cpp's kNewOutput
            else:
                return None
        allocates = _OUT not in positions
        cuda_device = self.launch.device if self.out_like.device.type == "cuda" else -1
        return (self, *raw, cuda_device, sources, [c.data_ptr() for c in self.constants],
                self.out_shape if allocates else None, self.out_like if allocates else None)


def _remember(key, call, tensors) -> None:
    """Keeps the plan of a call that just launched, when every kernel
    argument is one of the call's tensors (no copy was made) or a unit scale."""
    fn, args, consts, slots, out, _ = call
    launch = fn.launch_for(dict(zip(fn.tensor_params, args)), fn._bind(args, consts)[1])
    if launch is None:
        return
    plan = _Plan()
    plan.constants = [arg for arg, slot in zip(args, slots) if slot is None]
    plan.sources, constants = [], iter(range(_CONSTANTS, _CONSTANTS + len(plan.constants)))
    full = [*tensors[:_OUT], out]
    for arg, slot in zip(args, slots):
        if slot is None:
            plan.sources.append(next(constants))
            continue
        if slot != _CSR and arg.data_ptr() != full[slot].data_ptr():
            return  # a copy of the argument (.contiguous()) is made per call
        plan.sources.append(slot)
    plan.launch, plan.csr = launch, _CSR in slots
    # (an empty tensor of out's dtype and device: what a call's new out is like)
    plan.out_shape, plan.out_like = tuple(out.shape), out.new_empty(0)
    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    _PLANS[key] = plan


def _check_accumulate(accumulate, out) -> None:
    if not isinstance(accumulate, bool):
        raise ValueError(f"accumulate must be True or False, got {accumulate!r}")
    if accumulate and out is None:
        raise ValueError("accumulate=True adds the product to `out`: pass out= (the "
                         "tensor to add to)")


def _check_zero_ungrouped(zero_ungrouped, accumulate, offsets, offs, b) -> None:
    if not isinstance(zero_ungrouped, bool):
        raise ValueError(f"zero_ungrouped must be True or False, got {zero_ungrouped!r}")
    if not zero_ungrouped:
        return
    if accumulate:
        raise ValueError("zero_ungrouped=True writes zeros to the rows outside every group, "
                         "which accumulate=True would leave as they were: take one")
    if offsets is None and (offs is None or getattr(b, "dim", lambda: 0)() != 3):
        raise ValueError("zero_ungrouped=True clears the rows outside contiguous groups: "
                         "it takes offsets= (or offs= with b [G, N, K]), not masked_m, "
                         "m_indices or k_offsets")


def _checked_call(tensors, *, accumulate=False, zero_ungrouped=False, **options):
    """Every check of a direct call (accumulate's: _check_accumulate, first),
    and what it launches: (kernel, arguments, constexprs, each argument's
    slot (None: a unit scale), out, validate)."""
    call = _layout_call(tensors, zero_ungrouped=zero_ungrouped, **options)
    flags = {"ACCUMULATE": accumulate, "ZERO_UNGROUPED": zero_ungrouped}
    if not any(flags.values()):
        return call
    kernel, args, consts, *rest = call
    return (kernel, args, {**consts, **{k: v for k, v in flags.items() if v}}, *rest)


def _layout_call(tensors, *, out_dtype, b_layout, expected_m, a_scale_kind, b_scale_kind,
                 k_major, validate, zero_ungrouped=False):
    """_checked_call's checks of the layout and its launch."""
    import torch
    a, b, offsets, masked_m, m_indices, k_offsets, offs, a_scale, b_scale, out = tensors
    _require_tensors(a=a, b=b, offsets=offsets, masked_m=masked_m, m_indices=m_indices,
                     k_offsets=k_offsets, offs=offs, a_scale=a_scale, b_scale=b_scale,
                     out=out)
    from_offs = offs is not None
    if from_offs:
        offsets, k_offsets = _from_torch_offsets(offs, b, offsets, k_offsets)
    problem = gl.expected_m_problem(expected_m)
    if problem:
        raise ValueError(problem)
    if validate is None:
        validate = _groups.VALIDATE_BY_DEFAULT
    if validate and out is None and offsets is not None and not zero_ungrouped:
        validate = "all_rows"  # (zero_ungrouped writes every row of a new out)
    described = {"offsets": offsets, "masked_m": masked_m, "m_indices": m_indices,
                 "k_offsets": k_offsets}
    given = [n for n, v in described.items() if v is not None]
    if len(given) != 1:
        raise ValueError(f"grouped_gemm takes exactly one of offsets, masked_m, m_indices, "
                         f"k_offsets; got {given or 'none'}")
    layout = {"offsets": "contiguous", "masked_m": "masked",
              "m_indices": "padded_contiguous", "k_offsets": "k_grouped"}[given[0]]
    groups = described[given[0]]
    group_slot = _CSR if from_offs else _GROUP_SLOTS[given[0]]
    a_slot = _A_SCALE if a_scale is not None else None
    b_slot = _B_SCALE if b_scale is not None else None
    # DeepGEMM's padded layout reads a hint in its f8 walk only
    # (gg-schedule-groups): others compile without one, so that their row
    # counts share a kernel.
    if expected_m is None and (layout == "contiguous" or
                               (layout == "padded_contiguous" and is_f8(a.dtype))):
        expected_m = _contiguous_hint(a, b)
    hint = {} if expected_m is None else {"EXPECTED_M": expected_m}
    if layout == "k_grouped":
        k_dim = 1 if k_major else 0
        if a.dim() != 2 or b.dim() != 2 or a.shape[k_dim] != b.shape[k_dim]:
            want = "a [M, K] and b [N, K]" if k_major else "a [K, M] and b [K, N]"
            raise ValueError(f"with k_offsets{', k_major=True' if k_major else ''}, {want} "
                             f"span the same tokens; got a {list(a.shape)} and b "
                             f"{list(b.shape)}")
        if is_f8(a.dtype) and not k_major:
            raise ValueError("an f8 weight gradient needs K-major operands (wgmma reads f8 "
                             "only along K): pass a [M, K] and b [N, K] with k_major=True")
        m, n = a.shape[1 - k_dim], b.shape[1 - k_dim]
        g = groups.shape[0] - 1
        if out is None:
            out = torch.empty(g, m, n, dtype=out_dtype or torch.float32, device=a.device)
        elif all(isinstance(v, int) for v in (g, m, n)) and list(out.shape) != [g, m, n]:
            raise ValueError(f"out must be [G, M, N] = {[g, m, n]} (G from k_offsets' "
                             f"{g + 1} entries), got {list(out.shape)}")
        operands = "nk" if k_major else "kn"
        if a_scale is None and b_scale is None:
            return (_kernel_for(layout, operands, False), (a, b, groups, out), hint,
                    (_A, _B, group_slot, _OUT), out, validate)
        ones = _ones(g, a.device)
        a_scale, a_kind = ((ones, "tensor") if a_scale is None else
                           _k_grouped_scale_kind("a", a_scale, m, g, a_scale_kind))
        b_scale, b_kind = ((ones, "tensor") if b_scale is None else
                           _k_grouped_scale_kind("b", b_scale, n, g, b_scale_kind))
        if (expected_m is None and is_f8(a.dtype) and b_kind.startswith("block1x128")
                and isinstance(g, int)):
            # An FP8 weight gradient with 1x128 scales of b takes wider
            # tiles from 2,048 tokens a group, or 256 where it writes a
            # 16-bit gradient (gg-select-config): without
            # the caller's hint, the tokens' mean over the groups, as the
            # DeepGEMM drop-in and ggc.training pass it (no other weight
            # gradient's tiles read one).
            expected_m = expected_group_tokens(a.shape[k_dim], g)
            hint = {} if expected_m is None else {"EXPECTED_M": expected_m}
        return (_kernel_for(layout, operands, True), (a, b, groups, a_scale, b_scale, out),
                {"A_KIND": a_kind, "B_KIND": b_kind, **hint},
                (_A, _B, group_slot, a_slot, b_slot, _OUT), out, validate)
    if b_layout not in ("nk", "kn"):
        raise ValueError(f"b_layout must be 'nk' or 'kn', got {b_layout!r}")
    if b.dim() != 3:
        raise ValueError(f"b must be [G, N, K] or [G, K, N], got shape {list(b.shape)}")
    n = b.shape[1] if b_layout == "nk" else b.shape[2]
    rows_shape = list(a.shape[:-1])
    if out is None:
        out = torch.empty(*rows_shape, n, dtype=default_out_dtype(out_dtype),
                          device=a.device)
    scaled = a_scale is not None or b_scale is not None
    kernel = _kernel_for(layout, b_layout, scaled)
    if not scaled:
        return kernel, (a, b, groups, out), hint, (_A, _B, group_slot, _OUT), out, validate
    # A missing side scales by ones, per group.
    ones = _ones(b.shape[0], a.device)
    a_scale, a_kind = ((ones, "tensor") if a_scale is None else
                       _scale_kind("a", a_scale, a, b, layout, a_scale_kind))
    b_scale, b_kind = ((ones, "tensor") if b_scale is None else
                       _scale_kind("b", b_scale, a, b, layout, b_scale_kind))
    return (kernel, (a, b, groups, a_scale, b_scale, out),
            {"A_KIND": a_kind, "B_KIND": b_kind, **hint},
            (_A, _B, group_slot, a_slot, b_slot, _OUT), out, validate)


def is_f8(dtype) -> bool:
    """Whether `dtype` is one of torch's FP8 types (compared by name, so
    that no torch import is needed)."""
    return str(dtype) in ("torch.float8_e4m3fn", "torch.float8_e5m2")


def _from_torch_offsets(offs, b, offsets, k_offsets):
    """torch._grouped_mm's `offs` (G cumulative ends) as ggc's G+1 CSR
    offsets: the leading zero is prepended on the device, with no host sync.
    They split a's rows, or (b 2-D) the tokens of a weight gradient."""
    import torch
    if offsets is not None or k_offsets is not None:
        raise ValueError("offs (torch's G group ends) says what offsets / k_offsets (ggc's "
                         "G+1 offsets) say: pass one of them")
    if offs.dim() != 1:
        raise ValueError(f"offs must be [G], the cumulative end of each group, got shape "
                         f"{list(offs.shape)}")
    csr = torch.cat([offs.new_zeros(1), offs])
    return (None, csr) if b.dim() == 2 else (csr, None)


def _require_tensors(**named) -> None:
    """Arguments given as something other than a tensor (None included, for
    the required ones) are an error that names them."""
    for name, value in named.items():
        if name in ("a", "b") or value is not None:
            require_tensor(name, value)


def require_tensor(name: str, value) -> None:
    """A TypeError naming `name` where `value` is not a tensor (None
    included), before any attribute of it is read (the drop-ins' too)."""
    import torch
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")


def m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(lhs, rhs, out, m_indices):
    """DeepGEMM's signature: lhs = (x [M, K] e4m3, x_scales [M, K/128]),
    rhs = (w [G, N, K] e4m3, w_scales [G, N/128, K/128]), out [M, N] bf16,
    m_indices [M] int32 (group per row, -1 for padding). As in DeepGEMM,
    every group starts on a multiple of 128 rows (its padding rows are -1):
    a tile takes the group of its first row."""
    (x, sx), (w, sw) = lhs, rhs
    grouped_gemm(x, w, m_indices=m_indices, a_scale=sx, b_scale=sw, out=out)


def m_grouped_gemm_fp8_fp8_bf16_nt_masked(lhs, rhs, out, masked_m, expected_m):
    """DeepGEMM's signature: lhs = (x [G, M_max, K] e4m3, x_scales
    [G, M_max, K/128]), rhs = (w [G, N, K], w_scales [G, N/128, K/128]),
    out [G, M_max, N] bf16, masked_m [G] int32, expected_m a host int."""
    (x, sx), (w, sw) = lhs, rhs
    grouped_gemm(x, w, masked_m=masked_m, a_scale=sx, b_scale=sw, out=out,
                 expected_m=int(expected_m))
