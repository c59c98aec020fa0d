// RUN: ggc-opt %s -split-input-file -gg-lower-transpose-scales | FileCheck %s

// Before: a function holding gg.transpose_scales of [R, 4] scales. After:
// the function is gone and one kernel of 256 threads takes its place:
// input, out, then B, R, C and A. A grid-stride loop over out's B x C x A
// scales in order: each thread finds its row r (fastest), column c and
// batch b, reads scale c of row r ((b R + r) C + c; 0 from R on: no read
// there) and stores it at its own index of out.
// CHECK-NOT: func.func
// CHECK: llvm.func @t_transpose_scales(%[[IN:.*]]: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>, %[[B:.*]]: i64, %[[R:.*]]: i64, %[[C:.*]]: i64, %[[A:.*]]: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: %[[BC:.*]] = arith.muli %[[B]], %[[C]] : i64
// CHECK: %[[SCALES:.*]] = arith.muli %[[BC]], %[[A]] : i64
// CHECK: scf.for %[[ITEM:.*]] = %{{.*}} to %[[SCALES]] step %{{.*}} : i64
// CHECK: %[[ROW:.*]] = arith.remui %[[ITEM]], %[[A]] : i64
// CHECK: %[[BATCH_COL:.*]] = arith.divui %[[ITEM]], %[[A]] : i64
// CHECK: %[[COL:.*]] = arith.remui %[[BATCH_COL]], %[[C]] : i64
// CHECK: %[[BATCH:.*]] = arith.divui %[[BATCH_COL]], %[[C]] : i64
// CHECK: %[[BR:.*]] = arith.muli %[[BATCH]], %[[R]] : i64
// CHECK: %[[IN_ROW:.*]] = arith.addi %[[BR]], %[[ROW]] : i64
// CHECK: %[[ROW_AT:.*]] = arith.muli %[[IN_ROW]], %[[C]] : i64
// CHECK: %[[FROM:.*]] = arith.addi %[[ROW_AT]], %[[COL]] : i64
// CHECK: %[[IN_ROWS:.*]] = arith.cmpi slt, %[[ROW]], %[[R]] : i64
// CHECK: %[[VALUE:.*]] = scf.if %[[IN_ROWS]] -> (f32) {
// CHECK: %[[SRC:.*]] = llvm.getelementptr %[[IN]][%[[FROM]]]
// CHECK: llvm.load %[[SRC]] : !llvm.ptr<1> -> f32
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: %[[DST:.*]] = llvm.getelementptr %[[OUT]][%[[ITEM]]]
// CHECK: llvm.store %[[VALUE]], %[[DST]] : f32, !llvm.ptr<1>
// CHECK-NOT: llvm.store
func.func @t(%sfa: memref<?x4xf32>, %out: memref<4x?xf32>) {
  gg.transpose_scales input(%sfa : memref<?x4xf32>) out(%out : memref<4x?xf32>)
  return
}

// -----

// A dynamic C and a batch: the same kernel (C is a parameter either way).
// CHECK: llvm.func @d_transpose_scales(%{{.*}}: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %[[C:.*]]: i64, %[[A:.*]]: i64)
// CHECK: scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: %[[DST:.*]] = llvm.getelementptr %[[OUT]][%[[ITEM]]]
// CHECK: llvm.store %{{.*}}, %[[DST]] : f32, !llvm.ptr<1>
func.func @d(%sfa: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
  gg.transpose_scales input(%sfa : memref<?x?x?xf32>) out(%out : memref<?x?x?xf32>)
  return
}
