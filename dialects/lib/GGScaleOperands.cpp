//===- GGScaleOperands.cpp - the scale operands of gg.grouped_matmul ------===//
//
// The shape and element type each #gg.scale kind implies for `a_scale` and
// `b_scale` (ScaleAttr's description has the table), checked by
// GroupedMatmulOp's verifier.
//
//===----------------------------------------------------------------------===//
#include "GGOpsChecks.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::gg::detail {

/// Scale operands: the shape comes from the layout, the matrix sizes and the
/// #gg.scale (see ScaleAttr's description for the table).
static ExpectedShape channelScaleShape(GroupedMatmulOp op, bool isA,
                                       const GroupedMatmulOp::Dims &d) {
  if (isA)
    return perRowShape(op.getLayout(), d);
  if (op.getLayout() == GroupLayout::k_grouped)
    return {{d.n}, "N, one per column"};
  return {{d.numGroups, d.n}, "G x N, one per column"};
}

static FailureOr<ExpectedShape>
blockScaleShape(GroupedMatmulOp op, ScaleAttr s, bool isA,
                const GroupedMatmulOp::Dims &d) {
  if (isA && s.getBlockMN() != 1)
    return op.emitOpError() << "'a_scale' block scales must be 1x128 (one "
                               "per row per K block), but are "
                            << s.getBlockMN() << "x" << s.getBlockK();
  bool kGrouped = op.getLayout() == GroupLayout::k_grouped;
  bool kMajor = s.getMajor() == ScaleMajor::k_major;
  // For k_grouped the blocks are those of the concatenated K, which is the
  // run-time size.
  int64_t kb = kGrouped ? kDynamic : ceilDiv(d.k, s.getBlockK());
  std::string kbName = "ceil(K/128)";
  ExpectedShape e;
  if (isA) {
    if (kMajor)
      e = {{d.m, kb}, "M x " + kbName};
    else
      e = {{kb, kGrouped ? d.m : alignTo4(d.m)},
           kbName + (kGrouped ? " x M" : " x align4(M)")};
    if (op.getLayout() == GroupLayout::masked) {
      e.shape.insert(e.shape.begin(), d.numGroups);
      e.meaning = "G x " + e.meaning + ", M = M_max";
    }
    return e;
  }
  int64_t nb = ceilDiv(d.n, s.getBlockMN());
  std::string nbName = s.getBlockMN() == 1 ? "N" : "ceil(N/128)";
  if (kMajor)
    e = {{nb, kb}, nbName + " x " + kbName};
  else
    e = {{kb, nb}, kbName + " x " + nbName};
  if (!kGrouped) {
    e.shape.insert(e.shape.begin(), d.numGroups);
    e.meaning = "G x " + e.meaning;
  }
  return e;
}

static FailureOr<ExpectedShape> mxScaleShape(GroupedMatmulOp op, ScaleAttr s,
                                             bool isA,
                                             const GroupedMatmulOp::Dims &d) {
  auto [g, m, n, k] = d;
  // k_grouped: words over the concatenated K (the run-time size); B has no
  // group dimension.
  bool kGrouped = op.getLayout() == GroupLayout::k_grouped;
  int64_t kAlign = kGrouped ? kDynamic : ceilDiv(k, 4 * s.getBlockK());
  std::string kaName =
      llvm::formatv("ceil(K/{0}), four exponents per i32", 4 * s.getBlockK())
          .str();
  if (!isA)
    return kGrouped ? ExpectedShape{{n, kAlign}, "N x " + kaName}
                    : ExpectedShape{{g, n, kAlign}, "G x N x " + kaName};
  switch (op.getLayout()) {
  case GroupLayout::contiguous: {
    // FlashInfer's zero-padding layout: every group's scale rows start on a
    // multiple of 4, so each group may need up to 3 padding rows. The
    // kernel adds those 3G rows to M in 32-bit integers.
    std::optional<int64_t> padRows = checkedMul(g, 3);
    if (!padRows || *padRows > kMaxStaticSize)
      return op.emitOpError()
             << "'a_scale' mx scales pad each of the G groups by up to 3 "
                "rows: 3G must be at most 2^30 = "
             << kMaxStaticSize << ", but G is " << g;
    std::optional<int64_t> rows = checkedAdd(staticSize(m), padRows);
    return ExpectedShape{{rows ? *rows / 4 * 4 : kDynamic, kAlign},
                         "(M + 3G)/4*4 x " + kaName};
  }
  case GroupLayout::masked:
    return ExpectedShape{{g, m, kAlign}, "G x M_max x " + kaName};
  default:
    return ExpectedShape{{m, kAlign}, "M x " + kaName};
  }
}

