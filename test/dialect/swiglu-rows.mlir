// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round trip of gg.swiglu_rows: dynamic and static rows.

// CHECK-LABEL: func.func @dynamic
// CHECK: gg.swiglu_rows input(%{{.*}} : memref<?x1536xbf16>) out(%{{.*}} : memref<?x768xbf16>) {threads = 256 : i64}
func.func @dynamic(%h: memref<?x1536xbf16>, %a: memref<?x768xbf16>) {
  gg.swiglu_rows input(%h : memref<?x1536xbf16>) out(%a : memref<?x768xbf16>) {threads = 256 : i64}
  return
}

// CHECK-LABEL: func.func @static
// CHECK: gg.swiglu_rows input(%{{.*}} : memref<5x16xbf16>) out(%{{.*}} : memref<5x8xbf16>) {threads = 32 : i64}
func.func @static(%h: memref<5x16xbf16>, %a: memref<5x8xbf16>) {
  gg.swiglu_rows input(%h : memref<5x16xbf16>) out(%a : memref<5x8xbf16>) {threads = 32 : i64}
  return
}

// The routed forms: a routing weight a row; the backward with the
// weight's gradient.
// CHECK-LABEL: func.func @routed
// CHECK: gg.swiglu_rows input(%{{.*}} : memref<?x1536xbf16>) route(%{{.*}} : memref<?xf32>) out(%{{.*}} : memref<?x768xbf16>) {threads = 256 : i64}
func.func @routed(%h: memref<?x1536xbf16>, %r: memref<?xf32>, %a: memref<?x768xbf16>) {
  gg.swiglu_rows input(%h : memref<?x1536xbf16>) route(%r : memref<?xf32>)
      out(%a : memref<?x768xbf16>) {threads = 256 : i64}
  return
}

// CHECK-LABEL: func.func @routed_backward
// CHECK: gg.swiglu_rows_backward input(%{{.*}} : memref<4x128xbf16>) grad(%{{.*}} : memref<4x64xbf16>) route(%{{.*}} : memref<4xf32>) out(%{{.*}} : memref<4x128xbf16>) route_grad(%{{.*}} : memref<?xf32>) {threads = 128 : i64}
func.func @routed_backward(%h: memref<4x128xbf16>, %d: memref<4x64xbf16>, %r: memref<4xf32>,
                           %dh: memref<4x128xbf16>, %dr: memref<?xf32>) {
  gg.swiglu_rows_backward input(%h : memref<4x128xbf16>) grad(%d : memref<4x64xbf16>)
      route(%r : memref<4xf32>) out(%dh : memref<4x128xbf16>) route_grad(%dr : memref<?xf32>)
      {threads = 128 : i64}
  return
}

// CHECK-LABEL: func.func @quantized_backward
// CHECK: route_grad(%{{.*}} : memref<?xf32>) quantized(%{{.*}} : memref<?x256xf8E4M3FN>) quantized_scales(%{{.*}} : memref<2x?xf32>) {threads = 256 : i64}
func.func @quantized_backward(%h: memref<?x256xbf16>, %d: memref<?x128xbf16>, %r: memref<?xf32>,
                              %dh: memref<?x256xbf16>, %dr: memref<?xf32>,
                              %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  gg.swiglu_rows_backward input(%h : memref<?x256xbf16>) grad(%d : memref<?x128xbf16>)
      route(%r : memref<?xf32>) out(%dh : memref<?x256xbf16>) route_grad(%dr : memref<?xf32>)
      quantized(%q : memref<?x256xf8E4M3FN>) quantized_scales(%s : memref<2x?xf32>)
      {threads = 256 : i64}
  return
}
