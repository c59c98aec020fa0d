"""The random-stress suite's kernel specs and case plans (no GPU needed).

A spec is one compiled kernel: layout, element types, scale kinds,
epilogue, tile configuration. Specs are few (each compiles once, about a
second); cases are many: each draws fresh ragged group sizes on the host
(empty groups, 1-row groups, sizes just off tile boundaries, an occasional
large group) and fresh device data (stress_run.py). Everything here runs on
the CPU, so test/python/test_stress_cases.py checks it without a GPU.
"""

from __future__ import annotations

import inspect
import os
import random
import zlib
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import torch

IR_DTYPES = {"bf16": "bf16", "f16": "f16", "f32": "f32", "f8": "f8E4M3FN"}
TORCH_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
                "f8": torch.float8_e4m3fn}
# Per-row tolerance: the kernel's own arithmetic error (bf16/f16 products
# are exact in f32; tf32 rounds inputs to 10 mantissa bits; f8 as in
# test_fp8.py), plus the output's unit roundoff, since rounding y to the
# output type moves it by at most u * |y| elementwise (so by u * ||y|| in
# norm): a rigorous bound for that part, not a statistical one.
ARITH_TOL = {"bf16": 1e-3, "f16": 1e-3, "f32": 2e-3, "f8": 2e-3}
ROUNDOFF = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11, "f32": 2.0 ** -24}
# ... which holds for normal numbers: in the subnormal range rounding moves
# an element by up to half the subnormal step instead (f16's step is 6e-8:
# a row of products near 1e-5, e.g. a one-token k_grouped group, is off by
# 2.6e-3 relative while exactly rounded), allowed as an absolute term.
SUBNORMAL_STEP = {"bf16": 2.0 ** -133, "f16": 2.0 ** -24, "f32": 2.0 ** -149}
# NaNs with a payload no arithmetic produces (quiet NaNs from math are
# canonical), so "still poison" is a bit-exact test: (int view, pattern).
POISON = {"bf16": (torch.int16, 0xFFA5 - 0x10000), "f16": (torch.int16, 0xFDA5 - 0x10000),
          "f32": (torch.int32, 0xFFA5A5A5 - 0x100000000)}
GUARD_ROWS = 4  # poisoned rows before and after every output, never to be written
# Masked counts past M_max or negative are clamped by the kernel, but the
# opt-in metadata check (GGC_VALIDATE=1) rejects them by design.
OUT_OF_RANGE_COUNTS = os.environ.get("GGC_VALIDATE", "") in ("", "0", "off")
SMS = 132


def config(bm: int, bn: int, bk: int, stages: int = 0, cluster: int = 1,
           split_n: int = 1) -> str:
    return (f"#gg.config<block = [{bm}, {bn}, {bk}], stages = {stages}, "
            f"cluster = [{cluster}, 1], sms = {SMS}"
            + (", split_n = 2" if split_n == 2 else "") + ">")


@dataclass(frozen=True)
class Epilogue:
    """An epilogue three ways: gg IR text, the DSL, and an fp64 reference
    over output rows (acc [R, C], r and s [R, 1], c [R, C] or [1, C], gid
    [R, 1] as float)."""
    ir: Optional[str]
    dsl: Callable
    ref: Callable
    rows: Tuple[str, ...] = ()      # element type of the row vector, if any
    col: Optional[str] = None       # "n": [N]; "gn": [G, N]
    scalar: bool = False


def _y(body: str) -> str:
    return body.strip() + "\ngg.yield %res : f32"


def _gl():
    import ggc.language as gl
    return gl


