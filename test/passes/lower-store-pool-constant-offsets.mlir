// RUN: ggc-opt %s -split-input-file -ggk-lower-store-pool=constant-offsets=true -canonicalize | FileCheck %s
// RUN: ggc-opt %s -split-input-file -ggk-lower-store-pool -canonicalize | FileCheck %s --check-prefix=PLAIN

// Before: a thread's pair of a 16 x 128 bf16 tile, 128B-swizzled (two
// chunks of 64 columns), at row %row + 8 and column %col + 72, as the
// epilogue builds a fragment's places.
// After, with constant-offsets: the place of row %row and column %col + 8
// (the 8 rows are one swizzle period, 64 of the 72 columns one chunk), then
// the period's 8 x 128 bytes and the chunk's 16 x 128 as one constant, 3072.
// Without: one address of row %row + 8 and column %col + 72.
// CHECK-LABEL: llvm.func @swizzled
// CHECK-SAME: (%[[TILE:arg0]]: !llvm.ptr<3>, %[[PAIR:arg1]]: vector<2xbf16>, %[[ROW:arg2]]: i32, %[[COL:arg3]]: i32)
// CHECK: %[[COL8:.*]] = arith.addi %[[COL]], %c8_i32
// CHECK: %[[BYTE:.*]] = arith.muli %[[COL8]], %c2_i32
// CHECK: %[[ROW8:.*]] = arith.remui %[[ROW]], %c8_i32
// CHECK: arith.muli %[[ROW]], %c128_i32
// CHECK: %[[PLACE:.*]] = llvm.getelementptr %[[TILE]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[PLACE]][3072] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: llvm.store %[[PAIR]], %[[AT]] : vector<2xbf16>, !llvm.ptr<3>
// PLAIN-LABEL: llvm.func @swizzled
// PLAIN: %[[ROW:.*]] = arith.addi %arg2, %c8_i32
// PLAIN: %[[COL:.*]] = arith.addi %arg3, %c72_i32
// PLAIN: arith.muli %[[COL]], %c2_i32
// PLAIN-NOT: 3072
// PLAIN: llvm.store
llvm.func @swizzled(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>, %row: i32,
                    %col: i32) {
  %c8 = arith.constant 8 : i32
  %c72 = arith.constant 72 : i32
  %r = arith.addi %row, %c8 : i32
  %c = arith.addi %col, %c72 : i32
  ggk.stage_output %pair, %tile[%r, %c] attributes {swizzle = 128,
      tile_shape = array<i64: 16, 128>} : vector<2xbf16>
  llvm.return
}

// -----

// A slice's column (the pair's column less the slice's first, 128) peels
// to a negative constant: -120 columns are -2 chunks (-2 x 16 x 128 bytes)
// and 8 columns into the next, so the place is at %col + 8 and the
// constant -4096.
// CHECK-LABEL: llvm.func @slice
// CHECK: arith.addi %arg3, %c8_i32
// CHECK: llvm.getelementptr %{{.*}}[-4096] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
llvm.func @slice(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>, %row: i32,
                 %col: i32) {
  %c8 = arith.constant 8 : i32
  %c128 = arith.constant 128 : i32
  %in_block = arith.addi %col, %c8 : i32
  %c = arith.subi %in_block, %c128 : i32
  ggk.stage_output %pair, %tile[%row, %c] attributes {swizzle = 128,
      tile_shape = array<i64: 16, 128>} : vector<2xbf16>
  llvm.return
}

// -----

// Dense staging: every constant leaves the place, (3 x 48 + 6) x 4 bytes
// of f32.
// CHECK-LABEL: llvm.func @dense
// CHECK: %[[ROWS:.*]] = arith.muli %arg2, %c48_i32
// CHECK: arith.addi %[[ROWS]], %arg3
// CHECK: llvm.getelementptr %{{.*}}[600] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
llvm.func @dense(%tile: !llvm.ptr<3>, %pair: vector<2xf32>, %row: i32,
                 %col: i32) {
  %c3 = arith.constant 3 : i32
  %c6 = arith.constant 6 : i32
  %r = arith.addi %row, %c3 : i32
  %c = arith.addi %col, %c6 : i32
  ggk.stage_output %pair, %tile[%r, %c] attributes {tile_shape = array<i64: 8, 48>} : vector<2xf32>
  llvm.return
}
