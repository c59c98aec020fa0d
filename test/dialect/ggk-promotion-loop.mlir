// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.promotion_loop prints as it parses.
// CHECK-LABEL: llvm.func @round_trip
// CHECK: ggk.promotion_loop %{{.*}} from %{{.*}} acc(%{{.*}} : f32) attributes {plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>, stages = 3 : i64}
// CHECK: prefetch {
// CHECK: } start {
// CHECK: } issue {
// CHECK: } read_scales {
// CHECK: } promote {
// CHECK: } end_block {
// CHECK: } release {
// CHECK: } overlap {
// CHECK-NOT: await
// CHECK: llvm.return
llvm.func @round_trip(%n: i32, %c: i32, %z: f32, %one: f32) {
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}

// -----

// The optional 'await' region (ring_stages = constant, a tile's last turn
// ending on empty stages) prints after 'overlap'; without it nothing is
// printed (above).
// CHECK-LABEL: llvm.func @round_trip_await
// CHECK: } overlap {
// CHECK: } await {
// CHECK-NEXT: ^bb0(%{{.*}}: i32, %{{.*}}: i32):
llvm.func @round_trip_await(%n: i32, %c: i32, %z: f32, %one: f32) {
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, ring_stages = constant>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    } await {
    ^bb0(%stage: i32, %phase: i32):
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @await_arguments(%n: i32, %c: i32, %z: f32, %one: f32) {
  // expected-error @+1 {{region 'await' must take 2 arguments of types 'i32', 'i32', got 'i32'}}
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    } await {
    ^bb0(%stage: i32):
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @issue_takes_one_argument(%n: i32, %c: i32, %z: f32, %one: f32) {
  // expected-error @+1 {{region 'issue' must take 4 arguments of types 'i32', 'i32', 'i32', 'i32', got 'i32'}}
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @issue_yields_another_type(%n: i32, %c: i32, %z: f32, %one: f32) {
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      // expected-error @+1 {{must yield 'f32' in region 'issue', got 'i32'}}
      ggk.yield %k : i32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @promote_misses_the_scales(%n: i32, %c: i32, %z: f32, %one: f32) {
  // expected-error @+1 {{region 'promote' must take 5 arguments of types 'f32', 'f32', 'i32', 'i32', 'f32', got 'f32', 'f32', 'i32', 'i32'}}
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @side()
llvm.func @serial_overlap(%n: i32, %c: i32, %z: f32, %one: f32) {
  // expected-error @+1 {{region 'overlap' must be empty with serial promotion}}
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      llvm.call @side() : () -> ()
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @no_stages(%n: i32, %c: i32, %z: f32, %one: f32) {
  // expected-error @+1 {{stages must be at least 1, got 0}}
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 0 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}


// -----

llvm.func @pipelined_scalar(%n: i32, %c: i32, %z: f32, %one: f32) {
  // expected-error @+1 {{the accumulator must be a !ggk.acc, got 'f32'}}
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @no_promotions(%n: i32, %c: i32, %z: f32, %one: f32) {
  // expected-error @+1 {{promotions (scale blocks per K block) must be at least 1, got 0}}
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, promotions = 0 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @pipelined_odd_promotions(%n: i32, %c: i32, %one: f32) {
  %z = ggk.acc_zero : !ggk.acc<64x8xf32>
  // expected-error @+1 {{pipelined promotion takes the scale blocks in pairs: promotions must be 1 or even, got 3}}
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : !ggk.acc<64x8xf32>)
      attributes {stages = 3 : i64, promotions = 3 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = none, registers = [40, 232], staging = none>}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : !ggk.acc<64x8xf32>
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : !ggk.acc<64x8xf32>
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @reads_stage_of_slots(%n: i32, %c: i32, %z: f32, %one: f32) {
  // expected-error @+1 {{promote_reads_stage takes a plan whose scales ride the stages, got scales = slots}}
  %acc, %end = ggk.promotion_loop %n from %c acc(%z : f32)
      attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none>, promote_reads_stage}
    prefetch {
    ^bb0(%k: i32):
      ggk.yield
    } start {
      ggk.yield
    } issue {
    ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } read_scales {
    ^bb0(%k: i32, %j: i32, %it: i32):
      ggk.yield %one : f32
    } promote {
    ^bb0(%a: f32, %p: f32, %k: i32, %j: i32, %s: f32):
      ggk.yield %a : f32
    } end_block {
    ^bb0(%kb: i32):
      ggk.yield
    } release {
    ^bb0(%it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}
