// RUN: ggc-opt %s -split-input-file -ggk-lower-ring-test-wait | FileCheck %s

// Before: the producer's wait for a free stage and a consumer's wait for a
// loaded stage, on their barriers and phase parities, inside K loops (no
// commit: without TMA the loads arrive per thread). After, for sm_80: a
// loop where each wait was, polling mbarrier.test.wait (the parity form:
// an i32 operand) on the barrier and parity while it reports the phase
// incomplete, sleeping 32 ns between polls; no ggk op is left.
// CHECK-LABEL: llvm.func @ring
// CHECK-SAME: (%[[EMPTY:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[PARITY:[^:]*]]: i32)
// CHECK: scf.for
// CHECK-NEXT: %[[FLIPPED:.*]] = arith.xori %[[PARITY]], %{{.*}}
// CHECK-NEXT: scf.while : () -> () {
// CHECK-NEXT: %[[FREE:.*]] = nvvm.mbarrier.test.wait %[[EMPTY]], %[[FLIPPED]] : !llvm.ptr<3>, i32 -> i1
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[BUSY:.*]] = arith.xori %[[FREE]], %[[TRUE]] : i1
// CHECK-NEXT: scf.condition(%[[BUSY]])
// CHECK-NEXT: } do {
// CHECK-NEXT: %[[NS:.*]] = arith.constant 32 : i32
// CHECK-NEXT: nvvm.nanosleep %[[NS]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: llvm.call @load()
// CHECK: scf.for
// CHECK-NEXT: scf.while : () -> () {
// CHECK-NEXT: %[[LOADED:.*]] = nvvm.mbarrier.test.wait %[[FULL]], %[[PARITY]] : !llvm.ptr<3>, i32 -> i1
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[WAITING:.*]] = arith.xori %[[LOADED]], %[[TRUE]] : i1
// CHECK-NEXT: scf.condition(%[[WAITING]])
// CHECK-NEXT: } do {
// CHECK-NEXT: %[[NS:.*]] = arith.constant 32 : i32
// CHECK-NEXT: nvvm.nanosleep %[[NS]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: llvm.call @compute()
llvm.func @load()
llvm.func @compute()
llvm.func @ring(%empty: !llvm.ptr<3>, %full: !llvm.ptr<3>, %parity: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i32
  scf.for %k = %c0 to %c4 step %c1 {
    %previous = arith.xori %parity, %one : i32
    ggk.acquire_stage %empty, %previous
    llvm.call @load() : () -> ()
  }
  scf.for %k = %c0 to %c4 step %c1 {
    ggk.wait_stage %full, %parity
    llvm.call @compute() : () -> ()
  }
  llvm.return
}

// -----

// A commit of bytes (TMA's transaction count, which sm_90a's M-major A
// load arms) lowers to nothing here: the loads arrive on the full barrier
// per thread.
// CHECK-LABEL: llvm.func @commit
// CHECK: scf.while
// CHECK: nvvm.mbarrier.test.wait
// CHECK-NOT: ggk.commit_stage
// CHECK: llvm.return
llvm.func @commit(%empty: !llvm.ptr<3>, %full: !llvm.ptr<3>, %parity: i32) {
  %bytes = arith.constant 32768 : i32
  ggk.acquire_stage %empty, %parity
  ggk.commit_stage %full, %bytes
  llvm.return
}
