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
