// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The thread ops and the async copies print as they parse.
// CHECK-LABEL: llvm.func @round_trip
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK-NEXT: %{{.*}} = ggk.warp_broadcast %[[TID]]
// CHECK-NEXT: ggk.warp_sync
// CHECK-NEXT: ggk.sync_threads %{{.*}}, %{{.*}}
// CHECK-NEXT: ggk.copy_async %{{.*}}, %{{.*}} attributes {bytes = 4 : i64}
// CHECK-NEXT: ggk.copy_async_commit
// CHECK-NEXT: ggk.copy_async_wait attributes {pending = 1 : i64}
llvm.func @round_trip(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>, %id: i32, %n: i32) -> i32 {
  %tid = ggk.thread_index
  %uniform = ggk.warp_broadcast %tid
  ggk.warp_sync
  ggk.sync_threads %id, %n
  ggk.copy_async %dst, %src attributes {bytes = 4}
  ggk.copy_async_commit
  ggk.copy_async_wait attributes {pending = 1}
  llvm.return %uniform : i32
}

// -----

llvm.func @odd_copy(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>) {
  // expected-error @+1 {{bytes must be 4, 8 or 16, got 2}}
  ggk.copy_async %dst, %src attributes {bytes = 2}
  llvm.return
}

// -----

llvm.func @from_shared(%dst: !llvm.ptr<3>, %src: !llvm.ptr<3>) {
  // expected-error @+1 {{'ggk.copy_async' op operand #1 must be LLVM pointer in address space 1}}
  "ggk.copy_async"(%dst, %src) {bytes = 4 : i64} : (!llvm.ptr<3>, !llvm.ptr<3>) -> ()
  llvm.return
}

// -----

llvm.func @negative_wait() {
  // expected-error @+1 {{pending must be >= 0, got -2}}
  ggk.copy_async_wait attributes {pending = -2}
  llvm.return
}

// -----

llvm.func @wide_index(%v: i64) {
  // expected-error @+1 {{'ggk.warp_broadcast' op operand #0 must be 32-bit signless integer}}
  %u = "ggk.warp_broadcast"(%v) : (i64) -> i32
  llvm.return
}
