// RUN: ggc-opt %s -ggk-lower-mma -ggk-lower-accumulators | FileCheck %s

// Before: a consumer's K block as ggk ops: fence, the MMA of 2 K steps of
// bf16 tiles (A K-major, B N-major, n = 16, block_k = 64), commit, wait
// until one batch is pending. After, for sm_90a: each tile's descriptor
// once (start address >> 4 and 0x3FFF, or'ed with the fixed fields: A's
// leading byte offset 16, B's 64 x 128 = 8192 between its MN chunks, stride
// 1024, 128B swizzle), one wgmma per K step on the descriptors plus the
// step's offset in 16-byte units (A: 32 bytes a step = 2; B: 16 rows of
// 128 bytes = 128), the first step scaling the accumulator by zero
// (fresh); then wgmma's fence, commit and wait. No ggk op is left.
// CHECK-LABEL: llvm.func @k_block
// CHECK-SAME: (%[[ACC:[^:]*]]: !llvm.struct<{{.*}}>, %[[A:[^:]*]]: !llvm.ptr<3>, %[[B:[^:]*]]: !llvm.ptr<3>)
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[AADDR:.*]] = llvm.ptrtoint %[[A]] : !llvm.ptr<3> to i64
// CHECK: %[[ADESC:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64 : i64
// CHECK: %[[BADDR:.*]] = llvm.ptrtoint %[[B]] : !llvm.ptr<3> to i64
// CHECK: %[[BDESC:.*]] = arith.ori %{{.*}}, %c4611686293338849280_i64 : i64
// CHECK: %[[A0:.*]] = arith.addi %[[ADESC]], %c0_i64
// CHECK: %[[B0:.*]] = arith.addi %[[BDESC]], %c0_i64
// CHECK: %[[R0:.*]] = nvvm.wgmma.mma_async %[[A0]], %[[B0]], %[[ACC]], <m = 64, n = 16, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: %[[A1:.*]] = arith.addi %[[ADESC]], %c2_i64
// CHECK: %[[B1:.*]] = arith.addi %[[BDESC]], %c128_i64
// CHECK: %[[R1:.*]] = nvvm.wgmma.mma_async %[[A1]], %[[B1]], %[[R0]], <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: llvm.return %[[R1]]
// CHECK-NOT: ggk.
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @k_block(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  ggk.mma_fence
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 2, fresh,
      b_mn_major} : !ggk.acc<64x16xf32>
  ggk.mma_commit
  ggk.mma_wait attributes {pending = 1}
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}

// Before: one f8 K step (both tiles K-major) from a run-time step, as an
// MX 1x32 scale block issues it (`steps_from`). After: both tiles'
// descriptors move on by that many steps of 32 bytes (2 in 16-byte
// units) before the step's own offset.
// CHECK-LABEL: llvm.func @scale_block
// CHECK-SAME: (%[[ACC:[^:]*]]: !llvm.struct<{{.*}}>, %[[A:[^:]*]]: !llvm.ptr<3>, %[[B:[^:]*]]: !llvm.ptr<3>, %[[J:[^:]*]]: i32)
// CHECK: %[[ADESC:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64{{.*}} : i64
// CHECK: %[[BDESC:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64{{.*}} : i64
// CHECK: %[[STEPS:.*]] = arith.extsi %[[J]] : i32 to i64
// CHECK: %[[AOFF:.*]] = arith.muli %[[STEPS]], %c2_i64{{.*}}
// CHECK: %[[AJ:.*]] = arith.addi %[[ADESC]], %[[AOFF]]
// CHECK: %[[BOFF:.*]] = arith.muli %[[STEPS]], %c2_i64{{.*}}
// CHECK: %[[BJ:.*]] = arith.addi %[[BDESC]], %[[BOFF]]
// CHECK: %[[A0:.*]] = arith.addi %[[AJ]], %c0_i64{{.*}}
// CHECK: %[[B0:.*]] = arith.addi %[[BJ]], %c0_i64{{.*}}
// CHECK: nvvm.wgmma.mma_async %[[A0]], %[[B0]], %[[ACC]], <m = 64, n = 16, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
llvm.func @scale_block(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %j: i32) -> !acc {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  %r = ggk.mma %acc_t, %a, %b steps_from(%j) attributes {a_type = f8E4M3FN,
      b_type = f8E4M3FN, k_per_step = 32, block_k = 128, first_step = 0, steps = 1,
      fresh} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}
