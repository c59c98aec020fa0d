// RUN: ggc-opt %s -split-input-file -ggk-multicast -canonicalize | FileCheck %s

// Before: B's tile alone (cluster 1), K-major, with gg-schedule-groups' L2
// policy. After: one TMA box of the whole tile at (k, n_block * 128,
// group), with the cache hint, into this CTA's stage.
// CHECK-LABEL: llvm.func @alone
// CHECK-SAME: (%[[DST:.*]]: !llvm.ptr<3>, %[[FULL:.*]]: !llvm.ptr<3>, %[[MAP:.*]]: !llvm.ptr, %[[K:.*]]: i32, %[[NB:.*]]: i32, %[[G:.*]]: i32)
// CHECK: %[[HINT:.*]] = arith.constant 1364604206261551104 : i64
// CHECK: %[[N0:.*]] = arith.muli %[[NB]], %c128_i32
// CHECK-NEXT: ggk.tma_load %[[DST]], %[[MAP]][%[[K]], %[[N0]], %[[G]]], %[[FULL]] l2_hint(%[[HINT]])
// CHECK-NOT: ggk.tma_load_multicast
// CHECK-NOT: ggk.
llvm.func @alone(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr,
                 %k: i32, %n_block: i32, %group: i32) {
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n_block, %group]
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 1364604206261551104}
  llvm.return
}

// -----

// Before: column_halves' B tile of 128 rows (second_half_row = 768, N/2).
// After: two boxes of 64 rows, the gate's at n_block * 64 into the
// stage's first 8 KiB, the up's at 768 + n_block * 64 into the next.
// CHECK-LABEL: llvm.func @halves
// CHECK-SAME: (%[[DST:.*]]: !llvm.ptr<3>, %[[FULL:.*]]: !llvm.ptr<3>, %[[MAP:.*]]: !llvm.ptr, %[[K:.*]]: i32, %[[NB:.*]]: i32, %[[G:.*]]: i32)
// CHECK: %[[GATE:.*]] = arith.muli %[[NB]], %c64_i32
// CHECK-NEXT: ggk.tma_load %[[DST]], %[[MAP]][%[[K]], %[[GATE]], %[[G]]], %[[FULL]]
// CHECK-NEXT: %[[UP:.*]] = arith.addi %[[GATE]], %c768_i32
// CHECK-NEXT: %[[SECOND:.*]] = llvm.getelementptr %[[DST]][8192]
// CHECK-NEXT: ggk.tma_load %[[SECOND]], %[[MAP]][%[[K]], %[[UP]], %[[G]]], %[[FULL]]
// CHECK-NOT: ggk.
llvm.func @halves(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr,
                  %k: i32, %n_block: i32, %group: i32) {
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n_block, %group]
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0, second_half_row = 768}
  llvm.return
}

// -----

// Before: a cluster of two, K-major B of 128 rows of N. After: CTA `rank`
// loads rows [64 rank, 64 rank + 64) of the tile (128 bytes each) and
// multicasts them to the same place in both CTAs.
// CHECK-LABEL: llvm.func @pair
// CHECK-SAME: (%[[DST:.*]]: !llvm.ptr<3>, %[[FULL:.*]]: !llvm.ptr<3>, %[[MAP:.*]]: !llvm.ptr, %[[K:.*]]: i32, %[[NB:.*]]: i32, %[[G:.*]]: i32, %[[RANK:.*]]: i32)
// CHECK: %[[N0:.*]] = arith.muli %[[NB]], %c128_i32
// CHECK-NEXT: %[[SHARE:.*]] = arith.muli %[[RANK]], %c64_i32
// CHECK-NEXT: %[[SHARE64:.*]] = arith.extsi %[[SHARE]]
// CHECK-NEXT: %[[BYTES:.*]] = arith.muli %[[SHARE64]], %c128_i64
// CHECK-NEXT: %[[AT:.*]] = llvm.getelementptr %[[DST]][%[[BYTES]]]
// CHECK-NEXT: %[[N:.*]] = arith.addi %[[N0]], %[[SHARE]]
// CHECK-NEXT: ggk.tma_load_multicast %[[AT]], %[[MAP]][%[[K]], %[[N]], %[[G]]], %[[FULL]] rank(%[[RANK]]) attributes {cluster = 2 : i64}
llvm.func @pair(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr,
                %k: i32, %n_block: i32, %group: i32, %rank: i32) {
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n_block, %group] rank(%rank)
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 2, cache_policy = 0}
  llvm.return
}

