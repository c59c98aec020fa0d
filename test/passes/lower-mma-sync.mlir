// RUN: ggc-opt %s -split-input-file -ggk-lower-mma-sync -ggk-lower-accumulators -canonicalize | FileCheck %s

// Before: a consumer's K block as ggk ops: fence, the MMA of one K step
// of bf16 tiles (A and B K-major, n = 16, fresh), commit, wait. After, for
// sm_80: the warp's A fragment, rows 16 (warp % 4) + lane % 16, 16-byte
// piece lane / 16 of the step, swizzled, by one ldmatrix x4; B's 16
// columns by one ldmatrix x4 (registers b0, b1 of columns 0-7, then of
// 8-15); one mma.sync m16n8k16 per 8 columns from a zero accumulator
// (fresh), its four results in the m64n16 fragment's registers 0-3 and
// 4-7. The fence, commit and wait lower to nothing; no ggk op is left.
// CHECK-LABEL: llvm.func @k_block
// CHECK-SAME: (%[[ACC:[^:]*]]: !llvm.struct<{{.*}}>, %[[A:[^:]*]]: !llvm.ptr<3>, %[[B:[^:]*]]: !llvm.ptr<3>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: ggk.mma
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32_i32
// CHECK: %[[W:.*]] = arith.divui %[[TID]], %c32_i32
// CHECK: %[[WARP:.*]] = arith.remui %[[W]], %c4_i32
// CHECK: %[[WARP_ROW:.*]] = arith.muli %[[WARP]], %c16_i32
// CHECK: %[[APIECE:.*]] = arith.divui %[[LANE]], %c16_i32
// CHECK: %[[LANE16:.*]] = arith.remui %[[LANE]], %c16_i32
// CHECK: %[[AROW:.*]] = arith.addi %[[WARP_ROW]], %[[LANE16]]
// CHECK: %[[AROW8:.*]] = arith.andi %[[AROW]], %c7_i32
// CHECK: arith.xori %[[APIECE]], %[[AROW8]]
// CHECK: %[[AAT:.*]] = llvm.getelementptr %[[A]]
// CHECK: %[[AFRAG:.*]] = nvvm.ldmatrix %[[AAT]] {{{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32{{.*}}} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: %[[A0:.*]] = llvm.extractvalue %[[AFRAG]][0]
// CHECK: %[[A1:.*]] = llvm.extractvalue %[[AFRAG]][1]
// CHECK: %[[A2:.*]] = llvm.extractvalue %[[AFRAG]][2]
// CHECK: %[[A3:.*]] = llvm.extractvalue %[[AFRAG]][3]
// CHECK: %[[BAT:.*]] = llvm.getelementptr %[[B]]
// CHECK: %[[BFRAG:.*]] = nvvm.ldmatrix %[[BAT]] {{{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32{{.*}}} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: %[[B0:.*]] = llvm.extractvalue %[[BFRAG]][0]
// CHECK: %[[B1:.*]] = llvm.extractvalue %[[BFRAG]][1]
// CHECK: %[[B2:.*]] = llvm.extractvalue %[[BFRAG]][2]
// CHECK: %[[B3:.*]] = llvm.extractvalue %[[BFRAG]][3]
// CHECK-NOT: nvvm.ldmatrix
// CHECK: %[[D0:.*]] = nvvm.mma.sync A[%[[A0]], %[[A1]], %[[A2]], %[[A3]]]  B[%[[B0]], %[[B1]]]  C[%[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]]]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: %[[D00:.*]] = llvm.extractvalue %[[D0]][0]
// CHECK: llvm.insertvalue %[[D00]], %[[ACC]][0]
// CHECK: %[[D1:.*]] = nvvm.mma.sync A[%[[A0]], %[[A1]], %[[A2]], %[[A3]]]  B[%[[B2]], %[[B3]]]  C[%[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]]]
// CHECK: %[[D13:.*]] = llvm.extractvalue %[[D1]][3]
// CHECK: %[[R:.*]] = llvm.insertvalue %[[D13]], %{{.*}}[7]
// CHECK-NEXT: llvm.return %[[R]]
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @k_block(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  ggk.mma_fence
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1, fresh} : !ggk.acc<64x16xf32>
  ggk.mma_commit
  ggk.mma_wait attributes {pending = 1}
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}

// -----

// An N-major B (step 1 of block_k = 64): its fragment is read from rows of
// K, 16 + lane % 8 (+ 8 for lanes 8-15 and 24-31), in 64-column chunks
// 64 * 128 = 8192 bytes apart, transposed by ldmatrix (layout col).
// CHECK-LABEL: llvm.func @b_n_major
// CHECK: nvvm.ldmatrix %{{.*}} {{{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK: %[[KROW0:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[KROW:.*]] = arith.addi %[[KROW0]], %c16_i32 : i32
// CHECK: %[[CHUNK:.*]] = arith.divui %{{.*}}, %c64_i32 : i32
// CHECK: arith.andi %[[KROW]], %c7_i32
// CHECK: arith.muli %[[KROW]], %c128_i32
// CHECK: arith.muli %[[CHUNK]], %c8192_i32
// CHECK: nvvm.ldmatrix %{{.*}} {{{.*}}layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @b_n_major(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 1, steps = 1, fresh,
      b_mn_major} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}