EPILOGUES: Dict[str, Epilogue] = {
    "none": Epilogue(None, lambda acc, r, c, s: acc, lambda acc, r, c, s, g: acc),
    "row": Epilogue(_y("%res = arith.mulf %acc, %r0 : f32"),
                    lambda acc, r, c, s: acc * r, lambda acc, r, c, s, g: acc * r,
                    rows=("f32",)),
    "row_bf16": Epilogue(_y("%r = arith.extf %r0 : bf16 to f32\n"
                            "%res = arith.mulf %acc, %r : f32"),
                         lambda acc, r, c, s: acc * r, lambda acc, r, c, s, g: acc * r,
                         rows=("bf16",)),
    "col": Epilogue(_y("%res = arith.addf %acc, %c0 : f32"),
                    lambda acc, r, c, s: acc + c, lambda acc, r, c, s, g: acc + c, col="n"),
    "gcol": Epilogue(_y("%res = arith.addf %acc, %c0 : f32"),
                     lambda acc, r, c, s: acc + c, lambda acc, r, c, s, g: acc + c, col="gn"),
    "scalar": Epilogue(_y("%res = arith.mulf %acc, %s0 : f32"),
                       lambda acc, r, c, s: acc * s, lambda acc, r, c, s, g: acc * s,
                       scalar=True),
    "silu_row": Epilogue(_y("%x = gg.silu %acc : f32\n%res = arith.mulf %x, %r0 : f32"),
                         lambda acc, r, c, s: _gl().silu(acc) * r,
                         lambda acc, r, c, s, g: torch.nn.functional.silu(acc) * r,
                         rows=("f32",)),
    "mix": Epilogue(_y("%x = arith.mulf %acc, %r0 : f32\n%y = arith.addf %x, %c0 : f32\n"
                       "%z = gg.silu %y : f32\n%res = arith.mulf %z, %s0 : f32"),
                    lambda acc, r, c, s: _gl().silu(acc * r + c) * s,
                    lambda acc, r, c, s, g: torch.nn.functional.silu(acc * r + c) * s,
                    rows=("f32",), col="gn", scalar=True),
    "relu_gid": Epilogue(_y("%zero = arith.constant 0.0 : f32\n"
                            "%x = arith.maximumf %acc, %zero : f32\n"
                            "%gi = arith.index_cast %group : index to i64\n"
                            "%gf = arith.sitofp %gi : i64 to f32\n"
                            "%res = arith.addf %x, %gf : f32"),
                         lambda acc, r, c, s: _gl().maximum(acc, 0.0) + _gl().group_id(),
                         lambda acc, r, c, s, g: acc.clamp_min(0) + g),
    "sigmoid_scalar": Epilogue(_y("%x = gg.sigmoid %acc : f32\n%res = arith.mulf %x, %s0 : f32"),
                               lambda acc, r, c, s: _gl().sigmoid(acc) * s,
                               lambda acc, r, c, s, g: torch.sigmoid(acc) * s, scalar=True),
}


@dataclass(frozen=True)
class Spec:
    name: str
    layout: str                    # contiguous | masked | padded_contiguous | k_grouped
    dtype: str                     # bf16 | f16 | f32 (tf32) | f8 (e4m3fn)
    groups: int
    n: int
    k: Optional[int] = None        # None for k_grouped: the tokens are the dynamic K
    m: Optional[int] = None        # masked: M_max; k_grouped: the rows M of dW
    out: Optional[str] = None      # output type (default: dtype, bf16 for f8)
    b_layout: str = "nk"
    offsets: str = "i32"
    a_scale: Optional[str] = None
    b_scale: Optional[str] = None
    epilogue: str = "none"
    config: Optional[str] = None   # "#gg.config<...>" (ir specs)
    plan: Tuple[Tuple[str, object], ...] = ()   # other ir.grouped_matmul choices
    expected_m: Optional[int] = None
    out_layout: str = "mn"
    via: str = "ir"                # "ir": ggc.Kernel(ir.grouped_matmul); "jit": @ggc.jit
    knobs: Tuple[Tuple[str, int], ...] = ()     # jit constexprs (BLOCK_M, ...)
    cap: int = 2048                # most rows (tokens for k_grouped) in one case

    @property
    def out_dtype(self) -> str:
        return self.out or ("bf16" if self.dtype == "f8" else self.dtype)

    @property
    def tolerance(self) -> float:
        arith = ARITH_TOL[self.dtype]
        return arith + ROUNDOFF[self.out_dtype] * (1 + arith)

    @property
    def family(self) -> str:
        scales = f" {self.a_scale}/{self.b_scale}" if self.dtype == "f8" else ""
        return f"{self.layout} {self.dtype}{scales}"


