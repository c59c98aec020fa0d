// RUN: ggc-opt %s -ggk-lower-threads | FileCheck %s

// Before: a consumer's warp index made warp-uniform from its thread index,
// its warp meeting, then every consumer thread (named barrier 1, 256
// threads), and an exchange with lane ^ 1. After: the special register, a
// shuffle from lane 0 with every lane, a butterfly shuffle,
// bar.warp.sync and bar.sync, where the ops were.
// CHECK-LABEL: llvm.func @threads
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %{{.*}}
// CHECK: %[[UNIFORM:.*]] = nvvm.shfl.sync idx %c-1_i32, %[[WARP]], %c0_i32, %c31_i32 : i32 -> i32
// CHECK: %{{.*}} = nvvm.shfl.sync bfly %c-1_i32{{.*}}, %[[TID]], %c1_i32{{.*}}, %c31_i32{{.*}} : i32 -> i32
// CHECK: nvvm.bar.warp.sync %c-1_i32
// CHECK-NEXT: nvvm.barrier id = %[[ID:.*]] number_of_threads = %[[COUNT:.*]]
// CHECK: llvm.return %[[UNIFORM]]
// CHECK-NOT: ggk.
llvm.func @threads() -> i32 {
  %c32 = arith.constant 32 : i32
  %id = arith.constant 1 : i32
  %count = arith.constant 256 : i32
  %tid = ggk.thread_index
  %warp = arith.divui %tid, %c32 : i32
  %uniform = ggk.warp_broadcast %warp
  %neighbour = ggk.warp_shuffle_xor %tid, 1
  ggk.warp_sync
  ggk.sync_threads %id, %count
  llvm.return %uniform : i32
}

// Before: the persistent schedule's first tile and stride (the CTA's
// index and the grid's size over a cluster of 2), the CTA's rank in its
// cluster, and the fence before an async-proxy read of what the threads
// wrote. After: the special registers and fence.proxy.async where the ops
// were.
// CHECK-LABEL: llvm.func @cta_place
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-NEXT: %[[CTAS:.*]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-NEXT: arith.divui %[[CTA]]
// CHECK-NEXT: arith.divui %[[CTAS]]
// CHECK-NEXT: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: llvm.return %[[RANK]]
// CHECK-NOT: ggk.
llvm.func @cta_place() -> i32 {
  %c2 = arith.constant 2 : i32
  %cta = ggk.block_index
  %ctas = ggk.grid_size
  %first = arith.divui %cta, %c2 : i32
  %stride = arith.divui %ctas, %c2 : i32
  %rank = ggk.cluster_rank
  ggk.fence_async_shared
  llvm.return %rank : i32
}

// Before: the CTA meets, then the cluster. After: bar.sync 0, then the
// cluster barrier's arrive and wait.
// CHECK-LABEL: llvm.func @meet
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: llvm.return
llvm.func @meet() {
  ggk.sync_cta
  ggk.cluster_sync
  llvm.return
}

// The MoE ops' warp ops and FP8 conversion (gg-lower-sort-routes,
// gg-lower-quantize-rows): match.any over the whole warp, the mask of the
// lanes below, and the e4m3 pair with the high value first; and the
// padded layout's tag ballot (ggk-stage-tile-stores): vote.sync over the
// whole warp.
// CHECK-LABEL: llvm.func @moe_ops
// CHECK: nvvm.match.sync any %c-1_i32, %{{.*}} : i32 -> i32
// CHECK: nvvm.read.ptx.sreg.lanemask.lt : i32
// CHECK: nvvm.vote.sync ballot %c-1_i32{{.*}}, %arg3 -> i32
// CHECK: nvvm.convert.f32x2.to.f8x2 %arg2, %arg1 {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK-NOT: ggk.
llvm.func @moe_ops(%v: i32, %lo: f32, %hi: f32, %p: i1) -> i16 {
  %same = ggk.warp_match_any %v
  %below = ggk.lanes_below
  %tagged = ggk.warp_ballot %p
  %pair = ggk.convert_e4m3x2 %lo, %hi
  llvm.return %pair : i16
}

// The activations' special-function approximations (ggk-lower-epilogue,
// gg-lower-quantize-rows, gg-lower-swiglu-rows): ex2 and rcp in their
// flush-to-zero forms, one MUFU instruction each.
// CHECK-LABEL: llvm.func @activations
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%arg0) : (f32) -> f32
// CHECK: nvvm.rcp.approx.ftz.f %[[E]] : f32
// CHECK-NOT: ggk.
llvm.func @activations(%x: f32) -> f32 {
  %e = ggk.exp2_approx %x
  %r = ggk.reciprocal_approx %e
  llvm.return %r : f32
}

// Before: a zero made opaque (the stage base of ring_stages = constant). After: an inline
// mov with side effects, which LLVM neither folds nor hoists, and the add
// on it left in place.
// CHECK-LABEL: llvm.func @opaque
// CHECK: %[[ZERO:.*]] = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %c0_i32 : (i32) -> i32
// CHECK: %[[STAGE:.*]] = arith.addi %[[ZERO]], %c3_i32
// CHECK: llvm.return %[[STAGE]]
// CHECK-NOT: ggk.opaque
llvm.func @opaque() -> i32 {
  %c0 = arith.constant 0 : i32
  %c3 = arith.constant 3 : i32
  %zero = ggk.opaque %c0
  %stage = arith.addi %zero, %c3 : i32
  llvm.return %stage : i32
}
