// RUN: ggc-opt %s -split-input-file -ggk-lower-accumulators | FileCheck %s --implicit-check-not=ggk.acc

// Before: a warpgroup's accumulator of 64 x 128 f32 laid out by 2 x 2 warps
// (warp_columns = 2: a thread holds 4 row groups of 8 column blocks, 64
// values): zeros carried through a loop, one element read and one written
// by position, the result pinned, and the thread's origin in a tile whose
// warpgroup starts at (%r0, %c0). After: an !llvm.struct of 64 f32 wherever
// the accumulator flowed (the loop's argument and result too); zeros
// inserted into an undef; row group 3, column block 5, column 1 is register
// 4 (3 / 2 * 8 + 5) + 2 (3 % 2) + 1 = 55, and row group 0, block 0, column
// 0 register 0; the pin an empty inline asm tying each register to itself;
// the origin row r0 + 32 (warp / 2) + lane / 4, column c0 + 64 (warp % 2)
// + 2 (lane % 4), the warp's first row r0 + 32 (warp / 2). The MMA
// lowerings' casts, now from a struct to itself, are gone.
// CHECK-LABEL: llvm.func @lowered
// CHECK: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<({{(f32, ){63}f32}})>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Z0:.*]] = llvm.insertvalue %[[ZERO]], %[[U]][0]
// CHECK: %[[Z:.*]] = llvm.insertvalue %[[ZERO]], %{{.*}}[63]
// CHECK: %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (!llvm.struct<(f32,
// CHECK: %[[V:.*]] = llvm.extractvalue %[[ACC]][55]
// CHECK: %[[S:.*]] = llvm.insertvalue %[[V]], %[[ACC]][0]
// CHECK: scf.yield %[[S]]
// CHECK: %[[PINNED:.*]] = llvm.inline_asm has_side_effects "", "=f,=f,{{.*}},=f,0,1,{{.*}},63"
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[T:.*]] = arith.remui %[[TID]], %c128_i32
// CHECK: %[[W:.*]] = arith.divui %[[T]], %c32_i32
// CHECK: %[[WARP:.*]] = ggk.warp_broadcast %[[W]]
// CHECK: %[[LANE:.*]] = arith.remui %[[T]], %c32_i32
// CHECK: %[[WR:.*]] = arith.divui %[[WARP]], %c2_i32
// CHECK: %[[WR32:.*]] = arith.muli %[[WR]], %c32_i32
// CHECK: %[[WARP_ROW:.*]] = arith.addi %[[R0:.*]], %[[WR32]]
// CHECK: %[[WC:.*]] = arith.remui %[[WARP]], %c2_i32
// CHECK: %[[WC64:.*]] = arith.muli %[[WC]], %c64_i32
// CHECK: %[[WARP_COL:.*]] = arith.addi %[[C0:.*]], %[[WC64]]
// CHECK: %[[L4:.*]] = arith.divui %[[LANE]], %c4_i32
// CHECK: %[[ROW:.*]] = arith.addi %[[WARP_ROW]], %[[L4]]
// CHECK: %[[LQ:.*]] = arith.remui %[[LANE]], %c4_i32
// CHECK: %[[LQ2:.*]] = arith.muli %[[LQ]], %c2_i32
// CHECK: %[[COL:.*]] = arith.addi %[[WARP_COL]], %[[LQ2]]
// CHECK: llvm.call @use(%[[ROW]], %[[COL]], %[[WARP_ROW]])
// CHECK: %[[OUT:.*]] = llvm.extractvalue %[[PINNED]][0]
// CHECK: llvm.return %[[OUT]]
!acc = !ggk.acc<64x128xf32, warp_columns = 2>
llvm.func @use(i32, i32, i32)
llvm.func @lowered(%n: i64, %r0: i32, %c0: i32) -> f32 {
  %zero = ggk.acc_zero : !acc
  %c0i = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %loop = scf.for %i = %c0i to %n step %c1 iter_args(%acc = %zero) -> (!acc) : i64 {
    %v = ggk.acc_get %acc[3, 5, 1] : !acc
    %s = ggk.acc_set %v, %acc[0, 0, 0] : !acc
    scf.yield %s : !acc
  }
  %pinned = ggk.acc_pin %loop : !acc
  %row, %col, %warp_row = ggk.acc_origin !acc at (%r0, %c0)
  llvm.call @use(%row, %col, %warp_row) : (i32, i32, i32) -> ()
  %out = ggk.acc_get %pinned[0, 0, 0] : !acc
  llvm.return %out : f32
}

// -----

// A fresh MMA's accumulator is undefined; the casts the MMA lowerings leave
// around their registers (here by hand) cast a struct to itself and go.
// CHECK-LABEL: llvm.func @undef_and_casts
// CHECK-NEXT: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[V:.*]] = llvm.extractvalue %[[U]][3]
// CHECK-NEXT: llvm.return %[[V]]
!acc8 = !ggk.acc<64x8xf32>
llvm.func @undef_and_casts() -> f32 {
  %u = ggk.acc_undef : !acc8
  %regs = builtin.unrealized_conversion_cast %u : !acc8 to !llvm.struct<(f32, f32, f32, f32)>
  %back = builtin.unrealized_conversion_cast %regs : !llvm.struct<(f32, f32, f32, f32)> to !acc8
  %v = ggk.acc_get %back[1, 0, 1] : !acc8
  llvm.return %v : f32
}
