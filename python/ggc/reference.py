"""ggc's reference backend: what a kernel computes, in torch, on the CPU.

A launch whose tensors are all on the CPU (every entry point: `ggc.ops`,
`torch.ops.ggc.*`, `@ggc.jit` kernels, `ggc.moe`, `ggc.vllm`,
`ggc.deepgemm`, `ggc.flashinfer`) runs here instead of on a GPU. Nothing
is compiled: the kernel is traced into its `FunctionSpec` as for the GPU,
the compiler's verifier checks that description with this call's sizes
(the IR rules a GPU compile enforces: shapes, dtypes, scale layouts), the
tensors must be contiguous as the GPU kernels need, and the description is
interpreted in torch:

- every layout (contiguous, masked, padded_contiguous, k_grouped), B in
  either layout, A and B dequantised by their scales (tensor, channel,
  1x128 / 128x128 blocks and their MN-major forms, B's per-column 1x128
  blocks, MX UE8M0 exponents) in f32;
- the product accumulated in f32 (`tf32` kernels too: no operand
  rounding), the epilogue evaluated in f32 on it (row and column vectors,
  group scalars, the group id; `column_pairs` pairs columns 2j and 2j+1,
  `column_halves` j and j + N/2), rounded once to out's dtype; with
  `accumulate`, out += value summed in f32 and rounded once;
  `zero_ungrouped`, zeros in the rows of out outside every group;
  `out_scale`, the value quantised to e4m3 per row and 128-column block
  (ggc.moe.quant's rule) and the scales stored M-major;
- rows outside every group are never written, unless `zero_ungrouped`
  (a k_grouped group with no tokens writes its epilogue of zeros, as the
  kernel does).

It is slow (a torch matmul per group) and meant for CI and laptops; its
results are exact f32 arithmetic, not bit-equal to a GPU's (the
summation order differs). Tuning constexprs (BLOCK_M, ...) are ignored,
and launch-only rules of the GPU (16-byte alignment, TMA row sizes) are
not checked. `validate` checks the group metadata as on the GPU, without
the padded layout's per-tile rule (rows keep their own group here).
"""

from __future__ import annotations

import dataclasses
import re
import threading
from typing import Any, Dict, List, NamedTuple, Optional

import torch

from . import compiler as _compiler
from . import groups as _groups
from .ir import Arg, FunctionSpec, emit
from .jit import checked_knobs, constant_key, spec as _placeholder
from .language import f32_from_literal
from .runtime import _TORCH_DTYPES

F32 = torch.float32
BLOCK = 128

# Verified specs by (kernel, argument shapes and dtypes, constexprs, the
# target the verifier checks for): a trace and a verification cost 1-2 ms,
# a call of a known signature only the arithmetic.
_SPECS: Dict[Any, FunctionSpec] = {}
_MAX_SPECS = 512
_lock = threading.Lock()


def run(fn, tensors: Dict[str, torch.Tensor], consts: Dict[str, Any],
        validate=None) -> None:
    """Runs the @ggc.jit kernel `fn` on CPU tensors: checks them as
    `check` does, the group metadata when `validate` asks ("all_rows":
    contiguous groups must also cover every row), then writes `out`."""
    fn_spec = check(fn, tensors, consts)
    if validate:
        _validate_groups(fn_spec, tensors, all_rows=validate == "all_rows")
    # A launch records no autograd graph, as on a GPU: the custom ops'
    # formulas (ggc.torch_ops) give the gradients.
    with torch.no_grad():
        compute(fn_spec, tensors)


def check(fn, tensors: Dict[str, torch.Tensor], consts: Dict[str, Any]) -> FunctionSpec:
    """The kernel's description for these tensors (real or fake), traced
    and verified with their sizes; a tensor that is not contiguous is an
    error naming it."""
    checked_knobs(consts)
    described = {n: _described(n, t) for n, t in tensors.items()}
    key = (fn._op_key, tuple(described[n] for n in fn.tensor_params),
           tuple(sorted((n, constant_key(v)) for n, v in consts.items())),
           _compiler.get_target())
    fn_spec = _SPECS.get(key)
    if fn_spec is None:
        fn_spec = _verified(fn, described, consts)
        with _lock:
            if len(_SPECS) >= _MAX_SPECS:
                _SPECS.clear()
            _SPECS[key] = fn_spec
    for name, t in tensors.items():
        if not t.is_contiguous():
            raise ValueError(f"argument '{name}' must be contiguous (row-major), as ggc's "
                             f"kernels take it; call .contiguous() first")
    return fn_spec


