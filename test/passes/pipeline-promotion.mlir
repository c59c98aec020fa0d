// RUN: ggc-opt %s -split-input-file -ggk-pipeline-promotion | FileCheck %s

// Each step of a K block is a call here, so the order the pass gives them
// shows. Before: a promotion loop with serial promotion and scales in the
// warps' slots. After: block 0's scales prefetched, then one scf.for over
// the K blocks: its ring stage and phase (4 stages), prefetch k + 1, issue
// k, read its scales, wait for its wgmma, release its stage, promote it.
// CHECK-LABEL: func.func @serial
// CHECK: call @prefetch(%c0_i32{{.*}})
// CHECK-NEXT: call @start()
// CHECK: %[[R:.*]]:2 = scf.for %[[K:.*]] = %c0_i32{{.*}} to %{{.*}} step %c1_i32{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[IT:.*]] = %{{.*}})
// CHECK: %[[STAGE:.*]] = arith.remui %[[IT]], %c4_i32
// CHECK: %[[ROUND:.*]] = arith.divui %[[IT]], %c4_i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[K]], %c1_i32
// CHECK-NEXT: call @prefetch(%[[NEXT]])
// CHECK-NEXT: %[[P:.*]] = {{(func.)?}}call @issue(%[[K]], %[[STAGE]], %[[PHASE]])
// CHECK-NEXT: %[[S:.*]] = {{(func.)?}}call @read_scales(%[[K]], %[[STAGE]])
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NEXT: call @release(%[[STAGE]])
// CHECK-NEXT: %[[SUM:.*]] = {{(func.)?}}call @promote(%[[ACC]], %[[P]], %[[K]], %[[S]])
// CHECK: scf.yield %[[SUM]]
// CHECK-NOT: ggk.promotion_loop
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @serial(%blocks: i32, %counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      func.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      func.call @start() : () -> ()
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      ggk.yield
    }
  func.return %end : i32
}

// -----

// Before: the serial loop with epilogue_blocks = 1 (the previous tile's
// epilogue in `overlap`). After: block 0 before the loop, `overlap`
// between its issue and its wait; the loop takes blocks 1 .. from the
// next ring counter.
// CHECK-LABEL: func.func @serial_overlapped
// CHECK: call @start()
// CHECK: %[[P0:.*]] = {{(func.)?}}call @issue(%c0_i32{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NEXT: call @read_scales(%c0_i32
// CHECK-NEXT: call @overlap()
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NEXT: call @release
// CHECK-NEXT: %[[ACC0:.*]] = {{(func.)?}}call @promote(%{{.*}}, %[[P0]], %c0_i32
// CHECK: %[[IT1:.*]] = arith.addi %{{.*}}, %c1_i32
// CHECK: scf.for %{{.*}} = %c1_i32{{.*}} to %{{.*}} step %c1_i32{{.*}} iter_args(%{{.*}} = %[[ACC0]], %{{.*}} = %[[IT1]])
// CHECK-NOT: call @overlap
// CHECK: scf.yield
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @serial_overlapped(%blocks: i32, %counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = none, epilogue_blocks = 1>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      func.call @start() : () -> ()
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      func.call @overlap() : () -> ()
      ggk.yield
    }
  func.return %end : i32
}

// -----

// Before: the serial loop, the promotion reading its K block's stage
// (promote_reads_stage: the scales in the stages). After: no prefetch;
// issue, read the scales, wait, promote, and only then release the stage.
// CHECK-LABEL: func.func @serial_reads_stage
// CHECK-NOT: call @prefetch
// CHECK: scf.for
// CHECK: %[[STAGE:.*]] = arith.remui %{{.*}}, %c4_i32
// CHECK: call @issue(%{{.*}}, %[[STAGE]], %{{.*}})
// CHECK-NEXT: call @read_scales
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NEXT: call @promote
// CHECK-NEXT: call @release(%[[STAGE]])
// CHECK: scf.yield
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @serial_reads_stage(%blocks: i32, %counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = none>, promote_reads_stage}
    prefetch {
    ^bb0(%k: i32):
      func.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      func.call @start() : () -> ()
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      ggk.yield
    }
  func.return %end : i32
}

