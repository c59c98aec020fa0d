// RUN: ggc-opt %s -split-input-file -gg-schedule-groups -gg-eliminate-padding -gg-plan-overfetch -verify-diagnostics

// The planning passes need the tile configuration.
func.func @no_config(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                     %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{has no #gg.config; run gg-select-config before gg-schedule-groups}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
  return
}

// -----

// An overfetch the kernel's loads would not keep to: rows in no granule.
func.func @wrong_overfetch(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                           %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{has 'overfetch' #gg.overfetch<rows = 20, k = 0>, but rows must be block M - 1 = 127 (whole tiles) or one less than a power of two from 8 to 128 (the granule of a partial tile's loads)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>,
       overfetch = #gg.overfetch<rows = 20, k = 0>}
  return
}

// -----

// k_grouped K-major bf16 blocks start up to 7 entries early, not 15.
func.func @wrong_k_reach(%a: memref<256x?xbf16>, %b: memref<512x?xbf16>,
                         %off: memref<5xi32>, %o: memref<4x256x512xf32>) {
  // expected-error @+1 {{has 'overfetch' #gg.overfetch<rows = 0, k = 15>, but its layouts and config make the kernel's K blocks start up to k = 7 entries early}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>)
      b(%b : memref<512x?xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<4x256x512xf32>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       overfetch = #gg.overfetch<rows = 0, k = 15>}
  return
}

// -----

// Tiles of groups padded to whole tiles load whole: no granule to choose.
func.func @padded_granule(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                          %tags: memref<?xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{has 'overfetch' #gg.overfetch<rows = 7, k = 0>, but its tiles load whole, reaching rows = 0 past a group}}
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x512xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       overfetch = #gg.overfetch<rows = 7, k = 0>}
  return
}

// -----

// gg-plan-overfetch checks TMA's 16-byte global strides.
func.func @unaligned_k(%a: memref<?x100xbf16>, %b: memref<8x1024x100xbf16>,
                       %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{K = 100 gives rows of 200 bytes; TMA needs a multiple of 16 (K a multiple of 8)}}
  gg.grouped_matmul contiguous a(%a : memref<?x100xbf16>)
      b(%b : memref<8x1024x100xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// The kernel numbers tiles in i32: G x ceil(M_max/BM) x ceil(N/BN) = 1024 x
// 8192 x 8192 tiles of 128x128 do not fit, though each size does.
func.func @too_many_tiles(%a: memref<1024x1048576x64xbf16>, %b: memref<1024x1048576x64xbf16>,
                          %m: memref<1024xi32>, %o: memref<1024x1048576x1048576xbf16>) {
  // expected-error @+1 {{has 68719476736 tiles of 128x128 to schedule on 132 CTAs, more than the kernel's 32-bit tile indices hold (tiles + CTAs must be at most 2^31 - 1 = 2147483647); use larger tiles, fewer groups or fewer CTAs}}
  gg.grouped_matmul masked a(%a : memref<1024x1048576x64xbf16>)
      b(%b : memref<1024x1048576x64xbf16>) groups(%m : memref<1024xi32>)
      out(%o : memref<1024x1048576x1048576xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// A wave of INT64_MAX CTAs: gg-schedule-groups weighs it without overflow,
// and the tile indices cannot hold it.
func.func @sms_int64_max(%a: memref<4x256x64xbf16>, %b: memref<4x4096x64xbf16>,
                         %m: memref<4xi32>, %o: memref<4x256x4096xbf16>) {
  // expected-error @+1 {{has 256 tiles of 128x128 to schedule on 9223372036854775807 CTAs, more than the kernel's 32-bit tile indices hold}}
  gg.grouped_matmul masked a(%a : memref<4x256x64xbf16>)
      b(%b : memref<4x4096x64xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x256x4096xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 9223372036854775807>}
  return
}
