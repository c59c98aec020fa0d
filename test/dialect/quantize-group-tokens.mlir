// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round trip of gg.quantize_group_tokens: dynamic tokens and groups, and
// static sizes.

// CHECK-LABEL: func.func @dynamic
// CHECK: gg.quantize_group_tokens input(%{{.*}} : memref<?x2048xbf16>) groups(%{{.*}} : memref<?xi32>) out(%{{.*}} : memref<2048x?xf8E4M3FN>) scales(%{{.*}} : memref<?x2048xf32>) padded_groups(%{{.*}} : memref<?xi32>)
func.func @dynamic(%x: memref<?x2048xbf16>, %o: memref<?xi32>, %q: memref<2048x?xf8E4M3FN>,
                   %s: memref<?x2048xf32>, %p: memref<?xi32>) {
  gg.quantize_group_tokens input(%x : memref<?x2048xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<2048x?xf8E4M3FN>) scales(%s : memref<?x2048xf32>)
      padded_groups(%p : memref<?xi32>)
  return
}

// CHECK-LABEL: func.func @static
// CHECK: gg.quantize_group_tokens input(%{{.*}} : memref<300x48xbf16>) groups(%{{.*}} : memref<5xi32>) out(%{{.*}} : memref<48x896xf8E4M3FN>) scales(%{{.*}} : memref<7x48xf32>) padded_groups(%{{.*}} : memref<5xi32>)
func.func @static(%x: memref<300x48xbf16>, %o: memref<5xi32>, %q: memref<48x896xf8E4M3FN>,
                  %s: memref<7x48xf32>, %p: memref<5xi32>) {
  gg.quantize_group_tokens input(%x : memref<300x48xbf16>) groups(%o : memref<5xi32>)
      out(%q : memref<48x896xf8E4M3FN>) scales(%s : memref<7x48xf32>)
      padded_groups(%p : memref<5xi32>)
  return
}
