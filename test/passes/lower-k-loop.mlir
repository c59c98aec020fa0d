// RUN: ggc-opt %s -split-input-file -ggk-lower-k-loop | FileCheck %s

// Each step of a K block is a call here, so the order the pass gives them
// shows. Before: a one-level K loop of 4 stages with a release lag of 1
// (wgmma). After: one scf.for over the K blocks: the block's ring stage
// and phase, its issue, a wait down to one group in flight, the previous
// block's stage released (from the second block on), the load-ahead step;
// after the loop, every multiply waited for and the last block's stage
// released when the tile had any.
// CHECK-LABEL: func.func @lag_one
// CHECK-SAME: (%[[N:.*]]: i32, %[[COUNTER:.*]]: i32, %[[ZERO:.*]]: !ggk.acc<64x16xf32>)
// CHECK: %[[R:.*]]:2 = scf.for %[[K:.*]] = %c0_i32 to %[[N]] step %c1_i32 iter_args(%[[ACC:.*]] = %[[ZERO]], %[[IT:.*]] = %[[COUNTER]])
// CHECK: %[[STAGE:.*]] = arith.remui %[[IT]], %c4_i32
// CHECK: %[[ROUND:.*]] = arith.divui %[[IT]], %c4_i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32
// CHECK-NEXT: %[[SUM:.*]] = {{(func.)?}}call @issue(%[[K]], %[[STAGE]], %[[PHASE]], %[[ACC]])
// CHECK-NEXT: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK: %[[LATER:.*]] = arith.cmpi sge, %[[K]], %c1_i32
// CHECK-NEXT: scf.if %[[LATER]] {
// CHECK: %[[PREV:.*]] = arith.remui %{{.*}}, %c4_i32
// CHECK-NEXT: call @release(%[[PREV]])
// CHECK: call @load_ahead(%[[K]], %[[IT]])
// CHECK: scf.yield %[[SUM]]
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK: %[[ANY:.*]] = arith.cmpi slt, %[[COUNTER]], %[[R]]#1
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK: call @release(
// CHECK: return %[[R]]#0, %[[R]]#1
// CHECK-NOT: ggk.k_loop
func.func private @issue(i32, i32, i32, !ggk.acc<64x16xf32>) -> !ggk.acc<64x16xf32>
func.func private @release(i32)
func.func private @load_ahead(i32, i32)
func.func @lag_one(%n: i32, %counter: i32, %zero: !ggk.acc<64x16xf32>)
    -> (!ggk.acc<64x16xf32>, i32) {
  %acc, %end = ggk.k_loop %n from %counter acc(%zero : !ggk.acc<64x16xf32>)
      attributes {stages = 4 : i64, release_lag = 1 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: !ggk.acc<64x16xf32>):
      %s = func.call @issue(%k, %stage, %phase, %a)
          : (i32, i32, i32, !ggk.acc<64x16xf32>) -> !ggk.acc<64x16xf32>
      ggk.yield %s : !ggk.acc<64x16xf32>
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      func.call @load_ahead(%k, %it) : (i32, i32) -> ()
      ggk.yield
    }
  return %acc, %end : !ggk.acc<64x16xf32>, i32
}

// -----

// With a lag of 0 (mma.sync reads its operands at issue): each block's
// own stage goes back right after its wait, and nothing follows the loop.
// CHECK-LABEL: func.func @lag_zero
// CHECK: scf.for
// CHECK: %[[STAGE:.*]] = arith.remui %{{.*}}, %c2_i32
// CHECK: call @issue
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NEXT: call @release(%[[STAGE]])
// CHECK-NEXT: call @load_ahead
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NOT: ggk.mma_wait
// CHECK-NOT: call @release
func.func private @issue(i32, i32, i32, f32) -> f32
func.func private @release(i32)
func.func private @load_ahead(i32, i32)
func.func @lag_zero(%n: i32, %counter: i32, %zero: f32) -> (f32, i32) {
  %acc, %end = ggk.k_loop %n from %counter acc(%zero : f32)
      attributes {stages = 2 : i64, release_lag = 0 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: f32):
      %s = func.call @issue(%k, %stage, %phase, %a) : (i32, i32, i32, f32) -> f32
      ggk.yield %s : f32
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      func.call @load_ahead(%k, %it) : (i32, i32) -> ()
      ggk.yield
    }
  return %acc, %end : f32, i32
}

// -----

// With epilogue_blocks = 1 the overlap step (the previous tile's epilogue,
// put there by ggk-defer-epilogue) runs once, right after block 0's
// multiply is issued and before the loop waits on it.
// CHECK-LABEL: func.func @overlap
// CHECK: scf.for %[[K:.*]] = %c0_i32 to
// CHECK: call @issue(%[[K]]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %c0_i32
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: call @epilogue()
// CHECK-NEXT: }
// CHECK-NEXT: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK-NOT: call @epilogue
// CHECK: return
func.func private @issue(i32, i32, i32, !ggk.acc<64x16xf32>) -> !ggk.acc<64x16xf32>
func.func private @epilogue()
func.func @overlap(%n: i32, %counter: i32, %zero: !ggk.acc<64x16xf32>)
    -> (!ggk.acc<64x16xf32>, i32) {
  %acc, %end = ggk.k_loop %n from %counter acc(%zero : !ggk.acc<64x16xf32>)
      attributes {stages = 4 : i64, release_lag = 1 : i64, epilogue_blocks = 1 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: !ggk.acc<64x16xf32>):
      %s = func.call @issue(%k, %stage, %phase, %a)
          : (i32, i32, i32, !ggk.acc<64x16xf32>) -> !ggk.acc<64x16xf32>
      ggk.yield %s : !ggk.acc<64x16xf32>
    } release {
    ^bb0(%stage: i32):
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      ggk.yield
    } overlap {
      func.call @epilogue() : () -> ()
      ggk.yield
    }
  return %acc, %end : !ggk.acc<64x16xf32>, i32
}
