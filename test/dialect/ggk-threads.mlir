// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The thread ops and the async copies print as they parse.
// CHECK-LABEL: llvm.func @round_trip
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK-NEXT: %{{.*}} = ggk.warp_broadcast %[[TID]]
// CHECK-NEXT: %{{.*}} = ggk.warp_shuffle_xor %[[TID]], 2
// CHECK-NEXT: ggk.warp_sync
// CHECK-NEXT: ggk.sync_threads %{{.*}}, %{{.*}}
// CHECK-NEXT: ggk.copy_async %{{.*}}, %{{.*}} attributes {bytes = 4 : i64}
// CHECK-NEXT: ggk.copy_async_commit
// CHECK-NEXT: ggk.copy_async_wait attributes {pending = 1 : i64}
// CHECK-NEXT: %{{.*}} = ggk.block_index
// CHECK-NEXT: %{{.*}} = ggk.grid_size
// CHECK-NEXT: %{{.*}} = ggk.cluster_rank
// CHECK-NEXT: ggk.fence_async_shared
llvm.func @round_trip(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>, %id: i32, %n: i32) -> i32 {
  %tid = ggk.thread_index
  %uniform = ggk.warp_broadcast %tid
  %neighbour = ggk.warp_shuffle_xor %tid, 2
  ggk.warp_sync
  ggk.sync_threads %id, %n
  ggk.copy_async %dst, %src attributes {bytes = 4}
  ggk.copy_async_commit
  ggk.copy_async_wait attributes {pending = 1}
  %cta = ggk.block_index
  %ctas = ggk.grid_size
  %rank = ggk.cluster_rank
  ggk.fence_async_shared
  llvm.return %uniform : i32
}

// -----

llvm.func @odd_copy(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>) {
  // expected-error @+1 {{bytes must be 4, 8 or 16, got 2}}
  ggk.copy_async %dst, %src attributes {bytes = 2}
  llvm.return
}

// -----

// Without TMA: a 16-byte copy that reads only its first %n bytes (the rest
// zero-filled) and an arrival on a barrier once the thread's copies land
// print as they parse.
// CHECK-LABEL: llvm.func @zero_fill
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[SRC:[^:]*]]: !llvm.ptr<1>, %[[N:[^:]*]]: i32, %[[FULL:[^:]*]]: !llvm.ptr<3>)
// CHECK-NEXT: ggk.copy_async %[[DST]], %[[SRC]] read(%[[N]]) attributes {bytes = 16 : i64}
// CHECK-NEXT: ggk.copy_async_arrive %[[FULL]]
llvm.func @zero_fill(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>, %n: i32,
                     %full: !llvm.ptr<3>) {
  ggk.copy_async %dst, %src read(%n) attributes {bytes = 16}
  ggk.copy_async_arrive %full
  llvm.return
}

// -----

// The zero fill (read) is cp.async's 16-byte form only.
llvm.func @partial_word(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>, %n: i32) {
  // expected-error @+1 {{reads part of its bytes (read) only when it copies 16, got bytes = 4}}
  ggk.copy_async %dst, %src read(%n) attributes {bytes = 4}
  llvm.return
}

// -----

llvm.func @arrive_global(%full: !llvm.ptr<1>) {
  // expected-error @+1 {{'ggk.copy_async_arrive' op operand #0 must be LLVM pointer in address space 3}}
  "ggk.copy_async_arrive"(%full) : (!llvm.ptr<1>) -> ()
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

// -----

llvm.func @shuffle_lanes(%v: i32) -> i32 {
  // expected-error @+1 {{attribute 'lanes' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 1 whose maximum value is 31}}
  %x = ggk.warp_shuffle_xor %v, 32
  llvm.return %x : i32
}
