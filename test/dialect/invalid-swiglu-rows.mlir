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
