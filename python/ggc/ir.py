"""Write gg IR text for one grouped matmul function.

`FunctionSpec` describes the function (arguments with shapes and types, the
operands' roles, scales, epilogue) and `emit` writes it. The `@ggc.jit`
tracer and the ready-made ops build specs; `grouped_matmul(...)` builds one
from sizes, for tests and benchmarks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

LAYOUTS = ("contiguous", "masked", "padded_contiguous", "k_grouped")
SCALE_ATTRS = {
    ("a", "tensor"): "<tensor>", ("a", "channel"): "<channel>",
    ("a", "block"): "<block 1x128>", ("a", "block_mn"): "<block 1x128, mn_major>",
    ("b", "tensor"): "<tensor>", ("b", "channel"): "<channel>",
    ("b", "block"): "<block 128x128>", ("b", "block_mn"): "<block 128x128, mn_major>",
    ("b", "block1x128"): "<block 1x128>", ("b", "block1x128_mn"): "<block 1x128, mn_major>",
    ("a", "mx32"): "<mx 1x32>", ("a", "mx128"): "<mx 1x128>",
    ("b", "mx32"): "<mx 1x32>", ("b", "mx128"): "<mx 1x128>",
}

Location = Tuple[str, int, int]


@dataclass
class Arg:
    name: str
    shape: List[Optional[int]]  # None: dynamic
    dtype: str

    @property
    def type(self) -> str:
        dims = "x".join("?" if d is None else str(d) for d in self.shape)
        return f"memref<{dims}x{self.dtype}>"


@dataclass
class EpilogueOp:
    text: str                   # e.g. "%v1 = arith.mulf %acc, %r0 : f32"
    loc: Optional[Location] = None


@dataclass
class FunctionSpec:
    name: str
    layout: str
    args: List[Arg]             # in signature order
    a: str
    b: str
    groups: str
    out: str
    b_layout: str = "nk"
    a_layout: str = "mk"
    out_layout: str = "mn"
    a_rows: Optional[str] = None  # argument: row r of the product is a[a_rows[r]]
    out_rows: Optional[str] = None  # argument: row r of the product goes to out[out_rows[r]]
    out_scale: Optional[str] = None  # argument: 1x128 scales of an FP8 out (block_mn)
    a_scale: Optional[Tuple[str, str]] = None   # (argument, kind)
    b_scale: Optional[Tuple[str, str]] = None
    rows: List[str] = field(default_factory=list)
    cols: List[str] = field(default_factory=list)
    group_scalars: List[str] = field(default_factory=list)
    tf32: bool = False
    column_pairs: bool = False  # the epilogue combines columns 2j, 2j+1 into j
    column_halves: bool = False  # the epilogue combines columns j, j + N/2 into j
    accumulate: bool = False    # out += the epilogue's value
    zero_ungrouped: bool = False  # zeros to the rows of out outside every group
    expected_m: Optional[int] = None
    config: Optional[str] = None
    direct_stores: bool = False  # per-thread stores instead of the TMA pool
    tile_order: Optional[str] = None       # "m_fastest" / "n_fastest"
    m_band: Optional[int] = None           # M blocks per band (m_fastest; 0: none)
    b_cache: Optional[str] = None          # "normal" / "evict_first" / "evict_last"
    group_reads: Optional[str] = None      # "global" / "shared"
    odd_block_a: Optional[str] = None      # "own" / "multicast"
    overfetch_rows: Optional[int] = None   # #gg.overfetch rows (k = 0)
    idle_warpgroups: Optional[str] = None  # "skip" / "compute"
    kernel_plan: Optional[str] = None      # a #gg.kernel_plan<...> attribute
    store_slice: Optional[int] = None      # columns the staged tile holds at a time
    epilogue: Optional[List[EpilogueOp]] = None  # ends with gg.yield
    loc: Optional[Location] = None

    def arg(self, name: str) -> Arg:
        return next(a for a in self.args if a.name == name)


def _loc(loc: Optional[Location]) -> str:
    if loc is None:
        return ""
    filename, line, col = loc
    filename = filename.replace("\\", "\\\\").replace('"', '\\"')
    return f' loc("{filename}":{line}:{col})'


def emit(spec: FunctionSpec) -> str:
    """The gg IR text of the function."""
    if spec.layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {spec.layout!r}")
    t = {a.name: a.type for a in spec.args}
    signature = ", ".join(f"%{a.name}: {a.type}" for a in spec.args)
    a_suffix = ", km" if spec.a_layout == "km" else ""
    b_suffix = ", kn" if spec.b_layout == "kn" else ""
    lines = [f"func.func @{spec.name}({signature}) {{",
             f"  gg.grouped_matmul {spec.layout} a(%{spec.a} : {t[spec.a]}{a_suffix}) "
             + (f"a_rows(%{spec.a_rows} : {t[spec.a_rows]}) " if spec.a_rows else "")
             + f"b(%{spec.b} : {t[spec.b]}{b_suffix})",
             f"      groups(%{spec.groups} : {t[spec.groups]})"]
    for side, scale in (("a", spec.a_scale), ("b", spec.b_scale)):
        if scale:
            name, kind = scale
            lines.append(f"      {side}_scale(%{name} : {t[name]}, {SCALE_ATTRS[side, kind]})")
    out_suffix = ", nm" if spec.out_layout == "nm" else ""
    lines.append(f"      out(%{spec.out} : {t[spec.out]}{out_suffix})"
                 + (f" out_rows(%{spec.out_rows} : {t[spec.out_rows]})"
                    if spec.out_rows else "")
                 + (f" out_scale(%{spec.out_scale} : {t[spec.out_scale]})"
                    if spec.out_scale else ""))
    for keyword, names in (("rows", spec.rows), ("cols", spec.cols),
                           ("group_scalars", spec.group_scalars)):
        if names:
            lines.append(f"      {keyword}(" + ", ".join(f"%{n}" for n in names) + " : "
                         + ", ".join(t[n] for n in names) + ")")
    attrs = []
    if spec.tf32:
        attrs.append("tf32")
    if spec.column_pairs:
        attrs.append("column_pairs")
    if spec.column_halves:
        attrs.append("column_halves")
    if spec.accumulate:
        attrs.append("accumulate")
    if spec.zero_ungrouped:
        attrs.append("zero_ungrouped")
    if spec.expected_m is not None:
        attrs.append(f"expected_m = {spec.expected_m} : i64")
    if spec.config is not None:
        attrs.append(f"config = {spec.config}")
    if spec.direct_stores:
        attrs.append("store_pool = array<i64>")
    if any(x is not None for x in (spec.tile_order, spec.b_cache, spec.m_band,
                                   spec.group_reads, spec.odd_block_a)):
        attrs.append(f"schedule = #gg.schedule<order = {spec.tile_order or 'm_fastest'}, "
                     f"m_band = {spec.m_band or 0}, b_cache = {spec.b_cache or 'normal'}, "
                     f"group_reads = {spec.group_reads or 'global'}, "
                     f"odd_block_a = {spec.odd_block_a or 'own'}>")
    if spec.overfetch_rows is not None:
        attrs.append(f"overfetch = #gg.overfetch<rows = {spec.overfetch_rows}, k = 0>")
    if spec.idle_warpgroups is not None:
        attrs.append(f"padding = #gg.padding<idle_warpgroups = {spec.idle_warpgroups}>")
    if spec.kernel_plan is not None:
        attrs.append(f"kernel_plan = {spec.kernel_plan}")
    if spec.store_slice is not None:
        attrs.append(f"store_slice = {spec.store_slice} : i64")
    if attrs:
        lines.append("      {" + ", ".join(attrs) + "}")
    if spec.epilogue is not None:
        block_args = (["%acc0: f32", "%acc1: f32"] if spec.column_pairs or spec.column_halves
                      else ["%acc: f32"])
        block_args += [f"%r{i}: {spec.arg(n).dtype}" for i, n in enumerate(spec.rows)]
        block_args += [f"%c{i}: {spec.arg(n).dtype}" for i, n in enumerate(spec.cols)]
        block_args += [f"%s{i}: {spec.arg(n).dtype}"
                       for i, n in enumerate(spec.group_scalars)]
        block_args.append("%group: index")
        lines.append("      epilogue {")
        lines.append(f"      ^bb0({', '.join(block_args)}):")
        lines += [f"        {op.text}{_loc(op.loc)}" for op in spec.epilogue]
        lines.append("      }" + _loc(spec.loc))
    elif spec.loc is not None:
        lines[-1] += _loc(spec.loc)
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


ELEMENT_TYPES = ("bf16", "f16", "f32", "f8E4M3FN", "f8E5M2")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# One attribute of its kind, nothing after it: text spliced into the op.
_ATTRIBUTES = {"config": re.compile(r"#gg\.config<[^<>{}\n]*>"),
               "kernel_plan": re.compile(r"#gg\.kernel_plan<[^<>{}\n]*>")}


def _size(name: str, value, minimum: int, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}"
                         f"{' or None' if optional else ''}, got {value!r}")


def _check_builder_arguments(*, name, layout, num_groups, n, k, m, dtypes, offsets_dtype,
                             out_layout, rows, group_scalars, a_scale, b_scale, config,
                             kernel_plan) -> None:
    """grouped_matmul's arguments before any becomes IR text: a string
    that is not what its argument names would splice other IR in (a config
    ending in ", accumulate" compiled an accumulating kernel)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"name must be an identifier ([A-Za-z_][A-Za-z0-9_]*), got {name!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    _size("num_groups", num_groups, 1)
    _size("n", n, 1)
    _size("k", k, 1, optional=True)
    _size("m", m, 1, optional=True)
    _size("group_scalars", group_scalars, 0)
    for arg, value in dtypes.items():
        if value is not None and value not in ELEMENT_TYPES:
            raise ValueError(f"{arg} must be one of {ELEMENT_TYPES}, got {value!r}")
    if offsets_dtype not in ("i32", "i64"):
        raise ValueError(f"offsets_dtype must be 'i32' or 'i64', got {offsets_dtype!r}")
    if out_layout not in ("mn", "nm"):
        raise ValueError(f"out_layout must be 'mn' or 'nm', got {out_layout!r}")
    if isinstance(rows, str) or any(r not in ELEMENT_TYPES for r in rows):
        raise ValueError(f"rows must be a list of element types from {ELEMENT_TYPES}, "
                         f"got {rows!r}")
    for side, kind in (("a", a_scale), ("b", b_scale)):
        if kind is not None and (side, kind) not in SCALE_ATTRS:
            kinds = sorted(k for s, k in SCALE_ATTRS if s == side)
            raise ValueError(f"{side}_scale must be one of {kinds}, got {kind!r}")
    for arg, text in (("config", config), ("kernel_plan", kernel_plan)):
        if text is not None and not _ATTRIBUTES[arg].fullmatch(text):
            raise ValueError(f"{arg} must be one #gg.{arg}<...> attribute and nothing "
                             f"else, got {text!r}")


