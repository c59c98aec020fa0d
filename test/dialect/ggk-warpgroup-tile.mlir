// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.warpgroup_tile prints as it parses.
// CHECK-LABEL: llvm.func @round_trip
// CHECK: ggk.warpgroup_tile first_row(%{{.*}}) rows(%{{.*}}) when(%{{.*}}) attributes {padding = #gg.padding<idle_warpgroups = skip>} -> f32, i32 {
// CHECK: ggk.yield %{{.*}}, %{{.*}} : f32, i32
// CHECK: } idle {
llvm.func @round_trip(%first: i32, %rows: i32, %works: i1, %acc: f32, %c: i32) {
  %r:2 = ggk.warpgroup_tile first_row(%first) rows(%rows) when(%works)
      attributes {padding = #gg.padding<idle_warpgroups = skip>} -> f32, i32 {
    ggk.yield %acc, %c : f32, i32
  } idle {
    ggk.yield %acc, %c : f32, i32
  }
  llvm.return
}

// -----

llvm.func @idle_yields_other_types(%first: i32, %rows: i32, %acc: f32, %c: i32) {
  %r = ggk.warpgroup_tile first_row(%first) rows(%rows)
      attributes {padding = #gg.padding<idle_warpgroups = skip>} -> f32 {
    ggk.yield %acc : f32
  } idle {
    // expected-error @+1 {{must yield the warpgroup tile's result types 'f32' in region 'idle'}}
    ggk.yield %c : i32
  }
  llvm.return
}

// -----

llvm.func @work_takes_arguments(%first: i32, %rows: i32, %acc: f32) {
  // expected-error @+1 {{region 'work' must take no arguments, got 1}}
  %r = ggk.warpgroup_tile first_row(%first) rows(%rows)
      attributes {padding = #gg.padding<idle_warpgroups = skip>} -> f32 {
  ^bb0(%x: f32):
    ggk.yield %x : f32
  } idle {
    ggk.yield %acc : f32
  }
  llvm.return
}

// -----

llvm.func @no_padding(%first: i32, %rows: i32, %acc: f32) {
  // The decision is gg-eliminate-padding's, and must be stated.
  // expected-error @+1 {{requires attribute 'padding'}}
  %r = ggk.warpgroup_tile first_row(%first) rows(%rows) -> f32 {
    ggk.yield %acc : f32
  } idle {
    ggk.yield %acc : f32
  }
  llvm.return
}

// -----

llvm.func @works_not_i1(%first: i32, %rows: i32, %works: i32, %acc: f32) {
  // expected-error @+1 {{operand #2 must be 1-bit signless integer}}
  %r = "ggk.warpgroup_tile"(%first, %rows, %works) <{padding = #gg.padding<idle_warpgroups = skip>}> ({
    ggk.yield %acc : f32
  }, {
    ggk.yield %acc : f32
  }) : (i32, i32, i32) -> f32
  llvm.return
}
