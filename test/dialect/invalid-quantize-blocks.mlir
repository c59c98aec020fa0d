// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.quantize_blocks: every case has exactly one thing wrong.

func.func @bad(%w: memref<?x256x384xf16>, %q: memref<?x256x384xf8E4M3FN>, %s: memref<?x2x3xf32>) {
  // expected-error @+1 {{input must hold bf16, got 'f16'}}
  gg.quantize_blocks input(%w : memref<?x256x384xf16>) out(%q : memref<?x256x384xf8E4M3FN>)
      scales(%s : memref<?x2x3xf32>)
  return
}

// -----

func.func @bad(%w: memref<256x384xbf16>, %q: memref<?x256x384xf8E4M3FN>, %s: memref<?x2x3xf32>) {
  // expected-error @+1 {{input must be a 3-D memref with the identity layout, got 'memref<256x384xbf16>'}}
  gg.quantize_blocks input(%w : memref<256x384xbf16>) out(%q : memref<?x256x384xf8E4M3FN>)
      scales(%s : memref<?x2x3xf32>)
  return
}

// -----

func.func @bad(%w: memref<?x256x200xbf16>, %q: memref<?x256x200xf8E4M3FN>, %s: memref<?x2x2xf32>) {
  // expected-error @+1 {{input must be [G, N, K] with N and K static positive multiples of 16 (e4m3 rows of whole 16 bytes, both ways; the last 128x128 blocks may be partial), got [?, 256, 200]}}
  gg.quantize_blocks input(%w : memref<?x256x200xbf16>) out(%q : memref<?x256x200xf8E4M3FN>)
      scales(%s : memref<?x2x2xf32>)
  return
}

// -----

func.func @bad(%w: memref<?x256x384xbf16>, %q: memref<?x256x384xbf16>, %s: memref<?x2x3xf32>) {
  // expected-error @+1 {{out must hold f8E4M3FN, got 'bf16'}}
  gg.quantize_blocks input(%w : memref<?x256x384xbf16>) out(%q : memref<?x256x384xbf16>)
      scales(%s : memref<?x2x3xf32>)
  return
}

// -----

func.func @bad(%w: memref<4x256x384xbf16>, %q: memref<2x256x384xf8E4M3FN>, %s: memref<4x2x3xf32>) {
  // expected-error @+1 {{out must be [4, 256, 384], got [2, 256, 384]}}
  gg.quantize_blocks input(%w : memref<4x256x384xbf16>) out(%q : memref<2x256x384xf8E4M3FN>)
      scales(%s : memref<4x2x3xf32>)
  return
}

// -----

func.func @bad(%w: memref<?x256x384xbf16>, %q: memref<?x256x384xf8E4M3FN>, %s: memref<?x3x2xf32>) {
  // expected-error @+1 {{scales must be [?, 2, 3], got [?, 3, 2]}}
  gg.quantize_blocks input(%w : memref<?x256x384xbf16>) out(%q : memref<?x256x384xf8E4M3FN>)
      scales(%s : memref<?x3x2xf32>)
  return
}

// -----

func.func @bad(%w: memref<?x256x384xbf16>, %q: memref<?x256x384xf8E4M3FN>,
               %qt: memref<?x256x384xf8E4M3FN>, %s: memref<?x2x3xf32>) {
  // expected-error @+1 {{transposed must be [?, 384, 256], got [?, 256, 384]}}
  gg.quantize_blocks input(%w : memref<?x256x384xbf16>) out(%q : memref<?x256x384xf8E4M3FN>)
      transposed(%qt : memref<?x256x384xf8E4M3FN>) scales(%s : memref<?x2x3xf32>)
  return
}

// -----

func.func @bad(%w: memref<?x256x384xbf16>, %q: memref<?x256x384xf8E4M3FN>, %s: memref<?x2x3xf16>) {
  // expected-error @+1 {{scales must hold f32, got 'f16'}}
  gg.quantize_blocks input(%w : memref<?x256x384xbf16>) out(%q : memref<?x256x384xf8E4M3FN>)
      scales(%s : memref<?x2x3xf16>)
  return
}

// -----

func.func @bad(%w: memref<?x256x384xbf16>, %q: memref<?x256x384xf8E4M3FN>,
               %qt: memref<?x384x256xbf16>, %s: memref<?x2x3xf32>) {
  // expected-error @+1 {{transposed must hold f8E4M3FN, got 'bf16'}}
  gg.quantize_blocks input(%w : memref<?x256x384xbf16>) out(%q : memref<?x256x384xf8E4M3FN>)
      transposed(%qt : memref<?x384x256xbf16>) scales(%s : memref<?x2x3xf32>)
  return
}
