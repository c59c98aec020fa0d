// RUN: ggc-opt %s -split-input-file -gg-lower-transpose-scales | FileCheck %s

// Before: a function holding gg.transpose_scales of [R, 4] scales. After:
// the function is gone and one kernel of 256 threads takes its place:
// input, out, then B, R, C and A. A grid-stride loop over B x A rows;
// each row's 4 scales (C is static) read together (0s from R on: no
// reads there), then each stored a row of out (A words) after the one
// before.
// CHECK-NOT: func.func
// CHECK: llvm.func @t_transpose_scales(%[[IN:.*]]: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>, %[[B:.*]]: i64, %[[R:.*]]: i64, %[[C:.*]]: i64, %[[A:.*]]: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: %[[ROWS:.*]] = arith.muli %[[B]], %[[A]] : i64
// CHECK: scf.for %[[ITEM:.*]] = %{{.*}} to %[[ROWS]] step %{{.*}} : i64
// CHECK: %[[ROW:.*]] = arith.remui %[[ITEM]], %[[A]] : i64
// CHECK: %[[IN_ROWS:.*]] = arith.cmpi slt, %[[ROW]], %[[R]] : i64
// CHECK: %[[VALUES:.*]]:4 = scf.if %[[IN_ROWS]] -> (f32, f32, f32, f32) {
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: } else {
// CHECK: scf.yield %[[ZERO:.*]], %[[ZERO]], %[[ZERO]], %[[ZERO]] : f32, f32, f32, f32
// CHECK: llvm.store %[[VALUES]]#0
// CHECK: %[[STEP:.*]] = arith.muli %c1_i64, %[[A]] : i64
// CHECK: llvm.store %[[VALUES]]#1
// CHECK: llvm.store %[[VALUES]]#2
// CHECK: llvm.store %[[VALUES]]#3
// CHECK-NOT: llvm.store
func.func @t(%sfa: memref<?x4xf32>, %out: memref<4x?xf32>) {
  gg.transpose_scales input(%sfa : memref<?x4xf32>) out(%out : memref<4x?xf32>)
  return
}

// -----

// A dynamic C (a batch of them here): a loop over the row's scales, one
// read (or 0) and one store each.
// CHECK: llvm.func @d_transpose_scales(%{{.*}}: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %[[C:.*]]: i64, %[[A:.*]]: i64)
// CHECK: scf.for %[[COL:.*]] = %{{.*}} to %[[C]] step %{{.*}} : i64
// CHECK: %[[VALUE:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: %[[STEP:.*]] = arith.muli %[[COL]], %[[A]] : i64
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %[[STEP]] : i64
// CHECK: %[[PTR:.*]] = llvm.getelementptr %[[OUT]][%[[AT]]]
// CHECK: llvm.store %[[VALUE]], %[[PTR]] : f32, !llvm.ptr<1>
func.func @d(%sfa: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
  gg.transpose_scales input(%sfa : memref<?x?x?xf32>) out(%out : memref<?x?x?xf32>)
  return
}
