// RUN: ggc-opt %s -split-input-file -ggk-lower-accumulators -verify-diagnostics

// The MMA reads the accumulator's layout from its type: it is lowered
// first (ggk-lower-mma or ggk-lower-mma-sync).
llvm.func @mma_not_lowered(%a: !llvm.ptr<3>, %b: !llvm.ptr<3>) -> f32 {
  %zero = ggk.acc_zero : !ggk.acc<64x16xf32>
  // expected-error @+1 {{must be lowered (ggk-lower-mma or ggk-lower-mma-sync) before its accumulator is}}
  %r = ggk.mma %zero, %a, %b attributes {a_type = bf16, b_type = bf16,
      k_per_step = 16, block_k = 64, first_step = 0, steps = 1} : !ggk.acc<64x16xf32>
  %v = ggk.acc_get %r[0, 0, 0] : !ggk.acc<64x16xf32>
  llvm.return %v : f32
}

// -----

// Accumulators live inside a kernel: a signature that names one is not
// rewritten.
// expected-error @+1 {{takes or returns a !ggk.acc, which ggk-lower-accumulators lowers only inside a function}}
func.func @signature(%acc: !ggk.acc<64x8xf32>) -> f32 {
  %v = ggk.acc_get %acc[0, 0, 0] : !ggk.acc<64x8xf32>
  return %v : f32
}

// -----

// A cast to anything but the accumulator's registers (4 f32 here).
llvm.func @wrong_registers(%regs: !llvm.struct<(f32, f32)>) -> f32 {
  // expected-error @+1 {{casts a !ggk.acc to or from something other than its registers}}
  %acc = builtin.unrealized_conversion_cast %regs : !llvm.struct<(f32, f32)> to !ggk.acc<64x8xf32>
  %v = ggk.acc_get %acc[0, 0, 0] : !ggk.acc<64x8xf32>
  llvm.return %v : f32
}
