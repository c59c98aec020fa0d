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

// Before: one f8 K step on stage 1 of a ring (A's stages 16384 bytes
// apart from byte 0, B's 24576 apart from byte 65536), the stage a
// constant added to an opaque zero, and A's tile a warpgroup's rows into
// its stage (as ring_stages = constant issues them). After: each tile's descriptor
// is computed on its address without the constant parts (the zero's
// stage offset, the warpgroup's rows), plus those parts in 16-byte units:
// A 16384 / 16 = 1024, B (65536 + 24576) / 16 = 5632; the stages of a turn
// then share one descriptor computation.
// CHECK-LABEL: llvm.func @constant_stage
// CHECK-SAME: (%[[ACC:[^:]*]]: !llvm.struct<{{.*}}>, %[[SMEM:[^:]*]]: !llvm.ptr<3>, %[[ZERO:[^:]*]]: i32, %[[ROWS:[^:]*]]: i64)
// CHECK: %[[AZ:.*]] = arith.extsi %[[ZERO]] : i32 to i64
// CHECK: %[[AZOFF:.*]] = arith.muli %[[AZ]], %c16384_i64
// CHECK: %[[AROOT0:.*]] = llvm.getelementptr %[[SMEM]][%[[AZOFF]]]
// CHECK: %[[AROOT:.*]] = llvm.getelementptr %[[AROOT0]][%[[ROWS]]]
// CHECK: llvm.ptrtoint %[[AROOT]]
// CHECK: %[[ADESC:.*]] = arith.ori
// CHECK: %[[ATILE:.*]] = arith.addi %[[ADESC]], %c1024_i64
// CHECK: %[[BZOFF:.*]] = arith.muli %{{.*}}, %c24576_i64
// CHECK: %[[BROOT:.*]] = llvm.getelementptr %[[SMEM]][%[[BZOFF]]]
// CHECK: llvm.ptrtoint %[[BROOT]]
// CHECK: %[[BDESC:.*]] = arith.ori
// CHECK: %[[BTILE:.*]] = arith.addi %[[BDESC]], %c5632_i64
// CHECK: %[[A0:.*]] = arith.addi %[[ATILE]], %c0_i64
// CHECK: %[[B0:.*]] = arith.addi %[[BTILE]], %c0_i64
// CHECK: nvvm.wgmma.mma_async %[[A0]], %[[B0]], %[[ACC]]
llvm.func @constant_stage(%acc: !acc, %smem: !llvm.ptr<3>, %zero: i32, %rows: i64) -> !acc {
  %c1 = arith.constant 1 : i32
  %a_stride = arith.constant 16384 : i64
  %b_stride = arith.constant 24576 : i64
  %b_start = arith.constant 65536 : i64
  %stage = arith.addi %zero, %c1 : i32
  %wide = arith.extsi %stage : i32 to i64
  %a_offset = arith.muli %wide, %a_stride : i64
  %a_stage = llvm.getelementptr %smem[%a_offset] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  %a = llvm.getelementptr %a_stage[%rows] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  %b_scaled = arith.muli %wide, %b_stride : i64
  %b_offset = arith.addi %b_start, %b_scaled : i64
  %b = llvm.getelementptr %smem[%b_offset] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = f8E4M3FN, b_type = f8E4M3FN,
      k_per_step = 32, block_k = 128, first_step = 0, steps = 1, fresh} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}

// A multiplication by a negative constant is not peeled, nor the constants
// beside it: the rest, smem - 16384 (zero + 1), would lie below shared
// memory's first address and its descriptor field wrap. The descriptor is
// the whole address's, with nothing added.
// CHECK-LABEL: llvm.func @negative_factor
// CHECK: %[[ADDR:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: llvm.ptrtoint %[[ADDR]]
// CHECK-NOT: %c3072_i64
// CHECK: nvvm.wgmma.mma_async
llvm.func @negative_factor(%acc: !acc, %smem: !llvm.ptr<3>, %zero: i32) -> !acc {
  %c1 = arith.constant 1 : i32
  %minus = arith.constant -16384 : i64
  %start = arith.constant 49152 : i64
  %stage = arith.addi %zero, %c1 : i32
  %wide = arith.extsi %stage : i32 to i64
  %back = arith.muli %wide, %minus : i64
  %offset = arith.addi %start, %back : i64
  %a = llvm.getelementptr %smem[%offset] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  %r = ggk.mma %acc_t, %a, %a attributes {a_type = f8E4M3FN, b_type = f8E4M3FN,
      k_per_step = 32, block_k = 128, first_step = 0, steps = 1, fresh} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}

// Constants that are no whole 16-byte units (24 bytes), and a zero
// extension (whose constant the peeling would read signed), are not
// peeled: each descriptor is its whole address's, with nothing added.
// CHECK-LABEL: llvm.func @not_peeled
// CHECK: %[[A:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: %[[B:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: llvm.ptrtoint %[[A]]
// CHECK: %[[ADESC:.*]] = arith.ori
// CHECK: llvm.ptrtoint %[[B]]
// CHECK: %[[BDESC:.*]] = arith.ori
// CHECK: %[[A0:.*]] = arith.addi %[[ADESC]], %c0_i64
// CHECK: %[[B0:.*]] = arith.addi %[[BDESC]], %c0_i64
// CHECK: nvvm.wgmma.mma_async %[[A0]], %[[B0]]
llvm.func @not_peeled(%acc: !acc, %smem: !llvm.ptr<3>, %zero: i32) -> !acc {
  %c24 = arith.constant 24 : i64
  %c1 = arith.constant 1 : i32
  %c16384 = arith.constant 16384 : i64
  %wide0 = arith.extsi %zero : i32 to i64
  %odd = arith.addi %wide0, %c24 : i64
  %a = llvm.getelementptr %smem[%odd] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  %stage = arith.addi %zero, %c1 : i32
  %wide = arith.extui %stage : i32 to i64
  %offset = arith.muli %wide, %c16384 : i64
  %b = llvm.getelementptr %smem[%offset] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = f8E4M3FN, b_type = f8E4M3FN,
      k_per_step = 32, block_k = 128, first_step = 0, steps = 1, fresh} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}