_MX_PLAN = ("#gg.kernel_plan<promotion = {}, scales = slots, registers = {}, "
            "staging = swizzled>")


def _specs() -> List[Spec]:
    S, C = Spec, config
    f8 = dict(dtype="f8")
    return [
        # Contiguous (token-packed rows, CSR offsets).
        S("c_bf16", "contiguous", "bf16", 8, 200, 136),
        S("c_bf16_i64_row", "contiguous", "bf16", 4, 328, 264, offsets="i64", epilogue="row"),
        S("c_bf16_kn_gcol", "contiguous", "bf16", 8, 136, 200, b_layout="kn", epilogue="gcol"),
        S("c_f16_scalar", "contiguous", "f16", 6, 256, 392, epilogue="scalar"),
        S("c_f16_kn_col", "contiguous", "f16", 5, 72, 64, b_layout="kn", epilogue="col"),
        S("c_tf32", "contiguous", "f32", 4, 200, 132),
        S("c_tf32_kn_row", "contiguous", "f32", 3, 104, 260, b_layout="kn", epilogue="row"),
        S("c_bf16_f32out", "contiguous", "bf16", 16, 64, 72, out="f32"),
        S("c_bf16_mix", "contiguous", "bf16", 8, 264, 200, epilogue="mix"),
        S("c_bf16_bm192_direct", "contiguous", "bf16", 8, 200, 136, epilogue="relu_gid",
          config=C(192, 128, 64), plan=(("direct_stores", True),)),
        S("c_bf16_bm256_nfast", "contiguous", "bf16", 6, 200, 136, epilogue="row_bf16",
          config=C(256, 128, 64), plan=(("tile_order", "n_fastest"),)),
        S("c_bf16_split64", "contiguous", "bf16", 8, 456, 200, config=C(64, 256, 64, split_n=2)),
        S("c_bf16_kn_split128", "contiguous", "bf16", 8, 200, 136, b_layout="kn",
          epilogue="silu_row", config=C(128, 128, 64, split_n=2)),
        S("c_bf16_cluster", "contiguous", "bf16", 6, 392, 192, config=C(128, 256, 64, 3, 2)),
        S("c_bf16_kn_cluster", "contiguous", "bf16", 6, 392, 192, b_layout="kn",
          epilogue="scalar", config=C(128, 256, 64, 3, 2)),
        S("c_bf16_overfetch_skip", "contiguous", "bf16", 8, 200, 136,
          plan=(("overfetch_rows", 127), ("idle_warpgroups", "skip"))),
        S("c_bf16_g1", "contiguous", "bf16", 1, 264, 328, offsets="i64", epilogue="row"),
        S("c_bf16_g32", "contiguous", "bf16", 32, 64, 64, epilogue="gcol", cap=4096),
        S("c_f8_blockmn_block", "contiguous", a_scale="block_mn", b_scale="block",
          groups=4, n=328, k=400, **f8),
        S("c_f8_block_1x128", "contiguous", a_scale="block", b_scale="block1x128",
          groups=6, n=256, k=272, epilogue="row", **f8),
        S("c_f8_tensor_f32out", "contiguous", a_scale="tensor", b_scale="tensor",
          groups=8, n=136, k=144, out="f32", **f8),
        S("c_f8_channel_f32out", "contiguous", a_scale="channel", b_scale="channel",
          groups=4, n=200, k=208, out="f32", epilogue="scalar", **f8),
        S("c_f8_split", "contiguous", a_scale="block_mn", b_scale="block1x128_mn",
          groups=4, n=456, k=400, config=C(64, 256, 128, split_n=2), **f8),
        S("c_f8_narrow112", "contiguous", a_scale="block", b_scale="block",
          groups=4, n=328, k=400, config=C(128, 112, 128), **f8),
        S("c_f8_narrow96_skip", "contiguous", a_scale="block_mn", b_scale="block",
          groups=4, n=200, k=400, config=C(128, 96, 128), plan=(("idle_warpgroups", "skip"),),
          **f8),
        S("c_f8_cluster", "contiguous", a_scale="block_mn", b_scale="block",
          groups=6, n=328, k=400, config=C(128, 128, 128, 4, 2), **f8),
        S("c_f8_mx32_f32out", "contiguous", a_scale="mx32", b_scale="mx32",
          groups=7, n=256, k=320, out="f32", **f8),
        S("c_f8_mx128", "contiguous", a_scale="mx128", b_scale="mx128",
          groups=5, n=136, k=400, **f8),
        S("c_f8_mx32_cluster", "contiguous", a_scale="mx32", b_scale="mx32",
          groups=4, n=256, k=320, config=C(128, 128, 128, 0, 2), **f8),
        S("c_f8_b_only", "contiguous", a_scale=None, b_scale="block", groups=4, n=200, k=272,
          **f8),
        S("c_f8_a_only_gcol", "contiguous", a_scale="block_mn", b_scale=None,
          groups=4, n=200, k=272, epilogue="gcol", **f8),
        # Masked ([G, M_max, K] batches, valid counts per group).
        S("m_bf16", "masked", "bf16", 4, 200, 136, m=200),
        S("m_bf16_kn_row", "masked", "bf16", 6, 136, 200, m=96, b_layout="kn", epilogue="row"),
        S("m_f16_col", "masked", "f16", 4, 72, 64, m=160, epilogue="col"),
        S("m_tf32", "masked", "f32", 3, 104, 132, m=128),
        S("m_bf16_split_gcol", "masked", "bf16", 4, 456, 200, m=256, expected_m=40,
          epilogue="gcol", config=C(64, 256, 64, split_n=2)),
        S("m_bf16_cluster_mix", "masked", "bf16", 4, 392, 192, m=256, epilogue="mix",
          config=C(128, 256, 64, 3, 2)),
        S("m_f8_blockmn_block", "masked", a_scale="block_mn", b_scale="block", groups=4,
          n=328, k=400, m=256, expected_m=97, **f8),
        S("m_f8_block_blockmn", "masked", a_scale="block", b_scale="block_mn", groups=4,
          n=200, k=272, m=192, **f8),
        S("m_f8_channel_split_f32out", "masked", a_scale="channel", b_scale="channel",
          groups=4, n=456, k=400, m=128, out="f32", config=C(64, 256, 128, split_n=2), **f8),
        S("m_f8_tensor_scalar", "masked", a_scale="tensor", b_scale="tensor", groups=4,
          n=136, k=144, m=64, epilogue="scalar", **f8),
        S("m_f8_cluster", "masked", a_scale="block_mn", b_scale="block", groups=4, n=328,
          k=400, m=256, config=C(128, 128, 128, 4, 2), **f8),
        S("m_f8_mx32_f32out", "masked", a_scale="mx32", b_scale="mx32", groups=3, n=128,
          k=256, m=64, out="f32", **f8),
        S("m_f8_mx128_split", "masked", a_scale="mx128", b_scale="mx128", groups=3, n=256,
          k=400, m=128, config=C(64, 256, 128, split_n=2), **f8),
        S("m_f8_narrow96_row", "masked", a_scale="block_mn", b_scale="block1x128",
          groups=4, n=200, k=400, m=256, epilogue="row", config=C(128, 96, 128), **f8),
        # DeepGEMM's padded contiguous layout (group per row, -1 padding).
        S("p_bf16", "padded_contiguous", "bf16", 4, 200, 136),
        S("p_bf16_kn_row", "padded_contiguous", "bf16", 4, 136, 200, b_layout="kn",
          epilogue="row"),
        S("p_f16_scalar", "padded_contiguous", "f16", 5, 72, 64, epilogue="scalar"),
        S("p_tf32", "padded_contiguous", "f32", 3, 104, 132),
        S("p_bf16_split_gcol", "padded_contiguous", "bf16", 4, 456, 200, epilogue="gcol",
          config=C(64, 256, 64, split_n=2)),
        S("p_f8_blockmn_block", "padded_contiguous", a_scale="block_mn", b_scale="block",
          groups=3, n=328, k=400, **f8),
        S("p_f8_block_1x128_relu", "padded_contiguous", a_scale="block", b_scale="block1x128",
          groups=4, n=256, k=272, epilogue="relu_gid", **f8),
        S("p_f8_channel_f32out", "padded_contiguous", a_scale="channel", b_scale="channel",
          groups=4, n=200, k=208, out="f32", **f8),
        S("p_f8_mx32_f32out", "padded_contiguous", a_scale="mx32", b_scale="mx32",
          groups=4, n=256, k=320, out="f32", **f8),
        # k_grouped weight gradients (groups split the tokens, out [G, M, N]).
        S("k_bf16_kn", "k_grouped", "bf16", 6, 136, m=200, b_layout="kn", out="f32"),
        S("k_bf16_nk", "k_grouped", "bf16", 8, 200, m=128, out="bf16"),
        S("k_f16_kn_nm", "k_grouped", "f16", 5, 200, m=136, b_layout="kn", out_layout="nm"),
        S("k_tf32_nk", "k_grouped", "f32", 4, 136, m=104),
        S("k_bf16_kn_cluster", "k_grouped", "bf16", 4, 136, m=256, b_layout="kn", out="f32",
          config=C(128, 128, 64, 3, 2)),
        S("k_bf16_kn_row", "k_grouped", "bf16", 4, 136, m=200, b_layout="kn", out="f32",
          epilogue="row"),
        S("k_f8_block_1x128", "k_grouped", a_scale="block", b_scale="block1x128", groups=6,
          n=136, m=200, out="f32", **f8),
        S("k_f8_mn_1x128mn", "k_grouped", a_scale="block_mn", b_scale="block1x128_mn",
          groups=4, n=200, m=128, out="f32", **f8),
        S("k_f8_block_128x128", "k_grouped", a_scale="block", b_scale="block", groups=5,
          n=136, m=200, out="f32", **f8),
        S("k_f8_tensor", "k_grouped", a_scale="tensor", b_scale="tensor", groups=4, n=136,
          m=200, out="f32", **f8),
        S("k_f8_channel", "k_grouped", a_scale="channel", b_scale="channel", groups=4, n=200,
          m=136, out="f32", **f8),
        S("k_f8_mx32", "k_grouped", a_scale="mx32", b_scale="mx32", groups=5, n=136, m=200,
          out="f32", **f8),
        S("k_f8_mx128", "k_grouped", a_scale="mx128", b_scale="mx128", groups=4, n=136,
          m=128, out="f32", **f8),
        # @ggc.jit kernels with tuning knobs instead of a config string.
        S("j_c_bf16_silu_bn64", "contiguous", "bf16", 8, 200, 136, epilogue="silu_row",
          via="jit", knobs=(("BLOCK_N", 64),)),
        S("j_c_bf16_mix_split", "contiguous", "bf16", 6, 456, 200, epilogue="mix", via="jit",
          knobs=(("BLOCK_M", 64), ("BLOCK_N", 256), ("SPLIT_N", 2))),
        S("j_c_f8_mx32_row", "contiguous", a_scale="mx32", b_scale="mx32", groups=5, n=256,
          k=320, epilogue="row", via="jit", **f8),
        S("j_m_f8_gcol_bn128", "masked", a_scale="block_mn", b_scale="block", groups=4,
          n=328, k=400, m=128, epilogue="gcol", via="jit", knobs=(("BLOCK_N", 128),), **f8),
        S("j_m_bf16_relu_bm64", "masked", "bf16", 4, 200, 136, m=96, epilogue="relu_gid",
          via="jit", knobs=(("BLOCK_M", 64),)),
        S("j_p_bf16_sigmoid", "padded_contiguous", "bf16", 4, 200, 136,
          epilogue="sigmoid_scalar", via="jit", knobs=(("BLOCK_N", 128),)),
        S("j_k_bf16_kn_bn64", "k_grouped", "bf16", 4, 136, m=200, b_layout="kn", out="f32",
          via="jit", knobs=(("BLOCK_N", 64),)),
        S("j_k_f8_block", "k_grouped", a_scale="block", b_scale="block1x128", groups=4,
          n=136, m=128, out="f32", via="jit", **f8),
        # MX's promotion both ways, whichever the planner picks: four scale
        # blocks a K block, serial and pipelined (ggk-pipeline-promotion).
        S("c_f8_mx32_serial", "contiguous", a_scale="mx32", b_scale="mx32", groups=6,
          n=256, k=448, plan=(("kernel_plan", _MX_PLAN.format("serial", "[40, 232]")),), **f8),
        S("c_f8_mx32_pipelined", "contiguous", a_scale="mx32", b_scale="mx32", groups=6,
          n=256, k=448, plan=(("kernel_plan", _MX_PLAN.format("pipelined", "[24, 240]")),),
          **f8),
        S("m_f8_mx128_pipelined", "masked", a_scale="mx128", b_scale="mx128", groups=3,
          n=136, k=640, m=128,
          plan=(("kernel_plan", _MX_PLAN.format("pipelined", "[24, 240]")),), **f8),
    ]


