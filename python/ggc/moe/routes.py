"""The token permutation of a decode-sized layer in one kernel.

torch computes fused_moe's permutation in about ten kernels (clamp,
compare, stable sort with its copies, searchsorted, scatter, divide,
masked fill, gather of the weights); at decode sizes each costs a launch
of GPU time in a CUDA graph and several microseconds of host time eagerly,
more than the work. `ggc_moe_routes` does it all in one launch for up to
MAX_ROUTES routes: every CTA loads the clamped expert ids into shared
memory, each thread ranks one route among the (expert, route) pairs (a
stable sort by expert: every run gives the same order) and writes where
it goes, and the threads of the grid count the routes below each expert
for the group offsets. O(routes^2) comparisons, broadcast from shared
memory: fine at a few hundred routes, which is where it is used.

The kernel is PTX text (JIT-compiled by the driver, as the executor's
small kernels are), launched through ggc's runtime (ggc.moe.ptx).
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from ..torch_ops import tracing
from . import ptx

MAX_ROUTES = 1024  # the shared-memory table's size
_THREADS = 128  # at most the PTX's .maxntid

PTX = r"""
.version 8.0
.target sm_80
.address_size 64

// offsets[e] = #{s : expert_s < e} for e in [0, E]; route r (= token * top_k
// + slot) goes to row rank_r = #{s : (expert_s, s) < (expert_r, r)}:
// position[r] = rank_r, order[rank_r] = r, source[rank_r] = r / top_k,
// route[rank_r] = weights[r], NaN where r's id was outside [0, E).
.visible .entry ggc_moe_routes(
    .param .u64 p_ids, .param .u64 p_ids_i64, .param .u64 p_weights,
    .param .u64 p_routes, .param .u64 p_experts, .param .u64 p_top_k,
    .param .u64 p_offsets, .param .u64 p_order, .param .u64 p_source,
    .param .u64 p_position, .param .u64 p_route)
