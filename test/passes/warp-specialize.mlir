// RUN: ggc-opt %s -ggk-warp-specialize | FileCheck %s

// Before: the kernel's roles as regions (each a call here) and the plan's
// registers [24, 240]. After: the warpgroup of the thread (tid / 128);
// warpgroup 0 lowers its registers to 24 and runs the producer in the
// leader thread only; the others raise theirs to 240 and run the consumers
// on their index, warpgroup - 1, broadcast from lane 0.
// CHECK-LABEL: llvm.func @roles
// CHECK-SAME: (%[[TID:[^:]*]]: i32, %[[LEADER:[^:]*]]: i1)
// CHECK: %[[WG:.*]] = arith.divui %[[TID]], %c128_i32
// CHECK: %[[IS_PRODUCER:.*]] = arith.cmpi eq, %[[WG]], %c0_i32
// CHECK-NEXT: scf.if %[[IS_PRODUCER]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 24
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK-NEXT: llvm.call @produce() : () -> ()
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 240
// CHECK: %[[INDEX:.*]] = arith.subi %[[WG]], %c1_i32
// CHECK: %[[UNIFORM:.*]] = ggk.warp_broadcast %[[INDEX]]
// CHECK-NEXT: llvm.call @consume(%[[UNIFORM]]) : (i32) -> ()
// CHECK-NEXT: }
// CHECK-NOT: ggk.warp_specialize
llvm.func @produce()
llvm.func @consume(i32)
llvm.func @roles(%tid: i32, %leader: i1) {
  ggk.warp_specialize %tid, %leader attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
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

// Gathered rows of A (the plan's producer = all_threads): warpgroup 0 still
// gives registers back, but every one of its threads runs the producer
// (each copies its share of A's rows; the body guards its TMA loads).
// CHECK-LABEL: llvm.func @all_threads
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK-NEXT: llvm.call @produce() : () -> ()
// CHECK-NEXT: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 232
llvm.func @all_threads(%tid: i32, %leader: i1) {
  ggk.warp_specialize %tid, %leader attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [40, 232], staging = swizzled,
                             producer = all_threads>,
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
