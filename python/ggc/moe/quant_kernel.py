"""FP8 row quantisation in one kernel that ggc compiles from gg.quantize_rows.

quant.quantize_rows takes torch several passes over the rows (the blocks'
amax, the division into e4m3), and the FP8 layer adds a gather of the
quantised tokens, a gather of their scales into the M-major form the GEMM
reads, and before the down projection a SwiGLU pass: `rows_mn` does each
of those in one kernel, a gathered copy (`rows`), a scattered one
(`positions`: each token's row quantised once and written to its routes'
sorted rows; with `sources`, the tokens' scales written once and
gathered by a second, torch's index_select) or the SwiGLU over the column
halves (`gated`) quantised as it is written. The values are
quant.quantize_rows' (the same amax, scale and factor 448 / amax); the
scales come M-major ([ceil(K/128), align4(M)], quant.mn_major's layout;
where K is not a multiple of 128 the last block is partial, as
quant.quantize_rows takes it).

`weight_blocks` quantises expert weights in 128x128 blocks, with the
transposed copy an FP8 input gradient reads (gg.quantize_blocks; for
ggc.training, whose weights change every optimiser step). `group_tokens`
quantises a weight gradient's tokens in 1x128 blocks along the tokens,
transposed, each group padded to whole blocks (gg.quantize_group_tokens).
`transposed_scales` copies f32 scales of rows from K-major to the M-major
storage the GEMMs' "block_mn" scales read (gg.transpose_scales; the
DeepGEMM drop-in's copy of A's scales).

Kernels are compiled once per (K, gathered, gated, target, steps, scatter:
index type, copies and input_scales), (N, K, transposed, target) or
(C, target), and launched through ggc's runtime
(ggc.moe.ptx).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch

from .. import compiler as ggc_compiler
from ..torch_ops import tracing
from . import ptx
from .quant import BLOCK, FP8, FP8_ROW_ALIGNMENT

THREADS = 256
# A lane of gg.quantize_rows' kernel loads 8 bf16 (16 bytes): rows of out
# come in multiples of this many columns.
LANE_COLUMNS = 8
# A warp's steps of a row (two 128-column blocks each) loaded together
# (gg.quantize_rows' `steps`): the most, up to MAX_STEPS, that divide the
# row's steps, since a unit past the row's end loads blocks it does not
# store. Measured on the H200 (docs/performance-history.md, fifteenth
# session, call 1), us for steps 1 / 2 / 4: SwiGLU's output 32,768 x 768
# (3 steps a row) 40.2 / 48.8 / 42.7; 4,096 tokens of 2,048 (8 steps)
# 12.7 / 12.3 / 11.6; 32,768 gathered rows of 2,048 51.1 / 46.8 / 42.2.
MAX_STEPS = 4


def steps_for(k: int) -> int:
    """The steps a warp takes of a row of `k` output columns at once."""
    row_steps = -(-k // (2 * BLOCK))
    return max(s for s in range(1, MAX_STEPS + 1) if row_steps % s == 0)


# gg.quantize_rows' most copies a scattered row fills (its verifier's).
MAX_COPIES = 64
_MAX_GRID = 132 * 8  # CTAs: enough to fill the GPU; the rows loop does the rest
_PTX: Dict[tuple, Tuple[str, str]] = {}


def source_text(name: str, k: int, gathered: bool, gated: bool, steps: int,
                scatter: Optional[Tuple[str, int, bool]] = None, routed: bool = False) -> str:
    """The gg IR of one quantisation kernel; `scatter`: (index type, copies,
    input_scales) for a scattered copy; `routed` (gated): a weight a row,
    and the bf16 activation stored too."""
    in_k = 2 * k if gated else k
    blocks = -(-k // BLOCK)
    rows_arg = ", %rows: memref<?xi32>" if gathered else ""
    rows_use = " rows(%rows : memref<?xi32>)" if gathered else ""
    route_arg = ", %route: memref<?xf32>" if routed else ""
    route_use = " route(%route : memref<?xf32>)" if routed else ""
    act_arg = f", %act: memref<?x{k}xbf16>" if routed else ""
    act_use = f" activation(%act : memref<?x{k}xbf16>)" if routed else ""
    attrs = "gated, " if gated else ""
    if scatter is not None:
        index, copies, input_scales = scatter
        rows_arg = f", %scatter: memref<?x{index}>"
        rows_use = f" scatter(%scatter : memref<?x{index}>)"
        attrs += f"copies = {copies} : i64, " + ("input_scales, " if input_scales else "")
    return f"""
