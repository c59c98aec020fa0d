// RUN: ggc-opt %s -ggk-lower-tma | FileCheck %s

// Before: a stage's barrier set up for one arrival, the producer's
// expect_tx and a TMA load of A's box with B's L2 hint, a consumer's
// release, then the store pool's TMA store and reduce-add (gg's
// accumulate into f32), their commit, and the two waits
// (for the staged tile to be read, for the stores to complete). After: the
// NVVM instructions, one for one, where the ops were.
// CHECK-LABEL: llvm.func @tma
// CHECK-SAME: (%[[BAR:.*]]: !llvm.ptr<3>, %[[DST:.*]]: !llvm.ptr<3>, %[[MAP:.*]]: !llvm.ptr, %[[K:.*]]: i32, %[[ROW:.*]]: i32, %[[HINT:.*]]: i64, %[[BYTES:.*]]: i32)
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: nvvm.mbarrier.init %[[BAR]], %[[ONE]] : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %[[BAR]], %[[BYTES]] : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %[[MAP]], %[[BAR]], box[%[[K]], %[[ROW]]] l2_cache_hint = %[[HINT]] {isCTAOnly = true}
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %[[MAP]], %[[BAR]], box[%[[K]], %[[ROW]]] {isCTAOnly = true}
// CHECK-NEXT: %{{.*}} = nvvm.mbarrier.arrive %[[BAR]] : !llvm.ptr<3> -> i64
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %[[MAP]], %[[DST]], box[%[[K]], %[[ROW]]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.reduce %[[MAP]], %[[DST]], box[%[[K]], %[[ROW]]] {redKind = #nvvm.tma_redux_kind<add>}
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0{{$}}
// CHECK-NEXT: llvm.return
// CHECK-NOT: ggk.
llvm.func @tma(%bar: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %map: !llvm.ptr, %k: i32,
               %row: i32, %hint: i64, %bytes: i32) {
  ggk.mbarrier_init %bar attributes {count = 1 : i64}
  ggk.mbarrier_arrive_expect_tx %bar, %bytes
  ggk.tma_load %dst, %map[%k, %row], %bar l2_hint(%hint)
  ggk.tma_load %dst, %map[%k, %row], %bar
  ggk.mbarrier_arrive %bar
  ggk.tma_store %dst, %map[%k, %row]
  ggk.tma_store %dst, %map[%k, %row] {add}
  ggk.bulk_commit_group
  ggk.bulk_wait_group read attributes {pending = 0 : i64}
  ggk.bulk_wait_group attributes {pending = 0 : i64}
  llvm.return
}

// Before: a cluster of two: a multicast of B's box, a release on both
// CTAs' barriers, the leader's fence of its inits. After: the box's
// destination and each barrier mapped to the CTA's rank (mapa), the
// multicast to both CTAs (mask 0b11), CTA-scope arrivals, the fence.
// CHECK-LABEL: llvm.func @cluster
// CHECK-SAME: (%[[BAR:.*]]: !llvm.ptr<3>, %[[DST:.*]]: !llvm.ptr<3>, %[[MAP:.*]]: !llvm.ptr, %[[K:.*]]: i32, %[[RANK:.*]]: i32, %[[HINT:.*]]: i64)
// CHECK: %[[PEER:.*]] = nvvm.mapa %[[DST]], %[[RANK]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[PEER]], %[[MAP]], %[[BAR]], box[%[[K]], %[[RANK]]] multicast_mask = %c3_i16 l2_cache_hint = %[[HINT]]
// CHECK-NEXT: %[[THEIRS:.*]] = nvvm.mapa %[[BAR]], %[[RANK]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[THEIRS]] : !llvm.ptr<7>
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NOT: ggk.
llvm.func @cluster(%bar: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %map: !llvm.ptr, %k: i32,
                   %rank: i32, %hint: i64) {
  ggk.tma_load_multicast %dst, %map[%k, %rank], %bar rank(%rank) l2_hint(%hint) attributes {cluster = 2}
  ggk.mbarrier_arrive_cluster %bar, %rank
  ggk.fence_barrier_init
  llvm.return
}