def _described(name: str, t: torch.Tensor):
    """(shape, ggc dtype name); a fake tensor's symbolic sizes by their hint."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"argument '{name}' must be a torch.Tensor on the CPU for ggc's "
                        f"reference backend, got {type(t).__name__}")
    dtype = _TORCH_DTYPES.get(str(t.dtype))
    if dtype is None:
        raise TypeError(f"argument '{name}' has dtype {t.dtype}, which ggc does not take "
                        f"(bf16, f16, f32, f8 e4m3/e5m2, int32, int64)")
    from .torch_ops import _hint
    return tuple(_hint(d) for d in t.shape), dtype


def _verified(fn, described, consts) -> FunctionSpec:
    """The kernel traced as a GPU call would trace it, then verified with
    the call's own sizes in place of the dynamic ones (so the verifier also
    relates them: a_scale's rows to M, say). A dynamic size of 0 stays
    dynamic: a weight gradient over no tokens is a valid run-time K."""
    placeholders = {n: _placeholder(shape, dtype) for n, (shape, dtype) in described.items()}
    _, fn_spec = fn._trace(placeholders, consts)
    sized = [Arg(a.name, [s if d is None and s > 0 else d
                          for d, s in zip(a.shape, described[a.name][0])], a.dtype)
             for a in fn_spec.args]
    _compiler.compile_ir(emit(dataclasses.replace(fn_spec, args=sized)), emit="gg",
                         arch=_compiler.get_target(),
                         source_name=f"{fn_spec.name} (traced, reference)")
    return fn_spec


# ---------------------------------------------------------------------------
# The arithmetic
# ---------------------------------------------------------------------------

class _Group(NamedTuple):
    """One group's work: its index, where its values go in `out`, which
    entries of a row vector belong to them, and its f32 product."""
    index: int
    out_at: Any
    rows_at: Any
    product: torch.Tensor


def compute(fn_spec: FunctionSpec, tensors: Dict[str, torch.Tensor]) -> None:
    """Writes what the kernel of `fn_spec` computes into its `out`."""
    a, b = _operand_a(fn_spec, tensors), _operand_b(fn_spec, tensors)
    factor = _group_factor(fn_spec, tensors)
    epilogue = _Epilogue(fn_spec, tensors)
    out = tensors[fn_spec.out]
    for group in _groups_of(fn_spec, tensors[fn_spec.groups], a, b):
        product = group.product if factor is None else group.product * factor[group.index]
        value = epilogue(product, group)
        if fn_spec.out_rows is not None:  # scattered rows: none off out, as the kernels
            index = tensors[fn_spec.out_rows][group.out_at].long()
            inside = (index >= 0) & (index < out.shape[0])
            out[index[inside]] = value[inside].to(out.dtype)
            continue
        if fn_spec.out_scale is not None:  # e4m3 in 1x128 blocks, scales M-major
            from .moe.quant import quantize_rows
            q, scale = quantize_rows(value)
            out[group.out_at] = q
            tensors[fn_spec.out_scale][:, group.out_at] = scale.t()
            continue
        if fn_spec.accumulate:  # summed in f32, rounded once
            value = out[group.out_at].float() + value
        out[group.out_at] = value.to(out.dtype)
    if fn_spec.zero_ungrouped:  # contiguous: rows before the first group and past the last
        offsets = tensors[fn_spec.groups].tolist()
        first, last = (min(max(o, 0), out.shape[0]) for o in (offsets[0], offsets[-1]))
        out[:first] = 0
        out[last:] = 0


def _groups_of(fn_spec: FunctionSpec, groups: torch.Tensor, a, b) -> List[_Group]:
    """Each group's product, with the kernels' clamping of its rows (or,
    k_grouped, its tokens) to the operand's extent; empty row groups are
    left out: they write nothing."""
    layout, found = fn_spec.layout, []
    if layout == "padded_contiguous":
        for g in range(b.shape[0]):
            rows = (groups == g).nonzero().flatten()
            if rows.numel():
                found.append(_Group(g, rows, rows, a[rows] @ b[g].T))
    elif layout == "masked":
        for g, count in enumerate(groups.tolist()):
            count = min(max(count, 0), a.shape[1])
            if count:
                found.append(_Group(g, (g, slice(0, count)), (g, slice(0, count)),
                                    a[g, :count] @ b[g].T))
    else:
        size = a.shape[1] if layout == "k_grouped" else a.shape[0]
        bounds = [min(max(o, 0), size) for o in groups.tolist()]
        for g, (start, end) in enumerate(zip(bounds, bounds[1:])):
            if layout == "k_grouped":  # every group writes its [M, N], zeros when empty
                product = a[:, start:max(start, end)] @ b[:, start:max(start, end)].T
                found.append(_Group(g, g, slice(None), product))
            elif end > start:
                found.append(_Group(g, slice(start, end), slice(start, end),
                                    a[start:end] @ b[g].T))
    return found


def _operand_a(fn_spec: FunctionSpec, tensors) -> torch.Tensor:
    """A in f32 as [M, K] ([G, M_max, K] masked; k_grouped: [M, K] over the
    tokens), times its scale unless that is per tensor (_group_factor)."""
    a = tensors[fn_spec.a]
    if fn_spec.a_layout == "km":  # a token-major weight gradient's [K, M]
        a = a.T
    a = a.float()
    if fn_spec.a_rows is not None:  # gathered rows: zeros off A, as the kernels read
        index = tensors[fn_spec.a_rows].long()
        inside = (index >= 0) & (index < a.shape[0])
        picked = a.new_zeros(index.shape[0], a.shape[1])
        picked[inside] = a[index[inside]]
        a = picked
    if fn_spec.a_scale is None:
        return a
    name, kind = fn_spec.a_scale
    scale = tensors[name]
    rows, k = a.shape[-2], a.shape[-1]
    if kind == "tensor":
        return a
    if kind == "channel":
        return a * scale.float().unsqueeze(-1)
    if kind.startswith("mx"):
        return a * _expand_k(_mx_rows_of_a(fn_spec, tensors, scale, rows), int(kind[2:]), k)
    if kind == "block_mn":  # [kb, align4(M)] (k_grouped [kb, M]): M-major
        scale = scale[..., :rows].transpose(-1, -2)
    return a * _expand_k(scale.float(), BLOCK, k)


def _operand_b(fn_spec: FunctionSpec, tensors) -> torch.Tensor:
    """B in f32 as [G, N, K] (k_grouped: [N, K] over the tokens), times
    its scale unless that is per tensor."""
    b = tensors[fn_spec.b]
    if fn_spec.b_layout == "kn":
        b = b.transpose(-1, -2)
    b = b.float()
    if fn_spec.b_scale is None:
        return b
    name, kind = fn_spec.b_scale
    scale, n, k = tensors[name], b.shape[-2], b.shape[-1]
    if kind == "tensor":
        return b
    if kind == "channel":
        return b * scale.float().unsqueeze(-1)
    if kind.startswith("mx"):
        return b * _expand_k(_ue8m0(scale), int(kind[2:]), k)
    scale = scale.float()
    if kind.endswith("_mn"):  # [.., kb, N or N/128]: N-major
        scale = scale.transpose(-1, -2)
    if kind.startswith("block1x128"):  # per column and K block
        return b * _expand_k(scale, BLOCK, k)
    return b * _expand_k(_expand(scale, -2, BLOCK, n), BLOCK, k)  # 128x128 blocks


def _group_factor(fn_spec: FunctionSpec, tensors) -> Optional[torch.Tensor]:
    """The per-group [G] product of per-tensor scales, or None."""
    factor = None
    for scale in (fn_spec.a_scale, fn_spec.b_scale):
        if scale is not None and scale[1] == "tensor":
            s = tensors[scale[0]].float()
            factor = s if factor is None else factor * s
    return factor


def _expand(scale: torch.Tensor, dim: int, block: int, size: int) -> torch.Tensor:
    """A scale per `block` entries along `dim`, repeated over them and cut
    to `size`."""
    return scale.repeat_interleave(block, dim=dim).narrow(dim, 0, size)


def _expand_k(scale: torch.Tensor, block: int, k: int) -> torch.Tensor:
    return _expand(scale, -1, block, k)


def _ue8m0(words: torch.Tensor) -> torch.Tensor:
    """Packed UE8M0 exponents (four a word, byte 0 in the low bits) as f32
    scales 2^(e - 127), [..., 4 x words]; e = 0 is 2^-127 (subnormal) and
    255 is +inf, as the kernels decode them."""
    shifts = torch.tensor([0, 8, 16, 24], dtype=torch.int32)
    exponents = (words.unsqueeze(-1) >> shifts) & 0xFF
    bits = torch.where(exponents == 0, torch.tensor(0x00400000, dtype=torch.int32),
                       exponents << 23)
    return bits.to(torch.int32).view(F32).flatten(-2)


def _mx_rows_of_a(fn_spec: FunctionSpec, tensors, words, rows: int) -> torch.Tensor:
    """A's MX scales, one row per row of A. Contiguous groups read
    FlashInfer's layout: group g's scale rows start at (its first row +
    3g) / 4 * 4, clamped to the (M + 3G) / 4 * 4 rows."""
    scales = _ue8m0(words)
    if fn_spec.layout != "contiguous":
        return scales
    offsets = tensors[fn_spec.groups].tolist()
    index = torch.arange(rows)
    for g, (start, end) in enumerate(zip(offsets, offsets[1:])):
        start, end = min(max(start, 0), rows), min(max(end, 0), rows)
        base = (start + 3 * g) // 4 * 4
        index[start:max(start, end)] = torch.arange(base, base + max(end - start, 0))
    return scales[index.clamp(max=scales.shape[0] - 1)]


# ---------------------------------------------------------------------------
# The epilogue: its ops, as the trace wrote them, evaluated in f32
# ---------------------------------------------------------------------------

_OP = re.compile(r"^(?:(%\w+) = )?([\w.]+) (.*?) : .*$")
_UNARY = {"arith.negf": torch.neg, "math.exp": torch.exp, "math.sqrt": torch.sqrt,
          "math.rsqrt": torch.rsqrt, "math.absf": torch.abs, "gg.sigmoid": torch.sigmoid,
          "gg.silu": lambda x: x * torch.sigmoid(x),
          # extf: vectors are read in f32 already (bf16 -> f32 is exact);
          # index_cast / sitofp: the group id, a number to f32.
          "arith.extf": lambda x: x, "arith.index_cast": lambda x: x,
          "arith.sitofp": lambda x: torch.tensor(float(x), dtype=F32)}
_BINARY = {"arith.addf": torch.add, "arith.subf": torch.sub, "arith.mulf": torch.mul,
           "arith.divf": torch.div, "arith.maximumf": torch.maximum,
           "arith.minimumf": torch.minimum}


class _Epilogue:
    """The epilogue of a spec as a function of a group's product: its ops
    (`%v = op %x, %y : f32` lines) on the accumulator (or its two column
    sets), row and column vectors and group scalars, all f32."""

    def __init__(self, fn_spec: FunctionSpec, tensors):
        self.spec = fn_spec
        self.ops = [(result, name, operands.split(", ")) for result, name, operands in
                    (_OP.match(op.text).groups() for op in fn_spec.epilogue or [])]
        self.rows = [tensors[n].float() for n in fn_spec.rows]
        self.cols = [tensors[n].float() for n in fn_spec.cols]
        self.scalars = [tensors[n].float() for n in fn_spec.group_scalars]

    def __call__(self, product: torch.Tensor, group: _Group) -> torch.Tensor:
        if not self.ops:
            return product
        values = self._arguments(product, group)
        for result, name, operands in self.ops:
            args = [values[o] if o.startswith("%") else o for o in operands]
            if name == "gg.yield":
                return torch.broadcast_to(args[0], values["%acc0"].shape)
            values[result] = self._apply(name, args)
        raise ValueError(f"{self.spec.name}: the epilogue has no gg.yield")

    def _arguments(self, product: torch.Tensor, group: _Group) -> Dict[str, Any]:
        """The epilogue block's arguments for this group's product."""
        if self.spec.column_pairs:
            pair = (product[:, 0::2], product[:, 1::2])
        elif self.spec.column_halves:
            pair = product.chunk(2, dim=-1)
        else:
            pair = (product, product)
        values = {"%acc": product, "%acc0": pair[0], "%acc1": pair[1], "%group": group.index}
        values.update((f"%r{i}", v[group.rows_at].unsqueeze(-1))
                      for i, v in enumerate(self.rows))
        values.update((f"%c{i}", v if v.dim() == 1 else v[group.index])
                      for i, v in enumerate(self.cols))
        values.update((f"%s{i}", v[group.index]) for i, v in enumerate(self.scalars))
        return values

    @staticmethod
    def _apply(name: str, args: list):
        if name == "arith.constant":
            return torch.tensor(f32_from_literal(args[0]), dtype=F32)
        if name in _BINARY:
            return _BINARY[name](*args)
        if name in _UNARY:
            return _UNARY[name](args[0])
        raise NotImplementedError(f"ggc's reference backend has no epilogue op {name!r}")


# ---------------------------------------------------------------------------
# validate=True: the group metadata's rules (ggc.groups), on the host
# ---------------------------------------------------------------------------

def _validate_groups(fn_spec: FunctionSpec, tensors, all_rows: bool) -> None:
    position = next(i for i, arg in enumerate(fn_spec.args) if arg.name == fn_spec.groups)
    where = f"argument {position} (groups)"
    values = tensors[fn_spec.groups].numpy().astype("int64")
    a = tensors[fn_spec.a]
    if fn_spec.layout == "contiguous":
        rows = a if fn_spec.a_rows is None else tensors[fn_spec.a_rows]
        _groups._check_offsets(where, values, rows.shape[0], "M", all_rows)
    elif fn_spec.layout == "k_grouped":
        k = a.shape[0] if fn_spec.a_layout == "km" else a.shape[1]
        _groups._check_offsets(where, values, k, "K", False)
    elif fn_spec.layout == "masked":
        _groups._check_counts(where, values, a.shape[1])
    else:  # one-row tiles: each row keeps its own group here
        _groups._check_row_groups(where, values, tensors[fn_spec.b].shape[0], 1)
