// RUN: ggc-opt %s -split-input-file -gg-lower-quantize-rows | FileCheck %s

// Before: a function holding gg.quantize_rows over 256 columns (two
// blocks: one step of the warp's two halves). After: the function is gone
// and one kernel takes its place: input, out, scales, then M, R and LD.
// Each lane loads 16 bytes for each of two steps first, the half-warp's
// amax comes from four butterfly shuffles, the scale from a multiply by
// 1/448 (torch's division by a scalar), the factor 448 / amax from one IEEE
// division, each value's product with it converted in pairs to e4m3
// (ggk.convert_e4m3x2, which ggk-lower-threads lowers), and the block's
// first lane stores the scale at scales[block * LD + row].
// CHECK-NOT: func.func
// CHECK: llvm.func @plain_quantize(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %[[LD:.*]]: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64
// Whole blocks: no lane's columns are compared with the row's end (256).
// CHECK-NOT: %c256_i32
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-NOT: ggk.exp2_approx
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 8
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 4
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 2
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 1
// CHECK: arith.maximumf
// CHECK: %[[AMAX:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[SCALE:.*]] = arith.mulf %[[AMAX]], %{{.*}} : f32
// CHECK: %[[FACTOR:.*]] = arith.divf %{{.*}}, %[[AMAX]] : f32
// CHECK-NOT: arith.divf
// CHECK: arith.mulf %{{.*}}, %[[FACTOR]] : f32
// CHECK: ggk.convert_e4m3x2 %{{.*}}, %{{.*}}
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK: arith.muli %{{.*}}, %[[LD]] : i64
// CHECK: llvm.store %[[SCALE]], %{{.*}} : f32, !llvm.ptr<1>
func.func @plain(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

// Gathered and gated: the row list comes after the input; each row's
// source is read once; a row off the input (the source outside [0, R))
// takes one branch, warp-wide, to zeros (e4m3 zero words, no SwiGLU); the
// gate and the up half 2 x 128 columns apart (512 bytes), silu by ex2 and
// an approximate reciprocal, the product rounded to bf16 before the amax.
// CHECK: llvm.func @both_quantize(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %[[R:.*]]: i64, %{{.*}}: i64)
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[R]] : i64
// CHECK: %[[READABLE:.*]] = arith.andi %{{.*}}, %[[IN]] : i1
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-NOT: arith.select
// CHECK: scf.if %[[READABLE]] {
// CHECK: ggk.exp2_approx
// CHECK: ggk.reciprocal_approx
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: ggk.warp_shuffle_xor
// CHECK: } else {
// CHECK-NOT: ggk.exp2_approx
// CHECK: llvm.mlir.zero : vector<2xi32>
func.func @both(%h: memref<?x256xbf16>, %r: memref<?xi32>, %q: memref<?x128xf8E4M3FN>,
                %s: memref<1x?xf32>) {
  gg.quantize_rows input(%h : memref<?x256xbf16>) rows(%r : memref<?xi32>)
      out(%q : memref<?x128xf8E4M3FN>) scales(%s : memref<1x?xf32>) {gated, threads = 256 : i64}
  return
}

// -----

// steps = 1: a warp's unit is one step of a row (two blocks, one 16-byte
// load a lane) where the default takes two steps' loads at once.
// CHECK-LABEL: llvm.func @one_step_quantize
// CHECK: scf.for
// CHECK-COUNT-1: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-NOT: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.return
func.func @one_step(%x: memref<?x512xbf16>, %q: memref<?x512xf8E4M3FN>, %s: memref<4x?xf32>) {
  gg.quantize_rows input(%x : memref<?x512xbf16>) out(%q : memref<?x512xf8E4M3FN>)
      scales(%s : memref<4x?xf32>) {threads = 256 : i64, steps = 1 : i64}
  return
}

// -----

