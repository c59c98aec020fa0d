// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.combine_routes: every case has exactly one thing wrong.

func.func @bad(%y: memref<?x64xbf16>, %p: memref<?xi64>, %o: memref<?x64xbf16>) {
  // expected-error @+1 {{threads must be a multiple of 32 in [32, 1024], got 0}}
  gg.combine_routes input(%y : memref<?x64xbf16>) position(%p : memref<?xi64>) out(%o : memref<?x64xbf16>)
      {top_k = 2 : i64, threads = 0 : i64}
  return
}

// -----

func.func @bad(%y: memref<?x64xbf16>, %p: memref<?xi64>, %o: memref<?x64xbf16>) {
  // expected-error @+1 {{top_k must be at least 1, got 0}}
  gg.combine_routes input(%y : memref<?x64xbf16>) position(%p : memref<?xi64>) out(%o : memref<?x64xbf16>)
      {top_k = 0 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%y: memref<?x64xf32>, %p: memref<?xi64>, %o: memref<?x64xbf16>) {
  // expected-error @+1 {{input must hold bf16, got 'f32'}}
  gg.combine_routes input(%y : memref<?x64xf32>) position(%p : memref<?xi64>) out(%o : memref<?x64xbf16>)
      {top_k = 2 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%y: memref<?x64xbf16>, %p: memref<?xi64>, %o: memref<64xbf16>) {
  // expected-error @+1 {{out must be a 2-D memref with the identity layout, got}}
  gg.combine_routes input(%y : memref<?x64xbf16>) position(%p : memref<?xi64>) out(%o : memref<64xbf16>)
      {top_k = 2 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%y: memref<?x64xbf16>, %p: memref<?xi16>, %o: memref<?x64xbf16>) {
  // expected-error @+1 {{position must be a 1-D i32 or i64 memref with the identity layout, got}}
  gg.combine_routes input(%y : memref<?x64xbf16>) position(%p : memref<?xi16>) out(%o : memref<?x64xbf16>)
      {top_k = 2 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%y: memref<?x60xbf16>, %p: memref<?xi64>, %o: memref<?x60xbf16>) {
  // expected-error @+1 {{out's columns must be a static multiple of 8, got 60}}
  gg.combine_routes input(%y : memref<?x60xbf16>) position(%p : memref<?xi64>) out(%o : memref<?x60xbf16>)
      {top_k = 2 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%y: memref<?x128xbf16>, %p: memref<?xi64>, %o: memref<?x64xbf16>) {
  // expected-error @+1 {{input must have out's 64 columns, got 128}}
  gg.combine_routes input(%y : memref<?x128xbf16>) position(%p : memref<?xi64>) out(%o : memref<?x64xbf16>)
      {top_k = 2 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%y: memref<?x64xbf16>, %p: memref<5xi64>, %o: memref<3x64xbf16>) {
  // expected-error @+1 {{position has 5 entries where out's 3 tokens x top_k = 2 need 6}}
  gg.combine_routes input(%y : memref<?x64xbf16>) position(%p : memref<5xi64>) out(%o : memref<3x64xbf16>)
      {top_k = 2 : i64, threads = 256 : i64}
  return
}