// -----

// Before: pipelined promotion with the scales in the stages. After: block
// 0 issued and its scales read, the overlap region while its wgmma runs,
// then pairs: issue X, promote Y (pinned), issue the next Y, wait until one
// group is pending, release X's stage, promote X, wait for none, release
// Y's stage; an odd last block in an scf.if. No slot prefetches.
// CHECK-LABEL: func.func @pipelined_stages
// CHECK-SAME: (%{{.*}}: i32, %[[COUNTER:.*]]: i32,
// CHECK-NOT: call @prefetch
// CHECK: %[[STAGE0:.*]] = arith.remui %[[COUNTER]], %c4_i32
// CHECK: %[[P0:.*]] = {{(func.)?}}call @issue(%c0_i32{{.*}}, %[[STAGE0]], %{{.*}})
// CHECK-NEXT: %[[S0:.*]] = {{(func.)?}}call @read_scales(%c0_i32{{.*}}, %[[STAGE0]])
// CHECK-NEXT: call @overlap()
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK: %[[REL0:.*]] = arith.remui %[[COUNTER]], %c4_i32
// CHECK: call @release(%[[REL0]])
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[IT:.*]] = %{{.*}}, %[[YP:.*]] = %[[P0]], %[[YS:.*]] = %[[S0]])
// CHECK: %[[XSTAGE:.*]] = arith.remui %[[IT]]
// CHECK: %[[XP:.*]] = {{(func.)?}}call @issue(%[[KX:.*]], %[[XSTAGE]], %{{.*}})
// CHECK-NEXT: %[[XS:.*]] = {{(func.)?}}call @read_scales(%[[KX]], %[[XSTAGE]])
// CHECK-NOT: call @prefetch
// CHECK: %[[Y:.*]] = {{(func.)?}}call @promote(%[[ACC]], %[[YP]], %{{.*}}, %[[YS]])
// CHECK: ggk.acc_pin
// CHECK: call @issue
// CHECK: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK: %[[RELX:.*]] = arith.remui %[[IT]], %c4_i32
// CHECK: call @release(%[[RELX]])
// CHECK: call @promote({{.*}}, %[[XP]], %[[KX]], %[[XS]])
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK: scf.yield
// CHECK: scf.if
// CHECK-NOT: call @prefetch
// CHECK-NOT: ggk.promotion_loop
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @pipelined_stages(%blocks: i32, %counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>}
    prefetch {
    ^bb0(%k: i32):
      func.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      func.call @overlap() : () -> ()
      ggk.yield
    }
  func.return %end : i32
}


// -----

