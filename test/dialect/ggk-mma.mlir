// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The MMA ops print as they parse: a K block's steps of a stage's tiles into
// an accumulator of 16 columns (8 f32 a thread), and the fence, commit and
// wait around it.
// CHECK-LABEL: func.func @round_trip
// CHECK: ggk.mma_fence
// CHECK-NEXT: %{{.*}} = ggk.mma %{{.*}}, %{{.*}}, %{{.*}} attributes {a_type = bf16, b_mn_major, b_type = bf16, block_k = 64 : i64, first_step = 0 : i64, fresh, k_per_step = 16 : i64, steps = 4 : i64} : !ggk.acc<64x16xf32>
// CHECK-NEXT: ggk.mma_commit
// CHECK-NEXT: ggk.mma_wait attributes {pending = 1 : i64}
!acc = !ggk.acc<64x16xf32>
func.func @round_trip(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> !acc {
  ggk.mma_fence
  %r = ggk.mma %acc, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 4, fresh,
      b_mn_major} : !acc
  ggk.mma_commit
  ggk.mma_wait attributes {pending = 1}
  func.return %r : !acc
}

// -----

// A run-time step offset (a scale block of MX 1x32) prints after the tiles.
// CHECK-LABEL: func.func @steps_from
// CHECK: ggk.mma %{{.*}}, %{{.*}}, %{{.*}} steps_from(%{{.*}}) attributes {a_type = f8E4M3FN
!acc = !ggk.acc<64x16xf32>
func.func @steps_from(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>, %j: i32) -> !acc {
  %r = ggk.mma %acc, %a, %b steps_from(%j) attributes {a_type = f8E4M3FN,
      b_type = f8E4M3FN, k_per_step = 32, block_k = 128, first_step = 0, steps = 1,
      fresh} : !acc
  func.return %r : !acc
}

// -----

!acc = !ggk.acc<64x16xf32>
func.func @int_operands(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) {
  // expected-error @+1 {{takes bf16, f16, f32 (tf32) or f8 operands, got 'i8' and 'i8'}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = i8, b_type = i8,
      k_per_step = 32, block_k = 128, first_step = 0, steps = 4} : !acc
  func.return
}

// -----

!acc = !ggk.acc<64x16xf32>
func.func @mixed_widths(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) {
  // expected-error @+1 {{operands of one width: a_type 'bf16' and b_type 'f8E4M3FN' differ}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = bf16, b_type = f8E4M3FN,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 4} : !acc
  func.return
}

// -----

!acc = !ggk.acc<64x16xf32>
func.func @wrong_k_step(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) {
  // expected-error @+1 {{k_per_step must be 32 for 'f8E4M3FN' (32 bytes a step), got 16}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = f8E4M3FN, b_type = f8E4M3FN,
      k_per_step = 16, block_k = 128, first_step = 0, steps = 4} : !acc
  func.return
}

// -----

!acc = !ggk.acc<64x16xf32>
func.func @no_steps(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) {
  // expected-error @+1 {{needs steps >= 1 and first_step >= 0, got steps 0, first_step 0}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 0} : !acc
  func.return
}

// -----

!acc = !ggk.acc<64x16xf32>
func.func @past_block(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) {
  // expected-error @+1 {{K steps 2 .. 5 of 16 exceed block_k = 64}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 2, steps = 3} : !acc
  func.return
}

// -----

func.func @negative_wait() {
  // expected-error @+1 {{pending must be >= 0, got -1}}
  ggk.mma_wait attributes {pending = -1}
  func.return
}

// -----

// three_tf32 splits f32 operands.
!acc = !ggk.acc<64x16xf32>
func.func @three_tf32_bf16(%acc: !acc, %a: !llvm.ptr<3>, %b: !llvm.ptr<3>) {
  // expected-error @+1 {{three_tf32 splits f32 operands, got 'bf16' and 'bf16'}}
  %r = ggk.mma %acc, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1,
      three_tf32} : !acc
  func.return
}
