// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.copy_rows: every case has exactly one thing wrong.

func.func @bad(%x: memref<?x64xbf16>, %y: memref<?x64xbf16>) {
  // expected-error @+1 {{threads must be a multiple of 32 in [32, 1024], got 100}}
  gg.copy_rows input(%x : memref<?x64xbf16>) out(%y : memref<?x64xbf16>)
      {unit_bytes = 16 : i64, threads = 100 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %y: memref<?x64xbf16>) {
  // expected-error @+1 {{unit_bytes must be 1, 2, 4, 8 or 16, got 32}}
  gg.copy_rows input(%x : memref<?x64xbf16>) out(%y : memref<?x64xbf16>)
      {unit_bytes = 32 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x6xbf16>, %y: memref<?x6xbf16>) {
  // expected-error @+1 {{unit_bytes 8 must divide a row's 12 bytes}}
  gg.copy_rows input(%x : memref<?x6xbf16>) out(%y : memref<?x6xbf16>)
      {unit_bytes = 8 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %y: memref<?x64xf16>) {
  // expected-error @+1 {{input and out must hold the same type, got 'bf16' and 'f16'}}
  gg.copy_rows input(%x : memref<?x64xbf16>) out(%y : memref<?x64xf16>)
      {unit_bytes = 16 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %y: memref<?x32xbf16>) {
  // expected-error @+1 {{input and out must have the same static columns, got 'memref<?x64xbf16>' and 'memref<?x32xbf16>'}}
  gg.copy_rows input(%x : memref<?x64xbf16>) out(%y : memref<?x32xbf16>)
      {unit_bytes = 16 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?xbf16>, %y: memref<?x32xbf16>) {
  // expected-error @+1 {{input must be a 2-D memref with the identity layout, got 'memref<?xbf16>'}}
  gg.copy_rows input(%x : memref<?xbf16>) out(%y : memref<?x32xbf16>)
      {unit_bytes = 16 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %i: memref<?xi64>, %y: memref<?x64xbf16>) {
  // expected-error @+1 {{input_rows must hold i32, got 'i64'}}
  gg.copy_rows input(%x : memref<?x64xbf16>) input_rows(%i : memref<?xi64>)
      out(%y : memref<?x64xbf16>) {unit_bytes = 16 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<?x64xbf16>, %i: memref<3xi32>, %y: memref<?x64xbf16>, %o: memref<4xi32>) {
  // expected-error @+1 {{input_rows and out_rows must list as many rows, got 3 and 4}}
  gg.copy_rows input(%x : memref<?x64xbf16>) input_rows(%i : memref<3xi32>)
      out(%y : memref<?x64xbf16>) out_rows(%o : memref<4xi32>)
      {unit_bytes = 16 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%x: memref<5x64xbf16>, %y: memref<4x64xbf16>) {
  // expected-error @+1 {{out's 4 rows cannot hold input's 5}}
  gg.copy_rows input(%x : memref<5x64xbf16>) out(%y : memref<4x64xbf16>)
      {unit_bytes = 16 : i64, threads = 256 : i64}
  return
}
