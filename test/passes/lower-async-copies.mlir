// RUN: ggc-opt %s -ggk-lower-async-copies | FileCheck %s

// Before: a lane's copy of one 4-byte scale into its slot, the batch
// committed, then a wait until at most one batch is unfinished. After:
// cp.async (cached at all levels), its commit and its wait.
// CHECK-LABEL: llvm.func @copies
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[SRC:[^:]*]]: !llvm.ptr<1>)
// CHECK: nvvm.cp.async.shared.global %[[DST]], %[[SRC]], 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NOT: ggk.
llvm.func @copies(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>) {
  ggk.copy_async %dst, %src attributes {bytes = 4}
  ggk.copy_async_commit
  ggk.copy_async_wait attributes {pending = 1}
  llvm.return
}
