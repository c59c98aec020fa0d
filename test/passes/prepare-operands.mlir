// RUN: ggc-opt %s -split-input-file -ggk-prepare-operands -canonicalize | FileCheck %s

// Before: k_grouped bf16, A and B token-major (MN-major tiles of two
// 128-byte column chunks, 64 K rows each), keeping K [lo, hi) of the block.
// After: nothing runs unless lo > 0 or hi < 64; then, per tile, the 256
// consumer threads (tid - 128, step 256) take the 64 x 2 x 8 = 1024 16-byte
// pieces and zero those whose K row is outside [lo, hi), at chunk * 8192 +
// k * 128 + piece * 16; then a fence for the async proxy, and the named
// barrier of the consumers.
// CHECK-LABEL: llvm.func @clear_mn_major
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr<3>, %[[B:.*]]: !llvm.ptr<3>, %[[LO:.*]]: i32, %[[HI:.*]]: i32)
// CHECK: %[[ZERO16:.*]] = llvm.mlir.zero : vector<4xi32>
// CHECK: %[[PAST_END:.*]] = arith.cmpi slt, %[[HI]], %c64_i32
// CHECK: %[[BEFORE_FIRST:.*]] = arith.cmpi sgt, %[[LO]], %c0_i32
// CHECK: %[[PARTIAL:.*]] = arith.ori %[[BEFORE_FIRST]], %[[PAST_END]]
// CHECK: scf.if %[[PARTIAL]] {
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[THREAD:.*]] = arith.subi %[[TID]], %c128_i32
// CHECK: scf.for %[[I:.*]] = %[[THREAD]] to %c1024_i32 step %c256_i32
// CHECK: %[[ROW:.*]] = arith.divui %[[I]], %c8_i32
// CHECK: %[[K:.*]] = arith.remui %[[ROW]], %c64_i32
// CHECK: %[[AFTER:.*]] = arith.cmpi sge, %[[K]], %[[HI]]
// CHECK: %[[BEFORE:.*]] = arith.cmpi slt, %[[K]], %[[LO]]
// CHECK: %[[OUTSIDE:.*]] = arith.ori %[[BEFORE]], %[[AFTER]]
// CHECK: scf.if %[[OUTSIDE]] {
// CHECK: arith.muli %{{.*}}, %c8192_i64
// CHECK: %[[ROW_A:.*]] = llvm.getelementptr %[[A]][%{{.*}}]
// CHECK: llvm.store %[[ZERO16]], %[[ROW_A]] : vector<4xi32>, !llvm.ptr<3>
// CHECK: scf.for
// CHECK: %[[ROW_B:.*]] = llvm.getelementptr %[[B]][%{{.*}}]
// CHECK: llvm.store %[[ZERO16]], %[[ROW_B]] : vector<4xi32>, !llvm.ptr<3>
// CHECK: ggk.fence_async_shared
// CHECK: ggk.warp_sync
// CHECK: ggk.sync_threads %c1_i32, %c256_i32
// CHECK-NOT: ggk.clear_k_outside
llvm.func @clear_mn_major(%a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %lo: i32, %hi: i32) {
  ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {a_mn_major,
      b_mn_major, block_k = 64, a_rows = 128, b_columns = 128,
      element_bytes = 2, consumer_threads = 256}
  llvm.return
}

// -----

