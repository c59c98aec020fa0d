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

// -----

// gg.select_experts_backward.

func.func @bad(%w: memref<?x8xf32>, %i: memref<?x8xi32>, %g: memref<?x8xf32>, %d: memref<?x128xi32>) {
  // expected-error @+1 {{out must hold bf16, f16 or f32, got 'i32'}}
  gg.select_experts_backward weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) grad(%g : memref<?x8xf32>) out(%d : memref<?x128xi32>) {threads = 64 : i64}
  return
}

// -----

func.func @bad(%w: memref<?x8xf32>, %i: memref<?x8xi32>, %g: memref<?x8xf32>, %d: memref<?x?xbf16>) {
  // expected-error @+1 {{out's columns (the experts) must be static in [1, 1024], got ?}}
  gg.select_experts_backward weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) grad(%g : memref<?x8xf32>) out(%d : memref<?x?xbf16>) {threads = 64 : i64}
  return
}

// -----

func.func @bad(%w: memref<?x8xf32>, %i: memref<?x8xi32>, %g: memref<?x8xbf16>, %d: memref<?x128xbf16>) {
  // expected-error @+1 {{grad must hold f32, got 'bf16'}}
  gg.select_experts_backward weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) grad(%g : memref<?x8xbf16>) out(%d : memref<?x128xbf16>) {threads = 64 : i64}
  return
}

// -----

func.func @bad(%w: memref<?x8xf32>, %i: memref<?x8xi32>, %g: memref<?x4xf32>, %d: memref<?x128xbf16>) {
  // expected-error @+1 {{grad must have weights' 8 columns, got 4}}
  gg.select_experts_backward weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) grad(%g : memref<?x4xf32>) out(%d : memref<?x128xbf16>) {threads = 64 : i64}
  return
}

// -----

func.func @bad(%w: memref<?x8xf32>, %i: memref<?x8xi32>, %g: memref<?x8xf32>, %d: memref<?x4xbf16>) {
  // expected-error @+1 {{weights' columns (top_k) must be static in [1, 4], got 8}}
  gg.select_experts_backward weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) grad(%g : memref<?x8xf32>) out(%d : memref<?x4xbf16>) {threads = 64 : i64}
  return
}

// -----

func.func @bad(%w: memref<6x2xf32>, %i: memref<7x2xi32>, %g: memref<6x2xf32>, %d: memref<6x8xbf16>) {
  // expected-error @+1 {{ids must have a row a token, 6, got 7}}
  gg.select_experts_backward weights(%w : memref<6x2xf32>) ids(%i : memref<7x2xi32>) grad(%g : memref<6x2xf32>) out(%d : memref<6x8xbf16>) {threads = 64 : i64}
  return
}

// -----

// gg.select_experts' groups and bias.

func.func @bad(%l: memref<?x64xf32>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  // expected-error @+1 {{groups must divide the 64 experts and be in [1, 32], got 5}}
  gg.select_experts logits(%l : memref<?x64xf32>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {sigmoid, groups = 5 : i64, threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x64xf32>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  // expected-error @+1 {{groups must divide the 64 experts and be in [1, 32], got 64}}
  gg.select_experts logits(%l : memref<?x64xf32>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {sigmoid, groups = 64 : i64, threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x64xf32>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  // expected-error @+1 {{topk_groups must be in [1, groups = 4], got 5}}
  gg.select_experts logits(%l : memref<?x64xf32>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {sigmoid, groups = 4 : i64, topk_groups = 5 : i64, threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x64xf32>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  // expected-error @+1 {{top_k = 8 exceeds the 4 experts of the topk_groups = 1 groups kept}}
  gg.select_experts logits(%l : memref<?x64xf32>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {sigmoid, groups = 16 : i64, topk_groups = 1 : i64, threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x64xf32>, %b: memref<32xf32>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  // expected-error @+1 {{bias must hold one value an expert, 64, got 32}}
  gg.select_experts logits(%l : memref<?x64xf32>) bias(%b : memref<32xf32>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {sigmoid, threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x64xf32>, %b: memref<64xbf16>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  // expected-error @+1 {{bias must hold f32, got 'bf16'}}
  gg.select_experts logits(%l : memref<?x64xf32>) bias(%b : memref<64xbf16>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {sigmoid, threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x32xf32>, %b: memref<32xf32>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  // expected-error @+1 {{with bias a group ranks by its two best experts; 32 experts in 32 groups leave one a group}}
  gg.select_experts logits(%l : memref<?x32xf32>) bias(%b : memref<32xf32>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {sigmoid, groups = 32 : i64, threads = 32 : i64}
  return
}

// -----

func.func @bad(%l: memref<?x64xf32>, %b: memref<1x64xf32>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  // expected-error @+1 {{bias must be a 1-D memref with the identity layout, got 'memref<1x64xf32>'}}
  gg.select_experts logits(%l : memref<?x64xf32>) bias(%b : memref<1x64xf32>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {threads = 32 : i64}
  return
}
