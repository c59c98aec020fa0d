// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.swiglu_rows: every case has exactly one thing wrong.

func.func @bad(%h: memref<?x128xbf16>, %a: memref<?x64xbf16>) {
  // expected-error @+1 {{threads must be a multiple of 32 in [32, 1024], got 48}}
  gg.swiglu_rows input(%h : memref<?x128xbf16>) out(%a : memref<?x64xbf16>) {threads = 48 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x128xf32>, %a: memref<?x64xbf16>) {
  // expected-error @+1 {{input must hold bf16, got 'f32'}}
  gg.swiglu_rows input(%h : memref<?x128xf32>) out(%a : memref<?x64xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x24xbf16>, %a: memref<?x12xbf16>) {
  // expected-error @+1 {{out's columns must be a static multiple of 8, got 12}}
  gg.swiglu_rows input(%h : memref<?x24xbf16>) out(%a : memref<?x12xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x64xbf16>, %a: memref<?x64xbf16>) {
  // expected-error @+1 {{input must have twice out's columns (gate, then up), 128, got 64}}
  gg.swiglu_rows input(%h : memref<?x64xbf16>) out(%a : memref<?x64xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<4x128xbf16>, %a: memref<5x64xbf16>) {
  // expected-error @+1 {{input has 4 rows where out has 5}}
  gg.swiglu_rows input(%h : memref<4x128xbf16>) out(%a : memref<5x64xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x128xbf16>, %d: memref<?x32xbf16>, %dh: memref<?x128xbf16>) {
  // expected-error @+1 {{input must have twice grad's columns (gate, then up), 64, got 128}}
  gg.swiglu_rows_backward input(%h : memref<?x128xbf16>) grad(%d : memref<?x32xbf16>)
      out(%dh : memref<?x128xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x128xbf16>, %d: memref<?x64xf32>, %dh: memref<?x128xbf16>) {
  // expected-error @+1 {{grad must hold bf16, got 'f32'}}
  gg.swiglu_rows_backward input(%h : memref<?x128xbf16>) grad(%d : memref<?x64xf32>)
      out(%dh : memref<?x128xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<4x128xbf16>, %d: memref<4x64xbf16>, %dh: memref<4x64xbf16>) {
  // expected-error @+1 {{out must have input's shape [4, 128], got [4, 64]}}
  gg.swiglu_rows_backward input(%h : memref<4x128xbf16>) grad(%d : memref<4x64xbf16>)
      out(%dh : memref<4x64xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x128xbf16>, %d: memref<?x64xbf16>, %dh: memref<?x128xbf16>) {
  // expected-error @+1 {{threads must be a multiple of 32 in [32, 1024], got 100}}
  gg.swiglu_rows_backward input(%h : memref<?x128xbf16>) grad(%d : memref<?x64xbf16>)
      out(%dh : memref<?x128xbf16>) {threads = 100 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x24xbf16>, %d: memref<?x12xbf16>, %dh: memref<?x24xbf16>) {
  // expected-error @+1 {{grad's columns must be a static multiple of 8, got 12}}
  gg.swiglu_rows_backward input(%h : memref<?x24xbf16>) grad(%d : memref<?x12xbf16>)
      out(%dh : memref<?x24xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<4x128xbf16>, %d: memref<5x64xbf16>, %dh: memref<4x128xbf16>) {
  // expected-error @+1 {{input has 4 rows where grad has 5}}
  gg.swiglu_rows_backward input(%h : memref<4x128xbf16>) grad(%d : memref<5x64xbf16>)
      out(%dh : memref<4x128xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x128xbf16>, %r: memref<?xbf16>, %a: memref<?x64xbf16>) {
  // expected-error @+1 {{route must hold f32, got 'bf16'}}
  gg.swiglu_rows input(%h : memref<?x128xbf16>) route(%r : memref<?xbf16>)
      out(%a : memref<?x64xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<4x128xbf16>, %r: memref<5xf32>, %a: memref<4x64xbf16>) {
  // expected-error @+1 {{route must hold one value a row, 4, got 5}}
  gg.swiglu_rows input(%h : memref<4x128xbf16>) route(%r : memref<5xf32>)
      out(%a : memref<4x64xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x128xbf16>, %d: memref<?x64xbf16>, %r: memref<?xf32>,
               %dh: memref<?x128xbf16>) {
  // expected-error @+1 {{takes route and route_grad together (the routed rows' gradient and the routing weight's), got only route}}
  gg.swiglu_rows_backward input(%h : memref<?x128xbf16>) grad(%d : memref<?x64xbf16>)
      route(%r : memref<?xf32>) out(%dh : memref<?x128xbf16>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x128xbf16>, %d: memref<?x64xbf16>, %r: memref<?xf32>,
               %dh: memref<?x128xbf16>, %dr: memref<?x1xf32>) {
  // expected-error @+1 {{route_grad must be a 1-D memref with the identity layout, got 'memref<?x1xf32>'}}
  gg.swiglu_rows_backward input(%h : memref<?x128xbf16>) grad(%d : memref<?x64xbf16>)
      route(%r : memref<?xf32>) out(%dh : memref<?x128xbf16>)
      route_grad(%dr : memref<?x1xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<4x128xbf16>, %d: memref<4x64xbf16>, %r: memref<4xf32>,
               %dh: memref<4x128xbf16>, %dr: memref<3xf32>) {
  // expected-error @+1 {{route_grad must hold one value a row, 4, got 3}}
  gg.swiglu_rows_backward input(%h : memref<4x128xbf16>) grad(%d : memref<4x64xbf16>)
      route(%r : memref<4xf32>) out(%dh : memref<4x128xbf16>)
      route_grad(%dr : memref<3xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x128xbf16>, %d: memref<?x64xbf16>, %dh: memref<?x128xbf16>,
               %dr: memref<?xf32>) {
  // expected-error @+1 {{takes route and route_grad together (the routed rows' gradient and the routing weight's), got only route_grad}}
  gg.swiglu_rows_backward input(%h : memref<?x128xbf16>) grad(%d : memref<?x64xbf16>)
      out(%dh : memref<?x128xbf16>) route_grad(%dr : memref<?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x128xbf16>, %d: memref<?x64xbf16>, %r: memref<?xf64>,
               %dh: memref<?x128xbf16>, %dr: memref<?xf32>) {
  // expected-error @+1 {{route must hold f32, got 'f64'}}
  gg.swiglu_rows_backward input(%h : memref<?x128xbf16>) grad(%d : memref<?x64xbf16>)
      route(%r : memref<?xf64>) out(%dh : memref<?x128xbf16>)
      route_grad(%dr : memref<?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x256xbf16>, %d: memref<?x128xbf16>, %r: memref<?xf32>,
               %dh: memref<?x256xbf16>, %dr: memref<?xf32>, %q: memref<?x256xf8E4M3FN>) {
  // expected-error @+1 {{takes quantized and quantized_scales together (the gradient's e4m3 values and their scales), got only quantized}}
  gg.swiglu_rows_backward input(%h : memref<?x256xbf16>) grad(%d : memref<?x128xbf16>)
      route(%r : memref<?xf32>) out(%dh : memref<?x256xbf16>) route_grad(%dr : memref<?xf32>)
      quantized(%q : memref<?x256xf8E4M3FN>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x256xbf16>, %d: memref<?x128xbf16>, %dh: memref<?x256xbf16>,
               %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{quantized needs route (the routed kernel, a warp a row, whose half-warps take the 128-column blocks)}}
  gg.swiglu_rows_backward input(%h : memref<?x256xbf16>) grad(%d : memref<?x128xbf16>)
      out(%dh : memref<?x256xbf16>) quantized(%q : memref<?x256xf8E4M3FN>)
      quantized_scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<?x192xbf16>, %d: memref<?x96xbf16>, %r: memref<?xf32>,
               %dh: memref<?x192xbf16>, %dr: memref<?xf32>, %q: memref<?x192xf8E4M3FN>,
               %s: memref<2x?xf32>) {
  // expected-error @+1 {{quantized needs grad's columns a multiple of 128 (each block within the gate or the up half), got 96}}
  gg.swiglu_rows_backward input(%h : memref<?x192xbf16>) grad(%d : memref<?x96xbf16>)
      route(%r : memref<?xf32>) out(%dh : memref<?x192xbf16>) route_grad(%dr : memref<?xf32>)
      quantized(%q : memref<?x192xf8E4M3FN>) quantized_scales(%s : memref<2x?xf32>)
      {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<8x256xbf16>, %d: memref<8x128xbf16>, %r: memref<8xf32>,
               %dh: memref<8x256xbf16>, %dr: memref<8xf32>, %q: memref<8x256xbf16>,
               %s: memref<2x8xf32>) {
  // expected-error @+1 {{quantized must hold f8E4M3FN}}
  gg.swiglu_rows_backward input(%h : memref<8x256xbf16>) grad(%d : memref<8x128xbf16>)
      route(%r : memref<8xf32>) out(%dh : memref<8x256xbf16>) route_grad(%dr : memref<8xf32>)
      quantized(%q : memref<8x256xbf16>) quantized_scales(%s : memref<2x8xf32>)
      {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<8x256xbf16>, %d: memref<8x128xbf16>, %r: memref<8xf32>,
               %dh: memref<8x256xbf16>, %dr: memref<8xf32>, %q: memref<8x256xf8E4M3FN>,
               %s: memref<1x8xf32>) {
  // expected-error @+1 {{quantized_scales must have 2 rows (one per 128 columns of out), got 1}}
  gg.swiglu_rows_backward input(%h : memref<8x256xbf16>) grad(%d : memref<8x128xbf16>)
      route(%r : memref<8xf32>) out(%dh : memref<8x256xbf16>) route_grad(%dr : memref<8xf32>)
      quantized(%q : memref<8x256xf8E4M3FN>) quantized_scales(%s : memref<1x8xf32>)
      {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<8x256xbf16>, %d: memref<8x128xbf16>, %r: memref<8xf32>,
               %dh: memref<8x256xbf16>, %dr: memref<8xf32>, %q: memref<8x256xf8E4M3FN>,
               %s: memref<2x4xf32>) {
  // expected-error @+1 {{quantized_scales' rows of 4 cannot hold out's 8 rows}}
  gg.swiglu_rows_backward input(%h : memref<8x256xbf16>) grad(%d : memref<8x128xbf16>)
      route(%r : memref<8xf32>) out(%dh : memref<8x256xbf16>) route_grad(%dr : memref<8xf32>)
      quantized(%q : memref<8x256xf8E4M3FN>) quantized_scales(%s : memref<2x4xf32>)
      {threads = 256 : i64}
  return
}

// -----

func.func @bad(%h: memref<8x256xbf16>, %d: memref<8x128xbf16>, %r: memref<8xf32>,
               %dh: memref<8x256xbf16>, %dr: memref<8xf32>, %q: memref<8x128xf8E4M3FN>,
               %s: memref<2x8xf32>) {
  // expected-error @+1 {{quantized must have out's shape [8, 256], got [8, 128]}}
  gg.swiglu_rows_backward input(%h : memref<8x256xbf16>) grad(%d : memref<8x128xbf16>)
      route(%r : memref<8xf32>) out(%dh : memref<8x256xbf16>) route_grad(%dr : memref<8xf32>)
      quantized(%q : memref<8x128xf8E4M3FN>) quantized_scales(%s : memref<2x8xf32>)
      {threads = 256 : i64}
  return
}
