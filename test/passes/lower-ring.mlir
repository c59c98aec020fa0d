// RUN: ggc-opt %s -ggk-lower-ring | FileCheck %s

// Before: the producer's wait for a free stage and its commit of the bytes
// its loads will bring, and a consumer's wait for a loaded stage, on their
// barriers and phase parities, inside K loops (the producer waits on the
// parity before the stage's current phase). After, for sm_90a: one mbarrier
// try-wait loop on each barrier and parity where each wait was, an arrive
// with expect_tx where the commit was; no ggk op is left.
// CHECK-LABEL: llvm.func @ring
// CHECK-SAME: (%[[EMPTY:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[PARITY:[^:]*]]: i32)
// CHECK: scf.for
// CHECK: %[[FLIPPED:.*]] = arith.xori %[[PARITY]], %{{.*}}
// CHECK-NEXT: %[[TICKS:.*]] = arith.constant 10000000 : i32
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity %[[EMPTY]], %[[FLIPPED]], %[[TICKS]] : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: ggk.mbarrier_arrive_expect_tx %[[FULL]], %[[BYTES:.*]]
// CHECK-NEXT: llvm.call @load()
// CHECK: nvvm.mbarrier.try_wait.parity %[[FULL]], %[[PARITY]], %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: llvm.call @compute()
// CHECK-NOT: ggk.
llvm.func @load()
llvm.func @compute()
llvm.func @ring(%empty: !llvm.ptr<3>, %full: !llvm.ptr<3>, %parity: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i32
  %bytes = arith.constant 32768 : i32
  scf.for %k = %c0 to %c4 step %c1 {
    %previous = arith.xori %parity, %one : i32
    ggk.acquire_stage %empty, %previous
    ggk.commit_stage %full, %bytes
    llvm.call @load() : () -> ()
  }
  scf.for %k = %c0 to %c4 step %c1 {
    ggk.wait_stage %full, %parity
    llvm.call @compute() : () -> ()
  }
  llvm.return
}
