// RUN: ggc-opt %s -split-input-file -gg-lower-swiglu-rows | FileCheck %s

// Before: a function holding gg.swiglu_rows over I = 64 output columns.
// After: the function is gone and one kernel takes its place: input, out,
// then M. Each thread takes 8 output columns of one row (a grid-stride
// loop): the gate's and the up half's 16-byte loads (64 columns, 128 bytes
// apart), silu by ex2 and an approximate reciprocal times up in f32, the 8
// results rounded to bf16 and stored as 16 bytes.
// CHECK-NOT: func.func
// CHECK: llvm.func @act_swiglu(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64
// CHECK: arith.muli %{{.*}}, %c128_i64 : i64
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: arith.addi %{{.*}}, %c64_i64 : i64
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-COUNT-8: ggk.exp2_approx
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
func.func @act(%h: memref<?x128xbf16>, %a: memref<?x64xbf16>) {
  gg.swiglu_rows input(%h : memref<?x128xbf16>) out(%a : memref<?x64xbf16>)
      {threads = 128 : i64}
  return
}

// -----

// Before: gg.swiglu_rows_backward over I = 64. After: one kernel taking
// input, grad, out, then M: each thread loads the gate's, the up half's and
// the gradient's 16 bytes, computes one sigmoid a column (ex2, approximate
// reciprocal), and stores the gate's gradient at the gate's columns and
// the up half's at the up half's, each 8 values rounded to bf16 as 16 bytes.
// CHECK-NOT: func.func
// CHECK: llvm.func @grad_swiglu_backward(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64
// CHECK-COUNT-3: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-COUNT-8: ggk.exp2_approx
// CHECK-NOT: ggk.exp2_approx
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
func.func @grad(%h: memref<?x128xbf16>, %d: memref<?x64xbf16>, %dh: memref<?x128xbf16>) {
  gg.swiglu_rows_backward input(%h : memref<?x128xbf16>) grad(%d : memref<?x64xbf16>)
      out(%dh : memref<?x128xbf16>) {threads = 256 : i64}
  return
}
