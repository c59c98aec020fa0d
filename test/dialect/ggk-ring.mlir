// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The ring's waits print as they parse: the producer's wait for a free
// stage (its empty barrier) and a consumer's wait for a loaded one (its
// full barrier), each on the parity of the barrier's phase.
// CHECK-LABEL: llvm.func @round_trip
// CHECK: ggk.acquire_stage %{{.*}}, %{{.*}}
// CHECK-NEXT: ggk.commit_stage %{{.*}}, %{{.*}}
// CHECK-NEXT: ggk.wait_stage %{{.*}}, %{{.*}}
// CHECK-NEXT: ggk.release_stage %{{.*}} attributes {cluster = 1 : i64}
llvm.func @round_trip(%empty: !llvm.ptr<3>, %full: !llvm.ptr<3>, %parity: i32) {
  ggk.acquire_stage %empty, %parity
  ggk.commit_stage %full, %parity
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

// -----

llvm.func @wide_bytes(%bar: !llvm.ptr<3>, %bytes: i64) {
  // expected-error @+1 {{'ggk.commit_stage' op operand #1 must be 32-bit signless integer}}
  "ggk.commit_stage"(%bar, %bytes) : (!llvm.ptr<3>, i64) -> ()
  llvm.return
}

// -----

// An MN-major tile's load prints as it parses.
// CHECK-LABEL: llvm.func @mn_major
// CHECK: ggk.load_mn_major_tile %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}] attributes {chunk_bytes = 8192 : i64, chunk_rows = 64 : i64, chunks = 2 : i64}
llvm.func @mn_major(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr, %k: i32, %row: i32) {
  ggk.load_mn_major_tile %dst, %full from(%map) at[%k, %row]
      attributes {chunks = 2, chunk_rows = 64, chunk_bytes = 8192}
  llvm.return
}

// -----

llvm.func @no_chunks(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr, %k: i32, %row: i32) {
  // expected-error @+1 {{needs chunks >= 1 and chunk_rows >= 1, got 0 and 64}}
  ggk.load_mn_major_tile %dst, %full from(%map) at[%k, %row]
      attributes {chunks = 0, chunk_rows = 64, chunk_bytes = 8192}
  llvm.return
}

// -----

llvm.func @torn_rows(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr, %k: i32, %row: i32) {
  // expected-error @+1 {{chunk_bytes must be a positive multiple of 128 (whole swizzled rows), got 8200}}
  ggk.load_mn_major_tile %dst, %full from(%map) at[%k, %row]
      attributes {chunks = 2, chunk_rows = 64, chunk_bytes = 8200}
  llvm.return
}
