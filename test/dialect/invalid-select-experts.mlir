// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.select_experts: every case has exactly one thing wrong.

func.func @bad(%l: memref<?x8xbf16>, %w: memref<?x2xf32>, %i: memref<?x2xi32>) {
  // expected-error @+1 {{threads must be a multiple of 32 in [32, 1024], got 48}}
  gg.select_experts logits(%l : memref<?x8xbf16>) weights(%w : memref<?x2xf32>) ids(%i : memref<?x2xi32>) {threads = 48 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x8xi32>, %w: memref<?x2xf32>, %i: memref<?x2xi32>) {
  // expected-error @+1 {{logits must hold bf16, f16 or f32, got 'i32'}}
  gg.select_experts logits(%l : memref<?x8xi32>) weights(%w : memref<?x2xf32>) ids(%i : memref<?x2xi32>) {threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<8xbf16>, %w: memref<?x2xf32>, %i: memref<?x2xi32>) {
  // expected-error @+1 {{logits must be a 2-D memref with the identity layout, got 'memref<8xbf16>'}}
  gg.select_experts logits(%l : memref<8xbf16>) weights(%w : memref<?x2xf32>) ids(%i : memref<?x2xi32>) {threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x?xbf16>, %w: memref<?x2xf32>, %i: memref<?x2xi32>) {
  // expected-error @+1 {{logits' columns (the experts) must be static in [1, 1024], got ?}}
  gg.select_experts logits(%l : memref<?x?xbf16>) weights(%w : memref<?x2xf32>) ids(%i : memref<?x2xi32>) {threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x2048xbf16>, %w: memref<?x2xf32>, %i: memref<?x2xi32>) {
  // expected-error @+1 {{logits' columns (the experts) must be static in [1, 1024], got 2048}}
  gg.select_experts logits(%l : memref<?x2048xbf16>) weights(%w : memref<?x2xf32>) ids(%i : memref<?x2xi32>) {threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x8xbf16>, %w: memref<?x2xbf16>, %i: memref<?x2xi32>) {
  // expected-error @+1 {{weights must hold f32, got 'bf16'}}
  gg.select_experts logits(%l : memref<?x8xbf16>) weights(%w : memref<?x2xbf16>) ids(%i : memref<?x2xi32>) {threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x8xbf16>, %w: memref<?x2xf32>, %i: memref<?x2xi64>) {
  // expected-error @+1 {{ids must hold i32, got 'i64'}}
  gg.select_experts logits(%l : memref<?x8xbf16>) weights(%w : memref<?x2xf32>) ids(%i : memref<?x2xi64>) {threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x8xbf16>, %w: memref<?x9xf32>, %i: memref<?x9xi32>) {
  // expected-error @+1 {{weights' columns (top_k) must be static in [1, 8], got 9}}
  gg.select_experts logits(%l : memref<?x8xbf16>) weights(%w : memref<?x9xf32>) ids(%i : memref<?x9xi32>) {threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x64xbf16>, %w: memref<?x33xf32>, %i: memref<?x33xi32>) {
  // expected-error @+1 {{weights' columns (top_k) must be static in [1, 32], got 33}}
  gg.select_experts logits(%l : memref<?x64xbf16>) weights(%w : memref<?x33xf32>) ids(%i : memref<?x33xi32>) {threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x8xbf16>, %w: memref<?x2xf32>, %i: memref<?x3xi32>) {
  // expected-error @+1 {{ids must have weights' 2 columns, got 3}}
  gg.select_experts logits(%l : memref<?x8xbf16>) weights(%w : memref<?x2xf32>) ids(%i : memref<?x3xi32>) {threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<4x8xbf16>, %w: memref<4x2xf32>, %i: memref<5x2xi32>) {
  // expected-error @+1 {{ids must have a row a token, 4, got 5}}
  gg.select_experts logits(%l : memref<4x8xbf16>) weights(%w : memref<4x2xf32>) ids(%i : memref<5x2xi32>) {threads = 32 : i64}
  return
}
