"""ggc.language (imported as `gl`): the DSL of `@ggc.jit` kernels.

A kernel states one grouped matmul and the math on its f32 accumulator:

    import ggc
    import ggc.language as gl

    @ggc.jit
    def moe_up(x: gl.Rows, w: gl.Weights, m_indptr: gl.Offsets,
               route: gl.RowVector, y: gl.Out, BLOCK_N: gl.constexpr = None):
        acc = gl.grouped_dot(x, w, m_indptr)      # out[g] = x[g] @ w[g]^T
        gl.store(y, acc * route)                  # epilogue, then the store

Parameters are annotated with what they are; the body's use of each must
agree, and a mismatch is an error at the line that uses it. The
accumulator supports +, -, *, / with numbers, row vectors (one value per
row), column vectors (per output column) and group scalars, and the
functions below (exp, sigmoid, silu, maximum, minimum, abs, sqrt, rsqrt).
`gl.column_pairs(acc)` gives the accumulators of product columns 2j and
2j+1, whose combination is output column j (a gated activation in the
GEMM: `gate, up = gl.column_pairs(acc); gl.store(h, gl.silu(gate) * up)`,
h with N/2 columns); `gl.column_halves(acc)` pairs columns j and j + N/2
(gate rows first, then up rows, in B). `gl.store(out, value, accumulate=True)` adds to what
`out` holds. Tuning knobs are `gl.constexpr` parameters: BLOCK_M, BLOCK_N, BLOCK_K,
STAGES, SPLIT_N and CLUSTER_M (2: CTA pairs of neighbouring M blocks share B by TMA
multicast) override the tile configuration; IDLE_WARPGROUPS ("skip", "compute") what a
tile's warpgroups whose rows are all past their group do.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import numbers
import struct
import threading
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

__all__ = [
    "constexpr", "Rows", "RowIndices", "OutScale", "MaskedRows", "PaddedRows", "TokenMajor", "KMajor", "Weights",
    "WeightsKN", "Offsets", "MaskedCounts", "RowGroups", "Scale", "RowVector",
    "ColVector", "GroupScalar", "Out", "grouped_dot", "column_pairs", "column_halves", "store", "group_id",
    "exp", "sigmoid", "silu", "maximum", "minimum", "abs", "sqrt", "rsqrt",
    "CompileError", "Role",
]


class CompileError(Exception):
    """A kernel body the DSL cannot trace; the message names the user's line."""


class constexpr:  # noqa: N801 - mirrors triton.language.constexpr
    """Annotation of a compile-time parameter (a tuning knob)."""


# Parameter annotations: what each tensor is.
class Role:
    """The base of the parameter annotations below: a kernel parameter
    annotated with one of them is a tensor in that role (`role`), which
    the kernel's contract describes (`doc`)."""
    role = "tensor"
    doc = ""


class Rows(Role):
    """Token-packed rows of A, [M, K], split into groups by `Offsets`."""
    role = "a"
    layout = "contiguous"


class RowIndices(Role):
    """Row indices, [M] int32 (one per row of the product). For
    `grouped_dot(a_rows=...)`: row r of the product is row a_rows[r] of A
    (a MoE layer's tokens read in expert order, with no permuted copy
    written); a negative index, or one past A's rows, reads zeros. For
    `store(out, value, rows=...)`: row r of the value goes to row rows[r]
    of `out` (a route's row put back in token order, with no permuting
    pass); a negative index, or one past out's rows, writes nothing."""
    role = "row_indices"


class MaskedRows(Role):
    """A batch per group, [G, M_max, K], valid counts in `MaskedCounts`."""
    role = "a"
    layout = "masked"


class PaddedRows(Role):
    """DeepGEMM's contiguous layout, [M, K], one group index per row."""
    role = "a"
    layout = "padded_contiguous"


class TokenMajor(Role):
    """[K, M] or [K, N] token-major activations of a weight gradient."""
    role = "token_major"
    layout = "k_grouped"
    b_layout = "kn"


class KMajor(Role):
    """[M, K] or [N, K] K-major (transposed) operands of a weight gradient:
    the form f8 needs, since wgmma reads f8 only along K."""
    role = "k_major"
    layout = "k_grouped"
    b_layout = "nk"


