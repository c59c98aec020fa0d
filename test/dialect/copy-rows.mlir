// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round trip of gg.copy_rows: a gather, a scatter, both, neither.

// CHECK-LABEL: func.func @gather
// CHECK: gg.copy_rows input(%{{.*}} : memref<?x2048xbf16>) input_rows(%{{.*}} : memref<?xi32>) out(%{{.*}} : memref<?x2048xbf16>) {threads = 256 : i64, unit_bytes = 16 : i64}
func.func @gather(%x: memref<?x2048xbf16>, %i: memref<?xi32>, %y: memref<?x2048xbf16>) {
  gg.copy_rows input(%x : memref<?x2048xbf16>) input_rows(%i : memref<?xi32>)
      out(%y : memref<?x2048xbf16>) {unit_bytes = 16 : i64, threads = 256 : i64}
  return
}

// CHECK-LABEL: func.func @scatter
// CHECK: gg.copy_rows input(%{{.*}} : memref<?x6xi8>) out(%{{.*}} : memref<?x6xi8>) out_rows(%{{.*}} : memref<?xi32>) {threads = 32 : i64, unit_bytes = 2 : i64}
func.func @scatter(%x: memref<?x6xi8>, %o: memref<?xi32>, %y: memref<?x6xi8>) {
  gg.copy_rows input(%x : memref<?x6xi8>) out(%y : memref<?x6xi8>)
      out_rows(%o : memref<?xi32>) {unit_bytes = 2 : i64, threads = 32 : i64}
  return
}

// CHECK-LABEL: func.func @both
// CHECK: gg.copy_rows input(%{{.*}} : memref<7x4xf32>) input_rows(%{{.*}} : memref<3xi32>) out(%{{.*}} : memref<5x4xf32>) out_rows(%{{.*}} : memref<3xi32>)
func.func @both(%x: memref<7x4xf32>, %i: memref<3xi32>, %y: memref<5x4xf32>, %o: memref<3xi32>) {
  gg.copy_rows input(%x : memref<7x4xf32>) input_rows(%i : memref<3xi32>)
      out(%y : memref<5x4xf32>) out_rows(%o : memref<3xi32>)
      {unit_bytes = 16 : i64, threads = 64 : i64}
  return
}
