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

// -----

// Before: gg.swiglu_rows with a routing weight a row. After: the kernel
// takes input, route, out, then M; each thread loads its row's weight and
// multiplies it into silu(gate) * up before the one rounding to bf16.
// CHECK-NOT: func.func
// CHECK: llvm.func @routed_swiglu(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: ggk.exp2_approx
// CHECK: ggk.reciprocal_approx
// CHECK: arith.mulf
// CHECK: %[[ACT:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.mulf %[[ACT]], %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @routed(%h: memref<?x128xbf16>, %r: memref<?xf32>, %a: memref<?x64xbf16>) {
  gg.swiglu_rows input(%h : memref<?x128xbf16>) route(%r : memref<?xf32>)
      out(%a : memref<?x64xbf16>) {threads = 128 : i64}
  return
}

// -----

// Before: the routed gg.swiglu_rows_backward over I = 768. After: one
// kernel taking input, grad, route, out, route_grad, then M: a warp a row
// (a grid-stride loop over rows, 8 warps a CTA), each lane 8 columns a
// step 256 columns apart, summing grad * silu(gate) * up in an f32 loop
// value while it stores the gate's and up's gradients (the incoming
// gradient times the row's weight); the lanes' sums added by butterfly
// shuffles 16, 8, 4, 2, 1 apart and stored by lane 0.
// CHECK-NOT: func.func
// CHECK: llvm.func @routed_grad_swiglu_backward(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: scf.for %{{.*}} = %{{.*}} to %c768_i64 step %c256_i64 iter_args(%{{.*}} = %{{.*}}) -> (f32) : i64 {
// CHECK-COUNT-3: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-COUNT-8: ggk.exp2_approx
// CHECK-NOT: ggk.exp2_approx
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK: scf.yield %{{.*}} : f32
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 16
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 8
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 4
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 2
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 1
// CHECK: scf.if
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
func.func @routed_grad(%h: memref<?x1536xbf16>, %d: memref<?x768xbf16>, %r: memref<?xf32>,
                       %dh: memref<?x1536xbf16>, %dr: memref<?xf32>) {
  gg.swiglu_rows_backward input(%h : memref<?x1536xbf16>) grad(%d : memref<?x768xbf16>)
      route(%r : memref<?xf32>) out(%dh : memref<?x1536xbf16>) route_grad(%dr : memref<?xf32>)
      {threads = 256 : i64}
  return
}

// -----

// Before: the routed gg.swiglu_rows_backward with the gradient's FP8 copy,
// I = 384 (an odd number of 128-column blocks). After: one kernel taking
// input, grad, route, out, route_grad, quantized, quantized_scales, then M
// and LD. Every lane takes every 256-column step from 0 (the half-warps'
// shuffles need the whole warp); a half-warp past I reads the columns 128
// before its own and stores nothing. Each half-warp quantises its gate
// block and its up block (four butterfly shuffles and one division each),
// then, where active, stores both bf16 vectors, both e4m3 words and, from
// its first lane, both scales at scales[block * LD + row]; the weight's
// gradient counts active lanes only.
// CHECK: llvm.func @quantized_grad_swiglu_backward(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %[[LD:.*]]: i64)
// CHECK: scf.for %{{.*}} = %c0_i64 to %c384_i64 step %c256_i64 iter_args(%{{.*}} = %{{.*}}) -> (f32) : i64 {
// CHECK: %[[ACTIVE:.*]] = arith.cmpi slt, %{{.*}}, %c384_i64{{.*}} : i64
// CHECK: arith.select %[[ACTIVE]], %{{.*}}, %{{.*}} : i64
// CHECK-COUNT-3: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-COUNT-8: ggk.exp2_approx
// CHECK-NOT: ggk.exp2_approx
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 1
// CHECK: arith.divf
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 1
// CHECK: arith.divf
// CHECK-NOT: arith.divf
// CHECK: scf.if %[[ACTIVE]] {
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK: scf.if
// CHECK: arith.muli %{{.*}}, %[[LD]] : i64
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK: arith.muli %{{.*}}, %[[LD]] : i64
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK: arith.select %[[ACTIVE]], %{{.*}}, %{{.*}} : f32
// CHECK: scf.yield %{{.*}} : f32
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 16
func.func @quantized_grad(%h: memref<?x768xbf16>, %d: memref<?x384xbf16>, %r: memref<?xf32>,
                          %dh: memref<?x768xbf16>, %dr: memref<?xf32>,
                          %q: memref<?x768xf8E4M3FN>, %s: memref<6x?xf32>) {
  gg.swiglu_rows_backward input(%h : memref<?x768xbf16>) grad(%d : memref<?x384xbf16>)
      route(%r : memref<?xf32>) out(%dh : memref<?x768xbf16>) route_grad(%dr : memref<?xf32>)
      quantized(%q : memref<?x768xf8E4M3FN>) quantized_scales(%s : memref<6x?xf32>)
      {threads = 256 : i64}
  return
}
