// RUN: ggc-opt %s -gg-lower-combine-routes | FileCheck %s

// Before: a function holding gg.combine_routes, top_k = 2. After: the
// function is gone and one kernel takes its place: input, position, out,
// then T and M. Each thread takes 8 columns of one token (a grid-stride
// loop): it reads both slots' positions, issues both 16-byte loads, adds
// them in slot order in f32 and stores the sums rounded to bf16 as 16
// bytes.
// CHECK-NOT: func.func
// CHECK: llvm.func @combine_combine(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-COUNT-8: arith.addf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
func.func @combine(%y: memref<?x64xbf16>, %p: memref<?xi64>, %o: memref<?x64xbf16>) {
  gg.combine_routes input(%y : memref<?x64xbf16>) position(%p : memref<?xi64>)
      out(%o : memref<?x64xbf16>) {top_k = 2 : i64, threads = 256 : i64}
  return
}
