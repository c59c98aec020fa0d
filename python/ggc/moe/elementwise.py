"""The layer's memory-bound steps between and after the GEMMs as one PTX
kernel each, where torch takes two: SwiGLU (torch: silu, then a multiply,
a pass more over the activation) and the combine (torch: a gather of the
sorted rows, then a sum over the slots, a pass more over T * top_k rows).

- ggc_moe_swiglu: a[r, c] = silu(h[r, c]) * h[r, I + c] for h [M, 2I] bf16,
  in f32, rounded once to bf16 (torch rounds silu's result first: the
  values differ in the last bit at times, as inductor's fused kernel's do).
- ggc_moe_combine: out[t, c] = sum over j < top_k of y[position[t * top_k +
  j], c], in f32 in slot order, rounded once (torch's sum over the slots).

Each thread takes 8 columns (16 bytes) of one row, so rows must be
multiples of 8 elements (the layer's H and I are) and every tensor 16-byte
aligned; a grid-stride loop covers any row count.
"""

from __future__ import annotations

from typing import Optional

import torch

from ..torch_ops import tracing
from . import ptx

_THREADS = 256
_MAX_GRID = 132 * 8  # CTAs: enough to fill the GPU, the loop does the rest

_HEADER = """
.version 8.0
.target sm_80
.address_size 64
"""

# Registers: %rd0 vector index, %rd1 vector count, %rd2 grid stride; per
# kernel the rest. `UNPACK(word, f_lo, f_hi)` spreads a bf16x2 word into two
# f32 registers.


def _unpack(word: str, lo: str, hi: str) -> str:
    return (f"  mov.b32 {{%h0, %h1}}, {word};\n"
            f"  cvt.f32.bf16 {lo}, %h0;\n"
            f"  cvt.f32.bf16 {hi}, %h1;\n")


def _grid_loop(body: str) -> str:
    """A grid-stride loop over %rd1 vectors with index %rd0."""
    return f"""
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %ntid.x;
  mov.u32 %r2, %tid.x;
  mad.wide.u32 %rd0, %r0, %r1, 0;
  cvt.u64.u32 %rd9, %r2;
  add.u64 %rd0, %rd0, %rd9;
  mov.u32 %r3, %nctaid.x;
  mul.wide.u32 %rd2, %r3, %r1;
LOOP:
  setp.ge.u64 %p0, %rd0, %rd1;
  @%p0 bra DONE;
{body}
  add.u64 %rd0, %rd0, %rd2;
  bra LOOP;
DONE:
  ret;
"""


def _swiglu_ptx() -> str:
    body = ["  div.u64 %rd10, %rd0, %rd4;          // row",
            "  rem.u64 %rd11, %rd0, %rd4;          // 16-byte chunk of the row",
            "  mul.lo.u64 %rd12, %rd10, %rd4;",
            "  shl.b64 %rd12, %rd12, 5;            // row * 2I * 2 bytes",
            "  shl.b64 %rd13, %rd11, 4;",
            "  add.u64 %rd12, %rd12, %rd13;",
            "  add.u64 %rd14, %rd5, %rd12;         // &gate",
            "  shl.b64 %rd15, %rd4, 4;",
            "  add.u64 %rd15, %rd14, %rd15;        // &up: I columns on",
            "  ld.global.nc.v4.b32 {%g0, %g1, %g2, %g3}, [%rd14];",
            "  ld.global.nc.v4.b32 {%u0, %u1, %u2, %u3}, [%rd15];"]
    for i in range(4):
        body.append(_unpack(f"%g{i}", "%f0", "%f1").rstrip("\n"))
        body.append(_unpack(f"%u{i}", "%f2", "%f3").rstrip("\n"))
        for gate, up, res in (("%f0", "%f2", "%f4"), ("%f1", "%f3", "%f5")):
            # silu(g) * u = (g * sigmoid(g)) * u, sigmoid(g) = 1 / (1 + 2^(-g log2 e)):
            # g * sigmoid(g) first, so a huge g * u never meets a zero sigmoid.
            body += [f"  mul.f32 %f6, {gate}, 0fBFB8AA3B;",
                     "  ex2.approx.ftz.f32 %f6, %f6;",
                     "  add.f32 %f6, %f6, 0f3F800000;",
                     "  rcp.approx.ftz.f32 %f6, %f6;",
                     f"  mul.f32 %f7, {gate}, %f6;",
                     f"  mul.f32 {res}, %f7, {up};"]
        body.append(f"  cvt.rn.bf16x2.f32 %o{i}, %f5, %f4;")
    body += ["  mul.lo.u64 %rd16, %rd10, %rd4;",
             "  add.u64 %rd16, %rd16, %rd11;",
             "  shl.b64 %rd16, %rd16, 4;",
             "  add.u64 %rd16, %rd6, %rd16;",
             "  st.global.v4.b32 [%rd16], {%o0, %o1, %o2, %o3};"]
    return _entry("ggc_moe_swiglu",
                  "a[r, c] = silu(h[r, c]) * h[r, I + c]; vectors of 8 columns: rows * I / 8.",
                  [("p_h", "%rd5", True), ("p_out", "%rd6", True), ("p_vectors", "%rd1", False),
                   ("p_row_vectors", "%rd4", False)],
                  ".reg .b32 %g<4>, %u<4>, %o<4>;\n  .reg .f32 %f<8>;", body)


