//===- GGOpsChecks.h - shape checks shared by gg's verifiers -----*- C++ -*-===//
//
// The helpers GroupedMatmulOp's verifier and its scale-operand checks
// (GGScaleOperands.cpp) share: expected sizes derived from G, M, N and K,
// and the ShapeChecker that words every shape and element-type error.
// Internal to dialects/lib.
//
//===----------------------------------------------------------------------===//
#ifndef GG_GGOPSCHECKS_H
#define GG_GGOPSCHECKS_H

#include "gg/CheckedMath.h"
#include "gg/GGDialect.h"

#include "llvm/ADT/STLExtras.h"

#include <string>

namespace mlir::gg::detail {

inline constexpr int64_t kDynamic = ShapedType::kDynamic;

// Expected sizes derived from G, M, N and K. verify() bounds every static
// size by kMaxStaticSize before it derives any, so these cannot overflow;
// a dynamic size stays dynamic.
inline int64_t ceilDiv(int64_t a, int64_t b) {
  return orDynamic(checkedCeilDiv(staticSize(a), b));
}
inline int64_t alignTo4(int64_t a) {
  return orDynamic(checkedAlignTo(staticSize(a), 4));
}
inline int64_t plus(int64_t a, int64_t b) {
  return orDynamic(checkedAdd(staticSize(a), b));
}

inline std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

inline bool isF8(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }
inline bool isMatrixElementType(Type t) {
  return t.isBF16() || t.isF16() || t.isF32() || isF8(t);
}
inline bool isOutputElementType(Type t) { return t.isBF16() || t.isF16() || t.isF32(); }
inline bool isQuantizedOutputType(Type t) { return isa<Float8E4M3FNType>(t); }
inline bool isVectorElementType(Type t) { return t.isBF16() || t.isF16() || t.isF32(); }

/// Checks operands against the shapes and element types the layout implies.
class ShapeChecker {
public:
  explicit ShapeChecker(GroupedMatmulOp op) : op(op) {}

  /// `expected` may hold kDynamic for a size that is only known at run time;
  /// a static expected size must match exactly, since the kernel is
  /// specialised for it.
  LogicalResult shape(StringRef name, Value v, ArrayRef<int64_t> expected,
                      StringRef meaning) {
    auto type = cast<MemRefType>(v.getType());
    bool ok = type.getRank() == static_cast<int64_t>(expected.size());
    for (auto [actual, want] : llvm::zip(type.getShape(), expected))
      ok = ok && (ShapedType::isDynamic(want) || actual == want);
    if (ok)
      return success();
    return op.emitOpError() << "'" << name << "' must have shape "
                            << shapeString(expected) << " (" << meaning
                            << "), but has " << type;
  }

  LogicalResult elementType(StringRef name, Value v,
                            function_ref<bool(Type)> accept,
                            StringRef expected) {
    Type t = cast<MemRefType>(v.getType()).getElementType();
    if (accept(t))
      return success();
    return op.emitOpError() << "'" << name << "' must have element type "
                            << expected << ", but has " << t;
  }

  LogicalResult rank(StringRef name, Value v, int64_t want, StringRef form) {
    auto type = cast<MemRefType>(v.getType());
    if (type.getRank() == want)
      return success();
    return op.emitOpError() << "'" << name << "' must be rank " << want << " ("
                            << form << "), but has " << type;
  }

  /// Shape first, then element type: when both are wrong, the shape error
  /// is the one reported (and the one the tests expect).
  LogicalResult shapeAndType(StringRef name, Value v,
                             ArrayRef<int64_t> expected, StringRef meaning,
                             function_ref<bool(Type)> accept,
                             StringRef types) {
    if (failed(shape(name, v, expected, meaning)))
      return failure();
    return elementType(name, v, accept, types);
  }

  /// The kernel is specialised for static sizes and computes on them in
  /// 32-bit integers (see kMaxStaticSize); a larger one would be truncated.
  LogicalResult sizeRange(StringRef name, Value v) {
    auto type = cast<MemRefType>(v.getType());
    for (auto [dim, size] : llvm::enumerate(type.getShape()))
      if (!ShapedType::isDynamic(size) && size > kMaxStaticSize)
        return op.emitOpError()
               << "'" << name << "' dimension " << dim
               << " must be at most 2^30 = " << kMaxStaticSize
               << " (the kernel indexes it with 32-bit integers), but has "
               << type;
    return success();
  }

  /// G, N and K (and M for k_grouped) are compile-time constants.
  LogicalResult staticDim(StringRef name, Value v, int64_t dim,
                          StringRef what) {
    auto type = cast<MemRefType>(v.getType());
    if (!type.isDynamicDim(dim))
      return success();
    return op.emitOpError() << "'" << name << "' dimension " << dim << " ("
                            << what << ") must be static, but has " << type;
  }

private:
  GroupedMatmulOp op;
};

struct NamedOperand {
  StringRef name;
  Value value;
};

/// The shape an operand must have, and how an error names it.
struct ExpectedShape {
  SmallVector<int64_t> shape;
  std::string meaning;
};

/// One value per row of A: per-channel scales of A and `rows` vectors.
inline ExpectedShape perRowShape(GroupLayout layout, const GroupedMatmulOp::Dims &d) {
  if (layout == GroupLayout::masked)
    return {{d.numGroups, d.m}, "G x M_max, one per row"};
  return {{d.m}, "M, one per row"};
}


/// `a_scale` (isA) or `b_scale`: given with its #gg.scale, on f8 operands
/// only, in the shape and element type its kind implies.
LogicalResult verifyScaleOperand(GroupedMatmulOp op, bool isA,
                                 const GroupedMatmulOp::Dims &d);
/// mx exponents of A and B come in pairs over the same K block.
LogicalResult verifyMxScalePair(GroupedMatmulOp op);

// The options over a contiguous product's rows (GGRowOperands.cpp).
/// a_rows: the contiguous layout and a 1-D i32 list, which sets M.
LogicalResult verifyGatheredRows(GroupedMatmulOp op);
/// out_rows: a 1-D i32 list of the product's rows; no accumulate or
/// zero_ungrouped.
LogicalResult verifyScatteredRows(GroupedMatmulOp op,
                                  const GroupedMatmulOp::Dims &d);
/// out_scale: f32 block_mn scales of an f8 out, stored row by row.
LogicalResult verifyOutputScales(GroupedMatmulOp op,
                                 const GroupedMatmulOp::Dims &d);
/// zero_ungrouped: a contiguous product with no epilogue, accumulate or
/// a_rows.
LogicalResult verifyZeroUngrouped(GroupedMatmulOp op);

} // namespace mlir::gg::detail

#endif // GG_GGOPSCHECKS_H