static FailureOr<ExpectedShape>
expectedScaleShape(GroupedMatmulOp op, ScaleAttr s, bool isA,
                   const GroupedMatmulOp::Dims &d) {
  switch (s.getKind()) {
  case ScaleKind::tensor:
    return ExpectedShape{{d.numGroups}, "one per group"};
  case ScaleKind::channel:
    return channelScaleShape(op, isA, d);
  case ScaleKind::block:
    return blockScaleShape(op, s, isA, d);
  case ScaleKind::mx:
    return mxScaleShape(op, s, isA, d);
  }
  llvm_unreachable("unknown scale kind");
}

/// `a_scale` (isA) or `b_scale`: given with its #gg.scale, on f8 operands
/// only, f32 (i32 for mx) in the shape expectedScaleShape derives.
LogicalResult verifyScaleOperand(GroupedMatmulOp op, bool isA,
                                        const GroupedMatmulOp::Dims &d) {
  StringRef name = isA ? "a_scale" : "b_scale";
  Value scale = isA ? op.getAScale() : op.getBScale();
  ScaleAttr s = isA ? op.getAScaleKindAttr() : op.getBScaleKindAttr();
  Type elem = (isA ? op.getAType() : op.getBType()).getElementType();
  if (!scale && !s)
    return success();
  if (!scale || !s)
    return op.emitOpError()
           << "'" << name << "' and its #gg.scale kind must be given together";
  if (!isF8(elem))
    return op.emitOpError() << "'" << name
                            << "' is only allowed with f8E4M3FN or f8E5M2 "
                               "operands, but '"
                            << (isA ? "a" : "b") << "' has element type "
                            << elem;
  FailureOr<ExpectedShape> expected = expectedScaleShape(op, s, isA, d);
  if (failed(expected))
    return failure();
  ShapeChecker check(op);
  bool wantI32 = s.getKind() == ScaleKind::mx;
  if (failed(check.elementType(
          name, scale,
          [&](Type t) { return wantI32 ? t.isInteger(32) : t.isF32(); },
          wantI32 ? "i32 (packed UE8M0)" : "f32")))
    return failure();
  std::string what = (llvm::Twine(stringifyScaleKind(s.getKind())) + " " +
                      (isA ? "scales of A" : "scales of B"))
                         .str();
  return check.shape(name, scale, expected->shape,
                     expected->meaning + ", for " + what);
}

/// mx exponents are applied to A's and B's K blocks together, so they come
/// in pairs over the same K block.
LogicalResult verifyMxScalePair(GroupedMatmulOp op) {
  ScaleAttr a = op.getAScaleKindAttr(), b = op.getBScaleKindAttr();
  bool aMx = a && a.getKind() == ScaleKind::mx;
  bool bMx = b && b.getKind() == ScaleKind::mx;
  if (aMx != bMx)
    return op.emitOpError() << "mx scales must be given for both 'a_scale' "
                               "and 'b_scale'";
  if (aMx && a.getBlockK() != b.getBlockK())
    return op.emitOpError() << "mx scales of 'a' and 'b' must use the same K "
                               "block, but use "
                            << a.getBlockK() << " and " << b.getBlockK();
  return success();
}

} // namespace mlir::gg::detail
