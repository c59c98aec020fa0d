// RUN: ggc-opt %s -split-input-file -ggk-lower-mma-sync -verify-diagnostics

// mma.sync m16n8k16 here takes bf16 or f16: FP8 operands have no lowering.
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @f8(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  // expected-error @+1 {{has no mma.sync lowering yet: it takes bf16 or f16 operands and K-major A}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = f8E4M3FN, b_type = f8E4M3FN,
      n = 16, k_per_step = 32, block_k = 128, first_step = 0, steps = 1,
      fresh} : !acc
  llvm.return %r : !acc
}

// -----

// A's fragment is loaded from rows of K: an M-major A has no lowering.
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @a_mn_major(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  // expected-error @+1 {{has no mma.sync lowering yet: it takes bf16 or f16 operands and K-major A}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = bf16, b_type = bf16, n = 16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1, fresh,
      a_mn_major} : !acc
  llvm.return %r : !acc
}
