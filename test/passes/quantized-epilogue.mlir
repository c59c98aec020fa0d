// RUN: ggc-opt %s -split-input-file -gg-schedule-groups -gg-eliminate-padding -gg-plan-overfetch -gg-plan-kernel -gg-lower-to-nvvm | FileCheck %s
// RUN: ggc-opt %s -split-input-file -gg-schedule-groups -gg-eliminate-padding -gg-plan-overfetch -gg-plan-kernel -gg-lower-to-nvvm -ggk-stage-tile-stores | FileCheck %s --check-prefix=STORES

// Before: an FP8 product whose out is quantised to e4m3 in 1x128 blocks
// (out_scale). After gg-lower-to-nvvm: out_scale is a kernel parameter;
// for each row group and 128-column block the thread takes the max of its
// 16 pairs' |values| (columns past N count 0), then the quad's (shuffles
// across lanes 1 and 2 apart); then, block by block, the factor 448 / a,
// the scale a / 448 stored by the quad's lane 0 at [block, row] of the
// M-major scales; each pair becomes two e4m3 bytes (ggk.convert_e4m3x2)
// stored as vector<2xi8>.
// CHECK-LABEL: llvm.func @quantized_kernel
// CHECK: ggk.kernel_param #ggk.param<pointer, operand = "out_scale", arg = 6>
// CHECK: ggk.store_tile {{.*}}out_type = f8E4M3FN, pool = array<i64>
// CHECK-COUNT-32: arith.maximumf
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 1
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 2
// The second row group's amax, before the first's scale.
// CHECK-COUNT-32: arith.maximumf
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 1
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 2
// CHECK-NOT: ggk.store_pair
// CHECK: arith.constant 9.99999996E-13 : f32
// CHECK: arith.constant 0.00223214296 : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: scf.if
// CHECK: arith.divui %{{.*}}, %{{.*}} : i32
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK: ggk.convert_e4m3x2
// CHECK-NEXT: llvm.bitcast %{{.*}} : i16 to vector<2xi8>
// CHECK-NEXT: ggk.store_pair {{.*}} {fragment = array<i64: 0, 0>} : vector<2xi8>
// The second row group's block after the first's 16 pairs.
// CHECK-COUNT-15: ggk.store_pair {{.*}} {fragment = array<i64: 0,
// CHECK: ggk.store_pair {{.*}} {fragment = array<i64: 1, 0>} : vector<2xi8>
// The quads exchange their pairs (gg-plan-kernel's store_columns = 8):
// each thread stores 8 e4m3 bytes of a row, four pairs' 16-bit words
// (the quad's shuffles across lanes 1 and 2 apart).
// STORES-LABEL: llvm.func @quantized_kernel
// STORES: llvm.bitcast %{{.*}} : vector<2xi8> to i16
// STORES: ggk.warp_shuffle_xor %{{.*}}, 1
// STORES: ggk.warp_shuffle_xor %{{.*}}, 2
// STORES: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<4xi16>, !llvm.ptr<1>
func.func @quantized(%a: memref<?x256xf8E4M3FN>, %b: memref<8x256x256xf8E4M3FN>,
                     %off: memref<9xi32>, %sa: memref<2x?xf32>, %sb: memref<8x2x2xf32>,
                     %out: memref<?x256xf8E4M3FN>, %so: memref<2x?xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xf8E4M3FN>)
      b(%b : memref<8x256x256xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<2x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x2x2xf32>, <block 128x128>)
      out(%out : memref<?x256xf8E4M3FN>) out_scale(%so : memref<2x?xf32>)
      {config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>}
  return
}

// -----

// column_pairs: a pair is one output, so a 128-column block of out is 32
// column blocks of the product, and each is one e4m3 byte, stored by the
// thread (no quads: their exchange takes pairs).
// CHECK-LABEL: llvm.func @swiglu_kernel
// CHECK-COUNT-32: arith.maximumf
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 1
// CHECK: ggk.convert_e4m3x2
// CHECK-NEXT: arith.trunci %{{.*}} : i16 to i8
// CHECK: ggk.store_pair {{.*}} : vector<1xi8>
// STORES-LABEL: llvm.func @swiglu_kernel
// STORES: llvm.store %{{.*}}, %{{.*}} : i8, !llvm.ptr<1>
func.func @swiglu(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %off: memref<9xi32>,
                  %out: memref<?x256xf8E4M3FN>, %so: memref<2x?xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<8x512x256xbf16>) groups(%off : memref<9xi32>)
      out(%out : memref<?x256xf8E4M3FN>) out_scale(%so : memref<2x?xf32>)
      {column_pairs,
       config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>} epilogue {
  ^bb0(%gate: f32, %up: f32, %g: index):
    %s = gg.silu %gate : f32
    %y = arith.mulf %s, %up : f32
    gg.yield %y : f32
  }
  return
}

// -----

// f8 operands and column_halves: a warpgroup's accumulators hold 128
// columns of the product, 64 outputs, so two warpgroups side by side
// (split_n = 2) hold a block. Each loads its share of the gate rows and
// of the up rows (half_shares = 2); after the quads' amax their leads
// write it to row_amax at [row, warpgroup], every consumer waits (bar.sync
// 1 over 256 threads), each takes the other warpgroup's, and all wait
// again before a later tile writes the buffer; the first warpgroup's lead
// stores the scale.
// CHECK-LABEL: llvm.func @shared_blocks_kernel
// CHECK: ggk.shared_buffer "row_amax" attributes {align = 1 : i64, bytes = 512 : i64}
// CHECK: ggk.load_b_tile {{.*}}half_shares = 2 : i64, second_half_row = 512 : i64
// CHECK: ggk.store_tile
// CHECK-COUNT-16: arith.maximumf
// CHECK: ggk.warp_shuffle_xor %{{.*}}, 2
// CHECK: scf.if
// CHECK: ggk.shared_address %{{.*}} "row_amax"
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: ggk.sync_threads
// CHECK: ggk.shared_address %{{.*}} "row_amax"
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: arith.maximumf
// CHECK: ggk.sync_threads
// CHECK-NOT: ggk.sync_threads
// CHECK: arith.remui %{{.*}}, %{{.*}} : i32
// CHECK: scf.if
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
func.func @shared_blocks(%a: memref<?x256xf8E4M3FN>, %b: memref<8x1024x256xf8E4M3FN>,
                         %off: memref<9xi32>, %sa: memref<2x?xf32>, %sb: memref<8x8x2xf32>,
                         %out: memref<?x512xf8E4M3FN>, %so: memref<4x?xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xf8E4M3FN>)
      b(%b : memref<8x1024x256xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<2x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x8x2xf32>, <block 128x128>)
      out(%out : memref<?x512xf8E4M3FN>) out_scale(%so : memref<4x?xf32>)
      {column_halves,
       config = #gg.config<block = [64, 256, 128], stages = 4, cluster = [1, 1], sms = 132, split_n = 2>,
       store_pool = array<i64>} epilogue {
  ^bb0(%gate: f32, %up: f32, %g: index):
    %s = gg.silu %gate : f32
    %y = arith.mulf %s, %up : f32
    gg.yield %y : f32
  }
  return
}
