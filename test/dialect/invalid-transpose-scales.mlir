// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.transpose_scales: every case has exactly one thing wrong.

func.func @bad(%s: memref<?xf32>, %t: memref<?xf32>) {
  // expected-error @+1 {{input must be [R, C] or [B, R, C], got a 1-D memref}}
  gg.transpose_scales input(%s : memref<?xf32>) out(%t : memref<?xf32>)
  return
}

// -----

func.func @bad(%s: memref<?x56xbf16>, %t: memref<56x?xf32>) {
  // expected-error @+1 {{input must hold f32, got 'bf16'}}
  gg.transpose_scales input(%s : memref<?x56xbf16>) out(%t : memref<56x?xf32>)
  return
}

// -----

func.func @bad(%s: memref<?x56xf32>, %t: memref<4x56x?xf32>) {
  // expected-error @+1 {{out must be a 2-D memref with the identity layout, got 'memref<4x56x?xf32>'}}
  gg.transpose_scales input(%s : memref<?x56xf32>) out(%t : memref<4x56x?xf32>)
  return
}

// -----

func.func @bad(%s: memref<?x56xf32>, %t: memref<48x?xf32>) {
  // expected-error @+1 {{out must be [56, A] with A at least R = ? (input's rows as out's columns), got [48, ?]}}
  gg.transpose_scales input(%s : memref<?x56xf32>) out(%t : memref<48x?xf32>)
  return
}

// -----

func.func @bad(%s: memref<250x16xf32>, %t: memref<16x248xf32>) {
  // expected-error @+1 {{out must be [16, A] with A at least R = 250 (input's rows as out's columns), got [16, 248]}}
  gg.transpose_scales input(%s : memref<250x16xf32>) out(%t : memref<16x248xf32>)
  return
}

// -----

func.func @bad(%s: memref<4x250x16xf32>, %t: memref<3x16x252xf32>) {
  // expected-error @+1 {{out must be [4, 16, A] with A at least R = 250 (input's rows as out's columns), got [3, 16, 252]}}
  gg.transpose_scales input(%s : memref<4x250x16xf32>) out(%t : memref<3x16x252xf32>)
  return
}
