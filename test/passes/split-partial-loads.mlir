// RUN: ggc-opt %s -split-input-file -ggk-split-partial-loads -canonicalize | FileCheck %s

// Before: a masked tile of 128 rows, loaded in 8-row granules, into stage
// %stage of the ring. After: the valid rows rounded up to 8 (none when
// negative, at most 128); the barrier armed with 128 bytes per row plus
// B's 16384; a whole tile takes its one 128-row box, a partial one each
// smaller box whose height is a bit of the count, stacked from row 0. The
// stage's address is recomputed next to each load.
// CHECK-LABEL: llvm.func @partial
// CHECK-SAME: (%[[FULL:[^:]*]]: !llvm.ptr<3>, %[[SMEM:[^:]*]]: !llvm.ptr<3>, %[[STAGE:[^:]*]]: i32, %[[A128:[^:]*]]: !llvm.ptr, %[[A64:[^:]*]]: !llvm.ptr, %[[A32:[^:]*]]: !llvm.ptr, %[[A16:[^:]*]]: !llvm.ptr, %[[A8:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[ROW:[^:]*]]: i32, %[[GROUP:[^:]*]]: i32, %[[VALID:[^:]*]]: i32)
// CHECK: %[[NONNEG:.*]] = arith.maxsi %[[VALID]], %c0_i32
// CHECK: %[[UP:.*]] = arith.addi %[[NONNEG]], %c7_i32
// CHECK: %[[ROUNDED:.*]] = arith.andi %[[UP]], %c-8_i32
// CHECK: %[[ROWS:.*]] = arith.minsi %[[ROUNDED]], %c128_i32
// CHECK: %[[ROW_BYTES:.*]] = arith.muli %[[ROWS]], %c128_i32
// CHECK: %[[BYTES:.*]] = arith.addi %[[ROW_BYTES]], %c16384_i32
// CHECK: ggk.mbarrier_arrive_expect_tx %[[FULL]], %[[BYTES]]
// CHECK: %[[WHOLE:.*]] = arith.cmpi eq, %[[ROWS]], %c128_i32
// CHECK: scf.if %[[WHOLE]] {
// CHECK:   arith.muli %{{.*}}, %c16384_i64
// CHECK:   %[[TILE:.*]] = llvm.getelementptr %[[SMEM]]
// CHECK:   ggk.tma_load %[[TILE]], %[[A128]][%[[K]], %[[ROW]], %[[GROUP]]], %[[FULL]]
// CHECK: } else {
// CHECK:   %[[BIT64:.*]] = arith.andi %[[ROWS]], %c64_i32
// CHECK:   %[[TAKE64:.*]] = arith.cmpi ne, %[[BIT64]], %c0_i32
// CHECK:   scf.if %[[TAKE64]] {
// CHECK:     ggk.tma_load %{{.*}}, %[[A64]][%[[K]], %[[ROW]], %[[GROUP]]], %[[FULL]]
// CHECK:   }
// CHECK:   %[[AFTER64:.*]] = arith.andi %[[ROWS]], %c64_i32
// CHECK:   %[[BIT32:.*]] = arith.andi %[[ROWS]], %c32_i32
// CHECK:   %[[TAKE32:.*]] = arith.cmpi ne, %[[BIT32]], %c0_i32
// CHECK:   scf.if %[[TAKE32]] {
// CHECK:     %[[AT64:.*]] = arith.extsi %[[AFTER64]] : i32 to i64
// CHECK:     %[[OFF64:.*]] = arith.muli %[[AT64]], %c128_i64
// CHECK:     arith.muli %{{.*}}, %c16384_i64
// CHECK:     %[[STAGE_TILE:.*]] = llvm.getelementptr %[[SMEM]]
// CHECK:     %[[DST32:.*]] = llvm.getelementptr %[[STAGE_TILE]][%[[OFF64]]]
// CHECK:     %[[ROW32:.*]] = arith.addi %[[ROW]], %[[AFTER64]]
// CHECK:     ggk.tma_load %[[DST32]], %[[A32]][%[[K]], %[[ROW32]], %[[GROUP]]], %[[FULL]]
// CHECK:   }
// CHECK:   arith.andi %[[ROWS]], %c16_i32
// CHECK:   scf.if
// CHECK:     ggk.tma_load %{{.*}}, %[[A16]][{{.*}}], %[[FULL]]
// CHECK:   arith.andi %[[ROWS]], %c8_i32
// CHECK:   scf.if
// CHECK:     ggk.tma_load %{{.*}}, %[[A8]][{{.*}}], %[[FULL]]
// CHECK-NOT: ggk.load_tile_rows
llvm.func @partial(%full: !llvm.ptr<3>, %smem: !llvm.ptr<3>, %stage: i32,
    %a128: !llvm.ptr, %a64: !llvm.ptr, %a32: !llvm.ptr, %a16: !llvm.ptr,
    %a8: !llvm.ptr, %k: i32, %row: i32, %group: i32, %valid: i32) {
  %stage64 = arith.extsi %stage : i32 to i64
  %tile_bytes = arith.constant 16384 : i64
  %offset = arith.muli %stage64, %tile_bytes : i64
  %dst = llvm.getelementptr %smem[%offset] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  ggk.load_tile_rows %dst, %full from(%a128, %a64, %a32, %a16, %a8)
      at[%k, %row, %group] valid(%valid) attributes {tile_rows = 128,
      row_bytes = 128, other_bytes = 16384, granule = 8,
      box_rows = array<i64: 128, 64, 32, 16, 8>}
  llvm.return
}

