// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The ring's waits print as they parse: the producer's wait for a free
// stage (its empty barrier) and a consumer's wait for a loaded one (its
// full barrier), each on the parity of the barrier's phase.
// CHECK-LABEL: llvm.func @round_trip
// CHECK: ggk.acquire_stage %{{.*}}, %{{.*}}
// CHECK-NEXT: ggk.wait_stage %{{.*}}, %{{.*}}
// CHECK-NEXT: ggk.release_stage %{{.*}} attributes {cluster = 1 : i64}
llvm.func @round_trip(%empty: !llvm.ptr<3>, %full: !llvm.ptr<3>, %parity: i32) {
  ggk.acquire_stage %empty, %parity
  ggk.wait_stage %full, %parity
  ggk.release_stage %empty attributes {cluster = 1}
  llvm.return
}

// -----

llvm.func @global_barrier(%bar: !llvm.ptr<1>, %parity: i32) {
  // expected-error @+1 {{'ggk.acquire_stage' op operand #0 must be LLVM pointer in address space 3}}
  "ggk.acquire_stage"(%bar, %parity) : (!llvm.ptr<1>, i32) -> ()
  llvm.return
}

// -----

llvm.func @wide_parity(%bar: !llvm.ptr<3>, %parity: i64) {
  // expected-error @+1 {{'ggk.wait_stage' op operand #1 must be 32-bit signless integer}}
  "ggk.wait_stage"(%bar, %parity) : (!llvm.ptr<3>, i64) -> ()
  llvm.return
}
