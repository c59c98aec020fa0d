"""Build gg IR text for one grouped matmul function.

The DSL and the ready-made ops generate their kernels through here; tests
use it to state cases compactly.
"""

from __future__ import annotations

from typing import Optional, Sequence

LAYOUTS = ("contiguous", "masked", "padded_contiguous", "k_grouped")
MATRIX_TYPES = ("bf16", "f16", "f32", "f8E4M3FN", "f8E5M2")
OUTPUT_TYPES = ("bf16", "f16", "f32")


def _memref(shape: Sequence[Optional[int]], elem: str) -> str:
    dims = "x".join("?" if d is None else str(d) for d in shape)
    return f"memref<{dims}x{elem}>" if dims else f"memref<{elem}>"


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
) -> str:
    """A func.func `@name` holding one gg.grouped_matmul.

    B is [G, N, K] (`b_layout="nk"`) or [G, K, N] (`"kn"`).

    `a_dtype` overrides A's element type (mixed f8 pairs). `a_scale` and
    `b_scale` name a scale layout: "tensor", "channel", "block" (A 1x128
    K-major, B 128x128 K-major) or "block_mn" (the M- or N-major form).

    Arguments, in order: a, b, groups, [a_scale], [b_scale], then one memref per `rows` entry
    (element types), per `cols` entry (shapes, [N] or [G, N], f32), per
    group scalar (f32), and last `out`. `m` is the row count of A (M_max for
    masked); None makes it dynamic. `epilogue` is the body of the epilogue
    block, whose arguments are %acc, %r0.., %c0.., %s0.., %group, ending in
    gg.yield.
    """
    a_type = a_dtype or dtype
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    g = num_groups
    a_layout = ""
    if layout == "k_grouped":
        # Weight gradient: groups split K (the tokens); A is [K, M] and B is
        # [K, N], both token-major; `k` is the total K (None: dynamic).
        if b_layout != "kn":
            raise ValueError("k_grouped takes b_layout='kn' ([K, N])")
        a = _memref([k, m], a_type)
        out = _memref([g, m, n], out_dtype)
        groups = _memref([g + 1], offsets_dtype)
        row_shape = [m]
        a_layout = ", km"
    elif layout == "masked":
        a = _memref([g, m, k], a_type)
        out = _memref([g, m, n], out_dtype)
        groups = _memref([g], "i32")
        row_shape = [g, m]
    else:
        a = _memref([m, k], a_type)
        out = _memref([m, n], out_dtype)
        groups = (_memref([g + 1], offsets_dtype) if layout == "contiguous"
                  else _memref([m], "i32"))
        row_shape = [m]
    if b_layout not in ("nk", "kn"):
        raise ValueError(f"b_layout must be 'nk' or 'kn', got {b_layout!r}")
    if layout == "k_grouped":
        b = _memref([k, n], dtype)
    else:
        b = _memref([g, n, k] if b_layout == "nk" else [g, k, n], dtype)
    args = [("a", a), ("b", b), ("groups", groups)]
    scale_operands = []
    kb = None if k is None else -(-k // 128)
    align4 = None if m is None else (m + 3) // 4 * 4
    masked = layout == "masked"
    if a_scale:
        shapes = {
            "tensor": ([g], "<tensor>"),
            "channel": ([g, m] if masked else [m], "<channel>"),
            "block": ([g, m, kb] if masked else [m, kb], "<block 1x128>"),
            "block_mn": ([g, kb, align4] if masked else [kb, align4],
                         "<block 1x128, mn_major>"),
        }
        shape, attr = shapes[a_scale]
        args.append(("a_scale", _memref(shape, "f32")))
        scale_operands.append(f"a_scale(%a_scale : {args[-1][1]}, {attr})")
    if b_scale:
        nb = -(-n // 128)
        shapes = {
            "tensor": ([g], "<tensor>"),
            "channel": ([g, n], "<channel>"),
            "block": ([g, nb, kb], "<block 128x128>"),
            "block_mn": ([g, kb, nb], "<block 128x128, mn_major>"),
        }
        shape, attr = shapes[b_scale]
        args.append(("b_scale", _memref(shape, "f32")))
        scale_operands.append(f"b_scale(%b_scale : {args[-1][1]}, {attr})")
    # Function arguments get names apart from the epilogue's %r0, %c0, %s0.
    args += [(f"row_vec{i}", _memref(row_shape, t)) for i, t in enumerate(rows)]
    args += [(f"col_vec{i}", _memref(shape, "f32")) for i, shape in enumerate(cols)]
    args += [(f"group_scalar{i}", _memref([g], "f32")) for i in range(group_scalars)]
    args += [("out", out)]
    types = dict(args)
    signature = ", ".join(f"%{n_}: {t}" for n_, t in args)

    def operands(prefix: str, count: int) -> str:
        names = [f"%{prefix}{i}" for i in range(count)]
        return ", ".join(names) + " : " + ", ".join(types[n_[1:]] for n_ in names)


    attrs = []
    if tf32:
        attrs.append("tf32")
    if expected_m is not None:
        attrs.append(f"expected_m = {expected_m} : i64")
    if config is not None:
        attrs.append(f"config = {config}")
    text = [f"func.func @{name}({signature}) {{",
            f"  gg.grouped_matmul {layout} a(%a : {a}{a_layout}) "
            f"b(%b : {b}{', kn' if b_layout == 'kn' else ''})",
            f"      groups(%groups : {groups})"]
    text += [f"      {operand}" for operand in scale_operands]
    text.append(f"      out(%out : {out})")
    if rows:
        text.append(f"      rows({operands('row_vec', len(rows))})")
    if cols:
        text.append(f"      cols({operands('col_vec', len(cols))})")
    if group_scalars:
        text.append(f"      group_scalars({operands('group_scalar', group_scalars)})")
    if attrs:
        text.append("      {" + ", ".join(attrs) + "}")
    if epilogue is not None:
        block_args = ["%acc: f32"]
        block_args += [f"%r{i}: {t}" for i, t in enumerate(rows)]
        block_args += [f"%c{i}: f32" for i in range(len(cols))]
        block_args += [f"%s{i}: f32" for i in range(group_scalars)]
        block_args.append("%group: index")
        text.append("      epilogue {")
        text.append(f"      ^bb0({', '.join(block_args)}):")
        text += ["        " + line.strip() for line in epilogue.strip().splitlines()]
        text.append("      }")
    text += ["  return", "}"]
    return "\n".join(text) + "\n"
