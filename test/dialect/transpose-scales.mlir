// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round trip of gg.transpose_scales: rows of 1x128 scales ([R, C], a
// per-token quantiser's), and a batch of them (a masked layout's).

// CHECK-LABEL: func.func @rows
// CHECK: gg.transpose_scales input(%{{.*}} : memref<?x56xf32>) out(%{{.*}} : memref<56x?xf32>)
func.func @rows(%sfa: memref<?x56xf32>, %t: memref<56x?xf32>) {
  gg.transpose_scales input(%sfa : memref<?x56xf32>) out(%t : memref<56x?xf32>)
  return
}

// CHECK-LABEL: func.func @batched
// CHECK: gg.transpose_scales input(%{{.*}} : memref<4x250x16xf32>) out(%{{.*}} : memref<4x16x252xf32>)
func.func @batched(%sfa: memref<4x250x16xf32>, %t: memref<4x16x252xf32>) {
  gg.transpose_scales input(%sfa : memref<4x250x16xf32>) out(%t : memref<4x16x252xf32>)
  return
}