.maxntid 128, 1, 1
{
  .shared .align 4 .b32 experts_of[1024];  // the clamped id; bit 31: invalid
  .reg .pred %p<8>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<40>;
  .reg .f32 %f<4>;

  ld.param.u64 %rd1, [p_ids];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [p_ids_i64];
  ld.param.u64 %rd3, [p_weights];
  cvta.to.global.u64 %rd3, %rd3;
  ld.param.u64 %rd4, [p_routes];
  ld.param.u64 %rd5, [p_experts];
  ld.param.u64 %rd6, [p_top_k];
  ld.param.u64 %rd7, [p_offsets];
  cvta.to.global.u64 %rd7, %rd7;
  ld.param.u64 %rd8, [p_order];
  cvta.to.global.u64 %rd8, %rd8;
  ld.param.u64 %rd9, [p_source];
  cvta.to.global.u64 %rd9, %rd9;
  ld.param.u64 %rd10, [p_position];
  cvta.to.global.u64 %rd10, %rd10;
  ld.param.u64 %rd11, [p_route];
  cvta.to.global.u64 %rd11, %rd11;
  cvt.u32.u64 %r1, %rd4;            // routes (at most 1024)
  cvt.u32.u64 %r2, %rd5;            // experts
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %ctaid.x;
  mov.u32 %r5, %nctaid.x;
  mov.u32 %r6, experts_of;
  mov.u32 %r24, %ntid.x;
  add.s64 %rd12, %rd5, -1;          // the last expert

  // Every CTA loads every route's clamped id.
  mov.u32 %r7, %r3;
LOAD:
  setp.ge.u32 %p1, %r7, %r1;
  @%p1 bra LOADED;
  setp.eq.u64 %p2, %rd2, 0;
  @%p2 bra LOAD_I32;
  mul.wide.u32 %rd13, %r7, 8;
  add.s64 %rd13, %rd1, %rd13;
  ld.global.s64 %rd14, [%rd13];
  bra CLAMP;
LOAD_I32:
  mul.wide.u32 %rd13, %r7, 4;
  add.s64 %rd13, %rd1, %rd13;
  ld.global.s32 %r8, [%rd13];
  cvt.s64.s32 %rd14, %r8;
CLAMP:
  min.s64 %rd15, %rd14, %rd12;
  max.s64 %rd15, %rd15, 0;
  setp.ne.s64 %p3, %rd15, %rd14;
  cvt.u32.u64 %r9, %rd15;
  selp.b32 %r10, -2147483648, 0, %p3;
  or.b32 %r9, %r9, %r10;
  shl.b32 %r11, %r7, 2;
  add.u32 %r11, %r6, %r11;
  st.shared.u32 [%r11], %r9;
  add.u32 %r7, %r7, %r24;
  bra LOAD;
LOADED:
  bar.sync 0;

  // This thread's route r and its rank.
  mad.lo.u32 %r12, %r4, %r24, %r3;
  setp.ge.u32 %p1, %r12, %r1;
  @%p1 bra OFFSETS;
  shl.b32 %r13, %r12, 2;
  add.u32 %r13, %r6, %r13;
  ld.shared.u32 %r14, [%r13];       // r's entry
  and.b32 %r15, %r14, 2147483647;   // r's expert
  mov.u32 %r16, 0;                  // rank
  mov.u32 %r17, 0;                  // s
  mov.u32 %r18, %r6;                // &experts_of[s]
RANK:
  setp.ge.u32 %p1, %r17, %r1;
  @%p1 bra RANKED;
  ld.shared.u32 %r19, [%r18];
  and.b32 %r19, %r19, 2147483647;
  setp.lt.u32 %p2, %r19, %r15;
  setp.eq.u32 %p3, %r19, %r15;
  setp.lt.u32 %p4, %r17, %r12;
  and.pred %p3, %p3, %p4;
  or.pred %p2, %p2, %p3;
  selp.u32 %r20, 1, 0, %p2;
  add.u32 %r16, %r16, %r20;
  add.u32 %r17, %r17, 1;
  add.u32 %r18, %r18, 4;
  bra RANK;
RANKED:
  cvt.u64.u32 %rd16, %r12;          // r
  cvt.u64.u32 %rd17, %r16;          // rank
  mul.wide.u32 %rd18, %r12, 8;
  add.s64 %rd18, %rd10, %rd18;
  st.global.u64 [%rd18], %rd17;     // position[r] = rank
  mul.wide.u32 %rd19, %r16, 8;
  add.s64 %rd20, %rd8, %rd19;
  st.global.u64 [%rd20], %rd16;     // order[rank] = r
  div.u64 %rd21, %rd16, %rd6;
  add.s64 %rd20, %rd9, %rd19;
  st.global.u64 [%rd20], %rd21;     // source[rank] = r / top_k
  mul.wide.u32 %rd22, %r12, 4;
  add.s64 %rd22, %rd3, %rd22;
  ld.global.f32 %f1, [%rd22];
  setp.lt.s32 %p5, %r14, 0;         // invalid id
  selp.f32 %f1, 0f7FC00000, %f1, %p5;
  mul.wide.u32 %rd23, %r16, 4;
  add.s64 %rd23, %rd11, %rd23;
  st.global.f32 [%rd23], %f1;       // route[rank]

OFFSETS:
  // offsets[e] for e in [0, E], strided over every thread of the grid.
  mad.lo.u32 %r21, %r4, %r24, %r3;
  mul.lo.u32 %r22, %r5, %r24;
E_LOOP:
  setp.gt.u32 %p1, %r21, %r2;
  @%p1 bra DONE;
  mov.u32 %r23, 0;                  // count
  mov.u32 %r17, 0;
  mov.u32 %r18, %r6;
COUNT:
  setp.ge.u32 %p1, %r17, %r1;
  @%p1 bra COUNTED;
  ld.shared.u32 %r19, [%r18];
  and.b32 %r19, %r19, 2147483647;
  setp.lt.u32 %p2, %r19, %r21;
  selp.u32 %r20, 1, 0, %p2;
  add.u32 %r23, %r23, %r20;
  add.u32 %r17, %r17, 1;
  add.u32 %r18, %r18, 4;
  bra COUNT;
COUNTED:
  mul.wide.u32 %rd24, %r21, 4;
  add.s64 %rd24, %rd7, %rd24;
  st.global.u32 [%rd24], %r23;
  add.u32 %r21, %r21, %r22;
  bra E_LOOP;
DONE:
  ret;
}
"""


def usable(topk_ids: torch.Tensor, experts: int) -> bool:
    """Whether the kernel may serve this call: at most MAX_ROUTES routes of
    CUDA tensors, in eager mode or a CUDA-graph capture (torch.compile and
    dispatch modes trace the torch path instead)."""
    return (topk_ids.is_cuda and topk_ids.numel() <= MAX_ROUTES and experts >= 1
            and topk_ids.dtype in (torch.int32, torch.int64) and not tracing())


def sort_routes(topk_ids: torch.Tensor, topk_weights: torch.Tensor, experts: int
                ) -> Optional[Tuple[torch.Tensor, ...]]:
    """(offsets, order, source, position, route) as the torch path gives
    them (permute.sort_routes, then the weights poisoned and gathered), or
    None where the kernel cannot take the call (an input not 16-byte
    aligned)."""
    # The kernel reads both as packed arrays: a strided view becomes a copy.
    ids = topk_ids.reshape(-1).contiguous()
    weights = topk_weights.reshape(-1).contiguous()
    if weights.dtype != torch.float32:
        weights = weights.float()
    if not ptx.aligned(ids, weights):
        return None
    m, device = ids.shape[0], ids.device
    offsets = torch.empty(experts + 1, dtype=torch.int32, device=device)
    # One allocation for the three index rows, each starting 16-byte
    # aligned (the runtime's rule for pointers).
    rows = torch.empty(3, m + m % 2, dtype=torch.int64, device=device)
    order, source, position = rows[:, :m]
    route = torch.empty(m, dtype=torch.float32, device=device)
    top_k = topk_ids.shape[1]
    ptx.launch("ggc_moe_routes", PTX, _THREADS, max(1, -(-m // _THREADS)),
               [("pointer", 0), ("i64", int(ids.dtype == torch.int64)), ("pointer", 1),
                ("i64", m), ("i64", experts), ("i64", top_k)]
               + [("pointer", i) for i in range(2, 7)],
               (ids, weights, offsets, order, source, position, route), device)
    return offsets, order, source, position, route
