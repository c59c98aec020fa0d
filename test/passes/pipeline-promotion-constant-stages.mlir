// RUN: ggc-opt %s -split-input-file -verify-diagnostics -ggk-pipeline-promotion | FileCheck %s

// Before: a serial promotion loop over 8 K blocks, a constant multiple of
// its 4 stages, from ring counter 0 (in a kernel: the tile loop's counter,
// carried from 0), so every tile starts at stage 0, and a plan with
// ring_stages = constant. After:
// one scf.for stepping 4 blocks at a time, the phase computed once a turn
// from the ring counter, and the turn's 4 blocks issued on the stages 0,
// 1, 2, 3 (k, k + 1, k + 2, k + 3), each released on its own; the counter
// moves on by 4. Each stage is its constant added to a zero that went
// through ggk.opaque once a turn, so that LLVM keeps the stages' addresses
// in the loop (each a constant from one value) instead of hoisting them.
// CHECK-LABEL: func.func @serial_static
// CHECK: %[[R:.*]]:2 = scf.for %[[K:.*]] = %c0_i32{{.*}} to %c8_i32{{.*}} step %c4_i32{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[IT:.*]] = %{{.*}})
// CHECK: %[[ROUND:.*]] = arith.divui %[[IT]], %c4_i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32
// CHECK: %[[ZERO:.*]] = ggk.opaque %c0_i32
// CHECK-NOT: arith.remui
// CHECK: %[[S0:.*]] = arith.addi %[[ZERO]], %c0_i32
// CHECK: call @issue(%{{.*}}, %[[S0]], %[[PHASE]])
// CHECK: call @release(%[[S0]])
// CHECK: %[[S1:.*]] = arith.addi %[[ZERO]], %c1_i32
// CHECK: call @issue(%{{.*}}, %[[S1]], %[[PHASE]])
// CHECK: call @release(%[[S1]])
// CHECK: %[[S2:.*]] = arith.addi %[[ZERO]], %c2_i32
// CHECK: call @issue(%{{.*}}, %[[S2]], %[[PHASE]])
// CHECK: call @release(%[[S2]])
// CHECK: %[[S3:.*]] = arith.addi %[[ZERO]], %c3_i32
// CHECK: call @issue(%{{.*}}, %[[S3]], %[[PHASE]])
// CHECK: call @release(%[[S3]])
// CHECK-NOT: ggk.opaque
// CHECK-NOT: call @issue
// CHECK: %[[NEXT:.*]] = arith.addi %[[IT]], %c4_i32
// CHECK: scf.yield %{{.*}}, %[[NEXT]]
// CHECK-NOT: ggk.promotion_loop
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @serial_static(%zero: !ggk.acc<64x8xf32>) -> i32 {
  %blocks = arith.constant 8 : i32
  %counter = arith.constant 0 : i32
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none, ring_stages = constant>}
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

// The same loop over 6 K blocks from counter 0, not a multiple of 4
// stages: each tile's last turn ends on two empty stages, which the loop
// awaits through its 'await' region; without one it is refused.
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @serial_unaligned(%zero: !ggk.acc<64x8xf32>) -> i32 {
  %blocks = arith.constant 6 : i32
  %counter = arith.constant 0 : i32
  // expected-error @+1 {{ends each tile's 6 K blocks on 2 empty stages of the ring (ring_stages = constant), which takes an 'await' region}}
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none, ring_stages = constant>}
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