SPECS: List[Spec] = _specs()


# ---------------------------------------------------------------------------
# Building the kernels (compiling needs no GPU; launching does)
# ---------------------------------------------------------------------------

def ir_text(spec: Spec) -> str:
    """The gg IR of an "ir" spec, via ggc.ir.grouped_matmul."""
    from ggc import ir
    epi = EPILOGUES[spec.epilogue]
    cols = [] if epi.col is None else [[spec.n] if epi.col == "n" else [spec.groups, spec.n]]
    return ir.grouped_matmul(
        f"stress_{spec.name}", layout=spec.layout, num_groups=spec.groups, n=spec.n,
        k=spec.k, m=spec.m, dtype=IR_DTYPES[spec.dtype], out_dtype=IR_DTYPES[spec.out_dtype],
        offsets_dtype=spec.offsets, b_layout=spec.b_layout, tf32=spec.dtype == "f32",
        expected_m=spec.expected_m, a_scale=spec.a_scale, b_scale=spec.b_scale,
        rows=list(epi.rows), cols=cols, group_scalars=int(epi.scalar), epilogue=epi.ir,
        config=spec.config, out_layout=spec.out_layout, **dict(spec.plan))


def jit_kernel(spec: Spec):
    """A @ggc.jit kernel for a "jit" spec, taking its arguments in the
    order the ir spec would (a, b, groups, scales, row, col, scalar, out)."""
    import ggc
    gl = _gl()
    a_ann, groups_ann = {"contiguous": (gl.Rows, gl.Offsets),
                         "masked": (gl.MaskedRows, gl.MaskedCounts),
                         "padded_contiguous": (gl.PaddedRows, gl.RowGroups),
                         "k_grouped": (gl.KMajor if spec.b_layout == "nk" else gl.TokenMajor,
                                       gl.Offsets)}[spec.layout]
    b_ann = a_ann if spec.layout == "k_grouped" else (
        gl.Weights if spec.b_layout == "nk" else gl.WeightsKN)
    epi = EPILOGUES[spec.epilogue]
    P = inspect.Parameter
    named = [("a", a_ann), ("b", b_ann), ("groups", groups_ann)]
    named += [(s, gl.Scale) for s, kind in (("a_scale", spec.a_scale),
                                            ("b_scale", spec.b_scale)) if kind]
    named += [("route", gl.RowVector)] * len(epi.rows)
    named += [("bias", gl.ColVector)] * (epi.col is not None)
    named += [("gscale", gl.GroupScalar)] * epi.scalar + [("out", gl.Out)]
    params = [P(n, P.POSITIONAL_OR_KEYWORD, annotation=a) for n, a in named]
    params += [P(k, P.KEYWORD_ONLY, annotation=gl.constexpr, default=None)
               for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "STAGES", "SPLIT_N")]

    def body(a, b, groups, out, a_scale=None, b_scale=None, route=None, bias=None,
             gscale=None, **knobs):
        acc = gl.grouped_dot(a, b, groups, a_scale=a_scale, b_scale=b_scale,
                             a_scale_kind=spec.a_scale or "block_mn",
                             b_scale_kind=spec.b_scale or "block",
                             expected_m=spec.expected_m, tf32=spec.dtype == "f32")
        gl.store(out, epi.dsl(acc, route, bias, gscale))

    body.__name__ = f"stress_{spec.name}"
    body.__signature__ = inspect.Signature(params)
    return ggc.jit(body)


