// RUN: ggc-opt %s -split-input-file -gg-lower-quantize-blocks | FileCheck %s

// Before: a function holding gg.quantize_blocks of [G, 256, 384] weights
// with the transposed copy. After: the function is gone and one kernel of
// 256 threads takes its place: input, out, transposed, scales, then G. A
// grid-stride loop over the G x 2 x 3 blocks; each thread loads its 8x8
// square (eight 16-byte loads), the warp's amax by five butterfly
// shuffles, the eight warps' through shared memory between two barriers,
// the scale (a multiply by 1/448) and the factor 448 / amax (one IEEE
// division), then eight 8-byte stores of the square's rows, eight of its
// columns, and thread 0's store of the scale.
// CHECK-NOT: func.func
// CHECK: llvm.mlir.global internal @w_quantize_blocks_amax() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<8 x f32>
// CHECK: llvm.func @w_quantize_blocks(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[G:.*]]: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[G]], %{{.*}} : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[BLOCKS]] step %{{.*}} : i64
// Whole blocks: no square is compared with the weights' ends.
// CHECK-NOT: scf.if
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 16
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 1
// CHECK: ggk.sync_cta
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: ggk.sync_cta
// CHECK-COUNT-8: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: %[[SCALE:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[FACTOR:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.divf
// CHECK: arith.mulf %{{.*}}, %[[FACTOR]] : f32
// CHECK: ggk.convert_e4m3x2
// CHECK-COUNT-16: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK: llvm.store %[[SCALE]], %{{.*}} : f32, !llvm.ptr<1>
func.func @w(%w: memref<?x256x384xbf16>, %q: memref<?x256x384xf8E4M3FN>,
             %qt: memref<?x384x256xf8E4M3FN>, %s: memref<?x2x3xf32>) {
  gg.quantize_blocks input(%w : memref<?x256x384xbf16>) out(%q : memref<?x256x384xf8E4M3FN>)
      transposed(%qt : memref<?x384x256xf8E4M3FN>) scales(%s : memref<?x2x3xf32>)
  return
}

// -----

// Without the transposed copy: three pointers and G, the rows' stores only.
// CHECK: llvm.func @plain_quantize_blocks(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK-COUNT-8: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK-NOT: vector<2xi32>, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
func.func @plain(%w: memref<4x128x128xbf16>, %q: memref<4x128x128xf8E4M3FN>,
                 %s: memref<4x1x1xf32>) {
  gg.quantize_blocks input(%w : memref<4x128x128xbf16>) out(%q : memref<4x128x128xf8E4M3FN>)
      scales(%s : memref<4x1x1xf32>)
  return
}

// -----

// Before: N = 208 and K = 144, whose last blocks are partial (80 rows, 16
// columns). After: 2 x 2 blocks an expert; a square starting at or past
// row 208 or column 144 reads its block's first square (selects), counts
// as zeros, and stores nothing (its stores under an scf.if); thread 0
// still stores the block's scale.
// CHECK-LABEL: llvm.func @partial_quantize_blocks
// CHECK-DAG: %[[ROWS_IN:.*]] = arith.cmpi slt, %{{.*}}, %c208_i64
// CHECK-DAG: %[[COLS_IN:.*]] = arith.cmpi slt, %{{.*}}, %c144_i64
// CHECK: %[[IN:.*]] = arith.andi %[[ROWS_IN]], %[[COLS_IN]]
// CHECK: arith.select %[[IN]]
// CHECK: ggk.sync_cta
// CHECK: scf.if %[[IN]] {
// CHECK-COUNT-8: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK: }
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
func.func @partial(%w: memref<?x208x144xbf16>, %q: memref<?x208x144xf8E4M3FN>,
                   %s: memref<?x2x2xf32>) {
  gg.quantize_blocks input(%w : memref<?x208x144xbf16>) out(%q : memref<?x208x144xf8E4M3FN>)
      scales(%s : memref<?x2x2xf32>)
  return
}
