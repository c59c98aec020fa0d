// RUN: ggc-opt %s -split-input-file -ggk-pipeline-promotion | FileCheck %s

// Each step of a K block is a call here, so the order the pass gives them
// shows. Before: a promotion loop with serial promotion and scales in the
// warps' slots. After: block 0's scales prefetched, then one scf.for over
// the K blocks: its ring stage and phase (4 stages), prefetch k + 1, issue
// k, read its scales, wait for its wgmma, release its stage, promote it.
// CHECK-LABEL: llvm.func @serial
// CHECK: llvm.call @prefetch(%c0_i32)
// CHECK-NEXT: llvm.call @start()
// CHECK: %[[R:.*]]:2 = scf.for %[[K:.*]] = %c0_i32{{.*}} to %{{.*}} step %c1_i32{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[IT:.*]] = %{{.*}})
// CHECK: %[[STAGE:.*]] = arith.remui %[[IT]], %c4_i32
// CHECK: %[[ROUND:.*]] = arith.divui %[[IT]], %c4_i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[K]], %c1_i32
// CHECK-NEXT: llvm.call @prefetch(%[[NEXT]])
// CHECK-NEXT: %[[P:.*]] = llvm.call @issue(%[[K]], %[[STAGE]], %[[PHASE]])
// CHECK-NEXT: %[[S:.*]] = llvm.call @read_scales(%[[K]], %[[STAGE]])
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NEXT: llvm.call @release(%[[STAGE]])
// CHECK-NEXT: %[[SUM:.*]] = llvm.call @promote(%[[ACC]], %[[P]], %[[K]], %[[S]])
// CHECK: scf.yield %[[SUM]]
// CHECK-NOT: ggk.promotion_loop
llvm.func @prefetch(i32)
llvm.func @start()
llvm.func @issue(i32, i32, i32) -> !llvm.struct<(f32, f32)>
llvm.func @read_scales(i32, i32) -> f32
llvm.func @promote(!llvm.struct<(f32, f32)>, !llvm.struct<(f32, f32)>, i32, f32) -> !llvm.struct<(f32, f32)>
llvm.func @release(i32)
llvm.func @overlap()
llvm.func @serial(%blocks: i32, %counter: i32, %zero: !llvm.struct<(f32, f32)>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !llvm.struct<(f32, f32)>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      llvm.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      llvm.call @start() : () -> ()
      ggk.yield
    } issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32):
      %p = llvm.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !llvm.struct<(f32, f32)>
      ggk.yield %p : !llvm.struct<(f32, f32)>
    } read_scales {
    ^bb0(%k: i32, %stage: i32):
      %s = llvm.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !llvm.struct<(f32, f32)>, %p: !llvm.struct<(f32, f32)>, %k: i32, %s: f32):
      %sum = llvm.call @promote(%a, %p, %k, %s) : (!llvm.struct<(f32, f32)>, !llvm.struct<(f32, f32)>, i32, f32) -> !llvm.struct<(f32, f32)>
      ggk.yield %sum : !llvm.struct<(f32, f32)>
    } release {
    ^bb0(%stage: i32):
      llvm.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return %end : i32
}

// -----