// -----

// n = 8, f16, not fresh: B's 8 columns by one ldmatrix x2; one mma.sync,
// its operands bitcast to f16 pairs, accumulating onto the fragment's four
// registers.
// CHECK-LABEL: llvm.func @n8
// CHECK-SAME: (%[[ACC:[^:]*]]: !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.ldmatrix %{{.*}} {{{.*}}num = 4 : i32
// CHECK: nvvm.ldmatrix %{{.*}} {{{.*}}layout = #nvvm.mma_layout<row>, num = 2 : i32{{.*}}} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>
// CHECK: %[[C0:.*]] = llvm.extractvalue %[[ACC]][0]
// CHECK: %[[C3:.*]] = llvm.extractvalue %[[ACC]][3]
// CHECK: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[%[[C0]], %{{.*}}, %{{.*}}, %[[C3]]]  {{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
!acc4 = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @n8(%acc: !acc4, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc4 {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc4 to !ggk.acc<64x8xf32>
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = f16, b_type = f16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1} : !ggk.acc<64x8xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x8xf32> to !acc4
  llvm.return %r_s : !acc4
}

// -----

// Two warp columns (gg-plan-kernel's choice before sm_90a), n = 32: warp w
// has rows 32 (w / 2) .. as two m16 blocks (+16 for the second) and
// columns 16 (w % 2) ..: two ldmatrix x4 for A, one for B's 16 columns,
// four mma.sync; m16 block i's 8-column block c goes to registers
// 4 (2 i + c) ..: block 1's first quad at 8.
// CHECK-LABEL: llvm.func @two_warp_columns
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[W:.*]] = arith.divui %[[TID]], %c32_i32
// CHECK: %[[WARP:.*]] = arith.remui %[[W]], %c4_i32
// CHECK: %[[WROW:.*]] = arith.divui %[[WARP]], %c2_i32
// CHECK: %[[ROW:.*]] = arith.muli %[[WROW]], %c32_i32
// CHECK: %[[WCOL:.*]] = arith.remui %[[WARP]], %c2_i32
// CHECK: %[[COL:.*]] = arith.muli %[[WCOL]], %c16_i32
// CHECK: arith.addi %[[ROW]], %{{.*}}
// CHECK: nvvm.ldmatrix {{.*}}num = 4
// CHECK: %[[ROW16:.*]] = arith.addi %[[ROW]], %c16_i32
// CHECK: arith.addi %[[ROW16]], %{{.*}}
// CHECK: nvvm.ldmatrix {{.*}}num = 4
// CHECK: arith.addi %[[COL]], %{{.*}}
// CHECK: nvvm.ldmatrix {{.*}}num = 4
// CHECK-NOT: nvvm.ldmatrix
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: %[[D2:.*]] = nvvm.mma.sync
// CHECK: %[[D20:.*]] = llvm.extractvalue %[[D2]][0]
// CHECK: llvm.insertvalue %[[D20]], %{{.*}}[8]
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: llvm.insertvalue %{{.*}}[15]
// CHECK-NEXT: llvm.return
!acc16 = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @two_warp_columns(%acc: !acc16, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc16 {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc16 to !ggk.acc<64x32xf32, warp_columns = 2>
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1} : !ggk.acc<64x32xf32, warp_columns = 2>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x32xf32, warp_columns = 2> to !acc16
  llvm.return %r_s : !acc16
}

// -----

// Four warp columns (a user's plan), n = 64: warp w has all 64 rows as
// four m16 blocks (+16 each) and columns 16 w ..: four ldmatrix x4 for A,
// one for B's 16 columns, eight mma.sync; m16 block i's 8-column block c
// goes to registers 4 (2 i + c) ..: block 3's last quad ends at 31.
// CHECK-LABEL: llvm.func @four_warp_columns
// CHECK: %[[W:.*]] = arith.divui %{{.*}}, %c32_i32
// CHECK: %[[WARP:.*]] = arith.remui %[[W]], %c4_i32
// CHECK: %[[WCOL:.*]] = arith.remui %[[WARP]], %c4_i32
// CHECK: %[[COL:.*]] = arith.muli %[[WCOL]], %c16_i32
// CHECK-COUNT-4: nvvm.ldmatrix {{.*}}num = 4
// CHECK: arith.addi %[[COL]], %{{.*}}
// CHECK: nvvm.ldmatrix {{.*}}num = 4
// CHECK-NOT: nvvm.ldmatrix
// CHECK-COUNT-7: nvvm.mma.sync
// CHECK: %[[LAST:.*]] = nvvm.mma.sync
// CHECK: %[[LAST3:.*]] = llvm.extractvalue %[[LAST]][3]
// CHECK: llvm.insertvalue %[[LAST3]], %{{.*}}[31]
// CHECK-NOT: nvvm.mma.sync
// CHECK: llvm.return
!acc32 = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @four_warp_columns(%acc: !acc32, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc32 {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc32 to !ggk.acc<64x64xf32, warp_columns = 4>
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1} : !ggk.acc<64x64xf32, warp_columns = 4>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x64xf32, warp_columns = 4> to !acc32
  llvm.return %r_s : !acc32
}

