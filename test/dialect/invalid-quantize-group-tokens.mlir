// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.quantize_group_tokens: every case has exactly one thing wrong.

func.func @bad(%x: memref<?x64xf16>, %o: memref<?xi32>, %q: memref<64x?xf8E4M3FN>, %s: memref<?x64xf32>, %p: memref<?xi32>) {
  // expected-error @+1 {{input must hold bf16, got 'f16'}}
  gg.quantize_group_tokens input(%x : memref<?x64xf16>) groups(%o : memref<?xi32>)
      out(%q : memref<64x?xf8E4M3FN>) scales(%s : memref<?x64xf32>) padded_groups(%p : memref<?xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x40xbf16>, %o: memref<?xi32>, %q: memref<40x?xf8E4M3FN>, %s: memref<?x40xf32>, %p: memref<?xi32>) {
  // expected-error @+1 {{input must be [T, C] with C a static positive multiple of 16 (out's rows of whole 16-byte pieces of 8 tokens' columns), got [?, 40]}}
  gg.quantize_group_tokens input(%x : memref<?x40xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<40x?xf8E4M3FN>) scales(%s : memref<?x40xf32>) padded_groups(%p : memref<?xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<?xi64>, %q: memref<64x?xf8E4M3FN>, %s: memref<?x64xf32>, %p: memref<?xi32>) {
  // expected-error @+1 {{groups must hold i32, got 'i64'}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<?xi64>)
      out(%q : memref<64x?xf8E4M3FN>) scales(%s : memref<?x64xf32>) padded_groups(%p : memref<?xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<0xi32>, %q: memref<64x?xf8E4M3FN>, %s: memref<?x64xf32>, %p: memref<0xi32>) {
  // expected-error @+1 {{groups must hold G + 1 >= 1 offsets, got 0}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<0xi32>)
      out(%q : memref<64x?xf8E4M3FN>) scales(%s : memref<?x64xf32>) padded_groups(%p : memref<0xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<5xi32>, %q: memref<64x?xf8E4M3FN>, %s: memref<?x64xf32>, %p: memref<4xi32>) {
  // expected-error @+1 {{padded_groups must be [5] like groups, got [4]}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<5xi32>)
      out(%q : memref<64x?xf8E4M3FN>) scales(%s : memref<?x64xf32>) padded_groups(%p : memref<4xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<?xi32>, %q: memref<64x?xbf16>, %s: memref<?x64xf32>, %p: memref<?xi32>) {
  // expected-error @+1 {{out must hold f8E4M3FN, got 'bf16'}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<64x?xbf16>) scales(%s : memref<?x64xf32>) padded_groups(%p : memref<?xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<?xi32>, %q: memref<64x200xf8E4M3FN>, %s: memref<?x64xf32>, %p: memref<?xi32>) {
  // expected-error @+1 {{out must be [64, P] with P a multiple of 128 (whole token blocks), got [64, 200]}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<64x200xf8E4M3FN>) scales(%s : memref<?x64xf32>) padded_groups(%p : memref<?xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<?xi32>, %q: memref<32x?xf8E4M3FN>, %s: memref<?x64xf32>, %p: memref<?xi32>) {
  // expected-error @+1 {{out must be [64, P] with P a multiple of 128 (whole token blocks), got [32, ?]}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<32x?xf8E4M3FN>) scales(%s : memref<?x64xf32>) padded_groups(%p : memref<?xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<?xi32>, %q: memref<64x256xf8E4M3FN>, %s: memref<3x64xf32>, %p: memref<?xi32>) {
  // expected-error @+1 {{scales must be [2, 64] (one per 128-token block and column of out), got [3, 64]}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<64x256xf8E4M3FN>) scales(%s : memref<3x64xf32>) padded_groups(%p : memref<?xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<?xi32>, %q: memref<64x?xf8E4M3FN>, %s: memref<?x32xf32>, %p: memref<?xi32>) {
  // expected-error @+1 {{scales must be [P / 128, 64] (one per 128-token block and column of out), got [?, 32]}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<64x?xf8E4M3FN>) scales(%s : memref<?x32xf32>) padded_groups(%p : memref<?xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<?xi32>, %q: memref<64x?xf8E4M3FN>, %s: memref<?x64xf32>, %p: memref<2x3xi32>) {
  // expected-error @+1 {{padded_groups must be a 1-D memref with the identity layout, got 'memref<2x3xi32>'}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<64x?xf8E4M3FN>) scales(%s : memref<?x64xf32>) padded_groups(%p : memref<2x3xi32>)
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %o: memref<?xi32>, %q: memref<64x?xf8E4M3FN>, %s: memref<?x64xf32>, %p: memref<0xi32>) {
  // expected-error @+1 {{padded_groups must hold G + 1 >= 1 offsets, got 0}}
  gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<64x?xf8E4M3FN>) scales(%s : memref<?x64xf32>) padded_groups(%p : memref<0xi32>)
  return
}

// -----

func.func @bad(%x: memref<300x40xbf16>, %o: memref<?xi32>, %q: memref<40x?xf8E4M3FN>, %s: memref<?x40xf32>, %p: memref<?xi32>) {
  // expected-error @+1 {{input must be [T, C] with C a static positive multiple of 16 (out's rows of whole 16-byte pieces of 8 tokens' columns), got [300, 40]}}
  gg.quantize_group_tokens input(%x : memref<300x40xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<40x?xf8E4M3FN>) scales(%s : memref<?x40xf32>) padded_groups(%p : memref<?xi32>)
  return
}