func.func @{name}(%input: memref<?x{in_k}xbf16>{rows_arg}{route_arg},
    %out: memref<?x{k}xf8E4M3FN>, %scales: memref<{blocks}x?xf32>{act_arg}) {{
  gg.quantize_rows input(%input : memref<?x{in_k}xbf16>){rows_use}{route_use}
      out(%out : memref<?x{k}xf8E4M3FN>) scales(%scales : memref<{blocks}x?xf32>){act_use}
      {{{attrs}threads = {THREADS} : i64, steps = {steps} : i64}}
  return
}}
"""


def kernel(k: int, gathered: bool, gated: bool, arch: Optional[str] = None,
           steps: Optional[int] = None,
           scatter: Optional[Tuple[str, int, bool]] = None,
           routed: bool = False) -> Tuple[str, str]:
    """(kernel name, PTX) on `arch` (default: ggc's target), compiled on
    first use; `steps` defaults to steps_for(k); `scatter` and `routed` as
    source_text's."""
    arch = arch or ggc_compiler.get_target()
    steps = steps or steps_for(k)
    scattered = "" if scatter is None else (f"_scatter{scatter[1]}{scatter[0]}"
                                            f"{'_inscales' if scatter[2] else ''}")
    name = (f"ggc_moe_quantize_k{k}{'_gathered' if gathered else ''}{scattered}"
            f"{'_gated' if gated else ''}{'_routed' if routed else ''}_s{steps}_{arch}")
    key = (k, gathered, gated, arch, steps, scatter, routed)
    return ptx.compiled(_PTX, key, name,
                        lambda name: source_text(name, k, gathered, gated, steps, scatter,
                                                 routed),
                        arch, "_quantize")

def usable(x: torch.Tensor, gated: bool = False) -> bool:
    """Whether rows_mn takes x: CUDA bf16 [R, K] rows (K = 2 * out's
    columns where gated) with out's columns a multiple of LANE_COLUMNS (the
    last 128-column block may be partial), in eager mode or a CUDA-graph
    capture, on a target with FP8 conversion."""
    if not (x.is_cuda and x.dtype == torch.bfloat16 and x.dim() == 2) or tracing():
        return False
    k = x.shape[1] // 2 if gated else x.shape[1]
    return (k > 0 and k % LANE_COLUMNS == 0 and (not gated or x.shape[1] % 2 == 0)
            and converts_fp8())


def converts_fp8(arch: Optional[str] = None) -> bool:
    """Whether `arch` (default: ggc's target) converts f32 to e4m3 (cvt's
    e4m3x2, which came with FP8 tensor cores: the target's fp8_mma)."""
    return ggc_compiler.targets()[arch or ggc_compiler.get_target()].fp8_mma


def rows_mn(x: torch.Tensor, rows: Optional[torch.Tensor] = None, gated: bool = False,
            steps: Optional[int] = None, positions: Optional[torch.Tensor] = None,
            sources: Optional[torch.Tensor] = None
            ) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
    """(e4m3 [M, K], f32 scales [ceil(K/128), align4(M)] M-major) for x's rows
    (x[rows] with `rows` int32 [M], zeros off x; silu(gate) * up over the
    column halves where `gated`), or None where the kernel cannot take the
    call (an input not 16-byte aligned). Check usable(x, gated) first.
    `positions` (int32 or int64 [M], M = R * copies for x's R rows; not
    with `rows`): out[positions[r * copies + c]] = x[r] for every c < copies,
    each row quantised once (a permutation such as the MoE layer's route
    positions writes every row; indices off out are skipped, rows no index
    names are left unwritten). With `sources` (int32 or int64 [M] in
    [0, R): the input row of each out row, positions' inverse divided by
    copies; not checked on the device), the
    kernel writes each input row's scales once and one gather puts them in
    out's rows (the same scales; scattered 4-byte stores of every out row's
    scales cost more). `steps`: gg.quantize_rows' steps of a row a warp
    loads together (default steps_for(K))."""
    x = x.contiguous()
    if rows is not None and positions is not None:
        raise ValueError("rows_mn takes rows (a gather) or positions (a scatter), not both")
    if rows is not None:
        rows = rows.to(torch.int32).contiguous()
    scatter = None
    if positions is not None:
        positions, scatter = _scatter_args(x, positions, sources)
        rows = positions
    elif sources is not None:
        raise ValueError("rows_mn takes sources only with positions")
    m = x.shape[0] if rows is None else rows.shape[0]
    k = x.shape[1] // 2 if gated else x.shape[1]
    out = torch.empty(m, k, dtype=FP8, device=x.device)
    ld = (m + 3) // 4 * 4
    # With input_scales the kernel writes the input rows' scales.
    scaled_ld = (x.shape[0] + 3) // 4 * 4 if scatter and scatter[2] else ld
    scales = torch.empty(-(-k // BLOCK), scaled_ld, dtype=torch.float32, device=x.device)
    tensors = (x,) + (() if rows is None else (rows,)) + (out, scales)
    if not ptx.aligned(*tensors):
        return None
    if m == 0 or x.shape[0] == 0:
        if m:  # every row off x: zeros, whose scale is the floor's
            out.zero_()
            scales.fill_(1e-12 / 448.0)
        return out, scales
    steps = steps or steps_for(k)
    name, code = kernel(k, scatter is None and rows is not None, gated, steps=steps,
                        scatter=scatter)
    _launch(name, code, tensors, x.shape[0] if scatter else m, k, steps,
            (m, x.shape[0], scaled_ld))
    if scatter and scatter[2]:
        return out, _gathered_scales(scales, sources, ld)
    return out, scales


def routed_swiglu(h: torch.Tensor, route: torch.Tensor
                  ) -> Optional[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(a bf16 [M, I], e4m3 [M, I], f32 scales [ceil(I/128), align4(M)]
    M-major) for h [M, 2I] (gate columns first) and the rows' weights
    route (f32 [M]): a = bf16(silu(gate) * up * route), the bits of
    swiglu_kernel.swiglu(h, route), and its 1x128 quantisation (rows_mn's
    values for a), from one read of h (gg.quantize_rows' `route` and
    `activation`). None where the kernel cannot take the call (check
    usable(h, gated=True) first; route not f32 [M] on h's device,
    unaligned memory)."""
    m, k = h.shape[0], h.shape[1] // 2
    if (not usable(h, gated=True) or route.dtype != torch.float32 or route.shape != (m,)
            or route.device != h.device):
        return None
    h, route = h.contiguous(), route.contiguous()
    act = torch.empty(m, k, dtype=torch.bfloat16, device=h.device)
    out = torch.empty(m, k, dtype=FP8, device=h.device)
    ld = (m + 3) // 4 * 4
    scales = torch.empty(-(-k // BLOCK), ld, dtype=torch.float32, device=h.device)
    tensors = (h, route, out, scales, act)
    if not ptx.aligned(*tensors):
        return None
    if m:
        steps = steps_for(k)
        name, code = kernel(k, False, True, steps=steps, routed=True)
        _launch(name, code, tensors, m, k, steps, (m, m, ld))
    return act, out, scales


def _launch(name, code, tensors, walked_rows, k, steps, sizes):
    """gg.quantize_rows' kernel on `tensors` (its pointers) and `sizes`
    (M, R, LD): a warp takes `steps` steps of two 128-column blocks of one
    of `walked_rows` rows (x's where scattered, else out's)."""
    units = walked_rows * -(-k // (2 * BLOCK * steps))
    grid = min(_MAX_GRID, -(-units // (THREADS // 32)))
    params = [("pointer", i) for i in range(len(tensors))] + [("i64", v) for v in sizes]
    ptx.launch(name, code, THREADS, grid, params, tensors, tensors[0].device)


def _scatter_args(x: torch.Tensor, positions: torch.Tensor, sources: Optional[torch.Tensor]):
    """rows_mn's checked positions (contiguous) and its kernel's scatter
    key (index type, copies, input_scales)."""
    for name, t in (("positions", positions), ("sources", sources)):
        if t is None:
            continue
        if t.dtype not in (torch.int32, torch.int64) or t.dim() != 1:
            raise ValueError(f"{name} must be 1-D int32 or int64, got {t.dtype} "
                             f"of shape {tuple(t.shape)}")
        if t.device != x.device:
            raise ValueError(f"{name} must be on x's device {x.device}, got {t.device}")
    r, listed = x.shape[0], positions.shape[0]
    if (r == 0) != (listed == 0) or (r and listed % r):
        raise ValueError(f"positions must list a whole number of rows for each of x's "
                         f"{r} rows, got {listed}")
    if sources is not None and sources.shape != positions.shape:
        raise ValueError(f"sources must name one input row for each of the {listed} out "
                         f"rows, got shape {tuple(sources.shape)}")
    copies = listed // r if r else 1
    if copies > MAX_COPIES:
        raise ValueError(f"positions must list at most {MAX_COPIES} rows for each of x's "
                         f"{r} rows (gg.quantize_rows' copies), got {copies}")
    index = str(positions.dtype).replace("torch.int", "i")
    return positions.contiguous(), (index, copies, sources is not None)


def _gathered_scales(scales: torch.Tensor, sources: torch.Tensor, ld: int) -> torch.Tensor:
    """The input rows' M-major scales [blocks, LD_R] as out's [blocks, ld]:
    column p is sources[p]'s (one gather; the columns past M repeat row 0's,
    which no GEMM reads)."""
    if sources.shape[0] != ld:
        sources = torch.nn.functional.pad(sources, (0, ld - sources.shape[0]))
    return scales.index_select(1, sources)


_BLOCK_PTX: Dict[tuple, Tuple[str, str]] = {}
_BLOCK_THREADS = 256  # gg.quantize_blocks' kernel: one 8x8 square a thread


def blocks_source_text(name: str, n: int, k: int, transposed: bool) -> str:
    """The gg IR of one weight-block quantisation kernel over [G, n, k]."""
    q_type = f"memref<?x{n}x{k}xf8E4M3FN>"
    t_type = f"memref<?x{k}x{n}xf8E4M3FN>"
    s_type = f"memref<?x{-(-n // BLOCK)}x{-(-k // BLOCK)}xf32>"
    t_arg = f", %qt: {t_type}" if transposed else ""
    t_use = f" transposed(%qt : {t_type})" if transposed else ""
    return f"""
func.func @{name}(%w: memref<?x{n}x{k}xbf16>, %q: {q_type}{t_arg}, %s: {s_type}) {{
  gg.quantize_blocks input(%w : memref<?x{n}x{k}xbf16>) out(%q : {q_type}){t_use}
      scales(%s : {s_type})
  return
}}
"""


def weight_blocks(w: torch.Tensor, transposed: bool):
    """(e4m3 [G, N, K], f32 scales [G, ceil(N/128), ceil(K/128)], e4m3
    transposed [G, K, N] or None) for bf16 CUDA weights w [G, N, K] with N
    and K multiples of 16 (the last blocks partial where they are not of
    128), by gg.quantize_blocks' kernel (the values
    quant.quantize_rows' rule gives a 128x128 block); None where the
    kernel cannot take them (another dtype or device, a target without
    FP8 conversion, while tracing, unaligned memory)."""
    if not (w.is_cuda and w.dtype == torch.bfloat16 and w.dim() == 3) or tracing():
        return None
    g, n, k = w.shape
    if n % FP8_ROW_ALIGNMENT or k % FP8_ROW_ALIGNMENT or not n or not k or not converts_fp8():
        return None
    w = w.detach().contiguous()
    q = torch.empty(w.shape, dtype=FP8, device=w.device)
    qt = torch.empty(g, k, n, dtype=FP8, device=w.device) if transposed else None
    scales = torch.empty(g, -(-n // BLOCK), -(-k // BLOCK), dtype=torch.float32,
                         device=w.device)
    tensors = (w, q) + ((qt,) if transposed else ()) + (scales,)
    if not ptx.aligned(*tensors):
        return None
    if g:
        arch = ggc_compiler.get_target()
        name = f"ggc_quantize_blocks_n{n}_k{k}{'_t' if transposed else ''}_{arch}"
        name, code = ptx.compiled(_BLOCK_PTX, (n, k, transposed, arch), name,
                                  lambda name: blocks_source_text(name, n, k, transposed),
                                  arch, "_quantize_blocks")
        blocks = scales.numel()
        params = [("pointer", i) for i in range(len(tensors))] + [("i64", g)]
        ptx.launch(name, code, _BLOCK_THREADS, min(blocks, _MAX_GRID), params, tensors,
                   w.device)
    return q, scales, qt


_TOKEN_PTX: Dict[tuple, Tuple[str, str]] = {}
_TOKEN_THREADS = 256  # gg.quantize_group_tokens' kernel: one 8x8 square a thread


def group_tokens_source_text(name: str, c: int) -> str:
    """The gg IR of one group-token quantisation kernel over [T, c]."""
    return f"""
func.func @{name}(%x: memref<?x{c}xbf16>, %groups: memref<?xi32>,
    %q: memref<{c}x?xf8E4M3FN>, %s: memref<?x{c}xf32>, %padded: memref<?xi32>) {{
  gg.quantize_group_tokens input(%x : memref<?x{c}xbf16>) groups(%groups : memref<?xi32>)
      out(%q : memref<{c}x?xf8E4M3FN>) scales(%s : memref<?x{c}xf32>)
      padded_groups(%padded : memref<?xi32>)
  return
}}
"""


def group_tokens(x: torch.Tensor, offsets: torch.Tensor, capacity: int, out=None):
    """(e4m3 [C, capacity], f32 scales [capacity / 128, C], int32 padded
    offsets [G+1]) for bf16 CUDA x [T, C] (C a multiple of 16) whose
    groups' rows are offsets (int32 [G+1], non-decreasing in [0, T] for
    the padding to fit: quantized_tokens makes them so): each group's
    tokens quantised in 1x128 blocks along the tokens and transposed,
    each group starting at a multiple of 128 (zeros between and after),
    by gg.quantize_group_tokens' kernel; `capacity` a multiple of 128 of
    at least the padded tokens (T rounded up plus 128 G); `out`: those
    three tensors to write instead of new ones. None where the kernel
    cannot take them (another dtype or device, a target without FP8
    conversion, while tracing, unaligned memory)."""
    if not (x.is_cuda and x.dtype == torch.bfloat16 and x.dim() == 2) or tracing():
        return None
    t, c = x.shape
    if c % FP8_ROW_ALIGNMENT or not c or capacity % BLOCK or not converts_fp8():
        return None
    if offsets.dtype != torch.int32 or offsets.dim() != 1 or offsets.device != x.device:
        return None
    x = x.contiguous()
    offsets = offsets.contiguous()
    if out is None:
        out = (torch.empty(c, capacity, dtype=FP8, device=x.device),
               torch.empty(capacity // BLOCK, c, dtype=torch.float32, device=x.device),
               torch.empty_like(offsets))
    q, scales, padded = out
    tensors = (x, offsets, q, scales, padded)
    if not ptx.aligned(*tensors):
        return None
    arch = ggc_compiler.get_target()
    name = f"ggc_quantize_group_tokens_c{c}_{arch}"
    name, code = ptx.compiled(_TOKEN_PTX, (c, arch), name,
                              lambda name: group_tokens_source_text(name, c),
                              arch, "_quantize_group_tokens")
    blocks = capacity // BLOCK * -(-c // BLOCK)
    params = ([("pointer", i) for i in range(len(tensors))]
              + [("i64", t), ("i64", offsets.shape[0] - 1), ("i64", capacity)])
    ptx.launch(name, code, _TOKEN_THREADS, max(1, min(blocks, _MAX_GRID)), params, tensors,
               x.device)
    return q, scales, padded


_SCALE_PTX: Dict[tuple, Tuple[str, str]] = {}
# gg.transpose_scales' kernel: a CTA of 256 threads moves tiles of 128 rows x 8 columns
_SCALE_THREADS, _SCALE_TILE_ROWS, _SCALE_TILE_COLUMNS = 256, 128, 8


def scale_tiles(batches: int, c: int, aligned: int) -> int:
    """The tiles gg.transpose_scales' kernel walks over [batches, c, aligned]
    storage; it numbers them in i32, so it takes fewer than 2^31."""
    return batches * -(-c // _SCALE_TILE_COLUMNS) * -(-aligned // _SCALE_TILE_ROWS)


def scales_source_text(name: str, batched: bool) -> str:
    """The gg IR of the scale transposition kernel over [R, C] or [B, R, C]."""
    b = "?x" if batched else ""
    return f"""
func.func @{name}(%s: memref<{b}?x?xf32>, %t: memref<{b}?x?xf32>) {{
  gg.transpose_scales input(%s : memref<{b}?x?xf32>) out(%t : memref<{b}?x?xf32>)
  return
}}
"""


def transposed_scales(sf: torch.Tensor, aligned: int,
                      out: Optional[torch.Tensor] = None) -> Optional[torch.Tensor]:
    """The storage [.., C, aligned] of f32 CUDA scales sf [.., R, C] (2-D or
    3-D, `aligned` >= R): row c holds scale c of every row, zeros from R
    on; the M-major form a grouped matmul's "block_mn" scales read, made
    by gg.transpose_scales' kernel (one read of sf, one write of the
    storage; `out`: a contiguous storage to write instead of a new one).
    None, and `out` left unwritten, where the kernel cannot take them
    (another dtype or device, while tracing, unaligned memory, 2^31 tiles
    or more)."""
    if sf.dtype != torch.float32 or sf.dim() not in (2, 3):
        return None
    *batch, r, c = sf.shape
    if aligned < r:
        raise ValueError(f"aligned must be at least the scales' rows ({r}), got {aligned}")
    batches = batch[0] if batch else 1
    tiles = scale_tiles(batches, c, aligned)
    if not sf.is_cuda or tracing() or tiles >= 2**31:
        return None
    sf = sf.contiguous()
    shape = (*batch, c, aligned)
    storage = torch.empty(shape, dtype=torch.float32, device=sf.device) if out is None else out
    if (tuple(storage.shape) != shape or storage.dtype != torch.float32
            or storage.device != sf.device or not storage.is_contiguous()):
        raise ValueError(f"out must be a contiguous float32 tensor of shape {list(shape)} on "
                         f"{sf.device}, got {storage.dtype} {list(storage.shape)}")
    if not ptx.aligned(sf, storage):
        return None
    if batches * aligned and c:
        arch = ggc_compiler.get_target()
        name = f"ggc_transpose_scales{'_b' if batch else ''}_{arch}"
        name, code = ptx.compiled(_SCALE_PTX, (bool(batch), arch), name,
                                  lambda name: scales_source_text(name, bool(batch)),
                                  arch, "_transpose_scales")
        params = [("pointer", 0), ("pointer", 1), ("i64", batches), ("i64", r), ("i64", c),
                  ("i64", aligned)]
        grid = min(tiles, _MAX_GRID)
        ptx.launch(name, code, _SCALE_THREADS, grid, params, (sf, storage), sf.device)
    return storage
