// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round trip of gg.combine_routes: i64 positions with dynamic sizes, and
// i32 positions with static ones.

// CHECK-LABEL: func.func @dynamic
// CHECK: gg.combine_routes input(%{{.*}} : memref<?x2048xbf16>) position(%{{.*}} : memref<?xi64>) out(%{{.*}} : memref<?x2048xbf16>) {threads = 256 : i64, top_k = 8 : i64}
func.func @dynamic(%y: memref<?x2048xbf16>, %p: memref<?xi64>, %o: memref<?x2048xbf16>) {
  gg.combine_routes input(%y : memref<?x2048xbf16>) position(%p : memref<?xi64>)
      out(%o : memref<?x2048xbf16>) {top_k = 8 : i64, threads = 256 : i64}
  return
}

// CHECK-LABEL: func.func @static_i32
// CHECK: gg.combine_routes input(%{{.*}} : memref<6x64xbf16>) position(%{{.*}} : memref<6xi32>) out(%{{.*}} : memref<3x64xbf16>) {threads = 32 : i64, top_k = 2 : i64}
func.func @static_i32(%y: memref<6x64xbf16>, %p: memref<6xi32>, %o: memref<3x64xbf16>) {
  gg.combine_routes input(%y : memref<6x64xbf16>) position(%p : memref<6xi32>)
      out(%o : memref<3x64xbf16>) {top_k = 2 : i64, threads = 32 : i64}
  return
}