// -----

// Before: a cluster of two, N-major B (k_grouped: no group) of four
// 64-column chunks. After: CTA `rank` loads chunks 2 rank and 2 rank + 1,
// each a [64, 64] box at column n_block * 256 + 64 j, into chunk j's 8 KiB
// of the stage, multicast to both CTAs.
// CHECK-LABEL: llvm.func @pair_n_major
// CHECK-SAME: %[[K:[^:]*]]: i32, %[[NB:[^:]*]]: i32, %[[RANK:[^:]*]]: i32)
// CHECK-COUNT-2: ggk.tma_load_multicast %{{.*}}, %{{.*}}[%{{.*}}, %[[K]]], %{{.*}} rank(%[[RANK]]) attributes {cluster = 2 : i64}
// CHECK-NOT: ggk.tma_load
llvm.func @pair_n_major(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr,
                        %k: i32, %n_block: i32, %rank: i32) {
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n_block] rank(%rank)
      attributes {n_major, block_n = 256, block_k = 64, chunk_columns = 64,
                  cluster = 2, cache_policy = 0}
  llvm.return
}

// -----

// Before: a stage's release alone. After: each consumer thread arrives.
// CHECK-LABEL: llvm.func @release_alone
// CHECK-SAME: (%[[EMPTY:.*]]: !llvm.ptr<3>)
// CHECK-NEXT: ggk.mbarrier_arrive %[[EMPTY]]
// CHECK-NEXT: llvm.return
llvm.func @release_alone(%empty: !llvm.ptr<3>) {
  ggk.release_stage %empty attributes {cluster = 1}
  llvm.return
}

// -----

// Before: a stage's release in a cluster of two. After: lanes 0 and 1 of
// each warp arrive, lane r on the barrier in CTA r's shared memory.
// CHECK-LABEL: llvm.func @release_pair
// CHECK-SAME: (%[[EMPTY:.*]]: !llvm.ptr<3>)
// CHECK: ggk.warp_sync
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32_i32
// CHECK: %[[ARRIVES:.*]] = arith.cmpi slt, %[[LANE]], %c2_i32
// CHECK: scf.if %[[ARRIVES]] {
// CHECK-NEXT: ggk.mbarrier_arrive_cluster %[[EMPTY]], %[[LANE]]
// CHECK-NEXT: }
llvm.func @release_pair(%empty: !llvm.ptr<3>) {
  ggk.release_stage %empty attributes {cluster = 2}
  llvm.return
}

// -----

// Before: the kernel frame's cluster steps, alone. After: the empty barrier
// counts every consumer thread (8 warps: 256), the CTA meets after the
// inits, and nothing is left before returning.
// CHECK-LABEL: llvm.func @frame_alone
// CHECK-SAME: (%[[EMPTY:.*]]: !llvm.ptr<3>, %[[LEADER:.*]]: i1)
// CHECK-NEXT: ggk.mbarrier_init %[[EMPTY]] attributes {count = 256 : i64}
// CHECK-NEXT: ggk.sync_cta
// CHECK-NEXT: llvm.return
llvm.func @frame_alone(%empty: !llvm.ptr<3>, %leader: i1) {
  ggk.init_empty_barrier %empty attributes {consumer_warps = 8, cluster = 1}
  ggk.publish_barrier_init %leader attributes {cluster = 1}
  ggk.leave_cluster attributes {cluster = 1}
  llvm.return
}

// -----

