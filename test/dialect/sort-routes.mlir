// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round trip of gg.sort_routes: dynamic route counts with i32 ids, and a
// static count of i64 ids.

// CHECK-LABEL: func.func @dynamic
// CHECK: gg.sort_routes ids(%{{.*}} : memref<?xi32>) weights(%{{.*}} : memref<?xf32>) chunk_counts(%{{.*}} : memref<?xi32>) offsets(%{{.*}} : memref<129xi32>) order(%{{.*}} : memref<?xi64>) source(%{{.*}} : memref<?xi32>) position(%{{.*}} : memref<?xi64>) route(%{{.*}} : memref<?xf32>) {chunk_routes = 4096 : i64, experts = 128 : i64, threads = 512 : i64, top_k = 8 : i64}
func.func @dynamic(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>,
                   %off: memref<129xi32>, %o: memref<?xi64>, %s: memref<?xi32>,
                   %p: memref<?xi64>, %r: memref<?xf32>) {
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<129xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 128 : i64, top_k = 8 : i64, chunk_routes = 4096 : i64, threads = 512 : i64}
  return
}

// CHECK-LABEL: func.func @static_i64
// CHECK: gg.sort_routes ids(%{{.*}} : memref<12xi64>)
// CHECK-SAME: {chunk_routes = 64 : i64, experts = 8 : i64, threads = 32 : i64, top_k = 2 : i64}
func.func @static_i64(%ids: memref<12xi64>, %w: memref<12xf32>, %c: memref<8xi32>,
                      %off: memref<9xi32>, %o: memref<12xi64>, %s: memref<12xi32>,
                      %p: memref<12xi64>, %r: memref<12xf32>) {
  gg.sort_routes ids(%ids : memref<12xi64>) weights(%w : memref<12xf32>)
      chunk_counts(%c : memref<8xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<12xi64>) source(%s : memref<12xi32>)
      position(%p : memref<12xi64>) route(%r : memref<12xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 64 : i64, threads = 32 : i64}
  return
}
