// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.quantize_rows: every case has exactly one thing wrong.

func.func @bad(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{threads must be a multiple of 32 in [32, 1024], got 100}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 100 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{input must hold bf16, got 'f16'}}
  gg.quantize_rows input(%x : memref<?x256xf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %q: memref<?x256xbf16>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{out must hold f8E4M3FN, got 'bf16'}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xbf16>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf16>) {
  // expected-error @+1 {{scales must hold f32, got 'f16'}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %q: memref<256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{out must be a 2-D memref with the identity layout, got}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x196xbf16>, %q: memref<?x196xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{out's columns must be a static positive multiple of 8 (a lane's 16 bytes of bf16; the last 128-column block may be partial), got 196}}
  gg.quantize_rows input(%x : memref<?x196xbf16>) out(%q : memref<?x196xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{input must have 512 columns (gated: twice out's), got 256}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {gated, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x512xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{input must have 256 columns (out's), got 512}}
  gg.quantize_rows input(%x : memref<?x512xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<3x?xf32>) {
  // expected-error @+1 {{scales must have ceil(out's columns / 128) = 2 rows (one per block), got 3}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<3x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<10x256xbf16>, %q: memref<10x256xf8E4M3FN>, %s: memref<2x8xf32>) {
  // expected-error @+1 {{scales' rows of 8 cannot hold out's 10 rows}}
  gg.quantize_rows input(%x : memref<10x256xbf16>) out(%q : memref<10x256xf8E4M3FN>)
      scales(%s : memref<2x8xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %r: memref<4xi32>, %q: memref<10x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{rows lists 4 rows where out has 10}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) rows(%r : memref<4xi32>) out(%q : memref<10x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %r: memref<?xi64>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{rows must hold i32, got 'i64'}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) rows(%r : memref<?xi64>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<7x256xbf16>, %q: memref<10x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{input has 7 rows where out has 10 (a gathered copy takes rows)}}
  gg.quantize_rows input(%x : memref<7x256xbf16>) out(%q : memref<10x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{steps must be in [1, 8] (a warp's steps of a row loaded together), got 0}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64, steps = 0 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %r: memref<?xi32>, %q: memref<?x256xf8E4M3FN>,
               %s: memref<2x?xf32>) {
  // expected-error @+1 {{takes rows (a gather) or scatter, not both}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) rows(%r : memref<?xi32>)
      scatter(%r : memref<?xi32>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{copies = 8 needs scatter (the out rows each input row fills)}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {copies = 8 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %p: memref<?xi64>, %q: memref<?x256xf8E4M3FN>,
               %s: memref<2x?xf32>) {
  // expected-error @+1 {{copies must be in [1, 64] (the out rows each input row fills), got 0}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) scatter(%p : memref<?xi64>)
      out(%q : memref<?x256xf8E4M3FN>) scales(%s : memref<2x?xf32>)
      {copies = 0 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %p: memref<?xf32>, %q: memref<?x256xf8E4M3FN>,
               %s: memref<2x?xf32>) {
  // expected-error @+1 {{scatter must be a 1-D memref of i32 or i64 with the identity layout, got 'memref<?xf32>'}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) scatter(%p : memref<?xf32>)
      out(%q : memref<?x256xf8E4M3FN>) scales(%s : memref<2x?xf32>)
      {copies = 2 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<4x256xbf16>, %p: memref<7xi64>, %q: memref<?x256xf8E4M3FN>,
               %s: memref<2x?xf32>) {
  // expected-error @+1 {{scatter lists 7 rows where input's 4 rows times 2 copies want 8}}
  gg.quantize_rows input(%x : memref<4x256xbf16>) scatter(%p : memref<7xi64>)
      out(%q : memref<?x256xf8E4M3FN>) scales(%s : memref<2x?xf32>)
      {copies = 2 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{input_scales needs scatter (without it the input's rows are out's)}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {input_scales, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<8x256xbf16>, %p: memref<16xi64>, %q: memref<16x256xf8E4M3FN>,
               %s: memref<2x4xf32>) {
  // expected-error @+1 {{scales' rows of 4 cannot hold input's 8 rows}}
  gg.quantize_rows input(%x : memref<8x256xbf16>) scatter(%p : memref<16xi64>)
      out(%q : memref<16x256xf8E4M3FN>) scales(%s : memref<2x4xf32>)
      {copies = 2 : i64, input_scales, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %p: memref<?xi64>, %q: memref<?x256xf8E4M3FN>,
               %s: memref<2x?xf32>) {
  // expected-error @+1 {{copies must be in [1, 64] (the out rows each input row fills), got 65}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) scatter(%p : memref<?xi64>)
      out(%q : memref<?x256xf8E4M3FN>) scales(%s : memref<2x?xf32>)
      {copies = 65 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x256xbf16>, %r: memref<?xf32>, %q: memref<?x256xf8E4M3FN>,
               %s: memref<2x?xf32>) {
  // expected-error @+1 {{route takes gated without rows or scatter (the routed SwiGLU of each input row, stored to the same out row)}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) route(%r : memref<?xf32>)
      out(%q : memref<?x256xf8E4M3FN>) scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<8x512xbf16>, %rows: memref<8xi32>, %q: memref<8x256xf8E4M3FN>,
               %s: memref<2x8xf32>, %a: memref<8x256xbf16>) {
  // expected-error @+1 {{activation takes gated without rows or scatter}}
  gg.quantize_rows input(%x : memref<8x512xbf16>) rows(%rows : memref<8xi32>)
      out(%q : memref<8x256xf8E4M3FN>) scales(%s : memref<2x8xf32>)
      activation(%a : memref<8x256xbf16>) {gated, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<8x512xbf16>, %r: memref<4xf32>, %q: memref<8x256xf8E4M3FN>,
               %s: memref<2x8xf32>) {
  // expected-error @+1 {{route must hold one value a row, 8, got 4}}
  gg.quantize_rows input(%x : memref<8x512xbf16>) route(%r : memref<4xf32>)
      out(%q : memref<8x256xf8E4M3FN>) scales(%s : memref<2x8xf32>) {gated, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<8x512xbf16>, %q: memref<8x256xf8E4M3FN>, %s: memref<2x8xf32>,
               %a: memref<8x128xbf16>) {
  // expected-error @+1 {{activation must have out's shape [8, 256], got [8, 128]}}
  gg.quantize_rows input(%x : memref<8x512xbf16>) out(%q : memref<8x256xf8E4M3FN>)
      scales(%s : memref<2x8xf32>) activation(%a : memref<8x128xbf16>) {gated, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<8x512xbf16>, %q: memref<8x256xf8E4M3FN>, %s: memref<2x8xf32>,
               %a: memref<8x256xf16>) {
  // expected-error @+1 {{activation must hold bf16}}
  gg.quantize_rows input(%x : memref<8x512xbf16>) out(%q : memref<8x256xf8E4M3FN>)
      scales(%s : memref<2x8xf32>) activation(%a : memref<8x256xf16>) {gated, threads = 256 : i64}
  return
}