// In a cluster of two: one arrival per warp of each CTA (2 x 8), the
// leader's inits fenced for the cluster, and the CTAs meet after them and
// before returning.
// CHECK-LABEL: llvm.func @frame_pair
// CHECK-SAME: (%[[EMPTY:.*]]: !llvm.ptr<3>, %[[LEADER:.*]]: i1)
// CHECK-NEXT: ggk.mbarrier_init %[[EMPTY]] attributes {count = 16 : i64}
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK-NEXT: ggk.fence_barrier_init
// CHECK-NEXT: }
// CHECK-NEXT: ggk.cluster_sync
// CHECK-NEXT: ggk.cluster_sync
// CHECK-NEXT: llvm.return
llvm.func @frame_pair(%empty: !llvm.ptr<3>, %leader: i1) {
  ggk.init_empty_barrier %empty attributes {consumer_warps = 8, cluster = 2}
  ggk.publish_barrier_init %leader attributes {cluster = 2}
  ggk.leave_cluster attributes {cluster = 2}
  llvm.return
}

// -----

// Before: a pair whose tiles may differ in N block (the tile's shares_b,
// as i1 `shared`). After: where shared, this CTA's half multicast as in
// @pair; otherwise both halves of its own tile, rows [0, 64) and
// [64, 128), by plain TMA into its own stage.
// CHECK-LABEL: llvm.func @pair_shared
// CHECK-SAME: (%[[DST:.*]]: !llvm.ptr<3>, %[[FULL:.*]]: !llvm.ptr<3>, %[[MAP:.*]]: !llvm.ptr, %[[K:.*]]: i32, %[[NB:.*]]: i32, %[[G:.*]]: i32, %[[RANK:.*]]: i32, %[[SHARED:.*]]: i1)
// CHECK: scf.if %[[SHARED]] {
// CHECK: ggk.tma_load_multicast %{{.*}}, %[[MAP]][%[[K]], %{{.*}}, %[[G]]], %[[FULL]] rank(%[[RANK]]) attributes {cluster = 2 : i64}
// CHECK-NOT: ggk.tma_load
// CHECK: } else {
// CHECK: %[[N0:.*]] = arith.muli %[[NB]], %c128_i32
// CHECK: ggk.tma_load %[[DST]], %[[MAP]][%[[K]], %[[N0]], %[[G]]], %[[FULL]]
// CHECK: %[[SECOND:.*]] = llvm.getelementptr %[[DST]][8192]
// CHECK: %[[N1:.*]] = arith.addi %[[N0]], %c64_i32
// CHECK: ggk.tma_load %[[SECOND]], %[[MAP]][%[[K]], %[[N1]], %[[G]]], %[[FULL]]
// CHECK-NOT: ggk.tma_load
// CHECK: }
llvm.func @pair_shared(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr,
                       %k: i32, %n_block: i32, %group: i32, %rank: i32,
                       %shared: i1) {
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n_block, %group] rank(%rank)
      shared(%shared) attributes {block_n = 128, block_k = 64,
                                  chunk_columns = 64, cluster = 2,
                                  cache_policy = 0}
  llvm.return
}

// -----

// Before: N-major B alone, two 64-column chunks. After: each chunk's box at
// (column n_block * 128 + 64 j, K): N first, the tensor map's order.
// CHECK-LABEL: llvm.func @alone_n_major
// CHECK-SAME: %[[K:[^:]*]]: i32, %[[NB:[^:]*]]: i32)
// CHECK: %[[N0:.*]] = arith.muli %[[NB]], %c128_i32
// CHECK: ggk.tma_load %{{.*}}, %{{.*}}[%[[N0]], %[[K]]], %{{.*}}
// CHECK: %[[N1:.*]] = arith.addi %[[N0]], %c64_i32
// CHECK: ggk.tma_load %{{.*}}, %{{.*}}[%[[N1]], %[[K]]], %{{.*}}
// CHECK-NOT: ggk.tma_load
llvm.func @alone_n_major(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr,
                         %k: i32, %n_block: i32) {
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n_block]
      attributes {n_major, block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0}
  llvm.return
}