// Before: the pipelined loop of @pipelined_stages with the plan's
// epilogue_blocks = 2 and six K blocks known when compiled. After: blocks
// 0 and 1 issued before the overlap (the previous tile's deferred
// epilogue runs beside both wgmmas); block 0 waited for with one group
// pending, its stage released and promoted; block 1 waited for and its
// stage released, then carried into the pairs as Y, which start at block 2
// (ring counter + 2).
// CHECK-LABEL: func.func @two_epilogue_blocks
// CHECK-SAME: (%[[COUNTER:.*]]: i32,
// CHECK: %[[P0:.*]] = {{(func.)?}}call @issue(%c0_i32{{.*}}
// CHECK-NEXT: %[[S0:.*]] = {{(func.)?}}call @read_scales(%c0_i32
// CHECK: %[[P1:.*]] = {{(func.)?}}call @issue(%c1_i32{{.*}}
// CHECK-NEXT: %[[S1:.*]] = {{(func.)?}}call @read_scales(%c1_i32
// CHECK-NEXT: call @overlap()
// CHECK-NEXT: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK: call @release(
// CHECK: call @promote(%{{.*}}, %[[P0]], %c0_i32{{.*}}, %[[S0]])
// CHECK: ggk.acc_pin
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK: call @release(
// The pairs: (n - 2) / 2 of them, from ring counter + 2, X at block
// 2 x pair + 2, Y (block 1's partial) pending on entry:
// CHECK: %[[LEFT:.*]] = arith.subi %[[N:.*]], %c2_i32
// CHECK: %[[PAIRS:.*]] = arith.divui %[[LEFT]], %c2_i32
// CHECK: %[[IT0:.*]] = arith.addi %[[COUNTER]], %c2_i32
// CHECK: scf.for %[[PAIR:.*]] = %{{.*}} to %[[PAIRS]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[IT:.*]] = %[[IT0]], %{{.*}} = %[[P1]], %{{.*}} = %[[S1]])
// CHECK: %[[TWICE:.*]] = arith.muli %[[PAIR]], %c2_i32
// CHECK: %[[KX:.*]] = arith.addi %[[TWICE]], %c2_i32
// CHECK: %[[KY:.*]] = arith.addi %[[KX]], %c1_i32
// CHECK: call @issue(%[[KX]]
// CHECK: call @issue(%[[KY]]
// CHECK-NOT: call @overlap
// CHECK: %[[IT2:.*]] = arith.addi %[[IT]], %c2_i32
// CHECK: scf.yield %{{.*}}, %[[IT2]]
// The last Y is block 2 x pairs + 1; an odd last block follows it when
// there is one more (not with n = 6, but the test is run time):
// CHECK: %[[TWICE_PAIRS:.*]] = arith.muli %[[PAIRS]], %c2_i32
// CHECK: %[[LAST_Y:.*]] = arith.addi %[[TWICE_PAIRS]], %c1_i32
// CHECK: %[[AFTER:.*]] = arith.addi %[[LAST_Y]], %c1_i32
// CHECK: arith.cmpi slt, %[[AFTER]], %[[N]]
// CHECK: scf.if
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @two_epilogue_blocks(%counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %blocks = arith.constant 6 : i32
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, epilogue_blocks = 2>}
    prefetch {
    ^bb0(%k: i32):
      func.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      func.call @overlap() : () -> ()
      ggk.yield
    }
  func.return %end : i32
}

// -----

// epilogue_blocks = 2 with one K block (or a count known only at run
// time): block 0 alone before the overlap, as with 1.
// CHECK-LABEL: func.func @one_block_two_asked
// CHECK: call @issue(%c0_i32
// CHECK-NEXT: call @read_scales(%c0_i32
// CHECK-NEXT: call @overlap()
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-LABEL: func.func @run_time_blocks
// CHECK: call @issue(%c0_i32
// CHECK-NEXT: call @read_scales(%c0_i32
// CHECK-NEXT: call @overlap()
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @one_block_two_asked(%counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %blocks = arith.constant 1 : i32
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, epilogue_blocks = 2>}
    prefetch {
    ^bb0(%k: i32):
      func.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      func.call @overlap() : () -> ()
      ggk.yield
    }
  func.return %end : i32
}
func.func @run_time_blocks(%blocks: i32, %counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, epilogue_blocks = 2>}
    prefetch {
    ^bb0(%k: i32):
      func.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      func.call @overlap() : () -> ()
      ggk.yield
    }
  func.return %end : i32
}

// -----