// Before: pipelined promotion with the scales in the stages. After: block
// 0 issued and its scales read, the overlap region while its wgmma runs,
// then pairs: issue X, promote Y (pinned), issue the next Y, wait until one
// group is pending, release X's stage, promote X, wait for none, release
// Y's stage; an odd last block in an scf.if. No slot prefetches.
// CHECK-LABEL: llvm.func @pipelined_stages
// CHECK-SAME: (%{{.*}}: i32, %[[COUNTER:.*]]: i32,
// CHECK-NOT: llvm.call @prefetch
// CHECK: %[[STAGE0:.*]] = arith.remui %[[COUNTER]], %c4_i32
// CHECK: %[[P0:.*]] = llvm.call @issue(%c0_i32{{.*}}, %[[STAGE0]], %{{.*}})
// CHECK-NEXT: %[[S0:.*]] = llvm.call @read_scales(%c0_i32{{.*}}, %[[STAGE0]])
// CHECK-NEXT: llvm.call @overlap()
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK: %[[REL0:.*]] = arith.remui %[[COUNTER]], %c4_i32
// CHECK: llvm.call @release(%[[REL0]])
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[IT:.*]] = %{{.*}}, %[[YP:.*]] = %[[P0]], %[[YS:.*]] = %[[S0]])
// CHECK: %[[XSTAGE:.*]] = arith.remui %[[IT]]
// CHECK: %[[XP:.*]] = llvm.call @issue(%[[KX:.*]], %[[XSTAGE]], %{{.*}})
// CHECK-NEXT: %[[XS:.*]] = llvm.call @read_scales(%[[KX]], %[[XSTAGE]])
// CHECK-NOT: llvm.call @prefetch
// CHECK: %[[Y:.*]] = llvm.call @promote(%[[ACC]], %[[YP]], %{{.*}}, %[[YS]])
// CHECK: llvm.inline_asm
// CHECK: llvm.call @issue
// CHECK: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK: %[[RELX:.*]] = arith.remui %[[IT]], %c4_i32
// CHECK: llvm.call @release(%[[RELX]])
// CHECK: llvm.call @promote({{.*}}, %[[XP]], %[[KX]], %[[XS]])
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK: scf.yield
// CHECK: scf.if
// CHECK-NOT: llvm.call @prefetch
// CHECK-NOT: ggk.promotion_loop
llvm.func @prefetch(i32)
llvm.func @start()
llvm.func @issue(i32, i32, i32) -> !llvm.struct<(f32, f32)>
llvm.func @read_scales(i32, i32) -> f32
llvm.func @promote(!llvm.struct<(f32, f32)>, !llvm.struct<(f32, f32)>, i32, f32) -> !llvm.struct<(f32, f32)>
llvm.func @release(i32)
llvm.func @overlap()
llvm.func @pipelined_stages(%blocks: i32, %counter: i32, %zero: !llvm.struct<(f32, f32)>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !llvm.struct<(f32, f32)>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>}
    prefetch {
    ^bb0(%k: i32):
      llvm.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32):
      %p = llvm.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !llvm.struct<(f32, f32)>
      ggk.yield %p : !llvm.struct<(f32, f32)>
    } read_scales {
    ^bb0(%k: i32, %stage: i32):
      %s = llvm.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !llvm.struct<(f32, f32)>, %p: !llvm.struct<(f32, f32)>, %k: i32, %s: f32):
      %sum = llvm.call @promote(%a, %p, %k, %s) : (!llvm.struct<(f32, f32)>, !llvm.struct<(f32, f32)>, i32, f32) -> !llvm.struct<(f32, f32)>
      ggk.yield %sum : !llvm.struct<(f32, f32)>
    } release {
    ^bb0(%stage: i32):
      llvm.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      llvm.call @overlap() : () -> ()
      ggk.yield
    }
  llvm.return %end : i32
}


// -----

// Before: pipelined promotion with the scales in the warps' slots. After:
// blocks 0 and 1 prefetched up front; each promotion reads its block's
// scales from the slots, then refills them with block k + 2's.
// CHECK-LABEL: llvm.func @pipelined_slots
// CHECK: llvm.call @prefetch(%c0_i32
// CHECK: llvm.call @prefetch(%c1_i32
// CHECK: llvm.call @issue(%c0_i32
// CHECK-NOT: llvm.call @read_scales
// CHECK: llvm.call @overlap()
// CHECK: scf.for
// CHECK: llvm.call @issue(%[[KX:.*]], %{{.*}}, %{{.*}})
// CHECK: %[[KY:.*]] = arith.subi %[[KX]], %c1_i32
// CHECK: %[[YS:.*]] = llvm.call @read_scales(%[[KY]], %{{.*}})
// CHECK: %[[AHEAD:.*]] = arith.addi %[[KY]], %c2_i32
// CHECK-NEXT: llvm.call @prefetch(%[[AHEAD]])
// CHECK-NEXT: llvm.call @promote(%{{.*}}, %{{.*}}, %[[KY]], %[[YS]])
// CHECK-NOT: ggk.promotion_loop
llvm.func @prefetch(i32)
llvm.func @start()
llvm.func @issue(i32, i32, i32) -> !llvm.struct<(f32, f32)>
llvm.func @read_scales(i32, i32) -> f32
llvm.func @promote(!llvm.struct<(f32, f32)>, !llvm.struct<(f32, f32)>, i32, f32) -> !llvm.struct<(f32, f32)>
llvm.func @release(i32)
llvm.func @overlap()
llvm.func @pipelined_slots(%blocks: i32, %counter: i32, %zero: !llvm.struct<(f32, f32)>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !llvm.struct<(f32, f32)>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = slots, registers = [24, 240], staging = swizzled>}
    prefetch {
    ^bb0(%k: i32):
      llvm.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32):
      %p = llvm.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !llvm.struct<(f32, f32)>
      ggk.yield %p : !llvm.struct<(f32, f32)>
    } read_scales {
    ^bb0(%k: i32, %stage: i32):
      %s = llvm.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !llvm.struct<(f32, f32)>, %p: !llvm.struct<(f32, f32)>, %k: i32, %s: f32):
      %sum = llvm.call @promote(%a, %p, %k, %s) : (!llvm.struct<(f32, f32)>, !llvm.struct<(f32, f32)>, i32, f32) -> !llvm.struct<(f32, f32)>
      ggk.yield %sum : !llvm.struct<(f32, f32)>
    } release {
    ^bb0(%stage: i32):
      llvm.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      llvm.call @overlap() : () -> ()
      ggk.yield
    }
  llvm.return %end : i32
}

