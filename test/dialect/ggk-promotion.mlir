// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// A promotion by block scales, one by per-column scales, and a decode
// print as they parse.
// CHECK-LABEL: func.func @round_trip
// CHECK: ggk.promote %{{.*}} into %{{.*}} rows(%{{.*}}, %{{.*}}) blocks(%{{.*}}, %{{.*}}) at(%{{.*}}, %{{.*}}, %{{.*}}) {block_n = 192 : i64} : !ggk.acc<64x192xf32>
// CHECK: ggk.promote %{{.*}} into %{{.*}} rows(%{{.*}}, %{{.*}}) columns(%{{.*}}) at(%{{.*}}, %{{.*}}, %{{.*}}) {block_n = 128 : i64} : !ggk.acc<64x128xf32>
// CHECK: ggk.decode_ue8m0 %{{.*}}[%{{.*}}]
func.func @round_trip(%acc: !ggk.acc<64x192xf32>, %part: !ggk.acc<64x192xf32>,
                      %acc2: !ggk.acc<64x128xf32>, %part2: !ggk.acc<64x128xf32>,
                      %s: f32, %table: !llvm.ptr<3>, %x: i32) {
  %0 = ggk.promote %part into %acc rows(%s, %s) blocks(%s, %s) at(%x, %x, %x)
      {block_n = 192} : !ggk.acc<64x192xf32>
  %1 = ggk.promote %part2 into %acc2 rows(%s, %s) columns(%table) at(%x, %x, %x)
      {block_n = 128} : !ggk.acc<64x128xf32>
  %2 = ggk.decode_ue8m0 %x[%x]
  func.return
}

// -----

func.func @one_a_scale(%acc: !ggk.acc<64x128xf32>, %s: f32, %x: i32) {
  // expected-error @+1 {{takes A's two scales (one per row group of the thread), got 1}}
  %0 = ggk.promote %acc into %acc rows(%s) blocks(%s) at(%x, %x, %x)
      {block_n = 128} : !ggk.acc<64x128xf32>
  func.return
}

// -----

func.func @warp_columns(%acc: !ggk.acc<64x128xf32, warp_columns = 2>, %s: f32, %x: i32) {
  // expected-error @+1 {{promotes wgmma's fragment (warp_columns = 1), whose two row groups A's scales follow; got warp_columns = 2}}
  %0 = ggk.promote %acc into %acc rows(%s, %s) blocks(%s) at(%x, %x, %x)
      {block_n = 128} : !ggk.acc<64x128xf32, warp_columns = 2>
  func.return
}

// -----

func.func @both_kinds_of_b(%acc: !ggk.acc<64x128xf32>, %s: f32, %t: !llvm.ptr<3>, %x: i32) {
  // expected-error @+1 {{takes B's scales per column or per block, not both: 'blocks' must be empty with 'columns', got 1}}
  %0 = ggk.promote %acc into %acc rows(%s, %s) blocks(%s) columns(%t) at(%x, %x, %x)
      {block_n = 128} : !ggk.acc<64x128xf32>
  func.return
}

// -----

func.func @no_b_scale(%acc: !ggk.acc<64x128xf32>, %s: f32, %x: i32) {
  // expected-error @+1 {{takes 1 or 2 of B's block scales (the first 128 columns' and, when a block boundary falls inside the columns, the next), got 0}}
  %0 = ggk.promote %acc into %acc rows(%s, %s) at(%x, %x, %x)
      {block_n = 128} : !ggk.acc<64x128xf32>
  func.return
}

// -----

func.func @second_block_unused(%acc: !ggk.acc<64x128xf32>, %s: f32, %x: i32) {
  // expected-error @+1 {{has 2 of B's block scales, but its 128 columns lie in one 128-column block}}
  %0 = ggk.promote %acc into %acc rows(%s, %s) blocks(%s, %s) at(%x, %x, %x)
      {block_n = 128} : !ggk.acc<64x128xf32>
  func.return
}

// -----

func.func @halves_one_block(%acc: !ggk.acc<64x128xf32>, %s: f32, %x: i32) {
  // expected-error @+1 {{with column_halves takes B's two block scales, one per half of the columns, got 1}}
  %0 = ggk.promote %acc into %acc rows(%s, %s) blocks(%s) at(%x, %x, %x)
      {block_n = 128, column_halves} : !ggk.acc<64x128xf32>
  func.return
}

// -----

func.func @block_n(%acc: !ggk.acc<64x128xf32>, %s: f32, %x: i32) {
  // expected-error @+1 {{block_n must be positive, got 0}}
  %0 = ggk.promote %acc into %acc rows(%s, %s) blocks(%s) at(%x, %x, %x)
      {block_n = 0} : !ggk.acc<64x128xf32>
  func.return
}

// -----

// Per-column scales read ahead (ggk.load_column_scales: two per 8-column
// block) and promoted from registers (per_column) print as they parse.
// CHECK-LABEL: func.func @per_column
// CHECK: %[[S:.*]]:4 = ggk.load_column_scales %{{.*}} at(%{{.*}}) {columns = 16 : i64} : f32, f32, f32, f32
// CHECK: ggk.promote %{{.*}} into %{{.*}} rows(%{{.*}}, %{{.*}}) blocks(%[[S]]#0, %[[S]]#1, %[[S]]#2, %[[S]]#3) at(%{{.*}}, %{{.*}}, %{{.*}}) {block_n = 16 : i64, per_column} : !ggk.acc<64x16xf32>
func.func @per_column(%acc: !ggk.acc<64x16xf32>, %part: !ggk.acc<64x16xf32>, %s: f32,
                      %table: !llvm.ptr<3>, %x: i32) {
  %c:4 = ggk.load_column_scales %table at(%x) {columns = 16} : f32, f32, f32, f32
  %0 = ggk.promote %part into %acc rows(%s, %s) blocks(%c#0, %c#1, %c#2, %c#3) at(%x, %x, %x)
      {block_n = 16, per_column} : !ggk.acc<64x16xf32>
  func.return
}

// -----

func.func @per_column_count(%acc: !ggk.acc<64x16xf32>, %s: f32, %x: i32) {
  // expected-error @+1 {{with per_column takes B's scales of the thread's columns, two per 8-column block: 4 of 16 columns and no 'columns' table, got 2}}
  %0 = ggk.promote %acc into %acc rows(%s, %s) blocks(%s, %s) at(%x, %x, %x)
      {block_n = 16, per_column} : !ggk.acc<64x16xf32>
  func.return
}

// -----

func.func @load_column_scales_count(%table: !llvm.ptr<3>, %x: i32) {
  // expected-error @+1 {{gives two scales per 8-column block: 4 for 16 columns, got 2}}
  %c:2 = ggk.load_column_scales %table at(%x) {columns = 16} : f32, f32
  func.return
}

// -----

func.func @load_column_scales_columns(%table: !llvm.ptr<3>, %x: i32) {
  // expected-error @+1 {{columns must be a positive multiple of 8 (whole 8-column blocks), got 12}}
  %c:3 = ggk.load_column_scales %table at(%x) {columns = 12} : f32, f32, f32
  func.return
}
