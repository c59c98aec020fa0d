// RUN: ggc-opt %s -split-input-file -gg-lower-transpose-scales | FileCheck %s

// Before: a function holding gg.transpose_scales of [R, 4] scales. After:
// the function is gone and one kernel of 256 threads takes its place:
// input, out, then B, R, C and A, and a shared tile of 8 columns x 132
// floats (128 rows and 4 of padding). A grid-stride loop over the B x
// ceil(C/8) x ceil(A/128) tiles, one a CTA (its place divided out in i32,
// a 64-bit division being a long subroutine). Each thread reads four
// scales with the columns fastest (column tid % 8, rows tid / 8 + 32 p):
// scale c of row r at (b R + r) C + c, 0 from R on or past C (no read
// there), all four loads before the four stores to the tile's column c.
// After a barrier it writes four with the rows fastest (column tid / 32,
// rows tid % 32 + 32 p) to (b C + c) A + r of out, where r < A and c < C,
// and waits again before the next tile.
// CHECK-NOT: func.func
// CHECK: llvm.mlir.global internal @t_transpose_scales_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<1056 x f32>
// CHECK: llvm.func @t_transpose_scales(%[[IN:.*]]: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>, %[[B:.*]]: i64, %[[R:.*]]: i64, %[[C:.*]]: i64, %[[A:.*]]: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: %[[TILE:.*]] = llvm.mlir.addressof @t_transpose_scales_tile : !llvm.ptr<3>
// CHECK: %[[ROW_TILES:.*]] = arith.divui %{{.*}}, %c128_i64 : i64
// CHECK: %[[COL_TILES:.*]] = arith.divui %{{.*}}, %c8_i64 : i64
// CHECK: %[[BC:.*]] = arith.muli %[[B]], %[[COL_TILES]] : i64
// CHECK: %[[TILES:.*]] = arith.muli %[[BC]], %[[ROW_TILES]] : i64
// CHECK: %[[TID32:.*]] = ggk.thread_index
// CHECK: %[[TID:.*]] = arith.extsi %[[TID32]] : i32 to i64
// CHECK: scf.for %[[INDEX:.*]] = %{{.*}} to %[[TILES]] step %{{.*}} : i64 {
// CHECK: %[[INDEX32:.*]] = arith.trunci %[[INDEX]] : i64 to i32
// CHECK: %[[ROW_TILES32:.*]] = arith.trunci %[[ROW_TILES]] : i64 to i32
// CHECK: %[[COL_TILES32:.*]] = arith.trunci %[[COL_TILES]] : i64 to i32
// CHECK: %[[BATCH_COL:.*]] = arith.divui %[[INDEX32]], %[[ROW_TILES32]] : i32
// CHECK: %[[ROW_TILE:.*]] = arith.remui %[[INDEX32]], %[[ROW_TILES32]] : i32
// CHECK: %[[ROW_TILE64:.*]] = arith.extsi %[[ROW_TILE]] : i32 to i64
// CHECK: %[[FIRST_ROW:.*]] = arith.muli %[[ROW_TILE64]], %c128_i64{{.*}} : i64
// CHECK: %[[COL_TILE:.*]] = arith.remui %[[BATCH_COL]], %[[COL_TILES32]] : i32
// CHECK: %[[COL_TILE64:.*]] = arith.extsi %[[COL_TILE]] : i32 to i64
// CHECK: %[[FIRST_COL:.*]] = arith.muli %[[COL_TILE64]], %c8_i64{{.*}} : i64
// CHECK: %[[BATCH32:.*]] = arith.divui %[[BATCH_COL]], %[[COL_TILES32]] : i32
// CHECK: %[[BATCH:.*]] = arith.extsi %[[BATCH32]] : i32 to i64
// CHECK: %[[LANE_COL:.*]] = arith.remui %[[TID]], %c8_i64{{.*}} : i64
// CHECK: %[[READ_COL:.*]] = arith.addi %[[FIRST_COL]], %[[LANE_COL]] : i64
// CHECK: %[[READ_ROW:.*]] = arith.addi %[[FIRST_ROW]], %[[TILE_ROW0:.*]] : i64
// CHECK: %[[COL_IN:.*]] = arith.cmpi slt, %[[READ_COL]], %[[C]] : i64
// CHECK: %[[ROW_IN:.*]] = arith.cmpi slt, %[[READ_ROW]], %[[R]] : i64
// CHECK: %[[INSIDE:.*]] = arith.andi %[[ROW_IN]], %[[COL_IN]] : i1
// CHECK: %[[BR:.*]] = arith.muli %[[BATCH]], %[[R]] : i64
// CHECK: %[[IN_ROW:.*]] = arith.addi %[[BR]], %[[READ_ROW]] : i64
// CHECK: %[[ROW_AT:.*]] = arith.muli %[[IN_ROW]], %[[C]] : i64
// CHECK: %[[FROM:.*]] = arith.addi %[[ROW_AT]], %[[READ_COL]] : i64
// CHECK: %[[V0:.*]] = scf.if %[[INSIDE]] -> (f32) {
// CHECK: %[[SRC:.*]] = llvm.getelementptr %[[IN]][%[[FROM]]]
// CHECK: llvm.load %[[SRC]] : !llvm.ptr<1> -> f32
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f32
// Its place in the tile: column c's 132 floats, then the row.
// CHECK: %[[SLOT_BASE:.*]] = arith.muli %[[LANE_COL]], %c132_i64{{.*}} : i64
// CHECK-NEXT: %[[SLOT0:.*]] = arith.addi %[[SLOT_BASE]], %[[TILE_ROW0]] : i64
// CHECK: %[[V1:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: %[[V2:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: %[[V3:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: %[[PUT0:.*]] = llvm.getelementptr %[[TILE]][%[[SLOT0]]]
// CHECK-NEXT: llvm.store %[[V0]], %[[PUT0]] : f32, !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %[[TILE]]
// CHECK-NEXT: llvm.store %[[V1]], %{{.*}} : f32, !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %[[TILE]]
// CHECK-NEXT: llvm.store %[[V2]], %{{.*}} : f32, !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %[[TILE]]
// CHECK-NEXT: llvm.store %[[V3]], %{{.*}} : f32, !llvm.ptr<3>
// CHECK-NEXT: ggk.sync_cta
// CHECK: %[[WRITE_COL_AT:.*]] = arith.divui %[[TID]], %c32_i64{{.*}} : i64
// CHECK: %[[LANE_ROW:.*]] = arith.remui %[[TID]], %c32_i64{{.*}} : i64
// CHECK: %[[TILE_ROW:.*]] = arith.addi %[[LANE_ROW]], %c0_i64{{.*}} : i64
// CHECK: %[[WRITE_ROW:.*]] = arith.addi %[[FIRST_ROW]], %[[TILE_ROW]] : i64
// CHECK: %[[WRITE_COL:.*]] = arith.addi %[[FIRST_COL]], %[[WRITE_COL_AT]] : i64
// CHECK: %[[COL_OUT:.*]] = arith.cmpi slt, %[[WRITE_COL]], %[[C]] : i64
// CHECK: %[[ROW_OUT:.*]] = arith.cmpi slt, %[[WRITE_ROW]], %[[A]] : i64
// CHECK: %[[WRITES:.*]] = arith.andi %[[ROW_OUT]], %[[COL_OUT]] : i1
// CHECK: scf.if %[[WRITES]] {
// CHECK: %[[GET_BASE:.*]] = arith.muli %[[WRITE_COL_AT]], %c132_i64{{.*}} : i64
// CHECK-NEXT: %[[GET_AT:.*]] = arith.addi %[[GET_BASE]], %[[TILE_ROW]] : i64
// CHECK-NEXT: %[[GET:.*]] = llvm.getelementptr %[[TILE]][%[[GET_AT]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
// CHECK: %[[SCALE:.*]] = llvm.load %[[GET]] : !llvm.ptr<3> -> f32
// CHECK: %[[BATCH_C:.*]] = arith.muli %[[BATCH]], %[[C]] : i64
// CHECK: %[[OUT_COL:.*]] = arith.addi %[[BATCH_C]], %[[WRITE_COL]] : i64
// CHECK: %[[COL_AT:.*]] = arith.muli %[[OUT_COL]], %[[A]] : i64
// CHECK: %[[TO:.*]] = arith.addi %[[COL_AT]], %[[WRITE_ROW]] : i64
// CHECK: %[[DST:.*]] = llvm.getelementptr %[[OUT]][%[[TO]]]
// CHECK: llvm.store %[[SCALE]], %[[DST]] : f32, !llvm.ptr<1>
// CHECK-COUNT-3: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK: ggk.sync_cta
// CHECK-NOT: llvm.store
func.func @t(%sfa: memref<?x4xf32>, %out: memref<4x?xf32>) {
  gg.transpose_scales input(%sfa : memref<?x4xf32>) out(%out : memref<4x?xf32>)
  return
}

// -----

// A dynamic C and a batch: the same kernel (C is a parameter either way).
// CHECK: llvm.func @d_transpose_scales(%{{.*}}: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %[[C:.*]]: i64, %[[A:.*]]: i64)
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: ggk.sync_cta
// CHECK: arith.cmpi slt, %{{.*}}, %[[C]] : i64
// CHECK: arith.cmpi slt, %{{.*}}, %[[A]] : i64
// CHECK: %[[DST:.*]] = llvm.getelementptr %[[OUT]][%{{.*}}]
// CHECK: llvm.store %{{.*}}, %[[DST]] : f32, !llvm.ptr<1>
func.func @d(%sfa: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
  gg.transpose_scales input(%sfa : memref<?x?x?xf32>) out(%out : memref<?x?x?xf32>)
  return
}
