//===- GGKPromotion.cpp - verifier of ggk.promote ------------------------===//
//
// What a promotion's scales must be for the accumulator it adds to.
//
//===----------------------------------------------------------------------===//
#include "ggk/GGKDialect.h"

using namespace mlir;
using namespace mlir::ggk;

LogicalResult PromoteOp::verify() {
  auto type = cast<AccType>(getAcc().getType());
  if (type.getWarpColumns() != 1)
    return emitOpError() << "promotes wgmma's fragment (warp_columns = 1), "
                            "whose two row groups A's scales follow; got "
                            "warp_columns = "
                         << type.getWarpColumns();
  if (getAScales().size() != 2)
    return emitOpError() << "takes A's two scales (one per row group of the "
                            "thread), got "
                         << getAScales().size();
  if (getBlockN() <= 0)
    return emitOpError() << "block_n must be positive, got " << getBlockN();
  size_t bScales = getBScales().size();
  if (getColumnHalves() && (getColumnScales() || bScales != 2))
    return emitOpError() << "with column_halves takes B's two block scales, "
                            "one per half of the columns, got "
                         << bScales << (getColumnScales() ? " and 'columns'" : "");
  if (getColumnHalves())
    return success();
  if (getPerColumn()) {
    int64_t columns = type.getColumns();
    if (getColumnScales() || bScales != static_cast<size_t>(columns / 4))
      return emitOpError() << "with per_column takes B's scales of the "
                              "thread's columns, two per 8-column block: "
                           << columns / 4 << " of " << columns
                           << " columns and no 'columns' table, got "
                           << bScales
                           << (getColumnScales() ? " and a table" : "");
    return success();
  }
  if (getColumnScales()) {
    if (bScales != 0)
      return emitOpError() << "takes B's scales per column or per block, not "
                              "both: 'blocks' must be empty with 'columns', "
                              "got "
                           << bScales;
    return success();
  }
  if (bScales < 1 || bScales > 2)
    return emitOpError() << "takes 1 or 2 of B's block scales (the first "
                            "128 columns' and, when a block boundary falls "
                            "inside the columns, the next), got "
                         << bScales;
  int64_t columns = type.getColumns();
  if (bScales == 2 && columns == 128)
    return emitOpError() << "has 2 of B's block scales, but its " << columns
                         << " columns lie in one 128-column block";
  return success();
}

LogicalResult LoadColumnScalesOp::verify() {
  int64_t columns = getColumns();
  if (columns <= 0 || columns % 8 != 0)
    return emitOpError() << "columns must be a positive multiple of 8 (whole "
                            "8-column blocks), got "
                         << columns;
  if (getScales().size() != static_cast<size_t>(columns / 4))
    return emitOpError() << "gives two scales per 8-column block: "
                         << columns / 4 << " for " << columns
                         << " columns, got " << getScales().size();
  return success();
}
