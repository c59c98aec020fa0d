//===- GGOps.cpp - gg operations and their verifiers -----------------------===//
//
// The verifier of gg.grouped_matmul is the contract every later pass relies
// on: once it passes, the lowering may read G, N, K and every scale shape off
// the types without checking again. Each error names the operand and what
// was expected.
//
//===----------------------------------------------------------------------===//
#include "gg/CheckedMath.h"
#include "gg/GGDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::gg;

#define GET_OP_CLASSES
#include "gg/GGOps.cpp.inc"

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

// Expected sizes derived from G, M, N and K. verify() bounds every static
// size by kMaxStaticSize before it derives any, so these cannot overflow;
// a dynamic size stays dynamic.
int64_t ceilDiv(int64_t a, int64_t b) {
  return orDynamic(checkedCeilDiv(staticSize(a), b));
}
int64_t alignTo4(int64_t a) {
  return orDynamic(checkedAlignTo(staticSize(a), 4));
}
int64_t plus(int64_t a, int64_t b) {
  return orDynamic(checkedAdd(staticSize(a), b));
}

std::string shapeString(ArrayRef<int64_t> shape) {
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

bool isF8(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }
bool isMatrixElementType(Type t) {
  return t.isBF16() || t.isF16() || t.isF32() || isF8(t);
}
bool isOutputElementType(Type t) { return t.isBF16() || t.isF16() || t.isF32(); }
bool isVectorElementType(Type t) { return t.isBF16() || t.isF16() || t.isF32(); }

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

} // namespace

GroupedMatmulOp::Dims GroupedMatmulOp::getDims() {
  ArrayRef<int64_t> a = getAType().getShape();
  ArrayRef<int64_t> b = getBType().getShape();
  ArrayRef<int64_t> out = getOutType().getShape();
  bool bIsNK = getBLayout() == OperandLayout::nk;
  switch (getLayout()) {
  case GroupLayout::contiguous:
  case GroupLayout::padded_contiguous:
    return {b[0], a[0], bIsNK ? b[1] : b[2], bIsNK ? b[2] : b[1]};
  case GroupLayout::masked:
    return {b[0], a[1], bIsNK ? b[1] : b[2], bIsNK ? b[2] : b[1]};
  case GroupLayout::k_grouped: {
    bool aIsMK = getALayout() == OperandLayout::mk;
    return {out[0], aIsMK ? a[0] : a[1], bIsNK ? b[0] : b[1],
            aIsMK ? a[1] : a[0]};
  }
  }
  llvm_unreachable("unknown group layout");
}

std::optional<std::string>
GroupedMatmulOp::storePoolObstacle(ConfigAttr config) {
  if (getLayout() == GroupLayout::padded_contiguous)
    return std::string("needs the valid rows of a tile to be a prefix, which "
                       "padded_contiguous does not promise");
  if (getOutLayout() == OperandLayout::nm)
    return std::string("stores rows of an 'out' in layout mn; 'out' in layout "
                       "nm takes per-thread stores (an empty store_pool)");
  // A box of h rows starts at a multiple of 2h rows of the staged tile, and
  // TMA reads shared memory from 128-byte-aligned addresses.
  if (config) {
    int64_t rowBytes = config.getBlockN() *
                       ((getOutType().getElementTypeBitWidth() + 7) / 8);
    if (rowBytes * 2 % 128 != 0)
      return (llvm::Twine("needs the staged tile's rows of block N elements "
                          "to be a multiple of 64 bytes (its boxes start "
                          "128-byte aligned), but block N ") +
              llvm::Twine(config.getBlockN()) + " makes them " +
              llvm::Twine(rowBytes) +
              "; use an empty store_pool (per-thread stores)")
          .str();
  }
  return std::nullopt;
}

