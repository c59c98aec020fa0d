// RUN: ggc-opt %s -gg-lower-sort-routes | FileCheck %s

// Before: a function holding gg.sort_routes over 8 experts, 2 routes a
// token, chunks of 64 routes on 32 threads. After: the function is gone;
// a count kernel and a place kernel take its place, each with its static
// shared memory (the place kernel's: one warp's table, three arrays of
// the experts and two of the threads: 4 * (8 + 24 + 64) bytes).

// CHECK-DAG: llvm.mlir.global internal @routes_place_shared() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<96 x i32>
// CHECK-DAG: llvm.mlir.global internal @routes_count_hist() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<8 x i32>
// CHECK-NOT: func.func
// CHECK-NOT: gg.sort_routes

// The count kernel: a histogram of its chunk's clamped experts, added
// atomically in shared memory (integers: the same sum in any order),
// written to chunk_counts[chunk * 8 + e]. A thread's two routes (64 on 32
// threads) are read first, so that their loads overlap.
// CHECK: llvm.func @routes_count(%{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1>)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>
// CHECK: ggk.thread_index
// CHECK: ggk.block_index
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: ggk.sync_cta
// CHECK-COUNT-2: llvm.atomicrmw add %{{.*}} monotonic : !llvm.ptr<3>, i32
// CHECK: ggk.sync_cta
// CHECK: llvm.store %{{.*}} : i32, !llvm.ptr<1>
// CHECK: llvm.return

// The place kernel: ids, weights, M, chunks, chunk_counts, then offsets,
// order, source, position, route.
// CHECK: llvm.func @routes_place(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>)
// Its routes and their weights read first, then, with one chunk, it
// counts its own routes; with more, it sums chunk_counts.
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: scf.if
// CHECK: llvm.atomicrmw add
// CHECK: } else {
// CHECK: scf.for {{.*}} iter_args
// The scan over the experts' totals: log2(8) = 3 steps, two barriers each.
// CHECK-COUNT-7: ggk.sync_cta
// Each of the two rounds: lanes of one expert find one another (match.any) and count
// the lanes below; the table gives the warps before; the NaN poisons an
// invalid id's weight; the leader adds its lanes to the expert's running
// count after the round.
// CHECK: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: ggk.warp_match_any %{{.*}}
// CHECK: ggk.lanes_below
// CHECK: llvm.intr.ctpop
// CHECK: ggk.sync_cta
// CHECK: arith.select %{{.*}}, %[[NAN]], %{{.*}} : f32
// CHECK: ggk.sync_cta
// CHECK: llvm.atomicrmw add %{{.*}} monotonic : !llvm.ptr<3>, i32
// CHECK: ggk.warp_sync
// CHECK: ggk.warp_match_any
// CHECK: ggk.warp_sync
// CHECK-NEXT: llvm.return
func.func @routes(%ids: memref<?xi64>, %w: memref<?xf32>, %c: memref<?xi32>,
                  %off: memref<9xi32>, %o: memref<?xi64>, %s: memref<?xi32>,
                  %p: memref<?xi64>, %r: memref<?xf32>) {
  gg.sort_routes ids(%ids : memref<?xi64>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 64 : i64, threads = 32 : i64}
  return
}