// Before: the same loop, but the promotion reads its K block's stage
// (promote_reads_stage: B's per-column scales ride it). After: no stage
// goes back once its wgmma is done; each goes back right after its
// block's promotion: block 0's after the loop's first promotion (Y),
// X's after X's.
// CHECK-LABEL: func.func @reads_stage
// CHECK-SAME: (%{{.*}}: i32, %[[COUNTER:.*]]: i32,
// CHECK: call @overlap()
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NOT: call @release
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[IT:.*]] = %{{.*}}, %[[YP:.*]] = %{{.*}}, %[[YS:.*]] = %{{.*}})
// CHECK: %[[XP:.*]] = {{(func.)?}}call @issue(%[[KX:.*]], %{{.*}}, %{{.*}})
// CHECK-NOT: call @release
// CHECK: call @promote(%[[ACC]], %[[YP]], %{{.*}}, %[[YS]])
// CHECK: %[[YIT:.*]] = arith.subi %[[IT]], %c1_i32
// CHECK: %[[RELY:.*]] = arith.remui %[[YIT]], %c4_i32
// CHECK-NOT: call @issue
// CHECK: call @release(%[[RELY]])
// CHECK: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK-NOT: call @release
// CHECK: call @promote({{.*}}, %[[XP]], %[[KX]], %{{.*}})
// CHECK: %[[RELX:.*]] = arith.remui %[[IT]], %c4_i32
// CHECK-NOT: call @issue
// CHECK: call @release(%[[RELX]])
// CHECK-NOT: call @release
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NOT: call @release
// CHECK: scf.yield
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @reads_stage(%blocks: i32, %counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>, promote_reads_stage}
    prefetch {
    ^bb0(%k: i32):
      func.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      func.call @overlap() : () -> ()
      ggk.yield
    }
  func.return %end : i32
}



// -----

// Before: pipelined promotion with the scales in the warps' slots. After:
// blocks 0 and 1 prefetched up front; each promotion reads its block's
// scales from the slots, then refills them with block k + 2's.
// CHECK-LABEL: func.func @pipelined_slots
// CHECK: call @prefetch(%c0_i32
// CHECK: call @prefetch(%c1_i32
// CHECK: call @issue(%c0_i32
// CHECK-NOT: call @read_scales
// CHECK: call @overlap()
// CHECK: scf.for
// CHECK: call @issue(%[[KX:.*]], %{{.*}}, %{{.*}})
// CHECK: %[[KY:.*]] = arith.subi %[[KX]], %c1_i32
// CHECK: %[[YS:.*]] = {{(func.)?}}call @read_scales(%[[KY]], %{{.*}})
// CHECK: %[[AHEAD:.*]] = arith.addi %[[KY]], %c2_i32
// CHECK-NEXT: call @prefetch(%[[AHEAD]])
// CHECK-NEXT: call @promote(%{{.*}}, %{{.*}}, %[[KY]], %[[YS]])
// CHECK-NOT: ggk.promotion_loop
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @pipelined_slots(%blocks: i32, %counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = slots, registers = [24, 240], staging = swizzled>}
    prefetch {
    ^bb0(%k: i32):
      func.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %stage) : (i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      func.call @overlap() : () -> ()
      ggk.yield
    }
  func.return %end : i32
}


// -----

