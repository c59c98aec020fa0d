// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The typed accumulator and its ops print as they parse; warp_columns is
// printed when it is not 1.
// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: !ggk.acc<64x128xf32, warp_columns = 2>
// CHECK: %[[Z:.*]] = ggk.acc_zero : !ggk.acc<64x128xf32, warp_columns = 2>
// CHECK-NEXT: %{{.*}} = ggk.acc_undef : !ggk.acc<64x128xf32, warp_columns = 2>
// CHECK-NEXT: %[[V:.*]] = ggk.acc_get %[[Z]][3, 7, 1] : !ggk.acc<64x128xf32, warp_columns = 2>
// CHECK-NEXT: %[[S:.*]] = ggk.acc_set %[[V]], %[[Z]][0, 0, 0] : !ggk.acc<64x128xf32, warp_columns = 2>
// CHECK-NEXT: %{{.*}} = ggk.acc_pin %[[S]] : !ggk.acc<64x128xf32, warp_columns = 2>
// CHECK-NEXT: %row, %column, %warp_row = ggk.acc_origin !ggk.acc<64x128xf32, warp_columns = 2> at(%{{.*}}, %{{.*}})
// CHECK-LABEL: func.func @default_layout
// CHECK-SAME: !ggk.acc<64x256xf32>
!acc = !ggk.acc<64x128xf32, warp_columns = 2>
func.func @round_trip(%r0: i32, %c0: i32) -> !acc {
  %z = ggk.acc_zero : !acc
  %u = ggk.acc_undef : !acc
  %v = ggk.acc_get %z[3, 7, 1] : !acc
  %s = ggk.acc_set %v, %z[0, 0, 0] : !acc
  %p = ggk.acc_pin %s : !acc
  %row, %col, %warp_row = ggk.acc_origin !acc at (%r0, %c0)
  func.return %p : !acc
}
func.func @default_layout(%a: !ggk.acc<64x256xf32, warp_columns = 1>) {
  func.return
}

// -----

// expected-error @+1 {{!ggk.acc holds a warpgroup's 64 rows, got 128}}
func.func private @rows(%a: !ggk.acc<128x128xf32>)

// -----

// expected-error @+1 {{!ggk.acc's columns must be a multiple of 8 in [8, 256], got 12}}
func.func private @odd_columns(%a: !ggk.acc<64x12xf32>)

// -----

// expected-error @+1 {{!ggk.acc accumulates in f32, got 'f16'}}
func.func private @f16(%a: !ggk.acc<64x128xf16>)

// -----

// Warp columns take whole 16-column shares: two of 16 columns are 8 wide.
// expected-error @+1 {{!ggk.acc's warp_columns must be 1, or 2 or 4 with the columns a multiple of 16 per warp column, got 2 with 16 columns}}
func.func private @warp_columns_narrow(%a: !ggk.acc<64x16xf32, warp_columns = 2>)

// -----

// Three warp columns are no layout.
// expected-error @+1 {{!ggk.acc's warp_columns must be 1, or 2 or 4 with the columns a multiple of 16 per warp column, got 3 with 48 columns}}
func.func private @warp_columns_three(%a: !ggk.acc<64x48xf32, warp_columns = 3>)

// -----

// expected-error @+1 {{!ggk.acc takes rows x columns x element type, got 1 sizes}}
func.func private @one_size(%a: !ggk.acc<64xf32>)

// -----

// With two warp columns a thread holds four row groups, of 128 / 2 / 8 = 8
// column blocks.
func.func @column_block(%a: !ggk.acc<64x128xf32, warp_columns = 2>) {
  // expected-error @+1 {{column block 8 is outside [0, 8) for '!ggk.acc<64x128xf32, warp_columns = 2>'}}
  %v = ggk.acc_get %a[3, 8, 0] : !ggk.acc<64x128xf32, warp_columns = 2>
  func.return
}

// -----

func.func @row_group(%a: !ggk.acc<64x128xf32>, %v: f32) {
  // expected-error @+1 {{row group 2 is outside [0, 2) for '!ggk.acc<64x128xf32>'}}
  %s = ggk.acc_set %v, %a[2, 0, 0] : !ggk.acc<64x128xf32>
  func.return
}

// -----

func.func @pair_column(%a: !ggk.acc<64x128xf32>) {
  // expected-error @+1 {{column 2 is outside [0, 2) for '!ggk.acc<64x128xf32>'}}
  %v = ggk.acc_get %a[0, 0, 2] : !ggk.acc<64x128xf32>
  func.return
}

// -----

func.func @short_position(%a: !ggk.acc<64x128xf32>) {
  // expected-error @+1 {{position must be [row group, column block, column], got 2 indices}}
  %v = ggk.acc_get %a[0, 0] : !ggk.acc<64x128xf32>
  func.return
}

// -----

// expected-error @+1 {{!ggk.acc's columns must be a multiple of 8 in [8, 256], got 264}}
func.func private @wide(%a: !ggk.acc<64x264xf32>)

// -----

// Four warp columns of 32 columns are 8 wide each.
// expected-error @+1 {{!ggk.acc's warp_columns must be 1, or 2 or 4 with the columns a multiple of 16 per warp column, got 4 with 32 columns}}
func.func private @four_narrow(%a: !ggk.acc<64x32xf32, warp_columns = 4>)

// -----

func.func @negative_position(%a: !ggk.acc<64x128xf32>) {
  // expected-error @+1 {{column block -1 is outside [0, 16) for '!ggk.acc<64x128xf32>'}}
  %v = ggk.acc_get %a[0, -1, 0] : !ggk.acc<64x128xf32>
  func.return
}
