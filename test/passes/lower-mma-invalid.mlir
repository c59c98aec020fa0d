// RUN: ggc-opt %s -split-input-file -ggk-lower-mma -verify-diagnostics

// wgmma computes a warpgroup's m64 fragment: its warps cannot split the
// columns (warp_columns = 2 is the mma.sync lowering's).
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @two_warp_columns(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x32xf32, warp_columns = 2>
  // expected-error @+1 {{splits its warps' columns, which wgmma's m64 fragment cannot: sm_90a takes warp_columns = 1}}
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1} : !ggk.acc<64x32xf32, warp_columns = 2>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x32xf32, warp_columns = 2> to !acc
  llvm.return %r_s : !acc
}

// -----

// f32 accuracy splits the operands in registers: not wgmma's.
!acc8 = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @three_tf32(%acc: !acc8, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc8 {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc8 to !ggk.acc<64x16xf32>
  // expected-error @+1 {{splits f32 operands in registers (three_tf32), which wgmma, reading shared memory, cannot: ggk-lower-mma-sync lowers it}}
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = f32, b_type = f32,
      k_per_step = 8, block_k = 32, first_step = 0, steps = 1,
      three_tf32} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc8
  llvm.return %r_s : !acc8
}
