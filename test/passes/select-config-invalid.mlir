// RUN: ggc-opt %s -split-input-file -gg-select-config -verify-diagnostics
// The num-sms option goes into #gg.config unverified: checked first.
// RUN: not ggc-opt %s -gg-select-config=num-sms=-1 2>&1 | FileCheck %s --check-prefix=SMS
// SMS: error: gg-select-config: num-sms must be positive, got -1
// RUN: not ggc-opt %s -gg-select-config=shared-memory-bytes=-1 2>&1 | FileCheck %s --check-prefix=SMEM
// SMEM: error: gg-select-config: shared-memory-bytes must be 0 (the target's) or positive, got -1
// RUN: not ggc-opt %s -gg-select-config=memory-gbps=-1 2>&1 | FileCheck %s --check-prefix=GBPS
// GBPS: error: gg-select-config: memory-gbps must be 0 (unknown) or positive, got -1

// A user config is checked against the shared-memory budget of one CTA.
func.func @too_deep(%a: memref<?x256xbf16>, %b: memref<2x256x256xbf16>,
                    %off: memref<3xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{needs 526336 bytes of shared memory, more than the 232448 one CTA may use}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<2x256x256xbf16>) groups(%off : memref<3xi32>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [256, 256, 128], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// f8's two accumulators a warpgroup hold 128 columns: with column_pairs,
// 64 outputs, half a 1x128 block of a quantised out; two warpgroups hold
// a block together only where N is a multiple of 256.
func.func @quantized_f8_swiglu(%a: memref<?x1024xf8E4M3FN>, %b: memref<8x640x1024xf8E4M3FN>,
                               %off: memref<9xi32>, %sa: memref<8x?xf32>, %sb: memref<8x5x8xf32>,
                               %o: memref<?x320xf8E4M3FN>, %so: memref<3x?xf32>) {
  // expected-error @+1 {{has no tile for out_scale with f8 operands and column_pairs where N (640) is not a multiple of 256: a warpgroup's two f8 accumulators hold 128 columns of the product, 64 outputs, and two warpgroups split a 256-column tile's 128-column block; write a bf16 out and quantise it with gg.quantize_rows, or give a config}}
  gg.grouped_matmul contiguous a(%a : memref<?x1024xf8E4M3FN>)
      b(%b : memref<8x640x1024xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<8x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x5x8xf32>, <block 128x128>)
      out(%o : memref<?x320xf8E4M3FN>) out_scale(%so : memref<3x?xf32>)
      {column_pairs} epilogue {
  ^bb0(%gate: f32, %up: f32, %g: index):
    %y = arith.mulf %gate, %up : f32
    gg.yield %y : f32
  }
  return
}