// -----

// f32 operands to f32 accuracy (three_tf32), n = 8, one K step of 8: the
// A and B registers as ldmatrix loads them are each split into a TF32 part
// (cvt.rna) and the TF32 of the rest; three m16n8k8 tf32 MMAs, the small
// products first, each adding to the last.
// CHECK-LABEL: llvm.func @three_tf32
// CHECK: nvvm.ldmatrix
// CHECK: nvvm.ldmatrix {{.*}}num = 2
// CHECK: %[[X:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK: %[[BIG:.*]] = nvvm.convert.float.to.tf32 %[[X]] {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[BIGF:.*]] = llvm.bitcast %[[BIG]] : i32 to f32
// CHECK: %[[REST:.*]] = arith.subf %[[X]], %[[BIGF]] : f32
// CHECK: nvvm.convert.float.to.tf32 %[[REST]] {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[D0:.*]] = nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK: %[[D00:.*]] = llvm.extractvalue %[[D0]][0]
// CHECK: %[[D1:.*]] = nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[%[[D00]],
// CHECK: %[[D10:.*]] = llvm.extractvalue %[[D1]][0]
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[%[[D10]],
// CHECK-NOT: nvvm.mma.sync
!acc4 = !llvm.struct<(f32, f32, f32, f32)>
llvm.func @three_tf32(%acc: !acc4, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc4 {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc4 to !ggk.acc<64x8xf32>
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = f32, b_type = f32,
      k_per_step = 8, block_k = 32, first_step = 0, steps = 1,
      three_tf32} : !ggk.acc<64x8xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x8xf32> to !acc4
  llvm.return %r_s : !acc4
}

// -----

// An M-major A (k_grouped's token-major A): the warp's fragment is read
// from rows of K of the warpgroup's 64-row chunk, lanes 0-7 and 16-23 at
// the block's first 8 M, 8-15 and 24-31 at its second, transposed by
// ldmatrix (layout col).
// CHECK-LABEL: llvm.func @a_m_major
// CHECK: %[[SECOND:.*]] = arith.andi %{{.*}}, %c1_i32
// CHECK: %[[FIRST8:.*]] = arith.divui %{{.*}}, %c8_i32
// CHECK: arith.addi %[[FIRST8]], %[[SECOND]]
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4
// CHECK-COUNT-2: nvvm.mma.sync
!acc8 = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @a_m_major(%acc: !acc8, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc8 {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc8 to !ggk.acc<64x16xf32>
  %r = ggk.mma %acc_t, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1, fresh,
      a_mn_major} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc8
  llvm.return %r_s : !acc8
}

// -----

// A run-time step offset (`steps_from`, an MX 1x32 scale block): the
// step's 16-byte pieces of the swizzled rows move on by two per step
// before the row's swizzle, for A and for B (not a moved tile address,
// which would put the swizzle on the wrong pieces).
// CHECK-LABEL: llvm.func @scale_block
// CHECK-SAME: %[[J:[^:]*]]: i32)
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32_i32
// CHECK: %[[HALF:.*]] = arith.divui %[[LANE]], %c16_i32
// CHECK: %[[APIECES:.*]] = arith.muli %[[J]], %c2_i32
// CHECK: %[[APIECE:.*]] = arith.addi %[[APIECES]], %[[HALF]]
// CHECK: arith.xori %[[APIECE]], %{{.*}}
// CHECK: nvvm.ldmatrix
// CHECK: %[[BPIECES:.*]] = arith.muli %[[J]], %c2_i32
// CHECK: %[[BPIECE:.*]] = arith.addi %[[BPIECES]], %{{.*}}
// CHECK: arith.xori %[[BPIECE]], %{{.*}}
// CHECK: nvvm.ldmatrix
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
llvm.func @scale_block(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %j: i32) -> !acc {
  %acc_t = builtin.unrealized_conversion_cast %acc : !acc to !ggk.acc<64x16xf32>
  %r = ggk.mma %acc_t, %a, %b steps_from(%j) attributes {a_type = f8E4M3FN,
      b_type = f8E4M3FN, k_per_step = 32, block_k = 128, first_step = 0, steps = 1,
      fresh} : !ggk.acc<64x16xf32>
  %r_s = builtin.unrealized_conversion_cast %r : !ggk.acc<64x16xf32> to !acc
  llvm.return %r_s : !acc
}
