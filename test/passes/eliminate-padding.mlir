// RUN: ggc-opt %s -split-input-file -gg-eliminate-padding=skip-idle-warpgroups=true | FileCheck %s
// RUN: ggc-opt %s -split-input-file -gg-eliminate-padding | FileCheck %s --check-prefix=OFF

// Before: a contiguous op with two consumer warpgroups (block M 128).
// After, with skip-idle-warpgroups: a warpgroup whose 64 rows of a group's
// last tile are all past the group's end skips its wgmma. By default (it
// measured no faster) every warpgroup computes.
// CHECK-LABEL: func.func @contiguous
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
// OFF-LABEL: func.func @contiguous
// OFF: padding = #gg.padding<idle_warpgroups = compute>
func.func @contiguous(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                      %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Masked decode tiles are mostly padding: skip (with the option).
// CHECK-LABEL: func.func @masked
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
func.func @masked(%a: memref<16x128x7168xf8E4M3FN>,
                  %b: memref<16x4096x7168xf8E4M3FN>, %m: memref<16xi32>,
                  %o: memref<16x128x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x4096xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 6, cluster = [1, 1], sms = 132>}
  return
}

// -----

// One consumer warpgroup (block M 64): a scheduled tile always has valid
// rows, so there is nothing to skip.
// CHECK-LABEL: func.func @one_consumer
// CHECK: padding = #gg.padding<idle_warpgroups = compute>
func.func @one_consumer(%a: memref<4x128x256xbf16>, %b: memref<4x512x256xbf16>,
                        %m: memref<4xi32>, %o: memref<4x128x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x128x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x128x512xbf16>)
      {config = #gg.config<block = [64, 128, 64], stages = 8, cluster = [1, 1], sms = 132>}
  return
}

// -----

// padded_contiguous rows are valid by their tag, not as a prefix: compute.
// CHECK-LABEL: func.func @padded
// CHECK: padding = #gg.padding<idle_warpgroups = compute>
func.func @padded(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                  %tags: memref<?xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x512xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// tf32 with B given N-major: every consumer warpgroup helps transpose B's
// tile, so none may skip.
// CHECK-LABEL: func.func @tf32_kn
// CHECK: padding = #gg.padding<idle_warpgroups = compute>
func.func @tf32_kn(%a: memref<?x256xf32>, %b: memref<4x256x512xf32>,
                   %off: memref<5xi32>, %o: memref<?x512xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xf32>)
      b(%b : memref<4x256x512xf32>, kn) groups(%off : memref<5xi32>)
      out(%o : memref<?x512xf32>)
      {tf32, config = #gg.config<block = [128, 128, 32], stages = 3, cluster = [1, 1], sms = 132>}
  return
}