def grouped_matmul(
    name: str,
    *,
    layout: str,
    num_groups: int,
    n: int,
    k: Optional[int],
    dtype: str = "bf16",
    out_dtype: str = "bf16",
    m: Optional[int] = None,
    offsets_dtype: str = "i32",
    b_layout: str = "nk",
    tf32: bool = False,
    expected_m: Optional[int] = None,
    rows: Sequence[str] = (),
    cols: Sequence[Sequence[int]] = (),
    group_scalars: int = 0,
    epilogue: Optional[str] = None,
    config: Optional[str] = None,
    a_dtype: Optional[str] = None,
    a_scale: Optional[str] = None,
    b_scale: Optional[str] = None,
    direct_stores: bool = False,
    tile_order: Optional[str] = None,
    m_band: Optional[int] = None,
    idle_warpgroups: Optional[str] = None,
    overfetch_rows: Optional[int] = None,
    b_cache: Optional[str] = None,
    group_reads: Optional[str] = None,
    odd_block_a: Optional[str] = None,
    out_layout: str = "mn",
    kernel_plan: Optional[str] = None,
    store_slice: Optional[int] = None,
    column_pairs: bool = False,
    column_halves: bool = False,
    accumulate: bool = False,
    a_rows: bool = False,
    zero_ungrouped: bool = False,
    out_rows: bool = False,
    out_scale: bool = False,
) -> str:
    """A func.func `@name` holding one gg.grouped_matmul, from sizes.

    B is [G, N, K] (`b_layout="nk"`) or [G, K, N] (`"kn"`); `k_grouped`
    takes A as [K, M] and B as [K, N] (token-major, `"kn"`) or A as [M, K]
    and B as [N, K] (K-major, `"nk"`), and writes out as [G, M, N] or, with
    `out_layout="nm"`, [G, N, M]. `m` is the row count of
    A (M_max for masked); None makes it dynamic. `a_dtype` overrides A's
    element type (mixed f8 pairs). `a_scale` and `b_scale` name a scale
    layout: "tensor", "channel", "block" (A 1x128 K-major, B 128x128 K-major)
    or "block_mn" (the M- or N-major form), "block1x128"/"block1x128_mn" (B
    per column and 128-wide K block), or "mx32"/"mx128" (UE8M0 per row and K
    block, four per i32; both sides). k_grouped scales have no group
    dimension on B's side, and their K blocks are those of the concatenated
    K. `direct_stores` keeps per-thread
    stores instead of the TMA store pool. `tile_order` ("m_fastest",
    "n_fastest"), `m_band` (M blocks per band with m_fastest; 0: none), `idle_warpgroups` ("skip", "compute") and
    `overfetch_rows` (block M - 1: whole-tile loads; 2^j - 1: a group's last
    tile loads its rows in units of 2^j), `b_cache` (B's L2 policy:
    "normal", "evict_first", "evict_last") and `group_reads` (masked and
    contiguous: "shared" copies the counts or offsets into shared memory at
    the kernel's entry for the walk to read, "global" loads them as the walk
    reaches each group) and `odd_block_a` (pairs of CTAs: "multicast" has
    rank 0 load the rows of a group's odd last M block into both CTAs,
    "own" each CTA its own) override the choices of gg-schedule-groups,
    gg-eliminate-padding and gg-plan-overfetch (naming any of `tile_order`,
    `m_band`, `b_cache`, `group_reads` and `odd_block_a` states the whole
    schedule: the others take m_fastest, no bands, "normal", "global" and
    "own", not the pass's choice); `kernel_plan` (a whole
    `#gg.kernel_plan<...>`: promotion, where scales live, registers, staging) gg-plan-kernel's,
    which checks it. `store_slice` stages and stores the output tile that
    many columns at a time through a ring of two buffers (gg's
    `store_slice`). `epilogue` is the body of the
    epilogue block, whose arguments are %acc, %r0.., %c0.., %s0.., %group,
    ending in gg.yield. With `column_pairs` the epilogue combines columns
    2j and 2j+1 of the product (its first arguments are %acc0 and %acc1)
    into output column j, so `out` has n/2 columns (a gated activation with
    gate and up rows of B interleaved); `column_halves` combines columns j
    and j + n/2 the same way (gate rows of B first, then up rows).
    `accumulate` adds the result to
    what `out` holds; `zero_ungrouped` (contiguous) writes zeros to the rows
    of `out` outside every group. `a_rows` (contiguous) reads row r of the product from
    row a_rows[r] of A: A is then [T, k] with T dynamic, and a_rows [m] i32
    comes right after it.

    `out_rows` (contiguous) writes row r of the product to row out_rows[r] of
    `out` (none where it is negative or past out's rows): `out` is then [R, n]
    with R dynamic, and out_rows [m] i32 comes right after it.

    `out_scale` (contiguous) quantises the output to FP8 in the epilogue:
    `out_dtype` must be "f8E4M3FN", and out_scale [ceil(n_out/128),
    align4(m)] f32 (the block_mn scales an FP8 GEMM reads for A) comes
    right after out.

    Arguments, in order: a, [a_rows], b, groups, [a_scale], [b_scale], one per `rows`
    entry (element types), per `cols` entry (shapes, f32), per group scalar
    (f32), and last `out`, then [out_rows] or [out_scale].
    """
    _check_builder_arguments(name=name, layout=layout, num_groups=num_groups, n=n, k=k, m=m,
                             dtypes=dict(dtype=dtype, out_dtype=out_dtype, a_dtype=a_dtype),
                             offsets_dtype=offsets_dtype, out_layout=out_layout, rows=rows,
                             group_scalars=group_scalars, a_scale=a_scale, b_scale=b_scale,
                             config=config, kernel_plan=kernel_plan)
    g, a_type = num_groups, a_dtype or dtype
    masked = layout == "masked"
    if b_layout not in ("nk", "kn"):
        raise ValueError(f"b_layout must be 'nk' or 'kn', got {b_layout!r}")
    if layout == "k_grouped":
        # Token-major ([K, M] and [K, N], b_layout="kn") or K-major ([M, K]
        # and [N, K], b_layout="nk", as f8 needs).
        a = Arg("a", [k, m] if b_layout == "kn" else [m, k], a_type)
        b = Arg("b", [k, n] if b_layout == "kn" else [n, k], dtype)
        out = Arg("out", [g, n, m] if out_layout == "nm" else [g, m, n], out_dtype)
        groups = Arg("groups", [g + 1], offsets_dtype)
        row_shape = [m]
    else:
        a = Arg("a", [g, m, k] if masked else [m, k], a_type)
        b = Arg("b", [g, n, k] if b_layout == "nk" else [g, k, n], dtype)
        out_n = n // 2 if column_pairs or column_halves else n
        out = Arg("out", [g, m, out_n] if masked else [m, out_n], out_dtype)
        groups = Arg("groups", [g] if masked else [g + 1], offsets_dtype
                     if layout == "contiguous" else "i32")
        if layout == "padded_contiguous":
            groups.shape = [m]
        row_shape = [g, m] if masked else [m]
    args = [a, b, groups]
    if a_rows:
        if layout != "contiguous":
            raise ValueError(f"a_rows takes layout 'contiguous', got {layout!r}")
        a.shape = [None, k]
        args.insert(1, Arg("a_rows", [m], "i32"))
    spec = FunctionSpec(name=name, layout=layout, args=args, a="a", b="b",
                        groups="groups", out="out", b_layout=b_layout,
                        a_layout="km" if layout == "k_grouped" and b_layout == "kn"
                        else "mk", tf32=tf32, column_pairs=column_pairs,
                        column_halves=column_halves,
                        expected_m=expected_m, config=config,
                        direct_stores=direct_stores, tile_order=tile_order, m_band=m_band,
                        idle_warpgroups=idle_warpgroups, overfetch_rows=overfetch_rows,
                        b_cache=b_cache, group_reads=group_reads,
                        odd_block_a=odd_block_a, out_layout=out_layout, kernel_plan=kernel_plan,
                        store_slice=store_slice, accumulate=accumulate, zero_ungrouped=zero_ungrouped,
                        a_rows="a_rows" if a_rows else None)
    kb = None if k is None else -(-k // 128)
    align4 = None if m is None else (m + 3) // 4 * 4
    def mx_words(kind):  # UE8M0 exponents, four per i32 along K
        return None if k is None else -(-k // (4 * int(kind[2:])))

    k_grouped = layout == "k_grouped"
    if a_scale:
        shapes = {"tensor": [g], "channel": [g, m] if masked else [m],
                  "block": [g, m, kb] if masked else [m, kb],
                  "block_mn": [g, kb, align4] if masked else
                  [kb, m] if k_grouped else [kb, align4]}
        if a_scale.startswith("mx"):
            scale_rows = (None if m is None else (m + 3 * g) // 4 * 4) \
                if layout == "contiguous" else m
            shapes[a_scale] = ([g, m] if masked else [scale_rows]) + [mx_words(a_scale)]
        args.append(Arg("a_scale", shapes[a_scale],
                        "i32" if a_scale.startswith("mx") else "f32"))
        spec.a_scale = ("a_scale", a_scale)
    if b_scale:
        nb = -(-n // 128)
        per_group = [] if k_grouped else [g]
        shapes = {"tensor": [g], "channel": per_group + [n],
                  "block": per_group + [nb, kb], "block_mn": per_group + [kb, nb],
                  "block1x128": per_group + [n, kb], "block1x128_mn": per_group + [kb, n]}
        if b_scale.startswith("mx"):
            shapes[b_scale] = per_group + [n, mx_words(b_scale)]
        args.append(Arg("b_scale", shapes[b_scale],
                        "i32" if b_scale.startswith("mx") else "f32"))
        spec.b_scale = ("b_scale", b_scale)
    # Function arguments get names apart from the epilogue's %r0, %c0, %s0.
    for i, elem in enumerate(rows):
        args.append(Arg(f"row_vec{i}", list(row_shape), elem))
        spec.rows.append(f"row_vec{i}")
    for i, shape in enumerate(cols):
        args.append(Arg(f"col_vec{i}", list(shape), "f32"))
        spec.cols.append(f"col_vec{i}")
    for i in range(group_scalars):
        args.append(Arg(f"group_scalar{i}", [g], "f32"))
        spec.group_scalars.append(f"group_scalar{i}")
    args.append(out)
    if out_rows:
        if layout != "contiguous":
            raise ValueError(f"out_rows takes layout 'contiguous', got {layout!r}")
        out.shape = [None] + out.shape[1:]
        args.append(Arg("out_rows", [m], "i32"))
        spec.out_rows = "out_rows"
    if out_scale:
        if layout != "contiguous":
            raise ValueError(f"out_scale takes layout 'contiguous', got {layout!r}")
        if out_dtype != "f8E4M3FN":
            raise ValueError(f"out_scale quantises out to FP8: out_dtype must be "
                             f"'f8E4M3FN', got {out_dtype!r}")
        args.append(Arg("out_scale", [-(-out.shape[-1] // 128), align4], "f32"))
        spec.out_scale = "out_scale"
    if epilogue is not None:
        spec.epilogue = [EpilogueOp(line.strip()) for line in epilogue.strip().splitlines()]
    return emit(spec)