// With the 'await' region: the loop runs to the next multiple of the
// stages (8), a turn at a time, each block's stage a constant. A turn's
// stages 0 and 1 always hold a block (6 % 4 = 2); stages 2 and 3 check
// whether theirs is past the tile's 6 (scf.if): in the last turn it is,
// and the stage is awaited and released empty, so that the counter moves
// on by whole turns and the next tile starts at stage 0.
// CHECK-LABEL: func.func @serial_partial_turn
// CHECK: %[[TURNS:.*]] = arith.muli %{{.*}}, %c4_i32
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[K:.*]] = %c0_i32{{.*}} to %[[TURNS]] step %c4_i32{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[IT:.*]] = %{{.*}})
// CHECK: %[[ROUND:.*]] = arith.divui %[[IT]], %c4_i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32
// CHECK: %[[ZERO:.*]] = ggk.opaque %c0_i32
// CHECK-NOT: scf.if
// CHECK: call @issue
// CHECK-NOT: scf.if
// CHECK: call @issue
// CHECK: %[[S2:.*]] = arith.addi %[[ZERO]], %c2_i32
// CHECK: %[[B2:.*]] = arith.addi %[[K]], %c2_i32
// CHECK: %[[IN2:.*]] = arith.cmpi slt, %[[B2]], %c6_i32
// CHECK: scf.if %[[IN2]]
// CHECK: call @issue(%[[B2]], %[[S2]], %[[PHASE]])
// CHECK: } else {
// CHECK-NEXT: call @await(%[[S2]], %[[PHASE]])
// CHECK-NEXT: call @release(%[[S2]])
// CHECK: %[[S3:.*]] = arith.addi %[[ZERO]], %c3_i32
// CHECK: %[[B3:.*]] = arith.addi %[[K]], %c3_i32
// CHECK: %[[IN3:.*]] = arith.cmpi slt, %[[B3]], %c6_i32
// CHECK: scf.if %[[IN3]]
// CHECK: call @issue(%[[B3]], %[[S3]], %[[PHASE]])
// CHECK: } else {
// CHECK-NEXT: call @await(%[[S3]], %[[PHASE]])
// CHECK-NEXT: call @release(%[[S3]])
// CHECK: %[[NEXT:.*]] = arith.addi %[[IT]], %c4_i32
// CHECK: scf.yield %{{.*}}, %[[NEXT]]
// CHECK: return %[[LOOP]]#1
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func private @await(i32, i32)
func.func @serial_partial_turn(%zero: !ggk.acc<64x8xf32>) -> i32 {
  %blocks = arith.constant 6 : i32
  %counter = arith.constant 0 : i32
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none, ring_stages = constant>}
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
    } await {
    ^bb0(%stage: i32, %phase: i32):
      func.call @await(%stage, %phase) : (i32, i32) -> ()
      ggk.yield
    }
  func.return %end : i32
}

// -----

// A K block count that comes at run time (k_grouped's groups: here an
// argument): the loop runs to the next multiple of the stages, a turn at a
// time. Stage 0 always holds a block (the loop runs no turn past the
// tile's blocks); stages 1, 2 and 3 check theirs against the count, and
// past it are awaited and released empty.
// CHECK-LABEL: func.func @serial_runtime_blocks
// CHECK-SAME: (%[[N:[^:]*]]: i32
// CHECK: %[[TURNS:.*]] = arith.muli %{{.*}}, %c4_i32
// CHECK: scf.for %[[K:.*]] = %c0_i32{{.*}} to %[[TURNS]] step %c4_i32
// CHECK: %[[ZERO:.*]] = ggk.opaque %c0_i32
// CHECK-NOT: scf.if
// CHECK: call @issue
// CHECK: %[[B1:.*]] = arith.addi %[[K]], %c1_i32
// CHECK: %[[IN1:.*]] = arith.cmpi slt, %[[B1]], %[[N]]
// CHECK: scf.if %[[IN1]]
// CHECK: } else {
// CHECK-NEXT: call @await
// CHECK: arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK: arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK-NOT: arith.cmpi slt
// CHECK: scf.yield
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func private @await(i32, i32)
func.func @serial_runtime_blocks(%blocks: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %counter = arith.constant 0 : i32
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none, ring_stages = constant>}
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
    } await {
    ^bb0(%stage: i32, %phase: i32):
      func.call @await(%stage, %phase) : (i32, i32) -> ()
      ggk.yield
    }
  func.return %end : i32
}


// -----

// The same without an 'await' region: a count that comes at run time may
// leave a partial last turn, whose stages the loop could not await.
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @serial_runtime_blocks_no_await(%blocks: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %counter = arith.constant 0 : i32
  // expected-error @+1 {{may end a tile's K blocks, counted at run time, on empty stages of the ring (ring_stages = constant), which takes an 'await' region}}
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none, ring_stages = constant>}
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

// 8 K blocks, but a ring counter the pass cannot place (a plain argument,
// not 0 nor the tile loop's counter carried from 0): a tile may start at
// any stage, so constant stages are refused.
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func @serial_free_counter(%counter: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %blocks = arith.constant 8 : i32
  // expected-error @+1 {{cannot give each K block a constant stage (ring_stages = constant): that takes a ring counter that starts each tile at stage 0 (a multiple of the 4 stages)}}
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none, ring_stages = constant>}
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