class Weights(Role):
    """Per-group weights [G, N, K] (K-major, the NT form)."""
    role = "b"
    b_layout = "nk"


class WeightsKN(Role):
    """Per-group weights [G, K, N] (N-major, the NN form)."""
    role = "b"
    b_layout = "kn"


class Offsets(Role):
    """G+1 group offsets (CSR m_indptr), int32 or int64."""
    role = "groups"


class MaskedCounts(Role):
    """Valid rows per group, [G] int32."""
    role = "groups"


class RowGroups(Role):
    """Group index per row, [M] int32, -1 for padding rows."""
    role = "groups"


class Scale(Role):
    """A scale tensor of A or B (kind given to grouped_dot)."""
    role = "scale"


class RowVector(Role):
    """One value per row of the output (e.g. routing weights)."""
    role = "rows"


class ColVector(Role):
    """One value per output column ([N], or [G, N] per group: a bias)."""
    role = "cols"


class GroupScalar(Role):
    """One value per group, [G]."""
    role = "group_scalars"


class Out(Role):
    """The output; rows outside every group are never written."""
    role = "out"


class OutScale(Role):
    """The 1x128 block scales of an FP8 out, f32 [ceil(N/128), align4(M)]
    (M-major: the `block_mn` scales an FP8 grouped_dot reads for A),
    written by `store(out, value, scale=...)`."""
    role = "out_scale"


def _user_location() -> Tuple[str, int, int]:
    """The file and line of the kernel body that called into gl."""
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_globals.get("__name__") != __name__:
            return frame.f_code.co_filename, frame.f_lineno, 1
        frame = frame.f_back
    return "<unknown>", 0, 0


def _error(message: str) -> CompileError:
    filename, line, _ = _user_location()
    return CompileError(f"{filename}:{line}: {message}")


# ---------------------------------------------------------------------------
# Tracing state
# ---------------------------------------------------------------------------

@dataclass
class _Op:
    name: str                 # e.g. "arith.mulf"
    operands: List[str]
    result: str
    type: str = "f32"
    loc: Tuple[str, int, int] = ("<unknown>", 0, 0)


