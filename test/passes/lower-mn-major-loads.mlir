// RUN: ggc-opt %s -ggk-lower-mn-major-loads | FileCheck %s

// Before: the producer's load of a 128-row M-major bf16 tile (BK = 64) as
// two 64-row chunks 8 KB apart. After, for sm_90a: one TMA box per chunk,
// at rows row and row + 64 of the operand, into dst and dst + 8192, both
// completing on the stage's full barrier; no ggk op is left.
// CHECK-LABEL: llvm.func @load
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[MAP:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[ROW:[^:]*]]: i32)
// CHECK: %[[R0:.*]] = arith.addi %[[ROW]], %c0_i32
// CHECK: %[[D0:.*]] = llvm.getelementptr %[[DST]][%c0_i64]
// CHECK: ggk.tma_load %[[D0]], %[[MAP]][%[[R0]], %[[K]]], %[[FULL]]
// CHECK: %[[R1:.*]] = arith.addi %[[ROW]], %c64_i32
// CHECK: %[[D1:.*]] = llvm.getelementptr %[[DST]][%c8192_i64]
// CHECK: ggk.tma_load %[[D1]], %[[MAP]][%[[R1]], %[[K]]], %[[FULL]]
// CHECK-NOT: ggk.
llvm.func @load(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr, %k: i32, %row: i32) {
  ggk.load_mn_major_tile %dst, %full from(%map) at[%k, %row]
      attributes {chunks = 2, chunk_rows = 64, chunk_bytes = 8192}
  llvm.return
}
