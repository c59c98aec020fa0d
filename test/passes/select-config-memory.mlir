// RUN: ggc-opt %s -split-input-file -gg-select-config | FileCheck %s
// RUN: ggc-opt %s -split-input-file -gg-select-config=memory-gbps=3352 | FileCheck %s --check-prefix=NARROW
// RUN: ggc-opt %s -split-input-file -gg-select-config=memory-gbps=4915 | FileCheck %s

// gg-select-config's rules for a card of less DRAM bandwidth than 4,000
// GB/s (an H100 SXM's 3,352), against those of an unknown card or an
// H200 (4,915), which are the same.

// Before: 16-bit contiguous groups of 512 expected rows, no config.
// After: 128x128 tiles (ragged groups balance better over them), or on
// the narrow card 128x256 (fewer bytes of A and B a multiply).
// CHECK-LABEL: func.func @bf16_512_rows
// CHECK: config = #gg.config<block = [128, 128, 64]
// NARROW-LABEL: func.func @bf16_512_rows
// NARROW: config = #gg.config<block = [128, 256, 64]
func.func @bf16_512_rows(%a: memref<?x8192xbf16>, %b: memref<32x3072x8192xbf16>,
                         %off: memref<33xi32>, %o: memref<?x3072xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x8192xbf16>)
      b(%b : memref<32x3072x8192xbf16>) groups(%off : memref<33xi32>)
      out(%o : memref<?x3072xbf16>) {expected_m = 512 : i64}
  return
}

// -----

// Fewer rows keep 128x128 on either card.
// CHECK-LABEL: func.func @bf16_256_rows
// CHECK: config = #gg.config<block = [128, 128, 64]
// NARROW-LABEL: func.func @bf16_256_rows
// NARROW: config = #gg.config<block = [128, 128, 64]
func.func @bf16_256_rows(%a: memref<?x8192xbf16>, %b: memref<32x3072x8192xbf16>,
                         %off: memref<33xi32>, %o: memref<?x3072xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x8192xbf16>)
      b(%b : memref<32x3072x8192xbf16>) groups(%off : memref<33xi32>)
      out(%o : memref<?x3072xbf16>) {expected_m = 256 : i64}
  return
}

// -----

// Before: contiguous FP8, K 2,048, N 7,168 (no multiple of 192).
// After: 128x128 tiles, or on the narrow card 128x192 with a ragged last
// column tile.
// CHECK-LABEL: func.func @fp8_short_k
// CHECK: config = #gg.config<block = [128, 128, 128]
// NARROW-LABEL: func.func @fp8_short_k
// NARROW: config = #gg.config<block = [128, 192, 128]
func.func @fp8_short_k(%a: memref<?x2048xf8E4M3FN>, %b: memref<8x7168x2048xf8E4M3FN>,
                       %off: memref<9xi32>, %sa: memref<16x?xf32>,
                       %sb: memref<8x56x16xf32>, %o: memref<?x7168xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<8x7168x2048xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x56x16xf32>, <block 128x128>)
      out(%o : memref<?x7168xbf16>) {expected_m = 1024 : i64}
  return
}

// -----

// Long K keeps 128x128 on either card.
// CHECK-LABEL: func.func @fp8_long_k
// CHECK: config = #gg.config<block = [128, 128, 128]
// NARROW-LABEL: func.func @fp8_long_k
// NARROW: config = #gg.config<block = [128, 128, 128]
func.func @fp8_long_k(%a: memref<?x7168xf8E4M3FN>, %b: memref<8x4096x7168xf8E4M3FN>,
                      %off: memref<9xi32>, %sa: memref<56x?xf32>,
                      %sb: memref<8x32x56xf32>, %o: memref<?x4096xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x7168xf8E4M3FN>)
      b(%b : memref<8x4096x7168xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<56x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x32x56xf32>, <block 128x128>)
      out(%o : memref<?x4096xbf16>) {expected_m = 1024 : i64}
  return
}

// -----

// f32 operands (3xTF32) keep 128-wide tiles on either card: the rule is
// 16-bit operands' (measured there alone).
// CHECK-LABEL: func.func @f32_512_rows
// CHECK: config = #gg.config<block = [128, 128, 32]
// NARROW-LABEL: func.func @f32_512_rows
// NARROW: config = #gg.config<block = [128, 128, 32]
func.func @f32_512_rows(%a: memref<?x2048xf32>, %b: memref<8x1024x2048xf32>,
                        %off: memref<9xi32>, %o: memref<?x1024xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf32>)
      b(%b : memref<8x1024x2048xf32>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xf32>) {expected_m = 512 : i64}
  return
}

// -----

// Short-K FP8 of N below 4,096 and no multiple of 192 keeps 128 columns on
// either card (not measured there).
// CHECK-LABEL: func.func @fp8_short_k_narrow_n
// CHECK: config = #gg.config<block = [128, 128, 128]
// NARROW-LABEL: func.func @fp8_short_k_narrow_n
// NARROW: config = #gg.config<block = [128, 128, 128]
func.func @fp8_short_k_narrow_n(%a: memref<?x1024xf8E4M3FN>, %b: memref<8x896x1024xf8E4M3FN>,
                                %off: memref<9xi32>, %sa: memref<8x?xf32>,
                                %sb: memref<8x7x8xf32>, %o: memref<?x896xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x1024xf8E4M3FN>)
      b(%b : memref<8x896x1024xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<8x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x7x8xf32>, <block 128x128>)
      out(%o : memref<?x896xbf16>) {expected_m = 512 : i64}
  return
}
