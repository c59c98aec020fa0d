// RUN: ggc-opt %s -ggk-warp-specialize | FileCheck %s

// Before: the kernel's roles as regions (each a call here), for sm_80.
// After: as on sm_90a the warpgroup of the thread (tid / 128) picks the
// role, but without setmaxnreg no register count moves, and the producer,
// whose loads are per-thread cp.async copies, runs on all of warpgroup 0's
// threads, not the leader alone.
// CHECK-LABEL: llvm.func @roles
// CHECK-SAME: (%[[TID:[^:]*]]: i32, %{{[^:]*}}: i1)
// CHECK: %[[WG:.*]] = arith.divui %[[TID]], %c128_i32
// CHECK: %[[IS_PRODUCER:.*]] = arith.cmpi eq, %[[WG]], %c0_i32
// CHECK-NEXT: scf.if %[[IS_PRODUCER]] {
// CHECK-NEXT: llvm.call @produce() : () -> ()
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[INDEX:.*]] = arith.subi %[[WG]], %[[ONE]]
// CHECK-NEXT: %[[UNIFORM:.*]] = ggk.warp_broadcast %[[INDEX]]
// CHECK-NEXT: llvm.call @consume(%[[UNIFORM]]) : (i32) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: llvm.return
module attributes {gg.target = "sm_80"} {
  llvm.func @produce()
  llvm.func @consume(i32)
  llvm.func @roles(%tid: i32, %leader: i1) {
    ggk.warp_specialize %tid, %leader attributes {
        plan = #gg.kernel_plan<promotion = serial, scales = none,
                               registers = [40, 240], staging = none>}
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
