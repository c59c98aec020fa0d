// RUN: ggc-opt %s -ggk-lower-store-pool=matrix-stores=true -canonicalize | FileCheck %s
// RUN: ggc-opt %s -ggk-lower-store-pool -canonicalize | FileCheck %s --check-prefix=PLAIN

// Before: four staged pairs of a thread's accumulator fragments, rows %row
// and %row + 8 of column blocks 2 and 3 (columns %col + 16 and %col + 24),
// and one of block 0 alone, in a 16 x 64 bf16 tile (128B swizzle).
// After, with matrix-stores: the lone pair as a store of its own, then, where
// the last of the four was, one stmatrix.x4 of the four pairs as words in
// fragment order [0, 2], [1, 2], [0, 3], [1, 3]; lane l addresses row l % 8
// of matrix l / 8: row %row - lane / 4 + l % 8 + 8 (l / 8 % 2), column
// %col - 2 (lane % 4) + 8 (l / 16) + 16.
// Without: five shared stores.
// CHECK-LABEL: llvm.func @fragment
// CHECK-SAME: (%[[TILE:arg0]]: !llvm.ptr<3>, %[[P0:arg1]]: vector<2xbf16>, %[[P1:arg2]]: vector<2xbf16>, %[[P2:arg3]]: vector<2xbf16>, %[[P3:arg4]]: vector<2xbf16>, %[[LONE:arg5]]: vector<2xbf16>, %[[ROW:arg6]]: i32, %[[COL:arg7]]: i32)
// CHECK: llvm.store %[[LONE]]
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32_i32
// CHECK: %[[MATRIX:.*]] = arith.divui %[[LANE]], %c8_i32
// CHECK: %[[ODD:.*]] = arith.remui %[[MATRIX]], %c2_i32
// CHECK: %[[PLUS8:.*]] = arith.muli %[[ODD]], %c8_i32
// CHECK: %[[IN:.*]] = arith.remui %[[LANE]], %c8_i32
// CHECK: %[[DOWN:.*]] = arith.addi %[[IN]], %[[PLUS8]]
// CHECK: %[[QUAD:.*]] = arith.divui %[[LANE]], %c4_i32
// CHECK: %[[FIRST:.*]] = arith.subi %[[ROW]], %[[QUAD]]
// CHECK: %[[LANE_ROW:.*]] = arith.addi %[[FIRST]], %[[DOWN]]
// CHECK: %[[HALF:.*]] = arith.divui %[[MATRIX]], %c2_i32
// CHECK: %[[RIGHT:.*]] = arith.muli %[[HALF]], %c8_i32
// CHECK: %[[PAIR_IN_QUAD:.*]] = arith.remui %[[LANE]], %c4_i32
// CHECK: %[[TWICE:.*]] = arith.muli %[[PAIR_IN_QUAD]], %c2_i32
// CHECK: %[[FIRST_COL:.*]] = arith.subi %[[COL]], %[[TWICE]]
// CHECK: %[[LANE_COL:.*]] = arith.addi %[[FIRST_COL]], %[[RIGHT]]
// CHECK: arith.addi %[[LANE_COL]], %c16_i32
// CHECK: arith.remui %[[LANE_ROW]], %c8_i32
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[TILE]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: %[[W0:.*]] = llvm.bitcast %[[P0]] : vector<2xbf16> to i32
// CHECK: %[[W1:.*]] = llvm.bitcast %[[P1]] : vector<2xbf16> to i32
// CHECK: %[[W2:.*]] = llvm.bitcast %[[P2]] : vector<2xbf16> to i32
// CHECK: %[[W3:.*]] = llvm.bitcast %[[P3]] : vector<2xbf16> to i32
// CHECK: nvvm.stmatrix %[[AT]], %[[W0]], %[[W1]], %[[W2]], %[[W3]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK-NOT: llvm.store
// CHECK: llvm.return
// PLAIN-LABEL: llvm.func @fragment
// PLAIN-COUNT-5: llvm.store
// PLAIN-NOT: nvvm.stmatrix
llvm.func @fragment(%tile: !llvm.ptr<3>, %p0: vector<2xbf16>, %p1: vector<2xbf16>,
                    %p2: vector<2xbf16>, %p3: vector<2xbf16>, %lone: vector<2xbf16>,
                    %row: i32, %col: i32) {
  %c8 = arith.constant 8 : i32
  %c16 = arith.constant 16 : i32
  %c24 = arith.constant 24 : i32
  %r8 = arith.addi %row, %c8 : i32
  %c_16 = arith.addi %col, %c16 : i32
  %c_24 = arith.addi %col, %c24 : i32
  ggk.stage_output %p0, %tile[%row, %c_16] attributes {swizzle = 128,
      tile_shape = array<i64: 16, 64>, fragment = array<i64: 0, 2>} : vector<2xbf16>
  ggk.stage_output %p1, %tile[%r8, %c_16] attributes {swizzle = 128,
      tile_shape = array<i64: 16, 64>, fragment = array<i64: 1, 2>} : vector<2xbf16>
  ggk.stage_output %lone, %tile[%row, %col] attributes {swizzle = 128,
      tile_shape = array<i64: 16, 64>, fragment = array<i64: 0, 0>} : vector<2xbf16>
  ggk.stage_output %p2, %tile[%row, %c_24] attributes {swizzle = 128,
      tile_shape = array<i64: 16, 64>, fragment = array<i64: 0, 3>} : vector<2xbf16>
  ggk.stage_output %p3, %tile[%r8, %c_24] attributes {swizzle = 128,
      tile_shape = array<i64: 16, 64>, fragment = array<i64: 1, 3>} : vector<2xbf16>
  llvm.return
}
