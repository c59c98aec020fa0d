//===- KernelInfo.cpp - the kernel's launch contract -----------------------===//
//
// #ggk.launch: what the source op fixes of the kernel's launch (tile,
// sizes, grid bound, the tensors of the source function), and the kernel's
// parameters as ggk.kernel_param ops, each with its #ggk.param: what feeds
// it, so that the runtime can encode the tensor maps and launch the kernel
// without knowing how it was made. ggk-collect-launch makes them the
// kernel's arguments and completes the contract.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"
#include "ggk/GGKDialect.h"

using namespace mlir;
using namespace mlir::gg;
using ggc::byteWidth;
using ggc::kSwizzleBytes;

namespace ggc {

namespace {

/// CUtensorMapDataType names, as the runtime expects them.
const char *tensorMapType(Type t) {
  if (t.isBF16())
    return "bfloat16";
  if (t.isF16())
    return "float16";
  if (t.isF32())
    return "float32";
  return "uint8"; // f8 is moved as bytes
}

const char *elementName(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(64))
    return "i64";
  if (isa<Float8E4M3FNType>(t))
    return "f8e4m3fn";
  return "f8e5m2";
}

/// How a tensor's dimension the compiler does not know is named in the
/// contract: by the run-time size it follows.
Attribute dynamicDimName(Builder &b, const KernelPlan &p, GroupedMatmulOp op,
                         Value arg, size_t dim, size_t rank) {
  bool kGrouped = p.layout == GroupLayout::k_grouped;
  bool isScale = arg == op.getAScale() || arg == op.getBScale();
  // The row count M (the concatenated K for k_grouped), the 4-aligned M of
  // M-major block scales, or, for k_grouped, K's count of 128-wide scale
  // blocks (MX: of 4 x 32 or 4 x 128 K, a word's four exponents).
  bool alignedRows = (arg == op.getAScale() && p.aScale &&
                      p.aScale.getKind() == ScaleKind::block &&
                      p.aScale.getMajor() == ScaleMajor::mn_major) ||
                     arg == op.getOutScale();
  bool mxRows =
      arg == op.getAScale() && p.mx && p.layout == GroupLayout::contiguous;
  StringRef kScaleBlocks =
      p.mx && p.aScale.getBlockK() == 128 ? "ceil(K/512)" : "ceil(K/128)";
  if (kGrouped)
    return b.getStringAttr(isScale ? kScaleBlocks : "K");
  // Gathered rows: A's own rows are as many as the caller has (T); so are
  // scattered rows of out (R).
  if (arg == op.getA() && op.getARows())
    return b.getStringAttr("T");
  if (arg == op.getOut() && op.getOutRows())
    return b.getStringAttr("R");
  if (alignedRows && dim + 1 == rank)
    return b.getStringAttr("align4(M)");
  return b.getStringAttr(mxRows ? "(M+3G)/4*4" : "M");
}
} // namespace

ggk::LaunchAttr KernelGenerator::launchContract(StringRef name) {
  std::optional<int64_t> k;
  if (!ShapedType::isDynamic(p.k))
    k = p.k;
  // The block, the shared memory and the parameters are the lowering's:
  // ggk-collect-launch adds them from the kernel that remains.
  return ggk::LaunchAttr::get(
      b.getContext(), name, stringifyGroupLayout(p.layout),
      /*block=*/std::nullopt, /*sharedBytes=*/std::nullopt, p.cluster,
      p.numSMs, {p.blockM, p.blockN, p.blockK}, p.numGroups, p.n, k,
      /*params=*/ArrayAttr(), b.getArrayAttr(launchArgs()),
      /*ungroupedSpans=*/p.zeroUngrouped ? 2 : 0, /*dependentLaunch=*/false);
}

int64_t KernelGenerator::argIndex(Value v) {
  for (BlockArgument arg : func.getArguments())
    if (arg == v)
      return arg.getArgNumber();
  return -1;
}

Value KernelGenerator::declareTensorMap(StringRef operand, Value v,
                                        ArrayRef<int64_t> box,
                                        StringRef swizzle) {
  MLIRContext *ctx = b.getContext();
  return b.create<ggk::KernelParamOp>(
      b.ptr(ggc::kGeneric),
      ggk::ParamAttr::get(ctx, ggk::ParamKind::tensor_map, operand,
                          argIndex(v),
                          b.getStringAttr(tensorMapType(
                              cast<MemRefType>(v.getType()).getElementType())),
                          box, b.getStringAttr(swizzle), std::nullopt));
}

Value KernelGenerator::declarePointer(StringRef operand, Value v,
                                      unsigned space) {
  return b.create<ggk::KernelParamOp>(
      b.ptr(space),
      ggk::ParamAttr::get(b.getContext(), ggk::ParamKind::pointer, operand,
                          argIndex(v), StringAttr(), {}, StringAttr(),
                          std::nullopt));
}

Value KernelGenerator::declareSize(StringRef operand, Value v, int64_t dim) {
  return b.create<ggk::KernelParamOp>(
      b.i64(), ggk::ParamAttr::get(b.getContext(), ggk::ParamKind::size,
                                   operand, argIndex(v), StringAttr(), {},
                                   StringAttr(), dim));
}

void KernelGenerator::declareParams() {
  declareOperandMaps();
  declarePoolMaps();
  declarePointersAndSizes();
}

