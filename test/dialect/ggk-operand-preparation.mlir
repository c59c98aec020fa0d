// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.clear_k_outside and ggk.transpose_to_k_major print as they parse.
// CHECK-LABEL: llvm.func @prepare
// CHECK: ggk.clear_k_outside %{{.*}}, %{{.*}} keep [%{{.*}}, %{{.*}}) attributes {a_mn_major, a_rows = 128 : i64, b_columns = 256 : i64, b_mn_major, block_k = 64 : i64, consumer_threads = 256 : i64, element_bytes = 2 : i64}
// CHECK: ggk.clear_k_outside %{{.*}}, %{{.*}} keep [%{{.*}}, %{{.*}}) attributes {a_rows = 128 : i64, b_columns = 128 : i64, block_k = 128 : i64, consumer_threads = 256 : i64, element_bytes = 1 : i64}
// CHECK: ggk.transpose_to_k_major %{{.*}} to %{{.*}} attributes {block_k = 32 : i64, consumer_threads = 256 : i64, mn_extent = 128 : i64}
llvm.func @prepare(%a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %copy: !llvm.ptr<3>,
                   %lo: i32, %hi: i32) {
  ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {a_mn_major,
      b_mn_major, block_k = 64, a_rows = 128, b_columns = 256,
      element_bytes = 2, consumer_threads = 256}
  ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {block_k = 128,
      a_rows = 128, b_columns = 128, element_bytes = 1,
      consumer_threads = 256}
  ggk.transpose_to_k_major %b to %copy attributes {block_k = 32,
      mn_extent = 128, consumer_threads = 256}
  llvm.return
}

// -----

llvm.func @clear_global(%a: !llvm.ptr<1>, %b: !llvm.ptr<3>, %lo: i32, %hi: i32) {
  // The tiles are in shared memory (the custom form types them so; the
  // generic form can say otherwise).
  // expected-error @+1 {{operand #0 must be LLVM pointer in address space 3}}
  "ggk.clear_k_outside"(%a, %b, %lo, %hi) <{block_k = 64 : i64,
      a_rows = 128 : i64, b_columns = 128 : i64, element_bytes = 2 : i64,
      consumer_threads = 256 : i64}> : (!llvm.ptr<1>, !llvm.ptr<3>, i32, i32) -> ()
  llvm.return
}

// -----

llvm.func @clear_element_bytes(%a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %lo: i32, %hi: i32) {
  // expected-error @+1 {{element_bytes must be 1, 2 or 4, got 8}}
  ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {block_k = 16,
      a_rows = 128, b_columns = 128, element_bytes = 8, consumer_threads = 256}
  llvm.return
}

// -----

llvm.func @clear_block_k(%a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %lo: i32, %hi: i32) {
  // expected-error @+1 {{block_k must fill one 128-byte swizzled row (64 elements of 2 bytes), got 128}}
  ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {block_k = 128,
      a_rows = 128, b_columns = 128, element_bytes = 2, consumer_threads = 256}
  llvm.return
}

// -----

llvm.func @clear_mn_major_extent(%a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %lo: i32, %hi: i32) {
  // expected-error @+1 {{b_columns of an MN-major tile must be a multiple of 64, got 96}}
  ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {b_mn_major,
      block_k = 64, a_rows = 128, b_columns = 96, element_bytes = 2,
      consumer_threads = 256}
  llvm.return
}

// -----

llvm.func @clear_rows(%a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %lo: i32, %hi: i32) {
  // expected-error @+1 {{a_rows must be positive, got 0}}
  ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {block_k = 64,
      a_rows = 0, b_columns = 128, element_bytes = 2, consumer_threads = 256}
  llvm.return
}

// -----

llvm.func @clear_threads(%a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %lo: i32, %hi: i32) {
  // expected-error @+1 {{consumer_threads must be a positive multiple of 128 (whole warpgroups), got 96}}
  ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {block_k = 64,
      a_rows = 128, b_columns = 128, element_bytes = 2, consumer_threads = 96}
  llvm.return
}

// -----

llvm.func @transpose_block_k(%src: !llvm.ptr<3>, %dst: !llvm.ptr<3>) {
  // expected-error @+1 {{block_k must be 32 (one 128-byte row of f32), got 64}}
  ggk.transpose_to_k_major %src to %dst attributes {block_k = 64,
      mn_extent = 128, consumer_threads = 256}
  llvm.return
}

// -----

llvm.func @transpose_extent(%src: !llvm.ptr<3>, %dst: !llvm.ptr<3>) {
  // expected-error @+1 {{mn_extent must be a positive multiple of 32 (128-byte column chunks of f32), got 48}}
  ggk.transpose_to_k_major %src to %dst attributes {block_k = 32,
      mn_extent = 48, consumer_threads = 256}
  llvm.return
}

// -----

llvm.func @transpose_threads(%src: !llvm.ptr<3>, %dst: !llvm.ptr<3>) {
  // expected-error @+1 {{consumer_threads must be a positive multiple of 128 (whole warpgroups), got 0}}
  ggk.transpose_to_k_major %src to %dst attributes {block_k = 32,
      mn_extent = 128, consumer_threads = 0}
  llvm.return
}