// Before: k_grouped f8, K-major tiles (128 rows of one 128-byte K row).
// After: per (row, logical chunk) pair, the chunk's K entries [16 c,
// 16 c + 15] live at physical chunk c ^ (row % 8); a chunk wholly outside
// [lo, hi) takes one 16-byte zero store, a chunk a boundary cuts is zeroed
// byte by byte (K = 16 c + byte); then the fence and the barrier.
// CHECK-LABEL: llvm.func @clear_k_major
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr<3>, %[[B:.*]]: !llvm.ptr<3>, %[[LO:.*]]: i32, %[[HI:.*]]: i32)
// CHECK-DAG: %[[ZERO8:.*]] = llvm.mlir.zero : i8
// CHECK-DAG: %[[ZERO16:.*]] = llvm.mlir.zero : vector<4xi32>
// CHECK: scf.if
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c1024_i32 step %c256_i32
// CHECK: %[[ROW:.*]] = arith.divui %[[I]], %c8_i32
// CHECK: %[[LOGICAL:.*]] = arith.remui %[[I]], %c8_i32
// CHECK: %[[FIRST:.*]] = arith.muli %[[LOGICAL]], %c16_i32
// CHECK: %[[LAST:.*]] = arith.addi %[[FIRST]], %c15_i32
// CHECK: %[[ROW8:.*]] = arith.remui %[[ROW]], %c8_i32
// CHECK: %[[PHYSICAL:.*]] = arith.xori %[[LOGICAL]], %[[ROW8]]
// CHECK: %[[PHYSICAL64:.*]] = arith.extsi %[[PHYSICAL]] : i32 to i64
// CHECK: arith.muli %[[PHYSICAL64]], %c16_i64
// CHECK: %[[CHUNK:.*]] = llvm.getelementptr %[[A]][%{{.*}}]
// CHECK: %[[FROM_FIRST:.*]] = arith.cmpi sge, %[[FIRST]], %[[HI]]
// CHECK: %[[TO_LAST:.*]] = arith.cmpi slt, %[[LAST]], %[[LO]]
// CHECK: %[[WHOLE:.*]] = arith.ori %[[TO_LAST]], %[[FROM_FIRST]]
// CHECK: %[[OUT_LAST:.*]] = arith.ori
// CHECK: %[[OUT_FIRST:.*]] = arith.ori
// CHECK-NEXT: %[[CUT:.*]] = arith.ori %[[OUT_FIRST]], %[[OUT_LAST]] : i1
// CHECK-NEXT: scf.if %[[WHOLE]] {
// CHECK: llvm.store %[[ZERO16]], %[[CHUNK]] : vector<4xi32>, !llvm.ptr<3>
// CHECK: } else {
// CHECK: scf.if %[[CUT]] {
// CHECK: scf.for %[[BYTE:.*]] = %c0_i32 to %c16_i32 step %c1_i32
// CHECK: %[[KB:.*]] = arith.addi %[[FIRST]], %[[BYTE]]
// CHECK: arith.cmpi sge, %[[KB]], %[[HI]]
// CHECK: %[[BYTE64:.*]] = arith.extsi %[[BYTE]] : i32 to i64
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[CHUNK]][%[[BYTE64]]]
// CHECK: llvm.store %[[ZERO8]], %[[AT]] : i8, !llvm.ptr<3>
// CHECK: llvm.getelementptr %[[B]][%{{.*}}]
// CHECK: ggk.fence_async_shared
// CHECK: ggk.sync_threads %c1_i32, %c256_i32
llvm.func @clear_k_major(%a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %lo: i32, %hi: i32) {
  ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {block_k = 128,
      a_rows = 128, b_columns = 128, element_bytes = 1, consumer_threads = 256}
  llvm.return
}

// -----

// Before: tf32 B given N-major, 128 columns in chunks of 32 f32, 32 K rows.
// After: each of the 32 x 128 / 4 = 1024 steps loads four f32 along N from
// K row k (vector<4xf32> at chunk * 4096 + swizzled(k, 4 (n0 % 32))) and
// stores each to row n0 + e of the K-major copy, at byte 4 k of it
// (swizzled: 16-byte unit (4 k / 16) ^ (n % 8)); then the fence and the
// barrier, with no guard.
// CHECK-LABEL: llvm.func @transpose
// CHECK-SAME: (%[[SRC:.*]]: !llvm.ptr<3>, %[[DST:.*]]: !llvm.ptr<3>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c1024_i32 step %c256_i32
// CHECK: %[[K:.*]] = arith.remui %[[I]], %c32_i32
// CHECK: %[[FROM:.*]] = llvm.getelementptr %[[SRC]][%{{.*}}]
// CHECK: %[[QUAD:.*]] = llvm.load %[[FROM]] : !llvm.ptr<3> -> vector<4xf32>
// CHECK: %[[V0:.*]] = llvm.extractelement %[[QUAD]][%c0_i32 : i32]
// CHECK: %[[KBYTE:.*]] = arith.muli %[[K]], %c4_i32
// CHECK: %[[UNIT:.*]] = arith.divui %[[KBYTE]], %c16_i32
// CHECK: arith.xori %[[UNIT]], %{{.*}}
// CHECK: %[[TO0:.*]] = llvm.getelementptr %[[DST]][%{{.*}}]
// CHECK: llvm.store %[[V0]], %[[TO0]] : f32, !llvm.ptr<3>
// CHECK-COUNT-3: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK: }
// CHECK-NEXT: ggk.fence_async_shared
// CHECK-NEXT: ggk.warp_sync
// CHECK-NEXT: ggk.sync_threads %c1_i32, %c256_i32
// CHECK-NOT: ggk.transpose_to_k_major
llvm.func @transpose(%src: !llvm.ptr<3>, %dst: !llvm.ptr<3>) {
  ggk.transpose_to_k_major %src to %dst attributes {block_k = 32,
      mn_extent = 128, consumer_threads = 256}
  llvm.return
}
