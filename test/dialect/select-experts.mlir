// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round trip of gg.select_experts: dynamic and static tokens, with and
// without renormalize.

// CHECK-LABEL: func.func @dynamic
// CHECK: gg.select_experts logits(%{{.*}} : memref<?x128xbf16>) weights(%{{.*}} : memref<?x8xf32>) ids(%{{.*}} : memref<?x8xi32>) {renormalize, threads = 256 : i64}
func.func @dynamic(%l: memref<?x128xbf16>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  gg.select_experts logits(%l : memref<?x128xbf16>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {renormalize, threads = 256 : i64}
  return
}

// CHECK-LABEL: func.func @static
// CHECK: gg.select_experts logits(%{{.*}} : memref<3x8xf32>) weights(%{{.*}} : memref<3x2xf32>) ids(%{{.*}} : memref<3x2xi32>) {threads = 32 : i64}
func.func @static(%l: memref<3x8xf32>, %w: memref<3x2xf32>, %i: memref<3x2xi32>) {
  gg.select_experts logits(%l : memref<3x8xf32>) weights(%w : memref<3x2xf32>) ids(%i : memref<3x2xi32>) {threads = 32 : i64}
  return
}

// CHECK-LABEL: func.func @backward
// CHECK: gg.select_experts_backward weights(%{{.*}} : memref<?x8xf32>) ids(%{{.*}} : memref<?x8xi32>) grad(%{{.*}} : memref<?x8xf32>) out(%{{.*}} : memref<?x128xbf16>) {threads = 128 : i64}
func.func @backward(%w: memref<?x8xf32>, %i: memref<?x8xi32>, %g: memref<?x8xf32>, %d: memref<?x128xbf16>) {
  gg.select_experts_backward weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) grad(%g : memref<?x8xf32>) out(%d : memref<?x128xbf16>) {threads = 128 : i64}
  return
}

// CHECK-LABEL: func.func @grouped
// CHECK: gg.select_experts logits(%{{.*}} : memref<?x256xf32>) bias(%{{.*}} : memref<256xf32>) weights(%{{.*}} : memref<?x8xf32>) ids(%{{.*}} : memref<?x8xi32>) {groups = 8 : i64, renormalize, scaling = 2.500000e+00 : f32, sigmoid, threads = 128 : i64, topk_groups = 4 : i64}
func.func @grouped(%l: memref<?x256xf32>, %b: memref<256xf32>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  gg.select_experts logits(%l : memref<?x256xf32>) bias(%b : memref<256xf32>) weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>) {sigmoid, renormalize, groups = 8 : i64, topk_groups = 4 : i64, scaling = 2.5 : f32, threads = 128 : i64}
  return
}