@dataclass
class Param:
    """A traced kernel parameter (what the body sees for a tensor argument)."""
    name: str
    index: int
    annotation: type
    shape: Tuple[int, ...]
    dtype: str
    uses: List[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<ggc parameter {self.name}: {self.annotation.__name__}>"


class _Trace:
    """What one kernel body has done so far. The trace being built is
    per thread (`_current`): two threads tracing different kernels at
    once must not record into each other's trace."""

    def __init__(self):
        self.ops: List[_Op] = []
        self.dot: Optional[dict] = None
        self.stored: Optional[Tuple[Param, "_Value"]] = None
        self.epilogue_args: List[Tuple[str, Param]] = []  # (kind, param)
        # "column_pairs" or "column_halves" once one split the accumulator.
        self.column_pairs: Optional[str] = None
        self.accumulate = False  # gl.store(..., accumulate=True): out +=
        self.zero_ungrouped = False  # gl.store(..., zero_ungrouped=True)
        self.out_rows = None  # gl.store(..., rows=...)
        self.out_scale = None  # gl.store(..., scale=...)
        self.counter = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def vector_value(self, kind: str, param: Param) -> "_Value":
        """The epilogue block argument for a row ("r"), column ("c") or group
        ("s") input: %r0, %r1, ... in the order the body first uses them."""
        if kind == "c" and self.column_pairs:
            raise _error(f"ColVector '{param.name}' cannot follow gl.{self.column_pairs}: an "
                         f"output column combines two product columns")
        if not any(k == kind and p is param for k, p in self.epilogue_args):
            self.epilogue_args.append((kind, param))
        same_kind = [p for k, p in self.epilogue_args if k == kind]
        index = next(i for i, p in enumerate(same_kind) if p is param)
        return _Value(f"%{kind}{index}", _elem(param.dtype))


_current = threading.local()


def expected_m_problem(expected_m) -> Optional[str]:
    """What is wrong with an expected_m hint, or None when it is fine."""
    if expected_m is None or (isinstance(expected_m, int) and not isinstance(expected_m, bool)
                              and 1 <= expected_m <= 2**31 - 1):
        return None
    return f"expected_m must be an int in [1, 2^31 - 1], got {expected_m!r}"


def _trace() -> _Trace:
    trace = getattr(_current, "trace", None)
    if trace is None:
        raise _error("ggc.language functions work only inside a @ggc.jit kernel")
    return trace


@contextlib.contextmanager
def _tracing(trace: _Trace):
    """Makes `trace` the calling thread's trace for the body's duration."""
    previous = getattr(_current, "trace", None)
    _current.trace = trace
    try:
        yield trace
    finally:
        _current.trace = previous


def _elem(dtype: str) -> str:
    return {"bf16": "bf16", "f16": "f16", "f32": "f32"}.get(dtype, dtype)


# ---------------------------------------------------------------------------
# Values of the epilogue
# ---------------------------------------------------------------------------

class _Value:
    """A scalar of the epilogue: the accumulator or something made from it."""

    def __init__(self, ssa: str, type_: str = "f32"):
        self.ssa, self.type = ssa, type_

    def _f32(self) -> "_Value":
        if self.type == "f32":
            return self
        return _emit("arith.extf", [self], type_from=self.type)

    def __add__(self, other): return _binary("arith.addf", self, other)
    def __radd__(self, other): return _binary("arith.addf", other, self)
    def __sub__(self, other): return _binary("arith.subf", self, other)
    def __rsub__(self, other): return _binary("arith.subf", other, self)
    def __mul__(self, other): return _binary("arith.mulf", self, other)
    def __rmul__(self, other): return _binary("arith.mulf", other, self)
    def __truediv__(self, other): return _binary("arith.divf", self, other)
    def __rtruediv__(self, other): return _binary("arith.divf", other, self)
    def __neg__(self): return _emit("arith.negf", [self])
    def __abs__(self): return _emit("math.absf", [self])

    def __pow__(self, other):
        raise _error("the epilogue has no ** (write acc * acc, or use gl.exp and gl.log)")

    __rpow__ = __pow__

    def _compare(self, other):
        raise _error("the epilogue cannot compare values while tracing (there is no "
                     "branch); use gl.maximum/gl.minimum")

    __lt__ = __le__ = __gt__ = __ge__ = _compare

    def __bool__(self):
        raise _error("the accumulator has no truth value while tracing; use "
                     "gl.maximum/gl.minimum instead of if/else on it")


def f32_literal(x) -> str:
    """An epilogue constant as MLIR's f32 attribute text: a finite value as
    Python writes it, infinities and NaN as their bits (MLIR reads no
    `inf` or `nan`); a finite value past f32's range is an error."""
    value = float(x)
    if math.isfinite(value):
        try:
            struct.pack("<f", value)
        except OverflowError:
            raise _error(f"the constant {x!r} is beyond f32's range (the epilogue "
                         f"computes in f32)") from None
        return repr(value)
    return f"0x{struct.unpack('<I', struct.pack('<f', value))[0]:08X}"


def f32_from_literal(text: str) -> float:
    """f32_literal's text as a Python float (ggc's reference backend)."""
    if text.startswith("0x"):
        return struct.unpack("<f", struct.pack("<I", int(text, 16)))[0]
    return float(text)


def _as_value(x) -> _Value:
    if isinstance(x, _Value):
        return x._f32()
    if isinstance(x, bool):  # (numpy's bool_ is no numbers.Real: refused below)
        raise _error("booleans cannot enter the epilogue")
    if isinstance(x, numbers.Real):  # numpy's scalars too
        t = _trace()
        ssa = t.fresh()
        t.ops.append(_Op("arith.constant", [f32_literal(x)], ssa, loc=_user_location()))
        return _Value(ssa)
    if isinstance(x, Param):
        raise _error(f"parameter '{x.name}' ({x.annotation.__name__}) cannot enter the "
                     f"epilogue: only parameters annotated RowVector, ColVector or "
                     f"GroupScalar do")
    raise _error(f"cannot use a {type(x).__name__} in the epilogue")


def _emit(name: str, operands, type_from: Optional[str] = None) -> _Value:
    t = _trace()
    _require_pair_values(t, operands)
    ssa = t.fresh()
    t.ops.append(_Op(name, [o.ssa for o in operands], ssa, type=type_from or "f32",
                     loc=_user_location()))
    return _Value(ssa)


def _binary(name: str, lhs, rhs) -> _Value:
    return _emit(name, [_param_value(lhs), _param_value(rhs)])


def _param_value(x) -> _Value:
    """Parameters annotated as epilogue vectors read their element."""
    if isinstance(x, Param):
        kind = {RowVector: "r", ColVector: "c", GroupScalar: "s"}.get(x.annotation)
        if kind is None:
            return _as_value(x)
        x.uses.append(kind)
        return _trace().vector_value(kind, x)._f32()
    return _as_value(x)


def exp(x): return _emit("math.exp", [_param_value(x)])
def sqrt(x): return _emit("math.sqrt", [_param_value(x)])
def rsqrt(x): return _emit("math.rsqrt", [_param_value(x)])
def abs(x): return _emit("math.absf", [_param_value(x)])  # noqa: A001
def sigmoid(x): return _emit("gg.sigmoid", [_param_value(x)])
def silu(x): return _emit("gg.silu", [_param_value(x)])
def maximum(x, y): return _emit("arith.maximumf", [_param_value(x), _param_value(y)])
def minimum(x, y): return _emit("arith.minimumf", [_param_value(x), _param_value(y)])


def group_id() -> _Value:
    """The group (expert) index of the element, as f32."""
    t = _trace()
    ssa = t.fresh()
    t.ops.append(_Op("group_id", ["%group"], ssa, loc=_user_location()))
    return _Value(ssa)


# ---------------------------------------------------------------------------
# The grouped matmul and the store
# ---------------------------------------------------------------------------

_SCALE_KINDS = ("tensor", "channel", "block", "block_mn", "block1x128", "block1x128_mn",
                "mx32", "mx128")
_B_ONLY_SCALE_KINDS = ("block1x128", "block1x128_mn")


def grouped_dot(a: Param, b: Param, groups: Param, *, a_scale: Optional[Param] = None,
                b_scale: Optional[Param] = None, a_scale_kind: str = "block_mn",
                b_scale_kind: str = "block", expected_m: Optional[int] = None,
                tf32: bool = False, a_rows: Optional[Param] = None) -> _Value:
    """The grouped matmul: out[g] = scale(a[g]) @ scale(b[g])^T, in f32.

    The layout follows `a`'s annotation (Rows: contiguous with Offsets,
    MaskedRows with MaskedCounts, PaddedRows with RowGroups, TokenMajor with
    Offsets over K for a weight gradient; KMajor for its transposed, K-major
    form, which f8 needs). Scale kinds: "tensor" ([G]), "channel" (per row
    of A / per column of B), "block" (A 1x128 K-major, B 128x128 K-major),
    "block_mn" (their M-/N-major forms), "block1x128" / "block1x128_mn" (B
    per column and 128-wide K block), and "mx32" / "mx128" (UE8M0 exponents
    per row and K block, four per int32, on both sides: FlashInfer's MXFP8
    layout). A weight gradient's block scales follow the 128-wide blocks of
    the concatenated K, and B's have no group dimension.

    `a_rows` (Rows only, a parameter annotated RowIndices) gathers A's rows:
    row r of the product is row a_rows[r] of `a`, which may then have any
    number of rows T; the offsets and the output count rows of the list.
    An a_scale belongs to the product's rows (row r's scales are its row
    r, gathered by the caller), not to a's.
    """
    t = _trace()
    if t.dot is not None:
        raise _error("a kernel holds one gl.grouped_dot")
    for name, p in (("a", a), ("b", b), ("groups", groups)):
        if not isinstance(p, Param):
            raise _error(f"gl.grouped_dot's '{name}' must be a kernel parameter, got "
                         f"{type(p).__name__}")
    layout = getattr(a.annotation, "layout", None)
    if layout is None:
        raise _error(f"gl.grouped_dot's 'a' must be annotated Rows, MaskedRows, PaddedRows, "
                     f"TokenMajor or KMajor; '{a.name}' is {a.annotation.__name__}")
    expected_groups = {"contiguous": Offsets, "masked": MaskedCounts,
                       "padded_contiguous": RowGroups, "k_grouped": Offsets}[layout]
    if groups.annotation is not expected_groups:
        raise _error(f"'{a.name}' is {a.annotation.__name__}, so the groups must be "
                     f"{expected_groups.__name__}; '{groups.name}' is "
                     f"{groups.annotation.__name__}")
    if layout == "k_grouped":
        if b.annotation is not a.annotation:
            raise _error(f"a weight gradient takes both operands {a.annotation.__name__}; "
                         f"'{b.name}' is {b.annotation.__name__}")
        b_layout = a.annotation.b_layout
    else:
        if b.annotation not in (Weights, WeightsKN):
            raise _error(f"gl.grouped_dot's 'b' must be annotated Weights or WeightsKN; "
                         f"'{b.name}' is {b.annotation.__name__}")
        b_layout = b.annotation.b_layout
    if not isinstance(tf32, bool):  # a truthy string would lower f32 to tf32
        raise _error(f"tf32 must be True or False, got {tf32!r}")
    for name, scale, kind in (("a_scale", a_scale, a_scale_kind),
                              ("b_scale", b_scale, b_scale_kind)):
        if kind not in _SCALE_KINDS:  # checked with or without the scale
            raise _error(f"{name}_kind must be one of {_SCALE_KINDS}, got {kind!r}")
        if scale is None:
            continue
        if not isinstance(scale, Param) or scale.annotation is not Scale:
            raise _error(f"gl.grouped_dot's '{name}' must be a parameter annotated Scale")
        if name == "a_scale" and kind in _B_ONLY_SCALE_KINDS:
            raise _error(f"a_scale_kind {kind!r} is a per-column scale of B; A's 1x128 "
                         f"blocks are 'block' or 'block_mn'")
    if a_rows is not None:
        if not isinstance(a_rows, Param) or a_rows.annotation is not RowIndices:
            raise _error("gl.grouped_dot's 'a_rows' must be a parameter annotated "
                         "RowIndices")
        if layout != "contiguous":
            raise _error(f"a_rows gathers rows of Rows (the contiguous layout); "
                         f"'{a.name}' is {a.annotation.__name__}")
    problem = expected_m_problem(expected_m)
    if problem:
        raise _error(problem)
    t.dot = dict(a=a, b=b, groups=groups, layout=layout, b_layout=b_layout,
                 a_scale=a_scale, b_scale=b_scale, a_scale_kind=a_scale_kind,
                 b_scale_kind=b_scale_kind, expected_m=expected_m, tf32=tf32,
                 a_rows=a_rows, loc=_user_location())
    return _Value("%acc")


def column_pairs(acc) -> Tuple[_Value, _Value]:
    """The accumulators of product columns 2j and 2j+1, whose combination
    the store writes to output column j: `out` then has N/2 columns (a
    gated activation, gate and up rows of B interleaved). After it, the
    epilogue uses these two, not `acc`; `gl.col` vectors are not taken."""
    return _split_accumulator(acc, "column_pairs")


def column_halves(acc) -> Tuple[_Value, _Value]:
    """The accumulators of product columns j and j + N/2, whose combination
    the store writes to output column j: `out` then has N/2 columns (a
    gated activation with B's gate rows first and its up rows after them,
    as vLLM and most checkpoints store them: no interleaving). B must be
    K-major ("nk") and without scales; sm_90a only (elsewhere interleave
    the rows and use gl.column_pairs). As with gl.column_pairs, the
    epilogue then uses these two, not `acc`."""
    return _split_accumulator(acc, "column_halves")


def _split_accumulator(acc, name: str) -> Tuple[_Value, _Value]:
    t = _trace()
    if t.dot is None or not isinstance(acc, _Value) or acc.ssa != "%acc":
        raise _error(f"gl.{name} takes the accumulator gl.grouped_dot returned")
    if t.column_pairs:
        raise _error(f"gl.{name} after gl.{t.column_pairs}: a kernel splits its "
                     f"accumulator once")
    if t.dot["layout"] == "k_grouped":
        raise _error(f"gl.{name} is for row layouts (Rows, MaskedRows, PaddedRows), "
                     "not a weight gradient")
    # The epilogue's block takes the two values instead of the accumulator:
    # what the body made of it, or a column vector, before this call has no
    # place there.
    if any("%acc" in op.operands for op in t.ops) or t.stored is not None:
        raise _error(f"gl.{name} must come before any use of the accumulator")
    used_columns = [p.name for k, p in t.epilogue_args if k == "c"]
    if used_columns:
        raise _error(f"ColVector '{used_columns[0]}' cannot go with gl.{name}: an "
                     f"output column combines two product columns")
    t.column_pairs = name
    return _Value("%acc0"), _Value("%acc1")


def _require_pair_values(t: _Trace, values) -> None:
    if t.column_pairs and any(v.ssa == "%acc" for v in values):
        raise _error(f"after gl.{t.column_pairs} the epilogue uses its two values, not the "
                     "accumulator")


def _require_store_rows_param(t: _Trace, param, name: str, annotation, verb: str) -> None:
    """gl.store's `name` is a parameter annotated `annotation`, over the
    rows of Rows (the contiguous layout)."""
    if not isinstance(param, Param) or param.annotation is not annotation:
        raise _error(f"gl.store's '{name}' must be a parameter annotated "
                     f"{annotation.__name__}")
    if t.dot["layout"] != "contiguous":
        raise _error(f"gl.store's {name} {verb} the rows of Rows (the contiguous "
                     f"layout); '{t.dot['a'].name}' is {t.dot['a'].annotation.__name__}")


def store(out: Param, value, *, accumulate=False, zero_ungrouped=False,
          rows: Optional[Param] = None, scale: Optional[Param] = None) -> None:
    """Stores the epilogue's value to the valid rows of `out`; with
    `accumulate=True` adds it to what `out` holds (`out += value`, summed in
    f32 and rounded once; the same bits on every run), as a weight gradient
    accumulated over micro-batches needs. `zero_ungrouped=True`
    (contiguous groups, the plain product: no epilogue, no accumulate)
    also writes zeros to the rows of `out` outside every group, which are
    otherwise left as they were (an input gradient's rows of x that no group
    read). `rows` (contiguous groups; a parameter annotated RowIndices)
    scatters the rows: row r of the value goes to row rows[r] of `out`,
    which may then have any number of rows, and nowhere where that index is
    negative or past out's rows (a route's row, weighted by a row vector in
    the epilogue, put back in token order). Rows no index names are left as
    they were; where two indices name one row, one of the two is written.
    It takes no accumulate and no zero_ungrouped. `scale` (contiguous
    groups; a parameter annotated OutScale) quantises the value to FP8
    e4m3 for an f8 e4m3 `out`: per row and 128-column block, a = max(amax,
    1e-12) over the block's f32 values, out = e4m3(value * 448 / a)
    (saturated) and the scale a * f32(1 / 448), the rule of ggc.moe.quant; the
    next FP8 grouped_dot reads them as A and its `block_mn` scales. It
    takes no rows, accumulate or zero_ungrouped."""
    t = _trace()
    if t.dot is None:
        raise _error("gl.store needs a gl.grouped_dot first")
    if not isinstance(out, Param) or out.annotation is not Out:
        raise _error(f"gl.store writes to a parameter annotated Out; got "
                     f"{getattr(out, 'name', type(out).__name__)}")
    if t.stored is not None:
        raise _error("a kernel stores once")
    value = _param_value(value) if not isinstance(value, _Value) else value
    _require_pair_values(t, [value])
    if not isinstance(accumulate, bool):
        raise _error(f"gl.store's accumulate must be True or False (a constexpr); got "
                     f"{accumulate!r}")
    if not isinstance(zero_ungrouped, bool):
        raise _error(f"gl.store's zero_ungrouped must be True or False (a constexpr); got "
                     f"{zero_ungrouped!r}")
    if zero_ungrouped and accumulate:
        raise _error("gl.store's zero_ungrouped writes zeros to the rows outside every "
                     "group, which accumulate would leave as they were: take one")
    if rows is not None:
        _require_store_rows_param(t, rows, "rows", RowIndices, "scatter")
        if accumulate or zero_ungrouped:
            raise _error("gl.store's rows write each row once where its index says: it "
                         "takes no accumulate (two indices naming one row would add in "
                         "no fixed order) and no zero_ungrouped")
    if scale is not None:
        _require_store_rows_param(t, scale, "scale", OutScale, "quantises")
        if accumulate or zero_ungrouped or rows is not None:
            raise _error("gl.store's scale writes each row once with its scales: it takes "
                         "no rows, accumulate or zero_ungrouped")
    t.stored = (out, value)
    t.accumulate = accumulate
    t.zero_ungrouped = zero_ungrouped
    t.out_rows = rows
    t.out_scale = scale
