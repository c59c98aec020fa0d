// RUN: ggc-opt %s -split-input-file -ggk-lower-mma-sync -verify-diagnostics

// ldmatrix transposes 16-bit elements only: an f32 B given N-major has no
// lowering.
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @f32_b_n_major(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  // expected-error @+1 {{has no mma.sync lowering yet: it takes bf16 or f16 operands, or FP8 and f32 ones K-major}}
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = f32, b_type = f32,
      k_per_step = 8, block_k = 32, first_step = 0, steps = 1,
      fresh, b_mn_major} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}

// -----

// ldmatrix transposes 16-bit elements only: an M-major FP8 A has no
// lowering.
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @a_mn_major(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  // expected-error @+1 {{has no mma.sync lowering yet: it takes bf16 or f16 operands, or FP8 and f32 ones K-major}}
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = f8E4M3FN, b_type = f8E4M3FN,
      k_per_step = 32, block_k = 128, first_step = 0, steps = 1, fresh,
      a_mn_major} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}
