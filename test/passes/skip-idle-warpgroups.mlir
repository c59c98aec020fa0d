// RUN: ggc-opt %s -split-input-file -ggk-skip-idle-warpgroups | FileCheck %s

// Before: a consumer warpgroup's tile with gg-eliminate-padding's
// `idle_warpgroups = skip`. After: an scf.if on the warpgroup's first row
// against the tile's valid rows; the work region is its then-branch, the
// idle region its else-branch.
// CHECK-LABEL: llvm.func @skip
// CHECK-SAME: (%[[FIRST:.*]]: i32, %[[ROWS:.*]]: i32, %[[ACC:.*]]: f32, %[[COUNTER:.*]]: i32)
// CHECK: %[[ACTIVE:.*]] = arith.cmpi slt, %[[FIRST]], %[[ROWS]] : i32
// CHECK-NEXT: %[[R:.*]]:2 = scf.if %[[ACTIVE]] -> (f32, i32) {
// CHECK-NEXT: %[[SUM:.*]] = llvm.fadd %[[ACC]], %[[ACC]]
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[COUNTER]], %c4_i32
// CHECK-NEXT: scf.yield %[[SUM]], %[[NEXT]] : f32, i32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[PASSED:.*]] = arith.addi %[[COUNTER]], %c4_i32
// CHECK-NEXT: scf.yield %[[ACC]], %[[PASSED]] : f32, i32
// CHECK-NEXT: }
// CHECK-NEXT: llvm.return %[[R]]#0
// CHECK-NOT: ggk.
llvm.func @skip(%first: i32, %rows: i32, %acc: f32, %counter: i32) -> f32 {
  %c4 = arith.constant 4 : i32
  %r:2 = ggk.warpgroup_tile first_row(%first) rows(%rows)
      attributes {padding = #gg.padding<idle_warpgroups = skip>} -> f32, i32 {
    %sum = llvm.fadd %acc, %acc : f32
    %next = arith.addi %counter, %c4 : i32
    ggk.yield %sum, %next : f32, i32
  } idle {
    %passed = arith.addi %counter, %c4 : i32
    ggk.yield %acc, %passed : f32, i32
  }
  llvm.return %r#0 : f32
}

// -----

// Before: `idle_warpgroups = compute` and no `works`. After: the work
// region inline, the idle region gone, no branch.
// CHECK-LABEL: llvm.func @compute
// CHECK-NOT: scf.if
// CHECK: %[[SUM:.*]] = llvm.fadd
// CHECK-NEXT: arith.addi
// CHECK-NEXT: llvm.return %[[SUM]]
// CHECK-NOT: ggk.
llvm.func @compute(%first: i32, %rows: i32, %acc: f32, %counter: i32) -> f32 {
  %c4 = arith.constant 4 : i32
  %r:2 = ggk.warpgroup_tile first_row(%first) rows(%rows)
      attributes {padding = #gg.padding<idle_warpgroups = compute>} -> f32, i32 {
    %sum = llvm.fadd %acc, %acc : f32
    %next = arith.addi %counter, %c4 : i32
    ggk.yield %sum, %next : f32, i32
  } idle {
    %passed = arith.addi %counter, %c4 : i32
    ggk.yield %acc, %passed : f32, i32
  }
  llvm.return %r#0 : f32
}

// -----

// Before: `works` given ("the tile has K blocks", which ggk-defer-epilogue
// sets beside a pipelined promotion loop).
// After: with skip, the branch on `works` and-ed with the row test; with
// compute, on `works` alone.
// CHECK-LABEL: llvm.func @works_and_skip
// CHECK-SAME: (%[[FIRST:.*]]: i32, %[[ROWS:.*]]: i32, %[[WORKS:.*]]: i1
// CHECK: %[[ACTIVE:.*]] = arith.cmpi slt, %[[FIRST]], %[[ROWS]] : i32
// CHECK-NEXT: %[[BOTH:.*]] = arith.andi %[[WORKS]], %[[ACTIVE]] : i1
// CHECK-NEXT: scf.if %[[BOTH]] -> (f32) {
llvm.func @works_and_skip(%first: i32, %rows: i32, %works: i1, %acc: f32) -> f32 {
  %r = ggk.warpgroup_tile first_row(%first) rows(%rows) when(%works)
      attributes {padding = #gg.padding<idle_warpgroups = skip>} -> f32 {
    %sum = llvm.fadd %acc, %acc : f32
    ggk.yield %sum : f32
  } idle {
    ggk.yield %acc : f32
  }
  llvm.return %r : f32
}

// -----

// CHECK-LABEL: llvm.func @works_and_compute
// CHECK-SAME: (%{{.*}}: i32, %{{.*}}: i32, %[[WORKS:.*]]: i1
// CHECK-NOT: arith.cmpi
// CHECK: scf.if %[[WORKS]] -> (f32) {
llvm.func @works_and_compute(%first: i32, %rows: i32, %works: i1, %acc: f32) -> f32 {
  %r = ggk.warpgroup_tile first_row(%first) rows(%rows) when(%works)
      attributes {padding = #gg.padding<idle_warpgroups = compute>} -> f32 {
    %sum = llvm.fadd %acc, %acc : f32
    ggk.yield %sum : f32
  } idle {
    ggk.yield %acc : f32
  }
  llvm.return %r : f32
}