// Before: 200 columns, a whole block and a partial one of 72 columns.
// After: two blocks a row (one step); each lane's column is compared with
// 200, a lane past it reads its block's first columns (a select), counts
// as zeros in the amax, and stores no e4m3 (its store, after the
// conversion, under an scf.if);
// the block's first lane still stores the scale.
// CHECK-LABEL: llvm.func @partial_quantize
// CHECK: %[[IN_ROW:.*]] = arith.cmpi slt, %[[COL:.*]], %c200_i32
// CHECK: arith.select %[[IN_ROW]], %[[COL]], %{{.*}} : i32
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 8
// CHECK: ggk.convert_e4m3x2
// CHECK: scf.if %[[IN_ROW]] {
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK: }
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<1>
func.func @partial(%x: memref<?x200xbf16>, %q: memref<?x200xf8E4M3FN>, %s: memref<2x?xf32>) {
  gg.quantize_rows input(%x : memref<?x200xbf16>) out(%q : memref<?x200xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64, steps = 1 : i64}
  return
}

// -----

// Scattered: a warp's row is an input row (no check against the input's
// rows R, no zero branch); the unit loads its row's two copy indices
// (i64) with its values, quantises each block once (one division, one
// conversion), then stores the block under each index's bounds check
// against out's rows M.
// CHECK: llvm.func @scattered_quantize(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[M:.*]]: i64, %[[R:.*]]: i64, %{{.*}}: i64)
// CHECK: scf.for
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-NOT: %[[R]]
// CHECK: arith.divf
// CHECK-NOT: arith.divf
// CHECK: ggk.convert_e4m3x2
// CHECK: arith.cmpi slt, %{{.*}}, %[[M]] : i64
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK-NOT: arith.divf
// CHECK-NOT: ggk.convert_e4m3x2
// CHECK-NOT: } else {
// CHECK: arith.cmpi slt, %{{.*}}, %[[M]] : i64
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK-NOT: arith.divf
// CHECK-NOT: ggk.convert_e4m3x2
// CHECK: llvm.return
func.func @scattered(%x: memref<?x128xbf16>, %p: memref<?xi64>, %q: memref<?x128xf8E4M3FN>,
                     %s: memref<1x?xf32>) {
  gg.quantize_rows input(%x : memref<?x128xbf16>) scatter(%p : memref<?xi64>)
      out(%q : memref<?x128xf8E4M3FN>) scales(%s : memref<1x?xf32>)
      {copies = 2 : i64, threads = 256 : i64, steps = 1 : i64}
  return
}

// -----

// Scattered with input_scales: the block's scale is stored once, for the
// input row, before the copies; the copies store values only.
// CHECK: llvm.func @input_scales_quantize(
// CHECK: scf.for
// CHECK: ggk.convert_e4m3x2
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<1>
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK-NOT: : f32, !llvm.ptr<1>
// CHECK: llvm.return
func.func @input_scales(%x: memref<?x128xbf16>, %p: memref<?xi32>, %q: memref<?x128xf8E4M3FN>,
                        %s: memref<1x?xf32>) {
  gg.quantize_rows input(%x : memref<?x128xbf16>) scatter(%p : memref<?xi32>)
      out(%q : memref<?x128xf8E4M3FN>) scales(%s : memref<1x?xf32>)
      {copies = 2 : i64, input_scales, threads = 256 : i64, steps = 1 : i64}
  return
}

// -----

// Before: gated with a routing weight a row and the bf16 activation kept.
// After: the kernel takes input, route, out, scales, activation, then M, R
// and LD; the row's weight is loaded with the step's values and multiplies
// silu(gate) * up before the one rounding to bf16; the rounded values are
// what the amax and the e4m3 conversion take, and they are stored as 16
// bytes of bf16 beside the 8 bytes of e4m3.
// CHECK-LABEL: llvm.func @routed_quantize(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: %[[WEIGHT:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: ggk.exp2_approx
// CHECK: ggk.reciprocal_approx
// CHECK: arith.mulf
// CHECK: %[[ACT:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[ROUTED:.*]] = arith.mulf %[[ACT]], %[[WEIGHT]] : f32
// CHECK: arith.truncf %[[ROUTED]] : f32 to bf16
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 8
// CHECK: ggk.convert_e4m3x2
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
func.func @routed(%h: memref<?x512xbf16>, %r: memref<?xf32>, %q: memref<?x256xf8E4M3FN>,
                  %s: memref<2x?xf32>, %a: memref<?x256xbf16>) {
  gg.quantize_rows input(%h : memref<?x512xbf16>) route(%r : memref<?xf32>)
      out(%q : memref<?x256xf8E4M3FN>) scales(%s : memref<2x?xf32>)
      activation(%a : memref<?x256xbf16>) {gated, threads = 256 : i64, steps = 1 : i64}
  return
}
