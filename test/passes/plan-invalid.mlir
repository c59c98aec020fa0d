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

// An overfetch the kernel's loads would not keep to.
func.func @wrong_overfetch(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                           %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{has 'overfetch' #gg.overfetch<rows = 63, k = 0>, but its layouts and config make the kernel's loads reach #gg.overfetch<rows = 127, k = 0>}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>,
       overfetch = #gg.overfetch<rows = 63, k = 0>}
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