// Before: four scale blocks per K block (MX 1x32), pipelined, scales in
// the slots. After: scale block (0, 0) before the loop; each iteration
// runs (k, 1), (k, 2), (k, 3) and (k + 1, 0) in two pairs, every wgmma
// but one waited for before the next pair; K block k's stage goes back
// once (k, 3) is done, its slots are refilled with k + 2's scales after
// (k, 3) has read them, and end_block(k) follows (k, 3)'s promotion. The
// last K block's (n - 1, 1 .. 3) follow the loop, the last alone.
// CHECK-LABEL: func.func @pipelined_scale_blocks
// CHECK-SAME: (%[[N:.*]]: i32, %[[COUNTER:.*]]: i32,
// CHECK: call @prefetch(%c0_i32
// CHECK: call @prefetch(%c1_i32
// CHECK: call @start()
// CHECK: call @issue(%c0_i32{{.*}}, %c0_i32{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NEXT: call @overlap()
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NOT: call @release
// CHECK: scf.for %[[K:.*]] = %c0_i32{{.*}} to %{{.*}} step %c1_i32{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[IT:.*]] = %[[COUNTER]], %[[Y:.*]] = %{{.*}})
// CHECK: %[[X1:.*]] = {{(func.)?}}call @issue(%[[K]], %c1_i32{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[S0:.*]] = {{(func.)?}}call @read_scales(%[[K]], %c0_i32{{.*}}, %{{.*}})
// CHECK-NEXT: %[[P0:.*]] = {{(func.)?}}call @promote(%[[ACC]], %[[Y]], %[[K]], %c0_i32{{.*}}, %[[S0]])
// CHECK-NEXT: ggk.acc_pin
// CHECK: call @issue(%[[K]], %c2_i32{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NEXT: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK-NOT: call @release
// CHECK: call @promote({{.*}}, %[[X1]], %[[K]], %c1_i32{{.*}}, %{{.*}})
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NOT: call @release
// CHECK: %[[X3:.*]] = {{(func.)?}}call @issue(%[[K]], %c3_i32{{.*}}, %{{.*}}, %{{.*}})
// CHECK: call @promote({{.*}}, %[[K]], %c2_i32{{.*}}, %{{.*}})
// CHECK: %[[NEXTK:.*]] = arith.addi %[[K]], %c1_i32
// CHECK: %[[NEXTIT:.*]] = arith.addi %[[IT]], %c1_i32
// CHECK: %[[NEXTSTAGE:.*]] = arith.remui %[[NEXTIT]], %c4_i32
// CHECK: %[[Y1:.*]] = {{(func.)?}}call @issue(%[[NEXTK]], %c0_i32{{.*}}, %[[NEXTSTAGE]], %{{.*}})
// CHECK-NEXT: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK: %[[STAGE:.*]] = arith.remui %[[IT]], %c4_i32
// CHECK: call @release(%[[STAGE]])
// CHECK: call @read_scales(%[[K]], %c3_i32{{.*}}, %{{.*}})
// CHECK: %[[K2:.*]] = arith.addi %[[K]], %c2_i32
// CHECK-NEXT: call @prefetch(%[[K2]])
// CHECK-NEXT: call @promote({{.*}}, %[[X3]], %[[K]], %c3_i32{{.*}}, %{{.*}})
// CHECK-NEXT: call @end_block(%[[K]])
// CHECK-NEXT: ggk.acc_pin
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NOT: call @release
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[Y1]]
// CHECK: call @issue(%{{.*}}, %c1_i32
// CHECK: call @issue(%{{.*}}, %c2_i32
// CHECK: call @issue(%{{.*}}, %c3_i32
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK: call @release
// CHECK: call @promote({{.*}}, %c3_i32
// CHECK-NEXT: call @end_block
// CHECK-NOT: call @issue
// CHECK-NOT: ggk.promotion_loop
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @end_block(i32)
func.func private @release(i32)
func.func private @overlap()
func.func @pipelined_scale_blocks(%blocks: i32, %counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, promotions = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = slots, registers = [24, 240], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      func.call @prefetch(%k) : (i32) -> ()
      ggk.yield
    } start {
      func.call @start() : () -> ()
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      %p = func.call @issue(%k, %j, %stage, %phase) : (i32, i32, i32, i32) -> !ggk.acc<64x8xf32>
      ggk.yield %p : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %stage: i32):
      %s = func.call @read_scales(%k, %j, %stage) : (i32, i32, i32) -> f32
      ggk.yield %s : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      %sum = func.call @promote(%a, %p, %k, %j, %s) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, i32, f32) -> !ggk.acc<64x8xf32>
      ggk.yield %sum : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%k: i32):
      func.call @end_block(%k) : (i32) -> ()
      ggk.yield
    } release {
    ^bb0(%stage: i32):
      func.call @release(%stage) : (i32) -> ()
      ggk.yield
    } overlap {
      func.call @overlap() : () -> ()
      ggk.yield
    }
  func.return %end : i32
}
