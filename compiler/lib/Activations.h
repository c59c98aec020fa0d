//===- Activations.h - activations in NVPTX's instructions ------*- C++ -*-===//
//
// exp, sigmoid, silu and SwiGLU on f32 values as the kernels compute them:
// the epilogue's (ggk-lower-epilogue), gg.quantize_rows' gated SwiGLU
// (gg-lower-quantize-rows) and gg.swiglu_rows' share them, so all round
// alike.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_ACTIVATIONS_H
#define GGC_ACTIVATIONS_H

#include "KernelBuilder.h"
#include "ggk/GGKDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace ggc {

/// 2^x as one MUFU.EX2 (ggk.exp2_approx), without the non-ftz form's
/// range test and two multiplies: results below 2^-126 flush to zero.
/// In sigmoid and silu that value only ever joins 1 + e; an epilogue's
/// math.exp of an argument below -87.3 gives 0 instead of a subnormal
/// (under 1.2e-38). Other float types than f32 take math.exp2's lowering.
inline mlir::Value exp2Approx(KernelBuilder &b, mlir::Value x) {
  if (!x.getType().isF32())
    return b.create<mlir::math::Exp2Op>(x);
  return b.create<mlir::ggk::Exp2ApproxOp>(x.getType(), x);
}

/// 1 / x as one MUFU.RCP (ggk.reciprocal_approx), for divisors that never
/// need IEEE division's slow path (div.rn is a Newton refinement and a
/// call): results below 2^-126 flush to zero. Other float types than f32
/// take a division allowed to be approximate.
inline mlir::Value reciprocalApprox(KernelBuilder &b, mlir::Value x) {
  if (!x.getType().isF32())
    return b.create<mlir::arith::DivFOp>(
        b.create<mlir::arith::ConstantOp>(b.getFloatAttr(x.getType(), 1.0)),
        x, mlir::arith::FastMathFlags::arcp | mlir::arith::FastMathFlags::afn);
  return b.create<mlir::ggk::ReciprocalApproxOp>(x.getType(), x);
}

/// exp(x) = exp2(x * log2(e)): NVPTX has ex2 but no exp.
inline mlir::Value exp(KernelBuilder &b, mlir::Value x) {
  mlir::Value scaled = b.create<mlir::arith::MulFOp>(
      x, b.create<mlir::arith::ConstantOp>(
             b.getFloatAttr(x.getType(), 1.4426950408889634)));
  return exp2Approx(b, scaled);
}

inline mlir::Value sigmoid(KernelBuilder &b, mlir::Value x) {
  mlir::Value one =
      b.create<mlir::arith::ConstantOp>(b.getFloatAttr(x.getType(), 1.0));
  mlir::Value e = exp(b, b.create<mlir::arith::NegFOp>(x));
  // 1 + e >= 1: the approximate reciprocal serves. Its flush to zero
  // reaches sigmoid(x) for x < -87.3, where silu(x) becomes -0 instead of
  // a value of magnitude below 1e-36.
  return reciprocalApprox(b, b.create<mlir::arith::AddFOp>(one, e));
}

inline mlir::Value silu(KernelBuilder &b, mlir::Value x) {
  return b.create<mlir::arith::MulFOp>(x, sigmoid(b, x));
}

/// silu(gate) * up, unrounded.
inline mlir::Value swiglu(KernelBuilder &b, mlir::Value gate, mlir::Value up) {
  return b.create<mlir::arith::MulFOp>(silu(b, gate), up);
}

} // namespace ggc

#endif // GGC_ACTIVATIONS_H
