//===- GGOps.cpp - gg operations and their verifiers -----------------------===//
//
// The verifier of gg.grouped_matmul is the contract every later pass relies
// on: once it passes, the lowering may read G, N, K and every scale shape off
// the types without checking again. Each error names the operand and what
// was expected.
//
//===----------------------------------------------------------------------===//
#include "GGOpsChecks.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::gg;

#define GET_OP_CLASSES
#include "gg/GGOps.cpp.inc"

using namespace mlir::gg::detail;


GroupedMatmulOp::Dims GroupedMatmulOp::getDims() {
  ArrayRef<int64_t> a = getAType().getShape();
  ArrayRef<int64_t> b = getBType().getShape();
  ArrayRef<int64_t> out = getOutType().getShape();
  bool bIsNK = getBLayout() == OperandLayout::nk;
  switch (getLayout()) {
  case GroupLayout::contiguous:
  case GroupLayout::padded_contiguous: {
    // Gathered rows: the product has a row per entry of the list.
    int64_t m =
        getARows() ? cast<MemRefType>(getARows().getType()).getShape()[0] : a[0];
    return {b[0], m, bIsNK ? b[1] : b[2], bIsNK ? b[2] : b[1]};
  }
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
  if (getOutLayout() == OperandLayout::nm)
    return std::string("stores rows of an 'out' in layout mn; 'out' in layout "
                       "nm takes per-thread stores (an empty store_pool)");
  if (getOutRows())
    return std::string("stores boxes of consecutive rows; rows scattered "
                       "through 'out_rows' take per-thread stores (an empty "
                       "store_pool)");
  if (getOutScale())
    return std::string("stores boxes of a staged tile; an FP8 out quantised "
                       "by out_scale takes per-thread stores (an empty "
                       "store_pool)");
  if (getAccumulate() && !getOutType().getElementType().isF32())
    return std::string("adds to 'out' with TMA's reduce-add only for f32 "
                       "(a 16-bit sum would be rounded twice); accumulate "
                       "into a 16-bit 'out' takes per-thread stores (an "
                       "empty store_pool)");
  // TMA strides are multiples of 16 bytes; N is (a multiple of 8), N/2 of
  // column_pairs or column_halves may not be.
  int64_t outBytes = (getOutType().getElementTypeBitWidth() + 7) / 8;
  int64_t outColumns = getOutType().getShape().back();
  if (combinesColumns() && !ShapedType::isDynamic(outColumns) &&
      outColumns * outBytes % 16 != 0)
    return (llvm::Twine("needs rows of 'out' of a multiple of 16 bytes (TMA's "
                        "strides), but its N/2 = ") +
            llvm::Twine(outColumns) + " columns (" + combiningName() + ") make " +
            llvm::Twine(outColumns * outBytes) +
            "; use an empty store_pool (per-thread stores)")
        .str();
  // A box of h rows starts at a multiple of 2h rows of the staged tile, and
  // TMA reads shared memory from 128-byte-aligned addresses.
  if (config) {
    int64_t rowBytes = outputTileColumns(config) * outBytes;
    if (rowBytes * 2 % 128 != 0)
      return (llvm::Twine("needs the staged tile's rows of ") +
              (combinesColumns()
                   ? ("block N / 2 (" + combiningName() + ")").str()
                   : std::string("block N")) +
              " elements to be a multiple of 64 bytes (its boxes start "
              "128-byte aligned), but block N " +
              llvm::Twine(config.getBlockN()) + " makes them " +
              llvm::Twine(rowBytes) +
              "; use an empty store_pool (per-thread stores)")
          .str();
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// GroupedMatmulOp::verify: the checks in the order they run. The first error
// is the one reported, so the order is part of the contract the tests pin
// down; a later check may rely on what an earlier one established (sizes
// are read by rank only once the ranks hold).
//===----------------------------------------------------------------------===//

/// Every operand is read or written with TMA or plain row-major indexing.
static LogicalResult verifyOperandMemRefs(GroupedMatmulOp op) {
  SmallVector<NamedOperand> all = {{"a", op.getA()},
                                   {"b", op.getB()},
                                   {"groups", op.getGroups()},
                                   {"out", op.getOut()}};
  if (op.getARows())
    all.push_back({"a_rows", op.getARows()});
  if (op.getOutScale())
    all.push_back({"out_scale", op.getOutScale()});
  if (op.getAScale())
    all.push_back({"a_scale", op.getAScale()});
  if (op.getBScale())
    all.push_back({"b_scale", op.getBScale()});
  for (Value v : op.getRowVectors())
    all.push_back({"rows", v});
  for (Value v : op.getColVectors())
    all.push_back({"cols", v});
  for (Value v : op.getGroupScalars())
    all.push_back({"group_scalars", v});
  ShapeChecker check(op);
  for (const NamedOperand &o : all) {
    auto type = cast<MemRefType>(o.value.getType());
    if (!type.getLayout().isIdentity())
      return op.emitOpError()
             << "'" << o.name
             << "' must have an identity (contiguous row-major) layout, but "
                "has "
             << type;
    if (failed(check.sizeRange(o.name, o.value)))
      return failure();
  }
  return success();
}

static LogicalResult verifyElementTypes(GroupedMatmulOp op) {
  ShapeChecker check(op);
  const char *matrixTypes = "bf16, f16, f32, f8E4M3FN or f8E5M2";
  if (failed(check.elementType("a", op.getA(), isMatrixElementType,
                               matrixTypes)) ||
      failed(check.elementType("b", op.getB(), isMatrixElementType,
                               matrixTypes)) ||
      failed(check.elementType("out", op.getOut(),
                               op.getOutScale() ? isQuantizedOutputType
                                                : isOutputElementType,
                               op.getOutScale()
                                   ? "f8E4M3FN (quantised by out_scale)"
                                   : "bf16, f16 or f32")))
    return failure();
  Type aElem = op.getAType().getElementType();
  Type bElem = op.getBType().getElementType();
  if (aElem != bElem && !(isF8(aElem) && isF8(bElem)))
    return op.emitOpError() << "'a' and 'b' must have the same element type "
                               "(or both be f8), but have "
                            << aElem << " and " << bElem;
  if (op.getTf32() && !aElem.isF32())
    return op.emitOpError()
           << "'tf32' math applies to f32 operands only, but 'a' has element "
              "type "
           << aElem;
  return success();
}

static LogicalResult verifyOperandLayouts(GroupedMatmulOp op) {
  bool kGrouped = op.getLayout() == GroupLayout::k_grouped;
  OperandLayout aLayout = op.getALayout(), bLayout = op.getBLayout(),
                outLayout = op.getOutLayout();
  if (aLayout != OperandLayout::mk && aLayout != OperandLayout::km)
    return op.emitOpError() << "layout of 'a' must be mk or km, but is "
                            << stringifyOperandLayout(aLayout);
  if (aLayout == OperandLayout::km && !kGrouped)
    return op.emitOpError() << "layout km of 'a' (tokens along the columns) "
                               "is only supported with k_grouped";
  if (bLayout != OperandLayout::nk && bLayout != OperandLayout::kn)
    return op.emitOpError() << "layout of 'b' must be nk or kn, but is "
                            << stringifyOperandLayout(bLayout);
  if (outLayout != OperandLayout::mn && outLayout != OperandLayout::nm)
    return op.emitOpError() << "layout of 'out' must be mn or nm, but is "
                            << stringifyOperandLayout(outLayout);
  if (outLayout == OperandLayout::nm && !kGrouped)
    return op.emitOpError() << "layout nm of 'out' is only supported with "
                               "k_grouped (a transposed per-group output)";
  if (isF8(op.getAType().getElementType()) &&
      (aLayout != OperandLayout::mk || bLayout != OperandLayout::nk))
    return op.emitOpError() << "f8 operands must be K-major (wgmma reads f8 "
                               "only along K): 'a' must be mk and 'b' nk";
  return success();
}

/// The ranks getDims() reads G, M, N and K by, and which of those sizes
/// must be static: all but M, and M too with k_grouped.
static LogicalResult verifyRanksAndStaticSizes(GroupedMatmulOp op) {
  ShapeChecker check(op);
  Value a = op.getA(), b = op.getB(), out = op.getOut();
  bool bIsNK = op.getBLayout() == OperandLayout::nk;
  if (op.getLayout() != GroupLayout::k_grouped) {
    if (failed(check.rank("b", b, 3, bIsNK ? "[G, N, K]" : "[G, K, N]")) ||
        failed(check.staticDim("b", b, 0, "G")) ||
        failed(check.staticDim("b", b, 1, bIsNK ? "N" : "K")) ||
        failed(check.staticDim("b", b, 2, bIsNK ? "K" : "N")))
      return failure();
    if (op.getLayout() == GroupLayout::masked)
      return check.rank("a", a, 3, "[G, M_max, K]");
    return check.rank("a", a, 2, "[M, K] token-packed rows");
  }
  bool aIsMK = op.getALayout() == OperandLayout::mk;
  bool outIsMN = op.getOutLayout() == OperandLayout::mn;
  return success(
      succeeded(check.rank("b", b, 2, bIsNK ? "[N, K]" : "[K, N]")) &&
      succeeded(check.staticDim("b", b, bIsNK ? 0 : 1, "N")) &&
      succeeded(check.rank("a", a, 2, aIsMK ? "[M, K]" : "[K, M]")) &&
      succeeded(check.staticDim("a", a, aIsMK ? 0 : 1, "M")) &&
      succeeded(
          check.rank("out", out, 3, outIsMN ? "[G, M, N]" : "[G, N, M]")) &&
      succeeded(check.staticDim("out", out, 0, "G")));
}

/// What column_pairs and column_halves take: an epilogue to combine each
/// pair, an even N, rows of 'out' (not k_grouped's per-group matrices) and
/// no per-column vectors (which column of a pair would they follow?);
/// column_halves also B in layout nk, and of B's scales only 128x128
/// blocks that each half of a tile lies within (N/2 a multiple of 128 and
/// block N / 2 dividing 128): a half's rows then take one block's scale.
static LogicalResult verifyColumnPairs(GroupedMatmulOp op,
                                       const GroupedMatmulOp::Dims &d) {
  if (op.getColumnPairs() && op.getColumnHalves())
    return op.emitOpError() << "takes column_pairs or column_halves, not both";
  if (!op.combinesColumns())
    return success();
  StringRef name = op.combiningName();
  if (!op.getEpilogueBlock())
    return op.emitOpError() << name << " needs an epilogue that combines "
                                       "each pair of accumulators into one output";
  if (d.n % 2 != 0)
    return op.emitOpError() << name << " needs an even N (pairs of "
                                       "columns of 'b'), got N = "
                            << d.n;
  if (op.getLayout() == GroupLayout::k_grouped)
    return op.emitOpError() << name << " is for row layouts (contiguous, "
                                       "masked, padded_contiguous), not k_grouped";
  if (!op.getColVectors().empty())
    return op.emitOpError() << name << " takes no 'cols' vectors";
  if (!op.getColumnHalves())
    return success();
  if (op.getBLayout() != OperandLayout::nk)
    return op.emitOpError() << "column_halves needs 'b' in layout nk (rows of "
                               "N, K contiguous), got "
                            << stringifyOperandLayout(op.getBLayout());
  ScaleAttr bScale = op.getBScaleKindAttr();
  if (!op.getBScale())
    return success();
  if (!bScale || bScale.getKind() != ScaleKind::block ||
      bScale.getBlockMN() != 128)
    return op.emitOpError() << "column_halves takes scales of 'b' only in "
                               "128x128 blocks (one per half of a tile), got "
                            << (bScale ? Attribute(bScale) : Attribute());
  if ((d.n / 2) % 128 != 0)
    return op.emitOpError() << "column_halves with 128x128 scales of 'b' "
                               "needs N/2 a multiple of 128 (the up half "
                               "starting on a block), got N/2 = "
                            << d.n / 2;
  ConfigAttr config = op.getConfigAttr();
  if (config && 128 % (config.getBlockN() / 2) != 0)
    return op.emitOpError() << "column_halves with 128x128 scales of 'b' "
                               "needs block N / 2 to divide 128 (each half "
                               "of a tile within one scale block), got "
                            << config.getBlockN() / 2;
  return success();
}

/// A table of group counts or offsets in shared memory replaces the loads
/// of the walk that steps from group to group: masked and contiguous. A
/// k_grouped tile loads its own group's K range, and padded_contiguous
/// reads a tag per row tile, with no walk over groups.
static LogicalResult verifyGroupReads(GroupedMatmulOp op) {
  ScheduleAttr schedule = op.getScheduleAttr();
  if (!schedule || schedule.getGroupReads() != GroupReads::shared)
    return success();
  if (op.getLayout() != GroupLayout::masked &&
      op.getLayout() != GroupLayout::contiguous)
    return op.emitOpError() << "schedule group_reads = shared tables the "
                               "counts or offsets a masked or contiguous "
                               "walk steps over; layout "
                            << stringifyGroupLayout(op.getLayout())
                            << " takes group_reads = global";
  return success();
}

/// A, B and out agree on the G, M, N and K that getDims() read off them.
static LogicalResult verifyMatrixShapes(GroupedMatmulOp op,
                                        const GroupedMatmulOp::Dims &d) {
  ShapeChecker check(op);
  auto [g, m, n, k] = d;
  switch (op.getLayout()) {
  case GroupLayout::contiguous:
  case GroupLayout::padded_contiguous:
    // Scattered rows: out has as many rows as the caller's (R).
    return success(
        succeeded(check.shape("a", op.getA(), {kDynamic, k}, "M x K")) &&
        succeeded(check.shape("out", op.getOut(),
                              {op.getOutRows() ? kDynamic : m,
                               op.outputColumns(n)},
                              (op.getOutRows() ? "R" : "M") +
                                  (op.combinesColumns()
                                       ? (" x N/2 (" + op.combiningName() + ")").str()
                                       : std::string(" x N")))));
  case GroupLayout::masked:
    return success(
        succeeded(check.shape("a", op.getA(), {g, kDynamic, k},
                              "G x M_max x K")) &&
        succeeded(check.shape("out", op.getOut(), {g, m, op.outputColumns(n)},
                              op.combinesColumns()
                                  ? ("G x M_max x N/2 (" + op.combiningName() + ")").str()
                                  : std::string("G x M_max x N"))));
  case GroupLayout::k_grouped: {
    bool bIsNK = op.getBLayout() == OperandLayout::nk;
    bool outIsMN = op.getOutLayout() == OperandLayout::mn;
    return success(
        succeeded(check.shape("b", op.getB(),
                              bIsNK ? SmallVector<int64_t>{n, k}
                                    : SmallVector<int64_t>{k, n},
                              "K of 'b' must equal K of 'a'")) &&
        succeeded(check.shape("out", op.getOut(),
                              outIsMN ? SmallVector<int64_t>{g, m, n}
                                      : SmallVector<int64_t>{g, n, m},
                              "one output matrix per group")));
  }
  }
  llvm_unreachable("unknown group layout");
}

/// What `groups` holds depends on the layout: offsets into M or K, a group
/// per row of A, or the valid rows of each group.
static LogicalResult verifyGroupsOperand(GroupedMatmulOp op,
                                         const GroupedMatmulOp::Dims &d) {
  ShapeChecker check(op);
  Value groups = op.getGroups();
  auto isI32 = [](Type t) { return t.isInteger(32); };
  auto isOffset = [](Type t) { return t.isInteger(32) || t.isInteger(64); };
  int64_t offsets = plus(d.numGroups, 1);
  switch (op.getLayout()) {
  case GroupLayout::contiguous:
    return check.shapeAndType("groups", groups, {offsets},
                              "G+1 group offsets, CSR m_indptr", isOffset,
                              "i32 or i64 (offsets)");
  case GroupLayout::padded_contiguous:
    return check.shapeAndType("groups", groups, {d.m},
                              "one group index per row of A", isI32,
                              "i32 (group index per row, -1 = skip)");
  case GroupLayout::masked:
    return check.shapeAndType("groups", groups, {d.numGroups},
                              "valid rows per group, masked_m", isI32,
                              "i32 (valid rows per group)");
  case GroupLayout::k_grouped:
    return check.shapeAndType("groups", groups, {offsets},
                              "G+1 offsets into K", isOffset,
                              "i32 or i64 (offsets)");
  }
  llvm_unreachable("unknown group layout");
}

static LogicalResult verifyGroupCount(GroupedMatmulOp op,
                                      const GroupedMatmulOp::Dims &d) {
  if (d.numGroups < 1)
    return op.emitOpError()
           << "the number of groups G must be at least 1, but is "
           << d.numGroups;
  return success();
}

static LogicalResult verifyExpectedM(GroupedMatmulOp op,
                                     const GroupedMatmulOp::Dims &d) {
  std::optional<int64_t> expectedM = op.getExpectedM();
  if (!expectedM)
    return success();
  // k_grouped: the tokens (K) a group holds, of a K known only at run time.
  if (op.getLayout() == GroupLayout::k_grouped) {
    if (*expectedM < 1)
      return op.emitOpError() << "'expected_m' (a k_grouped group's tokens) "
                                 "must be at least 1, but is "
                              << *expectedM;
    return success();
  }
  bool mIsDynamic = ShapedType::isDynamic(d.m);
  StringRef bound = op.getLayout() == GroupLayout::masked ? "M_max" : "M";
  if (*expectedM < 1 || (!mIsDynamic && *expectedM > d.m))
    return op.emitOpError()
           << "'expected_m' must be in [1, " << bound << " = "
           << (mIsDynamic ? std::string("?") : std::to_string(d.m))
           << "], but is " << *expectedM;
  return success();
}

/// The TMA store pool: powers of two from BLOCK_M (or, for 192, 128) down to
/// 1, so that any count of rows below BLOCK_M is a sum of distinct boxes.
static LogicalResult verifyStorePool(GroupedMatmulOp op) {
  std::optional<ArrayRef<int64_t>> pool = op.getStorePool();
  if (!pool || pool->empty())
    return success();
  ConfigAttr config = op.getConfigAttr();
  if (std::optional<std::string> obstacle = op.storePoolObstacle(config))
    return op.emitOpError() << "'store_pool' " << *obstacle;
  for (auto [i, h] : llvm::enumerate(*pool))
    if (h < 1 || !llvm::isPowerOf2_64(h) ||
        (i > 0 && checkedMul(h, 2) != (*pool)[i - 1]) ||
        (i + 1 == pool->size() && h != 1))
      return op.emitOpError() << "'store_pool' must halve from a power of two "
                                 "down to 1 (e.g. [128, 64, ..., 1]), but is "
                              << shapeString(*pool);
  if (!config)
    return success();
  uint64_t largest = llvm::bit_floor(uint64_t(config.getBlockM()));
  if ((*pool)[0] != int64_t(largest))
    return op.emitOpError() << "'store_pool' must start at the largest power "
                               "of two not above the block M of the config ("
                            << config.getBlockM() << "), which is " << largest
                            << ", but starts at " << (*pool)[0];
  return success();
}

/// A staged tile stored a slice of columns at a time: whole 128-byte chunks
/// of whole tiles' rows, one warpgroup's columns.
static LogicalResult verifyStoreSlice(GroupedMatmulOp op) {
  std::optional<int64_t> slice = op.getStoreSlice();
  if (!slice)
    return success();
  std::optional<ArrayRef<int64_t>> pool = op.getStorePool();
  if (pool && pool->empty())
    return op.emitOpError() << "'store_slice' stages the tile for the TMA store "
                               "pool, but 'store_pool' is empty (per-thread "
                               "stores)";
  if (op.combinesColumns())
    return op.emitOpError() << "'store_slice' takes output columns that are "
                               "the product's, not " << op.combiningName();
  ConfigAttr config = op.getConfigAttr();
  if (!config)
    return success();
  int64_t columns = op.outputTileColumns(config);
  int64_t outBytes = (op.getOutType().getElementTypeBitWidth() + 7) / 8;
  if (*slice <= 0 || *slice >= columns || columns % *slice != 0 ||
      *slice * outBytes % 128 != 0)
    return op.emitOpError() << "'store_slice' must divide the tile's "
                            << columns << " output columns, be fewer, and "
                               "make rows of whole 128-byte chunks ("
                            << 128 / outBytes << " columns of "
                            << op.getOutType().getElementType()
                            << "), got " << *slice;
  if (config.getSplitN() != 1)
    return op.emitOpError() << "'store_slice' takes consumer warpgroups that "
                               "split the tile by rows, not split_n = "
                            << config.getSplitN();
  return success();
}

/// Skipping idle warpgroups relies on a tile's valid rows being a prefix
/// counted from the group's start.
static LogicalResult verifyPaddingLayout(GroupedMatmulOp op) {
  PaddingAttr padding = op.getPaddingAttr();
  GroupLayout layout = op.getLayout();
  if (padding && padding.getIdleWarpgroups() == IdleWarpgroups::skip &&
      layout != GroupLayout::contiguous && layout != GroupLayout::masked)
    return op.emitOpError() << "'padding' with idle_warpgroups = skip needs a "
                               "contiguous or masked layout, whose valid rows "
                               "of a tile are a prefix; got "
                            << stringifyGroupLayout(layout);
  return success();
}

/// Only k_grouped ops have groups starting inside a K block.
static LogicalResult verifyOverfetchLayout(GroupedMatmulOp op) {
  OverfetchAttr overfetch = op.getOverfetchAttr();
  if (overfetch && overfetch.getK() != 0 &&
      op.getLayout() != GroupLayout::k_grouped)
    return op.emitOpError() << "'overfetch' k must be 0 outside k_grouped, got "
                            << overfetch.getK();
  return success();
}

/// The vectors and scalars the epilogue reads per row, column and group.
static LogicalResult verifyEpilogueOperands(GroupedMatmulOp op,
                                            const GroupedMatmulOp::Dims &d) {
  ShapeChecker check(op);
  const char *vectorTypes = "f32, bf16 or f16";
  ExpectedShape perRow = perRowShape(op.getLayout(), d);
  for (Value v : op.getRowVectors())
    if (failed(check.shapeAndType("rows", v, perRow.shape, perRow.meaning,
                                  isVectorElementType, vectorTypes)))
      return failure();
  for (Value v : op.getColVectors()) {
    SmallVector<int64_t> expected =
        cast<MemRefType>(v.getType()).getRank() == 2
            ? SmallVector<int64_t>{d.numGroups, d.n}
            : SmallVector<int64_t>{d.n};
    if (failed(check.shapeAndType("cols", v, expected,
                                  "N, or G x N for one vector per group",
                                  isVectorElementType, vectorTypes)))
      return failure();
  }
  for (Value v : op.getGroupScalars())
    if (failed(check.shapeAndType("group_scalars", v, {d.numGroups},
                                  "one per group", isVectorElementType,
                                  vectorTypes)))
      return failure();
  return success();
}

LogicalResult GroupedMatmulOp::verify() {
  if (failed(verifyOperandMemRefs(*this)) ||
      failed(verifyElementTypes(*this)) ||
      failed(verifyOperandLayouts(*this)) ||
      failed(verifyRanksAndStaticSizes(*this)) ||
      failed(verifyGatheredRows(*this)) ||
      failed(verifyZeroUngrouped(*this)) ||
      failed(verifyGroupReads(*this)))
    return failure();
  // With the ranks checked, G, M, N and K can be read off the types; the
  // size checks above bound them, so what is derived from them cannot
  // overflow.
  Dims dims = getDims();
  // A product over no K has no rows of A or B to read; the kernel's K loop
  // assumes at least one block (k_grouped's K is the groups' own).
  if (dims.k == 0)
    return emitOpError() << "has K = 0: a grouped matmul needs K >= 1 (the "
                            "reduction dimension of 'a' and 'b')";
  // No columns: the tile walk and the stores would have nothing to cover
  // (it failed late, in ggk.store_tile's verifier).
  if (dims.n == 0)
    return emitOpError() << "has N = 0: a grouped matmul needs N >= 1 (the "
                            "columns of 'out')";
  if (failed(verifyColumnPairs(*this, dims)) ||
      failed(verifyMatrixShapes(*this, dims)) ||
      failed(verifyScatteredRows(*this, dims)) ||
      failed(verifyOutputScales(*this, dims)) ||
      failed(verifyGroupsOperand(*this, dims)) ||
      failed(verifyGroupCount(*this, dims)) ||
      failed(verifyExpectedM(*this, dims)) ||
      failed(verifyScaleOperand(*this, /*isA=*/true, dims)) ||
      failed(verifyScaleOperand(*this, /*isA=*/false, dims)) ||
      failed(verifyMxScalePair(*this)) || failed(verifyStorePool(*this)) ||
      failed(verifyStoreSlice(*this)) ||
      failed(verifyPaddingLayout(*this)) ||
      failed(verifyOverfetchLayout(*this)) ||
      failed(verifyEpilogueOperands(*this, dims)))
    return failure();
  return success();
}

LogicalResult GroupedMatmulOp::verifyRegions() {
  Block *block = getEpilogueBlock();
  if (!block)
    return success();
  if (!getEpilogue().hasOneBlock())
    return emitOpError() << "epilogue must have exactly one block";

  // Expected block arguments: acc (two with column_pairs or column_halves),
  // rows..., cols..., group scalars..., group.
  SmallVector<std::pair<Type, std::string>> expected;
  Type f32 = Float32Type::get(getContext());
  if (getColumnHalves()) {
    expected.push_back({f32, "the f32 accumulator of column j (the gate)"});
    expected.push_back({f32, "the f32 accumulator of column j + N/2 (the up)"});
  } else if (getColumnPairs()) {
    expected.push_back({f32, "the f32 accumulator of the pair's even column"});
    expected.push_back({f32, "the f32 accumulator of the pair's odd column"});
  } else {
    expected.push_back({f32, "the f32 accumulator"});
  }
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
                         << " block arguments ("
                         << (combinesColumns() ? "two accumulators, "
                                               : "accumulator, ")
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
  if (getOutScale() && !yielded.isF32())
    return emitOpError() << "epilogue must yield f32 with out_scale (the "
                            "values quantised), but yields "
                         << yielded;
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