// -----

// One box: the whole tile, whatever its valid rows: the barrier armed with
// 128 x 128 bytes of A plus 32768 others, then one load at the tile's
// first row (no group: a 2-D operand).
// CHECK-LABEL: llvm.func @whole
// CHECK-SAME: (%[[FULL:[^:]*]]: !llvm.ptr<3>, %[[DST:[^:]*]]: !llvm.ptr<3>, %[[A:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[ROW:[^:]*]]: i32, %{{.*}}: i32)
// CHECK: ggk.mbarrier_arrive_expect_tx %[[FULL]], %c49152_i32
// CHECK-NEXT: ggk.tma_load %[[DST]], %[[A]][%[[K]], %[[ROW]]], %[[FULL]]
// CHECK-NEXT: llvm.return
llvm.func @whole(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a128: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32) {
  ggk.load_tile_rows %dst, %full from(%a128) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 32768,
      granule = 128, box_rows = array<i64: 128>}
  llvm.return
}

// -----

// TMA loads boxes of consecutive rows: a gather by index (gg's a_rows) is
// left as it is for ggk-lower-loads-cp-async, which runs next.
// CHECK-LABEL: llvm.func @gathered
// CHECK-NOT: ggk.tma_load
// CHECK-NOT: ggk.mbarrier_arrive_expect_tx
// CHECK: ggk.load_tile_rows %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}] valid(%{{.*}}) extents(%{{.*}}, %{{.*}}) gather(%{{.*}})
llvm.func @gathered(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %entry: i32, %valid: i32, %ks: i32, %rows: i32,
    %ids: !llvm.ptr<1>) {
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %entry] valid(%valid)
      extents(%ks, %rows) gather(%ids) attributes {tile_rows = 64,
      row_bytes = 128, other_bytes = 0, granule = 64,
      box_rows = array<i64: 64>, element_bytes = 2}
  llvm.return
}

// -----

// Rows the pair shares (gg's odd_block_a = multicast): the barrier armed
// with the same bytes on each CTA; where %shared, rank 0 multicasts the box
// into both CTAs and rank 1 loads nothing, else each CTA loads its own.
// CHECK-LABEL: llvm.func @shared_rows
// CHECK-SAME: (%[[FULL:[^:]*]]: !llvm.ptr<3>, %[[DST:[^:]*]]: !llvm.ptr<3>, %[[A:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[ROW:[^:]*]]: i32, %{{[^:]*}}: i32, %[[SHARED:[^:]*]]: i1, %[[RANK:[^:]*]]: i32)
// CHECK: ggk.mbarrier_arrive_expect_tx %[[FULL]], %c49152_i32
// CHECK-NEXT: scf.if %[[SHARED]] {
// CHECK-NEXT:   %[[FIRST:.*]] = arith.cmpi eq, %[[RANK]], %c0_i32
// CHECK-NEXT:   scf.if %[[FIRST]] {
// CHECK-NEXT:     ggk.tma_load_multicast %[[DST]], %[[A]][%[[K]], %[[ROW]]], %[[FULL]] rank(%c0_i32) attributes {cluster = 2 : i64}
// CHECK-NEXT:   }
// CHECK-NEXT: } else {
// CHECK-NEXT:   ggk.tma_load %[[DST]], %[[A]][%[[K]], %[[ROW]]], %[[FULL]]
// CHECK-NEXT: }
llvm.func @shared_rows(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a128: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32, %shared: i1, %rank: i32) {
  ggk.load_tile_rows %dst, %full from(%a128) at[%k, %row] valid(%valid)
      shared(%shared) rank(%rank)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 32768,
      granule = 128, box_rows = array<i64: 128>}
  llvm.return
}