def build(spec: Spec, example_args):
    """Compiles the spec; returns (kernel, launch) where launch(*args) runs
    it and kernel.info is its launch contract. example_args give the jit
    specialisation (shapes and dtypes only: CPU tensors do)."""
    import ggc
    if spec.via == "ir":
        kernel = ggc.Kernel(ir_text(spec))
        return kernel, kernel
    fn, knobs = jit_kernel(spec), dict(spec.knobs)
    kernel = fn.compile(*example_args, **knobs)
    return kernel, lambda *args: fn(*args, **knobs)


# ---------------------------------------------------------------------------
# Case plans: group sizes and the row maps the check needs (host side)
# ---------------------------------------------------------------------------

# Tile and store granules group sizes should land on, or just off.
BOUNDARIES = (8, 16, 32, 64, 128, 192, 256)
NEAR = (-9, -1, 0, 1, 7)


def case_seed(seed: int, spec: Spec, index: int) -> int:
    """Stable across processes and filters: a case is reproducible alone."""
    return zlib.crc32(f"{seed}:{spec.name}:{index}".encode())


def ragged_size(rng: random.Random, large: int) -> int:
    u = rng.random()
    if u < 0.15:
        return 0
    if u < 0.27:
        return 1
    if u < 0.62:  # on or just off a tile boundary: partial tiles, store granules
        return max(0, rng.choice(BOUNDARIES) * rng.randint(1, 3) + rng.choice(NEAR))
    if u < 0.97:
        return rng.randint(2, 300)
    return rng.randint(large // 2, large)  # one group over many tiles


def group_sizes(rng: random.Random, groups: int, cap: int) -> List[int]:
    """Rows per group, at most `cap` in all; some cases are all empty, one
    group only, or all single rows."""
    u = rng.random()
    if u < 0.03:
        sizes = [0] * groups
    elif u < 0.08:
        sizes = [0] * groups
        sizes[rng.randrange(groups)] = max(1, ragged_size(rng, cap))
    elif u < 0.12:
        sizes = [1] * groups
    else:
        sizes = [ragged_size(rng, cap) for _ in range(groups)]
    while sum(sizes) > cap:  # trim the largest group
        i = max(range(groups), key=sizes.__getitem__)
        sizes[i] -= min(sizes[i], sum(sizes) - cap)
    return sizes


def masked_counts(rng: random.Random, groups: int, m_max: int) -> List[int]:
    """Valid rows per group; now and then past M_max or negative, which the
    kernel clamps to [0, M_max]."""
    if rng.random() < 0.05:
        return [rng.choice((0, m_max))] * groups
    counts = []
    for _ in range(groups):
        u = rng.random()
        if u < 0.03 and OUT_OF_RANGE_COUNTS:
            counts.append(rng.choice((m_max + rng.randint(1, 1000), -rng.randint(1, 5))))
        elif u < 0.3:
            counts.append(rng.choice((0, 1, m_max, m_max - 1)))
        else:
            counts.append(min(m_max, ragged_size(rng, m_max)))
    return counts


@dataclass
class CasePlan:
    """One case on the host: what was drawn and the maps the check needs.
    `host` holds integer tensors (CPU), uploaded together: "groups" (the
    kernel's group argument), "gid" (group per output row with the guard
    rows, -1 where no group owns the row), and for the reference "valid"
    and "slot" (rows in a group, their place in it), "scale_row" (A's MX
    scale row, contiguous) or "token_gid" (group per token, k_grouped)."""
    index: int
    seed: int
    sizes: List[int]        # rows (tokens for k_grouped) per group, as drawn
    rows: int               # A's rows (M, or M_max masked), or the tokens K (k_grouped)
    out_rows: int           # rows of the output checked (guards excluded)
    longest: int            # rows of the largest group (reference batch)
    host: Dict[str, torch.Tensor]


def _with_guards(gid: torch.Tensor) -> torch.Tensor:
    guard = torch.full((GUARD_ROWS,), -1, dtype=torch.int64)
    return torch.cat([guard, gid.to(torch.int64), guard])


def _offsets(sizes: List[int], dtype=torch.int64) -> torch.Tensor:
    return torch.tensor([0] + sizes, dtype=torch.int64).cumsum(0).to(dtype)


def _rows_of(sizes: List[int]):
    """Group and place in the group of each row of consecutive groups."""
    counts = torch.tensor(sizes, dtype=torch.int64)
    gid = torch.repeat_interleave(torch.arange(len(sizes)), counts)
    starts = _offsets(sizes)[:-1]
    slot = torch.arange(gid.numel()) - starts[gid]
    return gid, slot


def plan_case(spec: Spec, seed: int, index: int, cap: Optional[int] = None) -> CasePlan:
    s = case_seed(seed, spec, index)
    rng = random.Random(s)
    cap = cap or spec.cap
    g = spec.groups
    if spec.layout == "masked":
        return _plan_masked(spec, rng, s, index)
    if spec.layout == "k_grouped":
        return _plan_k_grouped(spec, rng, s, index, cap)
    sizes = group_sizes(rng, g, cap)
    if spec.layout == "padded_contiguous":
        return _plan_padded(spec, rng, s, index, sizes)
    tail = rng.randint(1, 70) if rng.random() < 0.2 else 0  # rows after the last group
    gid, slot = _rows_of(sizes)
    m = sum(sizes) + tail
    host = {"groups": _offsets(sizes, torch.int32 if spec.offsets == "i32" else torch.int64),
            "gid": _with_guards(torch.cat([gid, torch.full((tail,), -1)])),
            "valid": torch.arange(sum(sizes)), "slot": slot}
    if spec.a_scale and spec.a_scale.startswith("mx"):
        # FlashInfer's layout: each group's scale rows start on a multiple of 4.
        starts = _offsets(sizes)[:-1]
        host["scale_row"] = (starts + 3 * torch.arange(g)) // 4 * 4
        host["scale_row"] = host["scale_row"][gid] + slot
    return CasePlan(index, s, sizes, m, m, max(sizes, default=0), host)


def _plan_padded(spec: Spec, rng: random.Random, s: int, index: int,
                 sizes: List[int]) -> CasePlan:
    """DeepGEMM's contiguous layout: each group's rows, then -1 rows up to a
    multiple of 128; sometimes a whole tile of -1 rows at the end."""
    tags = []
    for gi, size in enumerate(sizes):
        tags += [gi] * size + [-1] * (-size % 128)
    if rng.random() < 0.2:
        tags += [-1] * 128
    tags = torch.tensor(tags, dtype=torch.int64)
    valid = torch.nonzero(tags >= 0).flatten()
    _, slot = _rows_of(sizes)
    host = {"groups": tags.to(torch.int32), "gid": _with_guards(tags), "valid": valid,
            "slot": slot}
    return CasePlan(index, s, sizes, tags.numel(), tags.numel(), max(sizes, default=0), host)


def _plan_masked(spec: Spec, rng: random.Random, s: int, index: int) -> CasePlan:
    counts = masked_counts(rng, spec.groups, spec.m)
    rows = torch.arange(spec.m)
    gid = torch.cat([torch.where(rows < max(0, min(c, spec.m)), gi, -1)
                     for gi, c in enumerate(counts)])
    host = {"groups": torch.tensor(counts, dtype=torch.int32), "gid": _with_guards(gid)}
    return CasePlan(index, s, counts, spec.m, spec.groups * spec.m, spec.m, host)


def _plan_k_grouped(spec: Spec, rng: random.Random, s: int, index: int, cap: int) -> CasePlan:
    """Tokens per group; K-major operands need rows of whole 16 bytes, so
    the total is rounded up (on a random group), and kept non-empty."""
    g = spec.groups
    sizes = group_sizes(rng, g, cap)
    align = 16 // TORCH_DTYPES[spec.dtype].itemsize if spec.b_layout == "nk" else 1
    if sum(sizes) == 0:
        sizes[rng.randrange(g)] = align
    sizes[rng.randrange(g)] += -sum(sizes) % align
    out_rows = spec.m if spec.out_layout == "mn" else spec.n
    host = {"groups": _offsets(sizes, torch.int32),
            "gid": _with_guards(torch.arange(g).repeat_interleave(out_rows)),
            "token_gid": _rows_of(sizes)[0]}
    return CasePlan(index, s, sizes, sum(sizes), g * out_rows, 0, host)
