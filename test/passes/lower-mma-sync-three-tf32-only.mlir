// RUN: ggc-opt %s -ggk-lower-mma-sync=three-tf32-only | FileCheck %s

// sm_90a's list runs the mma.sync lowering for f32 accuracy only: the
// three_tf32 MMA becomes mma.sync, the bf16 one and the fences, commits
// and waits stay for ggk-lower-mma (wgmma).
// CHECK-LABEL: llvm.func @mixed
// CHECK: ggk.mma_fence
// CHECK: nvvm.mma.sync
// CHECK: ggk.mma {{.*}}a_type = bf16
// CHECK: ggk.mma_commit
// CHECK: ggk.mma_wait
!acc4 = !llvm.struct<(f32, f32, f32, f32)>
!acc8 = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @mixed(%acc4: !acc4, %acc8: !acc8, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) {
  %acc4_t = builtin.unrealized_conversion_cast %acc4 : !acc4 to !ggk.acc<64x8xf32>
  %acc8_t = builtin.unrealized_conversion_cast %acc8 : !acc8 to !ggk.acc<64x16xf32>
  ggk.mma_fence
  %r = ggk.mma %acc4_t, %a, %b attributes {a_type = f32, b_type = f32,
      k_per_step = 8, block_k = 32, first_step = 0, steps = 1,
      three_tf32} : !ggk.acc<64x8xf32>
  %s = ggk.mma %acc8_t, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1} : !ggk.acc<64x16xf32>
  ggk.mma_commit
  ggk.mma_wait attributes {pending = 0}
  llvm.return
}
