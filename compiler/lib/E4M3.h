//===- E4M3.h - the FP8 e4m3 quantisation rule of the small kernels -*- C++ -*-===//
//
// How gg.quantize_rows', gg.quantize_blocks' and gg.quantize_group_tokens'
// kernels turn a block of values into e4m3 and a scale: the same rule as
// ggc.moe.quant and DeepGEMM's casts, so that every path gives the same
// bits.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_E4M3_H
#define GGC_E4M3_H

#include "SimpleKernel.h"
#include "Target.h"

namespace ggc::simple {

constexpr double kE4M3Max = 448.0;   // the largest finite e4m3
constexpr double kAmaxFloor = 1e-12; // an all-zero block's scale divides to 0

/// A block's factor (its values are multiplied by it) and stored scale.
struct BlockScale {
  Value factor, scale;
};

/// For a block's amax: a = max(amax, 1e-12), the factor 448 / a (one IEEE
/// division a block, not one an element) and the scale a times 1/448
/// rounded to f32 (torch's division by a scalar, which multiplies by its
/// reciprocal).
inline BlockScale blockScale(KernelBuilder &b, Value amax) {
  Value a = b.create<mlir::arith::MaximumFOp>(amax, b.f32c(kAmaxFloor));
  Value scale =
      b.create<mlir::arith::MulFOp>(a, b.f32c(float(1.0f / float(kE4M3Max))));
  Value factor = b.create<mlir::arith::DivFOp>(b.f32c(kE4M3Max), a);
  return {factor, scale};
}

/// 8 `values` times `factor` as e4m3 (converted in pairs, saturating),
/// packed in two words (vector<2xi32>).
inline Value packE4M3x8(KernelBuilder &b, mlir::ArrayRef<Value> values,
                        Value factor) {
  auto wordsType = mlir::VectorType::get({2}, b.i32());
  Value words = b.create<mlir::LLVM::PoisonOp>(wordsType);
  for (int64_t w = 0; w < 2; ++w) {
    Value word = b.c32(0);
    for (int64_t pair = 0; pair < 2; ++pair) {
      int64_t i = 4 * w + 2 * pair;
      Value lo = b.create<mlir::arith::MulFOp>(values[i], factor);
      Value hi = b.create<mlir::arith::MulFOp>(values[i + 1], factor);
      Value packed =
          b.create<mlir::ggk::ConvertE4M3x2Op>(b.getI16Type(), lo, hi);
      Value wide = b.create<mlir::arith::ExtUIOp>(b.i32(), packed);
      if (pair == 1)
        wide = b.create<mlir::arith::ShLIOp>(wide, b.c32(16));
      word = b.create<mlir::arith::OrIOp>(word, wide);
    }
    words = b.create<mlir::LLVM::InsertElementOp>(words, word, b.c32(w));
  }
  return words;
}
/// packE4M3x8's words stored as 8 bytes at byte `index` of `base` (8-byte
/// aligned).
inline void storeWords(KernelBuilder &b, Value words, Value base, Value index) {
  b.create<mlir::LLVM::StoreOp>(words, at(b, b.getI8Type(), base, index),
                                /*alignment=*/8);
}
/// 8 `values` times `factor` as e4m3, stored as 8 bytes at byte `index`
/// of `base` (8-byte aligned).
inline void storeE4M3x8(KernelBuilder &b, mlir::ArrayRef<Value> values,
                        Value factor, Value base, Value index) {
  storeWords(b, packE4M3x8(b, values, factor), base, index);
}

/// max(running, |v|) over `values`.
inline Value absMax(KernelBuilder &b, Value running, mlir::ArrayRef<Value> values) {
  for (Value v : values)
    running = b.create<mlir::arith::MaximumFOp>(running,
                                                b.create<mlir::math::AbsFOp>(v));
  return running;
}

/// max over the lanes `lanes`, `lanes / 2`, ..., 1 apart (butterfly
/// shuffles): the max of a group of 2 * lanes lanes.
inline Value shuffleMax(KernelBuilder &b, Value value, int64_t lanes) {
  for (; lanes >= 1; lanes /= 2) {
    Value bits = b.create<mlir::arith::BitcastOp>(b.i32(), value);
    Value theirs = b.create<mlir::ggk::WarpShuffleXorOp>(b.i32(), bits, lanes);
    value = b.create<mlir::arith::MaximumFOp>(
        value, b.create<mlir::arith::BitcastOp>(b.f32(), theirs));
  }
  return value;
}

/// A 128-column block that a half-warp holds, 8 `values` a lane, as e4m3:
/// the lane's packed words and the block's scale (its amax from butterfly
/// shuffles across the 16 lanes).
struct HalfWarpBlock {
  Value words, scale;
};

inline HalfWarpBlock quantizeHalfWarpBlock(KernelBuilder &b, mlir::ArrayRef<Value> values) {
  Value amax = shuffleMax(b, absMax(b, b.f32c(0.0), values), 8);
  BlockScale block = blockScale(b, amax);
  return {packE4M3x8(b, values, block.factor), block.scale};
}

/// success where `op`'s target converts f32 to e4m3 (cvt's e4m3x2 came
/// with FP8 tensor cores); else an error on `op` naming the target.
inline mlir::LogicalResult checkConvertsE4M3(mlir::Operation *op) {
  ggc::Target target = ggc::targetOf(op);
  if (target.fp8Mma)
    return mlir::success();
  return op->emitOpError() << "cannot be lowered for " << target.name
                           << ": converting to e4m3 takes sm_89 or sm_90a";
}

} // namespace ggc::simple

#endif // GGC_E4M3_H
