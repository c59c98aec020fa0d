// RUN: ggc-opt %s -split-input-file -gg-plan-overfetch | FileCheck %s

// Before: a configured contiguous op. After: a group's last tile loads its
// valid rows rounded up to 8 (one swizzle atom), so its A load reads at most
// 7 rows past the group; rows past the load hold stale data, computed and
// never stored.
// CHECK-LABEL: func.func @contiguous
// CHECK: overfetch = #gg.overfetch<rows = 7, k = 0>
func.func @contiguous(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                      %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// A user's choice the kernel can keep is kept: whole-tile loads (127 rows).
// CHECK-LABEL: func.func @whole_tiles
// CHECK: overfetch = #gg.overfetch<rows = 127, k = 0>
func.func @whole_tiles(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                       %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>,
       overfetch = #gg.overfetch<rows = 127, k = 0>}
  return
}

// -----

// DeepGEMM's padded layout pads every group to whole tiles: no overfetch.
// CHECK-LABEL: func.func @padded
// CHECK: overfetch = #gg.overfetch<rows = 0, k = 0>
func.func @padded(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                  %tags: memref<?xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x512xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// k_grouped with K-major bf16 operands: a TMA box starts 16-byte aligned
// along K, so a group's first K block starts at the multiple of 8 at or
// before its first K entry, reading up to 7 entries of the previous group
// (the kernel clears them).
// CHECK-LABEL: func.func @k_grouped_k_major
// CHECK: overfetch = #gg.overfetch<rows = 0, k = 7>
func.func @k_grouped_k_major(%a: memref<256x?xbf16>, %b: memref<512x?xbf16>,
                             %off: memref<5xi32>, %o: memref<4x256x512xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>)
      b(%b : memref<512x?xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<4x256x512xf32>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Token-major (M- and N-major) operands start at any K: no K overfetch.
// CHECK-LABEL: func.func @k_grouped_token_major
// CHECK: overfetch = #gg.overfetch<rows = 0, k = 0>
func.func @k_grouped_token_major(%a: memref<?x256xbf16>, %b: memref<?x512xbf16>,
                                 %off: memref<5xi32>, %o: memref<4x256x512xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<?x256xbf16>, km)
      b(%b : memref<?x512xbf16>, kn) groups(%off : memref<5xi32>)
      out(%o : memref<4x256x512xf32>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// k_grouped with block scales: the scales follow 128-wide blocks of the
// concatenated K, so each group's first K block starts on the block that
// holds its first entry (up to 127 entries early), and every K block of
// the kernel takes one scale per row and column.
// CHECK-LABEL: func.func @k_grouped_block_scales
// CHECK: overfetch = #gg.overfetch<rows = 0, k = 127>
func.func @k_grouped_block_scales(%a: memref<256x?xf8E4M3FN>, %b: memref<384x?xf8E4M3FN>,
                                  %off: memref<5xi32>, %sa: memref<256x?xf32>,
                                  %sb: memref<384x?xf32>, %o: memref<4x256x384xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>)
      b(%b : memref<384x?xf8E4M3FN>) groups(%off : memref<5xi32>)
      a_scale(%sa : memref<256x?xf32>, <block 1x128>)
      b_scale(%sb : memref<384x?xf32>, <block 1x128>)
      out(%o : memref<4x256x384xf32>)
      {config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>}
  return
}
