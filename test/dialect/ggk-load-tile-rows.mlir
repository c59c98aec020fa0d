// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.load_tile_rows prints as it parses, with or without a group.
// CHECK-LABEL: llvm.func @rows
// CHECK: ggk.load_tile_rows %{{.*}}, %{{.*}} from(%{{.*}}, %{{.*}}, %{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}] valid(%{{.*}}) attributes {box_rows = array<i64: 64, 32, 16>, granule = 16 : i64, other_bytes = 16384 : i64, row_bytes = 128 : i64, tile_rows = 64 : i64}
// CHECK: ggk.load_tile_rows %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}] valid(%{{.*}}) attributes {box_rows = array<i64: 192>, granule = 192 : i64
llvm.func @rows(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a64: !llvm.ptr,
    %a32: !llvm.ptr, %a16: !llvm.ptr, %k: i32, %row: i32, %group: i32,
    %valid: i32) {
  ggk.load_tile_rows %dst, %full from(%a64, %a32, %a16)
      at[%k, %row, %group] valid(%valid) attributes {tile_rows = 64,
      row_bytes = 128, other_bytes = 16384, granule = 16,
      box_rows = array<i64: 64, 32, 16>}
  ggk.load_tile_rows %dst, %full from(%a64) at[%k, %row] valid(%valid)
      attributes {tile_rows = 192, row_bytes = 128, other_bytes = 0,
      granule = 192, box_rows = array<i64: 192>}
  llvm.return
}

// -----

// Without TMA, the one source is the operand's address, `extents` its
// sizes (K, rows, then the groups with a group) and `element_bytes` the
// width of its elements.
// CHECK-LABEL: llvm.func @extents
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr<3>, %{{[^:]*}}: !llvm.ptr<3>, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[KS:[^:]*]]: i32, %[[ROWS:[^:]*]]: i32, %[[GS:[^:]*]]: i32)
// CHECK: ggk.load_tile_rows %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}] valid(%{{.*}}) extents(%[[KS]], %[[ROWS]], %[[GS]]) attributes {box_rows = array<i64: 64>, element_bytes = 2 : i64, granule = 64 : i64
// CHECK: ggk.load_tile_rows %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}] valid(%{{.*}}) extents(%[[KS]], %[[ROWS]]) attributes {box_rows = array<i64: 128>, element_bytes = 1 : i64
llvm.func @extents(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %group: i32, %valid: i32, %ks: i32, %rows: i32,
    %gs: i32) {
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row, %group] valid(%valid)
      extents(%ks, %rows, %gs) attributes {tile_rows = 64, row_bytes = 128,
      other_bytes = 16384, granule = 64, box_rows = array<i64: 64>,
      element_bytes = 2}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      extents(%ks, %rows) attributes {tile_rows = 128, row_bytes = 128,
      other_bytes = 0, granule = 128, box_rows = array<i64: 128>,
      element_bytes = 1}
  llvm.return
}

// -----

// Without a group the operand is 2-D: two extents.
llvm.func @extents_count(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>,
    %a: !llvm.ptr, %k: i32, %row: i32, %valid: i32, %ks: i32, %rows: i32,
    %gs: i32) {
  // expected-error @+1 {{takes the operand's 2 extents (innermost first) or none, got 3}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      extents(%ks, %rows, %gs) attributes {tile_rows = 128, row_bytes = 128,
      other_bytes = 0, granule = 128, box_rows = array<i64: 128>,
      element_bytes = 2}
  llvm.return
}

// -----

// A tile that is no power of two: its partial boxes start at the largest
// power of two below it.
// CHECK-LABEL: llvm.func @odd_tile
llvm.func @odd_tile(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a192: !llvm.ptr,
    %a128: !llvm.ptr, %a64: !llvm.ptr, %k: i32, %row: i32, %valid: i32) {
  ggk.load_tile_rows %dst, %full from(%a192, %a128, %a64) at[%k, %row]
      valid(%valid) attributes {tile_rows = 192, row_bytes = 128,
      other_bytes = 0, granule = 64, box_rows = array<i64: 192, 128, 64>}
  llvm.return
}

// -----

llvm.func @maps_count(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{takes one tensor map per box height, 3, got 1}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 64, row_bytes = 128, other_bytes = 0,
      granule = 16, box_rows = array<i64: 64, 32, 16>}
  llvm.return
}

// -----

