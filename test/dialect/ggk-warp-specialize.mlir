// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.warp_specialize prints as it parses.
// CHECK-LABEL: llvm.func @roundtrip
// CHECK: ggk.warp_specialize %{{.*}}, %{{.*}} attributes {consumer_warpgroups = 2 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>} producer {
// CHECK: } consumers {
// CHECK-NEXT: ^bb0(%{{.*}}: i32):
llvm.func @roundtrip(%tid: i32, %leader: i1) {
  ggk.warp_specialize %tid, %leader attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [40, 232], staging = none>,
        consumer_warpgroups = 2}
  producer {
    ggk.yield
  } consumers {
  ^bb0(%consumer: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @consumer_index(%tid: i32, %leader: i1) {
  // expected-error @+1 {{region 'consumers' must take 1 arguments of types 'i32', got}}
  ggk.warp_specialize %tid, %leader attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [40, 232], staging = none>,
        consumer_warpgroups = 2}
  producer {
    ggk.yield
  } consumers {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @producer_arguments(%tid: i32, %leader: i1) {
  // expected-error @+1 {{region 'producer' must take 0 arguments}}
  ggk.warp_specialize %tid, %leader attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [40, 232], staging = none>,
        consumer_warpgroups = 2}
  producer {
  ^bb0(%x: i32):
    ggk.yield
  } consumers {
  ^bb0(%consumer: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @yields(%tid: i32, %leader: i1, %v: i32) {
  ggk.warp_specialize %tid, %leader attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [40, 232], staging = none>,
        consumer_warpgroups = 2}
  producer {
    ggk.yield
  } consumers {
  ^bb0(%consumer: i32):
    // expected-error @+1 {{must yield no values in region 'consumers', got 'i32'}}
    ggk.yield %consumer : i32
  }
  llvm.return
}
