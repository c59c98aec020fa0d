// RUN: ggc-opt %s -split-input-file -ggk-warp-specialize | FileCheck %s

// Before: the kernel's roles as regions (each a call here), for sm_80.
// After: without setmaxnreg no register count moves, and the consumer
// warpgroups come first: warpgroup c (tid / 128) below consumer_warpgroups
// runs the consumers with index c; the threads after them, the producer's
// warps, all run the producer (per-thread cp.async copies), not a leader
// alone. Without a producer (the plan's producer = none) the CTA has no
// threads past the consumers' (ggk.launch), and the producer region is
// empty.
// CHECK-LABEL: llvm.func @roles
// CHECK-SAME: (%[[TID:[^:]*]]: i32, %{{[^:]*}}: i1)
// CHECK: %[[WG:.*]] = arith.divui %[[TID]], %c128_i32
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK: %[[IS_CONSUMER:.*]] = arith.cmpi slt, %[[WG]], %[[TWO]]
// CHECK-NEXT: scf.if %[[IS_CONSUMER]] {
// CHECK-NEXT: %[[UNIFORM:.*]] = ggk.warp_broadcast %[[WG]]
// CHECK-NEXT: llvm.call @consume(%[[UNIFORM]]) : (i32) -> ()
// CHECK-NEXT: } else {
// CHECK-NEXT: llvm.call @produce() : () -> ()
// CHECK-NEXT: }
// CHECK-NEXT: llvm.return
module attributes {gg.target = "sm_80"} {
  llvm.func @produce()
  llvm.func @consume(i32)
  llvm.func @roles(%tid: i32, %leader: i1) {
    ggk.warp_specialize %tid, %leader attributes {
        plan = #gg.kernel_plan<promotion = serial, scales = none,
                               registers = [168, 168], staging = none>,
        consumer_warpgroups = 2}
    producer {
      llvm.call @produce() : () -> ()
      ggk.yield
    } consumers {
    ^bb0(%consumer: i32):
      llvm.call @consume(%consumer) : (i32) -> ()
      ggk.yield
    }
    llvm.return
  }
}