LogicalResult GroupedMatmulOp::verify() {
  ShapeChecker check(*this);
  GroupLayout layout = getLayout();
  bool kGrouped = layout == GroupLayout::k_grouped;
  bool masked = layout == GroupLayout::masked;

  // Every operand is read or written with TMA or plain row-major indexing.
  SmallVector<NamedOperand> all = {
      {"a", getA()}, {"b", getB()}, {"groups", getGroups()}, {"out", getOut()}};
  if (getAScale())
    all.push_back({"a_scale", getAScale()});
  if (getBScale())
    all.push_back({"b_scale", getBScale()});
  for (Value v : getRowVectors())
    all.push_back({"rows", v});
  for (Value v : getColVectors())
    all.push_back({"cols", v});
  for (Value v : getGroupScalars())
    all.push_back({"group_scalars", v});
  for (const NamedOperand &o : all) {
    auto type = cast<MemRefType>(o.value.getType());
    if (!type.getLayout().isIdentity())
      return emitOpError() << "'" << o.name
                           << "' must have an identity (contiguous row-major) "
                              "layout, but has "
                           << type;
    if (failed(check.sizeRange(o.name, o.value)))
      return failure();
  }

  // Element types.
  Type aElem = getAType().getElementType();
  Type bElem = getBType().getElementType();
  Type outElem = getOutType().getElementType();
  const char *matrixTypes = "bf16, f16, f32, f8E4M3FN or f8E5M2";
  if (failed(check.elementType("a", getA(), isMatrixElementType, matrixTypes)) ||
      failed(check.elementType("b", getB(), isMatrixElementType, matrixTypes)) ||
      failed(check.elementType("out", getOut(), isOutputElementType,
                               "bf16, f16 or f32")))
    return failure();
  if (aElem != bElem && !(isF8(aElem) && isF8(bElem)))
    return emitOpError() << "'a' and 'b' must have the same element type "
                            "(or both be f8), but have "
                         << aElem << " and " << bElem;
  if (getTf32() && !aElem.isF32())
    return emitOpError() << "'tf32' math applies to f32 operands only, but 'a' "
                            "has element type "
                         << aElem;

  // Operand layouts.
  OperandLayout aLayout = getALayout(), bLayout = getBLayout(),
                outLayout = getOutLayout();
  if (aLayout != OperandLayout::mk && aLayout != OperandLayout::km)
    return emitOpError() << "layout of 'a' must be mk or km, but is "
                         << stringifyOperandLayout(aLayout);
  if (aLayout == OperandLayout::km && !kGrouped)
    return emitOpError() << "layout km of 'a' (tokens along the columns) is "
                            "only supported with k_grouped";
  if (bLayout != OperandLayout::nk && bLayout != OperandLayout::kn)
    return emitOpError() << "layout of 'b' must be nk or kn, but is "
                         << stringifyOperandLayout(bLayout);
  if (outLayout != OperandLayout::mn && outLayout != OperandLayout::nm)
    return emitOpError() << "layout of 'out' must be mn or nm, but is "
                         << stringifyOperandLayout(outLayout);
  if (outLayout == OperandLayout::nm && !kGrouped)
    return emitOpError() << "layout nm of 'out' is only supported with "
                            "k_grouped (a transposed per-group output)";
  if (isF8(aElem) &&
      (aLayout != OperandLayout::mk || bLayout != OperandLayout::nk))
    return emitOpError() << "f8 operands must be K-major (wgmma reads f8 "
                            "only along K): 'a' must be mk and 'b' nk";

  // Ranks, static sizes, and the sizes every layout shares.
  bool bIsNK = bLayout == OperandLayout::nk;
  int64_t bRank = kGrouped ? 2 : 3;
  if (failed(check.rank("b", getB(), bRank,
                        kGrouped ? (bIsNK ? "[N, K]" : "[K, N]")
                                 : (bIsNK ? "[G, N, K]" : "[G, K, N]"))))
    return failure();
  if (!kGrouped) {
    if (failed(check.staticDim("b", getB(), 0, "G")) ||
        failed(check.staticDim("b", getB(), 1, bIsNK ? "N" : "K")) ||
        failed(check.staticDim("b", getB(), 2, bIsNK ? "K" : "N")))
      return failure();
  } else if (failed(check.staticDim("b", getB(), bIsNK ? 0 : 1, "N"))) {
    return failure();
  }

  ArrayRef<int64_t> aShape = getAType().getShape();
  ArrayRef<int64_t> bShape = getBType().getShape();
  ArrayRef<int64_t> outShape = getOutType().getShape();
  int64_t g = 0, m = 0, n = 0, k = 0;
  switch (layout) {
  case GroupLayout::contiguous:
  case GroupLayout::padded_contiguous: {
    g = bShape[0];
    n = bIsNK ? bShape[1] : bShape[2];
    k = bIsNK ? bShape[2] : bShape[1];
    if (failed(check.rank("a", getA(), 2, "[M, K] token-packed rows")))
      return failure();
    m = aShape[0];
    if (failed(check.shape("a", getA(), {kDynamic, k}, "M x K")) ||
        failed(check.shape("out", getOut(), {m, n}, "M x N")))
      return failure();
    if (layout == GroupLayout::contiguous) {
      if (failed(check.shape("groups", getGroups(), {plus(g, 1)},
                             "G+1 group offsets, CSR m_indptr")) ||
          failed(check.elementType(
              "groups", getGroups(),
              [](Type t) { return t.isInteger(32) || t.isInteger(64); },
              "i32 or i64 (offsets)")))
        return failure();
    } else {
      if (failed(check.shape("groups", getGroups(), {m},
                             "one group index per row of A")) ||
          failed(check.elementType(
              "groups", getGroups(), [](Type t) { return t.isInteger(32); },
              "i32 (group index per row, -1 = skip)")))
        return failure();
    }
    break;
  }
  case GroupLayout::masked: {
    g = bShape[0];
    n = bIsNK ? bShape[1] : bShape[2];
    k = bIsNK ? bShape[2] : bShape[1];
    if (failed(check.rank("a", getA(), 3, "[G, M_max, K]")))
      return failure();
    m = aShape[1];
    if (failed(check.shape("a", getA(), {g, kDynamic, k}, "G x M_max x K")) ||
        failed(check.shape("out", getOut(), {g, m, n}, "G x M_max x N")) ||
        failed(check.shape("groups", getGroups(), {g},
                           "valid rows per group, masked_m")) ||
        failed(check.elementType(
            "groups", getGroups(), [](Type t) { return t.isInteger(32); },
            "i32 (valid rows per group)")))
      return failure();
    break;
  }
  case GroupLayout::k_grouped: {
    bool aIsMK = aLayout == OperandLayout::mk;
    bool outIsMN = outLayout == OperandLayout::mn;
    if (failed(check.rank("a", getA(), 2, aIsMK ? "[M, K]" : "[K, M]")) ||
        failed(check.staticDim("a", getA(), aIsMK ? 0 : 1, "M")) ||
        failed(check.rank("out", getOut(), 3,
                          outIsMN ? "[G, M, N]" : "[G, N, M]")) ||
        failed(check.staticDim("out", getOut(), 0, "G")))
      return failure();
    g = outShape[0];
    m = aIsMK ? aShape[0] : aShape[1];
    k = aIsMK ? aShape[1] : aShape[0];
    n = bIsNK ? bShape[0] : bShape[1];
    SmallVector<int64_t> bExpected =
        bIsNK ? SmallVector<int64_t>{n, k} : SmallVector<int64_t>{k, n};
    SmallVector<int64_t> outExpected = outIsMN
                                           ? SmallVector<int64_t>{g, m, n}
                                           : SmallVector<int64_t>{g, n, m};
    if (failed(check.shape("b", getB(), bExpected,
                           "K of 'b' must equal K of 'a'")) ||
        failed(check.shape("out", getOut(), outExpected,
                           "one output matrix per group")) ||
        failed(check.shape("groups", getGroups(), {plus(g, 1)},
                           "G+1 offsets into K")) ||
        failed(check.elementType(
            "groups", getGroups(),
            [](Type t) { return t.isInteger(32) || t.isInteger(64); },
            "i32 or i64 (offsets)")))
      return failure();
    break;
  }
  }
  if (g < 1)
    return emitOpError() << "the number of groups G must be at least 1, but "
                            "is "
                         << g;

  if (std::optional<int64_t> expectedM = getExpectedM()) {
    if (!masked)
      return emitOpError() << "'expected_m' is a hint for the masked layout "
                              "only";
    if (*expectedM < 1 || (!ShapedType::isDynamic(m) && *expectedM > m))
      return emitOpError() << "'expected_m' must be in [1, M_max = "
                           << (ShapedType::isDynamic(m) ? std::string("?")
                                                        : std::to_string(m))
                           << "], but is " << *expectedM;
  }

  // Scales.
  auto verifyScale = [&](StringRef name, Value scale,
                         std::optional<ScaleAttr> kindAttr, bool isA,
                         Type elem) -> LogicalResult {
    if (!scale && !kindAttr)
      return success();
    if (!scale || !kindAttr)
      return emitOpError() << "'" << name
                           << "' and its #gg.scale kind must be given together";
    if (!isF8(elem))
      return emitOpError() << "'" << name
                           << "' is only allowed with f8E4M3FN or f8E5M2 "
                              "operands, but '"
                           << (isA ? "a" : "b") << "' has element type "
                           << elem;
    ScaleAttr s = *kindAttr;
    int64_t bk = s.getBlockK(), bmn = s.getBlockMN();
    bool kMajor = s.getMajor() == ScaleMajor::k_major;
    std::string what = (llvm::Twine(stringifyScaleKind(s.getKind())) + " " +
                        (isA ? "scales of A" : "scales of B"))
                           .str();
    SmallVector<int64_t> expected;
    std::string meaning;
    switch (s.getKind()) {
    case ScaleKind::tensor:
      expected = {g};
      meaning = "one per group";
      break;
    case ScaleKind::channel:
      if (isA) {
        expected = masked ? SmallVector<int64_t>{g, m} : SmallVector<int64_t>{m};
        meaning = masked ? "G x M_max, one per row" : "M, one per row";
      } else {
        expected = kGrouped ? SmallVector<int64_t>{n} : SmallVector<int64_t>{g, n};
        meaning = kGrouped ? "N, one per column" : "G x N, one per column";
      }
      break;
    case ScaleKind::block: {
      if (isA && bmn != 1)
        return emitOpError() << "'a_scale' block scales must be 1x128 (one "
                                "per row per K block), but are "
                             << bmn << "x" << bk;
      // For k_grouped the blocks are those of the concatenated K, which is
      // the run-time size.
      int64_t kb = kGrouped ? kDynamic : ceilDiv(k, bk);
      std::string kbName = "ceil(K/128)";
      if (isA) {
        int64_t rows = m;
        if (kMajor) {
          expected = {rows, kb};
          meaning = "M x " + kbName;
        } else {
          expected = {kb, kGrouped ? rows : alignTo4(rows)};
          meaning = kbName + (kGrouped ? " x M" : " x align4(M)");
        }
        if (masked) {
          expected.insert(expected.begin(), g);
          meaning = "G x " + meaning + ", M = M_max";
        }
      } else {
        int64_t nb = ceilDiv(n, bmn);
        std::string nbName = bmn == 1 ? "N" : "ceil(N/128)";
        expected = kMajor ? SmallVector<int64_t>{nb, kb}
                          : SmallVector<int64_t>{kb, nb};
        meaning = kMajor ? nbName + " x " + kbName : kbName + " x " + nbName;
        if (!kGrouped) {
          expected.insert(expected.begin(), g);
          meaning = "G x " + meaning;
        }
      }
      break;
    }
    case ScaleKind::mx: {
      // k_grouped: words over the concatenated K (the run-time size); B
      // has no group dimension.
      int64_t kAlign = kGrouped ? kDynamic : ceilDiv(k, 4 * bk);
      std::string kaName =
          llvm::formatv("ceil(K/{0}), four exponents per i32", 4 * bk).str();
      if (isA) {
        switch (layout) {
        case GroupLayout::contiguous: {
          // FlashInfer's zero-padding layout: every group's scale rows start
          // on a multiple of 4, so each group may need up to 3 padding rows.
          // The kernel adds those 3G rows to M in 32-bit integers.
          std::optional<int64_t> padRows = checkedMul(g, 3);
          if (!padRows || *padRows > kMaxStaticSize)
            return emitOpError()
                   << "'a_scale' mx scales pad each of the G groups by up to "
                      "3 rows: 3G must be at most 2^30 = "
                   << kMaxStaticSize << ", but G is " << g;
          if (std::optional<int64_t> rows = checkedAdd(staticSize(m), padRows))
            expected = {*rows / 4 * 4, kAlign};
          else
            expected = {kDynamic, kAlign};
          meaning = "(M + 3G)/4*4 x " + kaName;
          break;
        }
        case GroupLayout::masked:
          expected = {g, m, kAlign};
          meaning = "G x M_max x " + kaName;
          break;
        default:
          expected = {m, kAlign};
          meaning = "M x " + kaName;
          break;
        }
      } else if (kGrouped) {
        expected = {n, kAlign};
        meaning = "N x " + kaName;
      } else {
        expected = {g, n, kAlign};
        meaning = "G x N x " + kaName;
      }
      break;
    }
    }
    bool wantI32 = s.getKind() == ScaleKind::mx;
    if (failed(check.elementType(
            name, scale,
            [&](Type t) { return wantI32 ? t.isInteger(32) : t.isF32(); },
            wantI32 ? "i32 (packed UE8M0)" : "f32")))
      return failure();
    return check.shape(name, scale, expected, meaning + ", for " + what);
  };
  if (failed(verifyScale("a_scale", getAScale(), getAScaleKind(), true, aElem)) ||
      failed(verifyScale("b_scale", getBScale(), getBScaleKind(), false, bElem)))
    return failure();
  bool aMx = getAScaleKind() && getAScaleKind()->getKind() == ScaleKind::mx;
  bool bMx = getBScaleKind() && getBScaleKind()->getKind() == ScaleKind::mx;
  if (aMx != bMx)
    return emitOpError() << "mx scales must be given for both 'a_scale' and "
                            "'b_scale'";
  if (aMx && getAScaleKind()->getBlockK() != getBScaleKind()->getBlockK())
    return emitOpError() << "mx scales of 'a' and 'b' must use the same K "
                            "block, but use "
                         << getAScaleKind()->getBlockK() << " and "
                         << getBScaleKind()->getBlockK();

  // The TMA store pool: powers of two from BLOCK_M (or, for 192, 128) down
  // to 1, so that any count of rows below BLOCK_M is a sum of distinct boxes.
  if (std::optional<ArrayRef<int64_t>> pool = getStorePool();
      pool && !pool->empty()) {
    if (std::optional<std::string> obstacle =
            storePoolObstacle(getConfigAttr()))
      return emitOpError() << "'store_pool' " << *obstacle;
    for (auto [i, h] : llvm::enumerate(*pool))
      if (h < 1 || !llvm::isPowerOf2_64(h) ||
          (i > 0 && checkedMul(h, 2) != (*pool)[i - 1]) ||
          (i + 1 == pool->size() && h != 1))
        return emitOpError() << "'store_pool' must halve from a power of two "
                                "down to 1 (e.g. [128, 64, ..., 1]), but is "
                             << shapeString(*pool);
    if (ConfigAttr config = getConfigAttr();
        config && (*pool)[0] != int64_t(llvm::bit_floor(
                                    uint64_t(config.getBlockM()))))
      return emitOpError()
             << "'store_pool' must start at the largest power of two not above "
                "the block M of the config ("
             << config.getBlockM() << "), which is "
             << llvm::bit_floor(uint64_t(config.getBlockM()))
             << ", but starts at " << (*pool)[0];
  }

  // Skipping idle warpgroups relies on a tile's valid rows being a prefix
  // counted from the group's start.
  if (PaddingAttr padding = getPaddingAttr();
      padding && padding.getIdleWarpgroups() == IdleWarpgroups::skip &&
      layout != GroupLayout::contiguous && layout != GroupLayout::masked)
    return emitOpError() << "'padding' with idle_warpgroups = skip needs a "
                            "contiguous or masked layout, whose valid rows of "
                            "a tile are a prefix; got "
                         << stringifyGroupLayout(layout);
  if (OverfetchAttr overfetch = getOverfetchAttr();
      overfetch && overfetch.getK() != 0 && layout != GroupLayout::k_grouped)
    return emitOpError() << "'overfetch' k must be 0 outside k_grouped, got "
                         << overfetch.getK();

  // Epilogue vectors.
  auto isVectorType = [](Type t) { return isVectorElementType(t); };
  for (Value v : getRowVectors()) {
    SmallVector<int64_t> expected =
        masked ? SmallVector<int64_t>{g, m} : SmallVector<int64_t>{m};
    if (failed(check.shape("rows", v, expected,
                           masked ? "G x M_max, one per row" : "M, one per row")) ||
        failed(check.elementType("rows", v, isVectorType, "f32, bf16 or f16")))
      return failure();
  }
  for (Value v : getColVectors()) {
    auto type = cast<MemRefType>(v.getType());
    SmallVector<int64_t> expected =
        type.getRank() == 2 ? SmallVector<int64_t>{g, n} : SmallVector<int64_t>{n};
    if (failed(check.shape("cols", v, expected,
                           "N, or G x N for one vector per group")) ||
        failed(check.elementType("cols", v, isVectorType, "f32, bf16 or f16")))
      return failure();
  }
  for (Value v : getGroupScalars()) {
    if (failed(check.shape("group_scalars", v, {g}, "one per group")) ||
        failed(check.elementType("group_scalars", v, isVectorType,
                                 "f32, bf16 or f16")))
      return failure();
  }
  return success();
}

