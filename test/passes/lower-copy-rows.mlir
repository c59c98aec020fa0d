// RUN: ggc-opt %s -split-input-file -gg-lower-copy-rows | FileCheck %s

// Before: a function holding gg.copy_rows, a gather of 4,096-byte rows by
// 16-byte units. After: the function is gone and one kernel takes its
// place: input, input_rows, out, then R, input's rows and out's rows. Each
// thread takes one piece of one row (a grid-stride loop over R x 256
// pieces): it reads the row's source index, and where it lies inside the
// input loads the 16 bytes and stores them at the same piece of row r.
// CHECK-NOT: func.func
// CHECK: llvm.func @gather_copy(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %[[IN_ROWS:.*]]: i64, %[[OUT_ROWS:.*]]: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: arith.cmpi slt, %{{.*}}, %[[IN_ROWS]] : i64
// CHECK: arith.cmpi slt, %{{.*}}, %[[OUT_ROWS]] : i64
// CHECK: scf.if
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
func.func @gather(%x: memref<?x2048xbf16>, %i: memref<?xi32>, %y: memref<?x2048xbf16>) {
  gg.copy_rows input(%x : memref<?x2048xbf16>) input_rows(%i : memref<?xi32>)
      out(%y : memref<?x2048xbf16>) {unit_bytes = 16 : i64, threads = 256 : i64}
  return
}

// -----

// A scatter of 6-byte rows by 2-byte units: the out list comes after out;
// each piece an i16.
// CHECK: llvm.func @scatter_copy(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> i16
// CHECK: llvm.store %{{.*}} {alignment = 2 : i64} : i16, !llvm.ptr<1>
func.func @scatter(%x: memref<?x6xi8>, %y: memref<?x6xi8>, %o: memref<?xi32>) {
  gg.copy_rows input(%x : memref<?x6xi8>) out(%y : memref<?x6xi8>)
      out_rows(%o : memref<?xi32>) {unit_bytes = 2 : i64, threads = 32 : i64}
  return
}
