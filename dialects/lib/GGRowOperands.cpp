//===- GGRowOperands.cpp - the row options of gg.grouped_matmul ----------===//
//
// What gg.grouped_matmul's options over a contiguous product's rows take
// (a_rows, out_rows, out_scale, zero_ungrouped), checked by
// GroupedMatmulOp's verifier.
//
//===----------------------------------------------------------------------===//
#include "GGOpsChecks.h"

#include <string>

namespace mlir::gg::detail {

/// A row-index list of the contiguous layout: `name` and what it does
/// (`does`: "gathers rows of a token-packed 'a'"), a 1-D i32 list, `[M]`
/// where `m` is known (else not checked: a_rows sets M).
static LogicalResult verifyRowList(GroupedMatmulOp op, Value rows,
                                   StringRef name, StringRef does,
                                   StringRef entry, int64_t m) {
  if (op.getLayout() != GroupLayout::contiguous)
    return op.emitOpError() << name << " " << does
                            << ": it takes layout contiguous, got "
                            << stringifyGroupLayout(op.getLayout());
  auto type = cast<MemRefType>(rows.getType());
  bool lengthOff = !ShapedType::isDynamic(m) && !type.isDynamicDim(0) &&
                   type.getDimSize(0) != m;
  if (type.getRank() != 1 || !type.getElementType().isInteger(32) || lengthOff)
    return op.emitOpError()
           << "'" << name << "' must be [M] i32 (" << entry
           << " per row of the product"
           << (ShapedType::isDynamic(m) ? std::string()
                                        : ", M = " + std::to_string(m))
           << "), got " << type;
  return success();
}

/// What gathered rows of A take: the contiguous layout (whose A is mk) and
/// a 1-D i32 list, which sets M. Scales of A index the product's rows (the
/// list's), as verifyScaleOperand checks them, so they need no gathering
/// here.
LogicalResult verifyGatheredRows(GroupedMatmulOp op) {
  if (!op.getARows())
    return success();
  return verifyRowList(op, op.getARows(), "a_rows",
                       "gathers rows of a token-packed 'a'", "a row index of 'a'",
                       ShapedType::kDynamic);
}

/// What scattered rows of out take: the contiguous layout, a 1-D i32 list
/// of the product's M rows, and stores that write each output once (no
/// accumulate: a repeated index would add in no fixed order) and only
/// where the list says (no zero_ungrouped).
LogicalResult verifyScatteredRows(GroupedMatmulOp op,
                                         const GroupedMatmulOp::Dims &d) {
  if (!op.getOutRows())
    return success();
  if (failed(verifyRowList(op, op.getOutRows(), "out_rows",
                           "scatters the rows of a token-packed product",
                           "a row of 'out'", d.m)))
    return failure();
  if (op.getAccumulate())
    return op.emitOpError() << "out_rows cannot go with accumulate: two "
                               "indices naming one row would add in no "
                               "fixed order";
  if (op.getZeroUngrouped())
    return op.emitOpError() << "out_rows cannot go with zero_ungrouped: the "
                               "rows of 'out' are the list's, not the groups'";
  return success();
}

/// An out quantised to FP8 in the epilogue: its 1x128 scales in the
/// block_mn layout the next FP8 GEMM reads, a contiguous product stored
/// row by row (the shapes of out itself verifyMatrixShapes checks).
LogicalResult verifyOutputScales(GroupedMatmulOp op,
                                        const GroupedMatmulOp::Dims &d) {
  if (!op.getOutScale())
    return success();
  if (op.getLayout() != GroupLayout::contiguous)
    return op.emitOpError() << "out_scale quantises a contiguous product's "
                               "rows: it takes layout contiguous, got "
                            << stringifyGroupLayout(op.getLayout());
  if (op.getAccumulate())
    return op.emitOpError() << "out_scale cannot go with accumulate: an FP8 "
                               "out is written once, with its scales";
  if (op.getZeroUngrouped())
    return op.emitOpError() << "out_scale cannot go with zero_ungrouped: the "
                               "rows outside every group would have no "
                               "scales";
  if (op.getOutRows())
    return op.emitOpError() << "out_scale cannot go with out_rows yet: the "
                               "scales are stored by the product's rows";
  int64_t columns = op.outputColumns(d.n);
  int64_t alignedRows =
      ShapedType::isDynamic(d.m) ? kDynamic : (d.m + 3) / 4 * 4;
  ShapeChecker check(op);
  return check.shapeAndType(
      "out_scale", op.getOutScale(), {(columns + 127) / 128, alignedRows},
      "ceil(N/128) x align4(M), the block_mn scales",
      [](Type t) { return t.isF32(); }, "f32");
}

/// Zeros for the rows outside every group: rows of a contiguous product,
/// stored as they are (no epilogue of zero, no sum with what out held).
LogicalResult verifyZeroUngrouped(GroupedMatmulOp op) {
  if (!op.getZeroUngrouped())
    return success();
  if (op.getLayout() != GroupLayout::contiguous)
    return op.emitOpError() << "zero_ungrouped clears the rows of a "
                               "contiguous 'out' outside every group: it "
                               "takes layout contiguous, got "
                            << stringifyGroupLayout(op.getLayout());
  if (op.getEpilogueBlock())
    return op.emitOpError() << "zero_ungrouped writes zeros to the rows "
                               "outside every group, which an epilogue would "
                               "not leave zero: it takes no epilogue region";
  if (op.getAccumulate())
    return op.emitOpError() << "zero_ungrouped cannot go with accumulate, "
                               "which would leave the rows outside every "
                               "group as 'out' held them";
  if (op.getARows())
    return op.emitOpError() << "zero_ungrouped cannot go with a_rows (not "
                               "lowered)";
  return success();
}

} // namespace mlir::gg::detail