llvm.func @first_box(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %b: !llvm.ptr, %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{box_rows must start with the whole tile's 128 rows}}
  ggk.load_tile_rows %dst, %full from(%a, %b) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 0,
      granule = 32, box_rows = array<i64: 64, 32>}
  llvm.return
}

// -----

llvm.func @one_box_granule(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>,
    %a: !llvm.ptr, %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{loads whole tiles with one box: granule must be tile_rows = 128, got 8}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 0,
      granule = 8, box_rows = array<i64: 128>}
  llvm.return
}

// -----

llvm.func @granule_not_power_of_two(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>,
    %a: !llvm.ptr, %b: !llvm.ptr, %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{granule must be a power of two below tile_rows = 128, got 48}}
  ggk.load_tile_rows %dst, %full from(%a, %b) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 0,
      granule = 48, box_rows = array<i64: 128, 64>}
  llvm.return
}

// -----

llvm.func @missing_box(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %b: !llvm.ptr, %c: !llvm.ptr, %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{box_rows must be the whole tile, then the powers of two from the largest below it down to the granule: [128, 64, 32, 16]}}
  ggk.load_tile_rows %dst, %full from(%a, %b, %c) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 0,
      granule = 16, box_rows = array<i64: 128, 64, 16>}
  llvm.return
}

// -----

llvm.func @row_bytes(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{needs positive tile_rows and row_bytes and a non-negative other_bytes}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 0, other_bytes = 0,
      granule = 128, box_rows = array<i64: 128>}
  llvm.return
}

// -----

llvm.func @too_many_bytes(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>,
    %a: !llvm.ptr, %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{arms its barrier with tile_rows * row_bytes + other_bytes bytes, which must be below 2^20 (an mbarrier's transaction count)}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 1032192,
      granule = 128, box_rows = array<i64: 128>}
  llvm.return
}

// -----

// The tile lies in shared memory (address space 3).
// expected-note @+1 {{prior use here}}
llvm.func @global_destination(%full: !llvm.ptr<3>, %dst: !llvm.ptr<1>,
    %a: !llvm.ptr, %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{use of value '%dst' expects different type than prior uses: '!llvm.ptr<3>' vs '!llvm.ptr<1>'}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 0,
      granule = 128, box_rows = array<i64: 128>}
  llvm.return
}

// -----

// A row-index list (gather) prints as it parses, after the extents.
// CHECK-LABEL: llvm.func @gathered
// CHECK: ggk.load_tile_rows %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}] valid(%{{.*}}) extents(%{{.*}}, %{{.*}}) gather(%{{.*}}) attributes
llvm.func @gathered(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %entry: i32, %valid: i32, %ks: i32, %rows: i32,
    %ids: !llvm.ptr<1>) {
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %entry] valid(%valid)
      extents(%ks, %rows) gather(%ids) attributes {tile_rows = 64,
      row_bytes = 128, other_bytes = 0, granule = 64,
      box_rows = array<i64: 64>, element_bytes = 2}
  llvm.return
}

// -----

// TMA's boxes load consecutive rows: a gather needs the address form.
llvm.func @gathered_by_tma(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>,
    %map: !llvm.ptr, %k: i32, %entry: i32, %valid: i32, %ids: !llvm.ptr<1>) {
  // expected-error @+1 {{gathers rows by index only from the operand's address (extents): TMA boxes load consecutive rows}}
  ggk.load_tile_rows %dst, %full from(%map) at[%k, %entry] valid(%valid)
      gather(%ids) attributes {tile_rows = 64, row_bytes = 128,
      other_bytes = 0, granule = 64, box_rows = array<i64: 64>}
  llvm.return
}

// -----

llvm.func @copy_threads(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32, %ks: i32, %rows: i32) {
  // expected-error @+1 {{copy_threads must be whole warpgroups (a multiple of 128 up to 1024), got 48}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      extents(%ks, %rows) attributes {tile_rows = 64, row_bytes = 128,
      other_bytes = 0, granule = 64, box_rows = array<i64: 64>,
      element_bytes = 2, copy_threads = 48}
  llvm.return
}

// -----

llvm.func @copy_threads_by_tma(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>,
    %a: !llvm.ptr, %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{takes copy_threads only for copies by address (extents); TMA's loads are one thread's}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 64, row_bytes = 128, other_bytes = 0,
      granule = 64, box_rows = array<i64: 64>, copy_threads = 256}
  llvm.return
}