LogicalResult GroupedMatmulOp::verifyRegions() {
  Block *block = getEpilogueBlock();
  if (!block)
    return success();
  if (!getEpilogue().hasOneBlock())
    return emitOpError() << "epilogue must have exactly one block";

  // Expected block arguments: acc, rows..., cols..., group scalars..., group.
  SmallVector<std::pair<Type, std::string>> expected;
  expected.push_back({Float32Type::get(getContext()), "the f32 accumulator"});
  auto addEach = [&](ValueRange vectors, StringRef what) {
    for (auto [i, v] : llvm::enumerate(vectors))
      expected.push_back(
          {cast<MemRefType>(v.getType()).getElementType(),
           (llvm::Twine("the element of '") + what + "' #" + llvm::Twine(i))
               .str()});
  };
  addEach(getRowVectors(), "rows");
  addEach(getColVectors(), "cols");
  addEach(getGroupScalars(), "group_scalars");
  expected.push_back({IndexType::get(getContext()), "the group index"});

  if (block->getNumArguments() != expected.size())
    return emitOpError() << "epilogue must have " << expected.size()
                         << " block arguments (accumulator, "
                         << getRowVectors().size() << " rows, "
                         << getColVectors().size() << " cols, "
                         << getGroupScalars().size()
                         << " group scalars, group index), but has "
                         << block->getNumArguments();
  for (auto [i, arg] : llvm::enumerate(block->getArguments()))
    if (arg.getType() != expected[i].first)
      return emitOpError() << "epilogue argument #" << i << " must be "
                           << expected[i].first << " (" << expected[i].second
                           << "), but is " << arg.getType();

  auto yield = dyn_cast<YieldOp>(block->getTerminator());
  if (!yield)
    return emitOpError() << "epilogue must end with gg.yield";
  Type yielded = yield.getValue().getType();
  Type outElem = getOutType().getElementType();
  if (!yielded.isF32() && yielded != outElem)
    return emitOpError() << "epilogue must yield f32 or the element type of "
                            "'out' ("
                         << outElem << "), but yields " << yielded;

  for (Operation &inner : block->without_terminator()) {
    bool scalar = llvm::all_of(inner.getOperandTypes(), [](Type t) {
                    return t.isIntOrIndexOrFloat();
                  }) &&
                  llvm::all_of(inner.getResultTypes(), [](Type t) {
                    return t.isIntOrIndexOrFloat();
                  });
    if (inner.getNumRegions() != 0 || !isMemoryEffectFree(&inner) || !scalar)
      return inner.emitOpError()
             << "is not allowed in a gg.grouped_matmul epilogue: only "
                "side-effect-free scalar operations may appear there";
  }
  return success();
}