// Pipelined promotion over constant stages (epilogue_blocks = 1): 8 K
// blocks over 3 stages. Block 0 goes before the loop on stage 0, beside
// the overlap; block 1 (8 - 1 = 7 = 2 turns and 1 block) follows it
// straight, promoting block 0. Each loop step then issues 3 blocks on the
// stages 2, 0 and 1 (the last two in the next turn: the phase flipped),
// each beside the promotion of the block before it, waiting until one
// wgmma group is in flight and none at the step's end. After the loop:
// the last block's promotion, then stage 2 of the last turn (block 8,
// past the tile's blocks) awaited and released empty; the counter moves
// on by 9, whole turns.
// CHECK-LABEL: func.func @pipelined_constant
// CHECK: %[[Z0:.*]] = ggk.opaque
// CHECK: %[[P0:.*]] = call @issue(%{{.*}}, %[[Z0]], %{{.*}})
// CHECK: call @overlap()
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NEXT: call @release(%[[Z0]])
// CHECK: %[[S1:.*]] = arith.addi %[[Z0]], %c1_i32
// CHECK: %[[P1:.*]] = call @issue(%{{.*}}, %[[S1]],
// CHECK: call @promote(%{{.*}}, %[[P0]],
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NEXT: call @release(%[[S1]])
// CHECK: scf.for %[[FIRST:.*]] = %c1_i32{{.*}} to %c7_i32 step %c3_i32{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[IT:.*]] = %{{.*}}, %[[Y:.*]] = %[[P1]], %{{.*}} = %{{.*}})
// CHECK: %[[Z:.*]] = ggk.opaque
// CHECK: %[[ROUND:.*]] = arith.divui %[[IT]], %c3_i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32
// CHECK: %[[SA:.*]] = arith.addi %[[Z]], %c2_i32
// CHECK: %[[XA:.*]] = func.call @issue(%{{.*}}, %[[SA]], %[[PHASE]])
// CHECK: func.call @promote(%{{.*}}, %[[Y]], %[[FIRST]],
// CHECK: %[[FLIP:.*]] = arith.xori %[[PHASE]], %c1_i32
// CHECK: %[[SB:.*]] = arith.addi %[[Z]], %c0_i32
// CHECK: %[[XB:.*]] = func.call @issue(%{{.*}}, %[[SB]], %[[FLIP]])
// CHECK: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK-NEXT: func.call @release(%[[SA]])
// CHECK-NEXT: func.call @promote(%{{.*}}, %[[XA]],
// CHECK: %[[SC:.*]] = arith.addi %[[Z]], %c1_i32
// CHECK: func.call @issue(%{{.*}}, %[[SC]], %[[FLIP]])
// CHECK: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK-NEXT: func.call @release(%[[SB]])
// CHECK-NEXT: func.call @promote(%{{.*}}, %[[XB]],
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NEXT: func.call @release(%[[SC]])
// CHECK: scf.yield
// CHECK: call @promote(%{{.*}}, %{{.*}}, %c7_i32
// CHECK: call @await(%[[PAD:.*]], %{{.*}})
// CHECK-NEXT: call @release(%[[PAD]])
// CHECK-NOT: call @issue
// CHECK: return
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func private @await(i32, i32)
func.func @pipelined_constant(%zero: !ggk.acc<64x8xf32>) -> i32 {
  %blocks = arith.constant 8 : i32
  %counter = arith.constant 0 : i32
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, ring_stages = constant>}
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
    } await {
    ^bb0(%stage: i32, %phase: i32):
      func.call @await(%stage, %phase) : (i32, i32) -> ()
      ggk.yield
    }
  func.return %end : i32
}

// -----

// Pipelined over constant stages with a K block count known only at run
// time: refused (the loop's straight blocks and last turn need the count).
func.func private @prefetch(i32)
func.func private @start()
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @read_scales(i32, i32) -> f32
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32, f32) -> !ggk.acc<64x8xf32>
func.func private @release(i32)
func.func private @overlap()
func.func private @await(i32, i32)
func.func @pipelined_runtime_blocks(%blocks: i32, %zero: !ggk.acc<64x8xf32>) -> i32 {
  %counter = arith.constant 0 : i32
  // expected-error @+1 {{cannot pipeline the promotions over constant stages (ring_stages = constant): that takes one scale block a K block and every tile's K block count the same (at least 1), known when compiling}}
  %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, ring_stages = constant>}
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
    } await {
    ^bb0(%stage: i32, %phase: i32):
      func.call @await(%stage, %phase) : (i32, i32) -> ()
      ggk.yield
    }
  func.return %end : i32
}
