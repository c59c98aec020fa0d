// RUN: ggc-opt %s -split-input-file -gg-plan-kernel | FileCheck %s

// Before sm_90a the plan lays a warpgroup's four warps out 2 x 2
// (warp_columns = 2): mma.sync's warps then load B's fragments for half
// the columns each. Two consumer warpgroups of a one-level kernel copy the
// stages themselves (producer = none), and without setmaxnreg every thread
// keeps what the CTA of 256 starts with: 65536 / 256 = 256. Warps of
// 32 rows keep their pairs' stores (store_columns = 8 measured slower).
// CHECK-LABEL: func.func @bf16
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], staging = none, warp_columns = 2, release_lag = 0, producer = none>
module attributes {gg.target = "sm_80"} {
func.func @bf16(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}
}

// -----

// A warpgroup of 256 columns (128x256 tiles, chosen where a Hopper card's
// shared memory holds four stages) takes four warps of 64 rows side by
// side: 64x64 warps, the squarest, read the least of the stages per
// multiply. Their quads store 16 bytes a thread (store_columns = 8).
// CHECK-LABEL: func.func @wide
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], staging = none, warp_columns = 4, release_lag = 0, producer = none, store_columns = 8>
module attributes {gg.target = "sm_80"} {
func.func @wide(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}
}

// -----

// 48 columns a warpgroup are not two warps of whole 16-column B loads:
// one warp column.
// CHECK-LABEL: func.func @narrow
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [{{.*}}], staging = none, release_lag = 0>
module attributes {gg.target = "sm_86"} {
func.func @narrow(%a: memref<?x512xbf16>, %b: memref<8x48x512xbf16>,
                  %off: memref<9xi32>, %o: memref<?x48xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x48x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x48xbf16>)
      {config = #gg.config<block = [64, 48, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}
}

// -----

// FP8 on sm_89: two-level accumulation keeps wgmma's fragment (its
// promotion reads it), the block scales go to each warp's slots (staging
// them takes a TMA box), the promotion is serial (three accumulators do
// not fit 168 registers).
// CHECK-LABEL: func.func @fp8_blocks
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [168, 168], staging = none, release_lag = 0>
module attributes {gg.target = "sm_89"} {
func.func @fp8_blocks(%a: memref<4x256x2048xf8E4M3FN>, %b: memref<4x7168x2048xf8E4M3FN>,
                      %m: memref<4xi32>, %sa: memref<4x16x256xf32>,
                      %sb: memref<4x56x16xf32>, %o: memref<4x256x7168xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x256x2048xf8E4M3FN>)
      b(%b : memref<4x7168x2048xf8E4M3FN>) groups(%m : memref<4xi32>)
      a_scale(%sa : memref<4x16x256xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x56x16xf32>, <block 128x128, k_major>)
      out(%o : memref<4x256x7168xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 2, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>}
  return
}
}

// -----

// Three consumer warpgroups would copy rounds of 48 rows, which do not
// divide the 128-row B tile: the producer warpgroup stays, and every
// thread of the CTA of 512 keeps 128 registers.
// CHECK-LABEL: func.func @three_consumers
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [128, 128], staging = none, warp_columns = 2, release_lag = 0>
module attributes {gg.target = "sm_80"} {
func.func @three_consumers(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                           %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [192, 128, 64], stages = 3, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}
}

// -----

// f32 operands (3xTF32) keep the producer warpgroup: without it they
// measured slower.
// CHECK-LABEL: func.func @f32
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [168, 168], staging = none, warp_columns = 2, release_lag = 0>
module attributes {gg.target = "sm_80"} {
func.func @f32(%a: memref<?x512xf32>, %b: memref<8x1024x512xf32>,
               %off: memref<9xi32>, %o: memref<?x1024xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xf32>)
      b(%b : memref<8x1024x512xf32>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xf32>)
      {config = #gg.config<block = [128, 128, 32], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}
}

// -----

// column_pairs makes one output per pair: 64x64 warps keep their pairs'
// stores (store_columns stays 2).
// CHECK-LABEL: func.func @column_pairs
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], staging = none, warp_columns = 4, release_lag = 0, producer = none>
module attributes {gg.target = "sm_80"} {
func.func @column_pairs(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                        %off: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x512xbf16>)
      {column_pairs,
       config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
      epilogue {
      ^bb0(%gate: f32, %up: f32, %g: index):
        %s = gg.silu %gate : f32
        %y = arith.mulf %s, %up : f32
        gg.yield %y : f32
      }
  return
}
}
