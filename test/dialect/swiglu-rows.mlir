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