void KernelGenerator::declareOperandMaps() {
  bool masked = p.layout == GroupLayout::masked;
  bool kGrouped = p.layout == GroupLayout::k_grouped;
  // Boxes are innermost first and span the operand's full rank. MN-major
  // operands are loaded 64 columns (one 128-byte swizzled row) at a time.
  int64_t chunk = kSwizzleBytes / byteWidth(p.aElem);
  // Without TMA, A and B come as their addresses, where the maps would;
  // gathered rows of A come by address on every target.
  if (p.aByAddress())
    aMaps.push_back(declarePointer("a", op.getA(), ggc::kGeneric));
  if (!p.tensorMaps)
    tensorMapB = declarePointer("b", op.getB(), ggc::kGeneric);
  for (int64_t h : !p.aByAddress() ? ArrayRef<int64_t>(p.aLoadBoxes)
                                   : ArrayRef<int64_t>()) {
    if (p.aMNMajor)
      aMaps.push_back(declareTensorMap("a", op.getA(), {chunk, p.blockK}));
    else if (masked)
      aMaps.push_back(declareTensorMap("a", op.getA(), {p.blockK, h, 1}));
    else
      aMaps.push_back(declareTensorMap("a", op.getA(), {p.blockK, h}));
  }
  if (p.tensorMaps) {
    if (p.bMNMajor && kGrouped)
      tensorMapB = declareTensorMap("b", op.getB(), {chunk, p.blockK});
    else if (p.bMNMajor)
      tensorMapB = declareTensorMap("b", op.getB(), {chunk, p.blockK, 1});
    else if (kGrouped)
      tensorMapB =
          declareTensorMap("b", op.getB(), {p.blockK, p.blockN / p.cluster});
    else
      // A cluster CTA's share of rows, or one warpgroup's share of one of
      // column_halves' halves.
      tensorMapB = declareTensorMap(
          "b", op.getB(),
          {p.blockK,
           p.blockN / (p.columnHalves ? 2 * p.splitN : p.cluster), 1});
  }
  // A's 1x128 block scales for a tile's rows and one K block (stageScales):
  // a window of BM + 4 consecutive f32 of the M-major scale tensor, or of
  // BM + 4 rows of four K blocks of the K-major one, unswizzled.
  if (p.stageScales) {
    SmallVector<int64_t> window = {p.aScaleWindowRows(), 1};
    if (p.aScaleKMajor)
      window = {4, p.aScaleWindowRows()};
    if (masked)
      window.push_back(1);
    tensorMapAScale =
        declareTensorMap("a_scale", op.getAScale(), window, "none");
  }
  // B's per-column scales of a tile and K block: a box of its BN f32.
  if (p.columnScalesInStages)
    tensorMapBScale =
        declareTensorMap("b_scale", op.getBScale(), {p.blockN, 1}, "none");
}

void KernelGenerator::declarePoolMaps() {
  // The store pool: boxes of h rows and a column chunk of the staged tile
  // (128 or 64 swizzled bytes, or all its BN columns, BN/2 with
  // column_pairs, unswizzled).
  bool rank3 = p.layout == GroupLayout::masked ||
               p.layout == GroupLayout::k_grouped;
  StringRef poolSwizzle = p.stagingSwizzle == 128  ? "128B"
                          : p.stagingSwizzle == 64 ? "64B"
                                                   : "none";
  for (int64_t h : p.storePool) {
    SmallVector<int64_t> box = {p.stagingChunkColumns(), h};
    if (rank3)
      box.push_back(1);
    poolMaps.push_back(declareTensorMap("out", op.getOut(), box, poolSwizzle));
  }
}

void KernelGenerator::declarePointersAndSizes() {
  outPtr = declarePointer("out", op.getOut());
  groupsPtr = declarePointer("groups", op.getGroups());
  // The run-time size: rows of A (M_max for masked, K for k_grouped), or
  // of the list that gathers them; then the rows the list indexes.
  bool masked = p.layout == GroupLayout::masked;
  bool kGrouped = p.layout == GroupLayout::k_grouped;
  int64_t sizeDim = masked ? 1 : (kGrouped && !p.aMNMajor) ? 1 : 0;
  if (p.gatherA) {
    dynamicSize = declareSize("a_rows", op.getARows(), 0);
    aSourceRows = declareSize("a", op.getA(), 0);
    aRowsPtr = declarePointer("a_rows", op.getARows());
  } else {
    dynamicSize = declareSize("a", op.getA(), sizeDim);
  }
  // Scattered rows: the list, and out's rows, which bound its indices
  // (after the run-time size, the first size the host sizes the grid by).
  if (op.getOutRows()) {
    outRowsPtr = declarePointer("out_rows", op.getOutRows());
    outRowCount = declareSize("out", op.getOut(), 0);
  }
  if (op.getOutScale())
    outScalePtr = declarePointer("out_scale", op.getOutScale());
  if (op.getAScale())
    aScalePtr = declarePointer("a_scale", op.getAScale());
  if (op.getBScale())
    bScalePtr = declarePointer("b_scale", op.getBScale());
  for (Value v : op.getRowVectors())
    rowPtrs.push_back(declarePointer("rows", v));
  for (Value v : op.getColVectors())
    colPtrs.push_back(declarePointer("cols", v));
  for (Value v : op.getGroupScalars())
    scalarPtrs.push_back(declarePointer("group_scalars", v));
}

SmallVector<Attribute> KernelGenerator::launchArgs() {
  SmallVector<Attribute> args;
  for (BlockArgument arg : func.getArguments()) {
    auto type = cast<MemRefType>(arg.getType());
    SmallVector<Attribute> shape;
    for (auto [i, d] : llvm::enumerate(type.getShape()))
      shape.push_back(!ShapedType::isDynamic(d)
                          ? Attribute(b.getI64IntegerAttr(d))
                          : dynamicDimName(b, p, op, arg, i, type.getRank()));
    args.push_back(ggk::ArgAttr::get(b.getContext(), elementName(type.getElementType()),
                                     b.getArrayAttr(shape),
                                     arg == op.getOut() ||
                                         arg == op.getOutScale()));
  }
  return args;
}

} // namespace ggc
