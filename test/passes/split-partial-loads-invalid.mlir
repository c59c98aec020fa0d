// RUN: ggc-opt %s -ggk-split-partial-loads -verify-diagnostics

// TMA loads boxes of consecutive rows: a gather by index is
// ggk-lower-loads-cp-async's.
llvm.func @gathered(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %entry: i32, %valid: i32, %ks: i32, %rows: i32,
    %ids: !llvm.ptr<1>) {
  // expected-error @+1 {{gathers rows by index, which TMA's boxes cannot: lower it with ggk-lower-loads-cp-async}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %entry] valid(%valid)
      extents(%ks, %rows) gather(%ids) attributes {tile_rows = 64,
      row_bytes = 128, other_bytes = 0, granule = 64,
      box_rows = array<i64: 64>, element_bytes = 2}
  llvm.return
}
