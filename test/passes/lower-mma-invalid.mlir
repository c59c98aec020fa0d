// RUN: ggc-opt %s -ggk-lower-mma -verify-diagnostics

// wgmma computes a warpgroup's m64 fragment: its warps cannot split the
// columns (warp_columns = 2 is the mma.sync lowering's).
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @two_warp_columns(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  // expected-error @+1 {{splits its warps' columns, which wgmma's m64 fragment cannot: sm_90a takes warp_columns = 1}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = bf16, b_type = bf16, n = 32,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1,
      warp_columns = 2} : !acc
  llvm.return %r : !acc
}