def _combine_ptx() -> str:
    acc = [f"%a{i}" for i in range(8)]
    body = ["  div.u64 %rd10, %rd0, %rd4;          // token",
            "  rem.u64 %rd11, %rd0, %rd4;          // 16-byte chunk of the row",
            "  shl.b64 %rd13, %rd11, 4;",
            "  shl.b64 %rd17, %rd4, 4;             // row bytes",
            "  mul.lo.u64 %rd12, %rd10, %rd7;",
            "  shl.b64 %rd12, %rd12, 3;",
            "  add.u64 %rd12, %rd8, %rd12;         // &position[t * top_k]"]
    body += [f"  mov.f32 {a}, 0f00000000;" for a in acc]
    body += ["  mov.u64 %rd14, 0;",
             "SLOT:",
             "  setp.ge.u64 %p1, %rd14, %rd7;",
             "  @%p1 bra SUMMED;",
             "  ld.global.nc.u64 %rd15, [%rd12];",
             "  mad.lo.u64 %rd16, %rd15, %rd17, %rd13;",
             "  add.u64 %rd16, %rd5, %rd16;",
             "  ld.global.nc.v4.b32 {%g0, %g1, %g2, %g3}, [%rd16];"]
    for i in range(4):
        body.append(_unpack(f"%g{i}", "%f0", "%f1").rstrip("\n"))
        body += [f"  add.f32 {acc[2 * i]}, {acc[2 * i]}, %f0;",
                 f"  add.f32 {acc[2 * i + 1]}, {acc[2 * i + 1]}, %f1;"]
    body += ["  add.u64 %rd12, %rd12, 8;",
             "  add.u64 %rd14, %rd14, 1;",
             "  bra SLOT;",
             "SUMMED:"]
    body += [f"  cvt.rn.bf16x2.f32 %o{i}, {acc[2 * i + 1]}, {acc[2 * i]};" for i in range(4)]
    body += ["  mad.lo.u64 %rd16, %rd10, %rd17, %rd13;",
             "  add.u64 %rd16, %rd6, %rd16;",
             "  st.global.v4.b32 [%rd16], {%o0, %o1, %o2, %o3};"]
    return _entry("ggc_moe_combine",
                  "out[t, c] = sum over j < top_k of y[position[t * top_k + j], c]; "
                  "vectors of 8 columns: tokens * H / 8.",
                  [("p_y", "%rd5", True), ("p_position", "%rd8", True), ("p_out", "%rd6", True),
                   ("p_vectors", "%rd1", False), ("p_row_vectors", "%rd4", False),
                   ("p_top_k", "%rd7", False)],
                  ".reg .b32 %g<4>, %o<4>;\n  .reg .f32 %f<2>, %a<8>;", body)


def _entry(name: str, comment: str, params, registers: str, body) -> str:
    """A kernel of 256 threads: its parameters (name, register, whether a
    global pointer) loaded, then the grid-stride loop over `body`."""
    loads = []
    for param, register, pointer in params:
        loads.append(f"  ld.param.u64 {register}, [{param}];")
        if pointer:
            loads.append(f"  cvta.to.global.u64 {register}, {register};")
    signature = ", ".join(f".param .u64 {param}" for param, _, _ in params)
    return (_HEADER + f"""
// {comment}
.visible .entry {name}({signature})
.maxntid 256, 1, 1
{{
  .reg .pred %p<2>;
  .reg .b16 %h<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<20>;
  {registers}
""" + "\n".join(loads) + _grid_loop("\n".join(body)) + "}\n")


SWIGLU_PTX = _swiglu_ptx()
COMBINE_PTX = _combine_ptx()


def usable(*tensors: torch.Tensor) -> bool:
    """Whether the kernels may take these tensors: on CUDA, in eager mode
    or a CUDA-graph capture (torch.compile and dispatch modes trace the
    torch ops instead), bf16 rows of a multiple of 8, 16-byte aligned."""
    return all(t.is_cuda for t in tensors) and not tracing() and ptx.aligned(*tensors)


def _grid(vectors: int) -> int:
    return max(1, min(_MAX_GRID, -(-vectors // _THREADS)))


def swiglu(h: torch.Tensor) -> Optional[torch.Tensor]:
    """silu(gate) * up of h [M, 2I] bf16 (gate columns first), or None
    where the kernel cannot take h."""
    rows, width = h.shape
    inter = width // 2
    if (h.dtype != torch.bfloat16 or width % 16 or not h.is_contiguous()
            or not usable(h)):
        return None
    out = h.new_empty(rows, inter)
    vectors = rows * inter // 8
    if vectors:
        ptx.launch("ggc_moe_swiglu", SWIGLU_PTX, _THREADS, _grid(vectors),
                   [("pointer", 0), ("pointer", 1), ("i64", vectors), ("i64", inter // 8)],
                   (h, out), h.device)
    return out


def combine(y: torch.Tensor, position: torch.Tensor, top_k: int) -> Optional[torch.Tensor]:
    """out[t] = the sum of y's rows position[t * top_k + j] over j, for y
    [rows, H] bf16 and position [T * top_k], or None where the kernel
    cannot take them."""
    hidden = y.shape[1]
    routes = position.shape[0]
    if (y.dtype != torch.bfloat16 or hidden % 8 or not y.is_contiguous()
            or position.dtype != torch.int64 or not position.is_contiguous()
            or not usable(y, position)):
        return None
    out = y.new_empty(routes // top_k, hidden)
    vectors = out.shape[0] * hidden // 8
    if vectors:
        ptx.launch("ggc_moe_combine", COMBINE_PTX, _THREADS, _grid(vectors),
                   [("pointer", 0), ("pointer", 1), ("pointer", 2), ("i64", vectors),
                    ("i64", hidden // 8), ("i64", top_k)],
                   (y, position, out), y.device)
    return out
