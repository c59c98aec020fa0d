// RUN: ggc-opt %s -split-input-file -ggk-lower-mma-sync -verify-diagnostics

// ldmatrix transposes 16-bit elements only: an f32 B given N-major has no
// lowering.
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @f32_b_n_major(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  // expected-error @+1 {{has no mma.sync lowering yet: it takes bf16, f16, FP8 or f32 (B K-major) operands and K-major A}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = f32, b_type = f32,
      n = 16, k_per_step = 8, block_k = 32, first_step = 0, steps = 1,
      fresh, b_mn_major} : !acc
  llvm.return %r : !acc
}

// -----

// A's fragment is loaded from rows of K: an M-major A has no lowering.
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @a_mn_major(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  // expected-error @+1 {{has no mma.sync lowering yet: it takes bf16, f16, FP8 or f32 (B K-major) operands and K-major A}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = bf16, b_type = bf16, n = 16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1, fresh,
      a_mn_major} : !acc
  llvm.return %r : !acc
}
