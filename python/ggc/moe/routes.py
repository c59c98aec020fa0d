"""The token permutation in one or two kernels that ggc compiles.

torch computes fused_moe's permutation in about fifteen kernels (clamp,
compare, a stable radix sort with its copies, searchsorted, scatter,
divide, masked fill, gather of the weights); each costs a launch of GPU
time in a CUDA graph and several microseconds of host time eagerly, more
than the work at every size a MoE layer sees. `sort_routes` does it with
gg's `gg.sort_routes` op, which ggc compiles (`gg-lower-sort-routes`) into
a count kernel and a place kernel: one CTA of THREADS threads for each
CHUNK_ROUTES routes, the count kernel left out where one chunk holds them
all. The sort is stable (each expert's rows keep route order), so every
run gives the same order, the torch path's.

Kernels are compiled once per (experts, top_k, id type, target) and
launched through ggc's runtime (ggc.moe.ptx).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch

from .. import compiler as ggc_compiler
from ..torch_ops import tracing
from . import ptx

# One CTA's threads, and the routes it sorts. A place kernel's time goes
# mostly to its scattered stores (three a route), so chunks are small
# enough to spread them over many SMs: a Qwen3-like layer at 1,024 tokens
# (8,192 routes) sorts on 8 CTAs, at 16,384 tokens on 128, and each place
# kernel then sums 128 chunks' counts per expert (docs/performance-history.md,
# fourteenth session: 4,096 routes a CTA took 16-22 us at every size).
THREADS = 512
CHUNK_ROUTES = 1024
# gg.sort_routes takes at most THREADS experts (the place kernel sums the
# chunks' counts with at least one thread an expert).
MAX_EXPERTS = THREADS
MAX_ROUTES = 2 ** 31 - 1  # int32 offsets and sorted rows

_ID_TYPES = {torch.int32: "i32", torch.int64: "i64"}
_PTX: Dict[tuple, Tuple[str, str]] = {}


def source_text(name: str, experts: int, top_k: int, id_type: str) -> str:
    """The gg IR of the sort's kernels: one function holding gg.sort_routes."""
    return f"""
func.func @{name}(%ids: memref<?x{id_type}>, %weights: memref<?xf32>,
    %counts: memref<?xi32>, %offsets: memref<{experts + 1}xi32>,
    %order: memref<?xi64>, %source: memref<?xi32>, %position: memref<?xi64>,
    %route: memref<?xf32>) {{
  gg.sort_routes ids(%ids : memref<?x{id_type}>) weights(%weights : memref<?xf32>)
      chunk_counts(%counts : memref<?xi32>) offsets(%offsets : memref<{experts + 1}xi32>)
      order(%order : memref<?xi64>) source(%source : memref<?xi32>)
      position(%position : memref<?xi64>) route(%route : memref<?xf32>)
      {{experts = {experts} : i64, top_k = {top_k} : i64,
        chunk_routes = {CHUNK_ROUTES} : i64, threads = {THREADS} : i64}}
  return
}}
"""


def kernels(experts: int, top_k: int, id_dtype: torch.dtype,
            arch: Optional[str] = None) -> Tuple[str, str]:
    """(kernel name prefix, PTX) for this sort on `arch` (default: ggc's
    target), compiled on first use."""
    arch = arch or ggc_compiler.get_target()
    id_type = _ID_TYPES[id_dtype]
    return ptx.compiled(_PTX, (experts, top_k, id_type, arch),
                        f"ggc_moe_routes_e{experts}_k{top_k}_{id_type}_{arch}",
                        lambda name: source_text(name, experts, top_k, id_type), arch)

def usable(topk_ids: torch.Tensor, experts: int) -> bool:
    """Whether the kernels may serve this call: CUDA ids of at most
    MAX_EXPERTS experts, in eager mode or a CUDA-graph capture
    (torch.compile and dispatch modes trace the torch path instead)."""
    return (topk_ids.is_cuda and 1 <= experts <= MAX_EXPERTS
            and topk_ids.numel() <= MAX_ROUTES
            and topk_ids.dtype in _ID_TYPES and not tracing())


def sort_routes(topk_ids: torch.Tensor, topk_weights: torch.Tensor, experts: int
                ) -> Optional[Tuple[torch.Tensor, ...]]:
    """(offsets i32 [E+1], order i64 [M], source i32 [M], position i64 [M],
    route f32 [M]) with the torch path's values (permute.sort_routes, then
    the weights poisoned and gathered; source as int32, which gathers and
    gg's a_rows take), or None where the kernels cannot take the call (an
    input not 16-byte aligned)."""
    # The kernels read both as packed arrays: a strided view becomes a copy.
    ids = topk_ids.reshape(-1).contiguous()
    weights = topk_weights.reshape(-1).contiguous()
    if weights.dtype != torch.float32:
        weights = weights.float()
    if not ptx.aligned(ids, weights):
        return None
    m, device = ids.shape[0], ids.device
    top_k = topk_ids.shape[1]
    if m == 0:
        return (torch.zeros(experts + 1, dtype=torch.int32, device=device),
                ids.new_empty(0, dtype=torch.int64), ids.new_empty(0, dtype=torch.int32),
                ids.new_empty(0, dtype=torch.int64), weights.new_empty(0))
    name, code = kernels(experts, top_k, ids.dtype)
    chunks = -(-m // CHUNK_ROUTES)
    # One allocation for the two i64 index rows and one for the i32 ones,
    # each row starting 16-byte aligned (the runtime's rule for pointers).
    wide = torch.empty(2, m + m % 2, dtype=torch.int64, device=device)
    order, position = wide[:, :m]
    narrow_len = -(-(experts + 1) // 4) * 4
    source_len = -(-m // 4) * 4
    narrow = torch.empty(narrow_len + source_len + chunks * experts, dtype=torch.int32,
                         device=device)
    offsets = narrow[:experts + 1]
    source = narrow[narrow_len:narrow_len + m]
    counts = narrow[narrow_len + source_len:]
    route = torch.empty(m, dtype=torch.float32, device=device)
    if chunks > 1:
        ptx.launch(name + "_count", code, THREADS, chunks,
                   [("pointer", 0), ("i64", m), ("pointer", 1)], (ids, counts), device)
    ptx.launch(name + "_place", code, THREADS, chunks,
               [("pointer", 0), ("pointer", 1), ("i64", m), ("i64", chunks)]
               + [("pointer", i) for i in range(2, 8)],
               (ids, weights, counts, offsets, order, source, position, route), device)
    return offsets, order, source, position, route
