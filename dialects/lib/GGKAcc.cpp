//===- GGKAcc.cpp - the typed accumulator ---------------------------------===//
//
// !ggk.acc: its syntax (`<64x128xf32, warp_columns = 2>`), the layouts it
// may state, and the element positions ggk.acc_get and ggk.acc_set take.
//
//===----------------------------------------------------------------------===//
#include "ggk/GGKDialect.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::ggk;

Type AccType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type element;
  int64_t warpColumns = 1;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(element))
    return {};
  if (shape.size() != 2) {
    parser.emitError(parser.getNameLoc())
        << "!ggk.acc takes rows x columns x element type, got "
        << shape.size() << " sizes";
    return {};
  }
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("warp_columns") || parser.parseEqual() ||
       parser.parseInteger(warpColumns)))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), shape[0], shape[1], element,
                    warpColumns);
}

void AccType::print(AsmPrinter &printer) const {
  printer << '<' << getRows() << 'x' << getColumns() << 'x'
          << getElementType();
  if (getWarpColumns() != 1)
    printer << ", warp_columns = " << getWarpColumns();
  printer << '>';
}

LogicalResult AccType::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t rows, int64_t columns, Type element,
                              int64_t warpColumns) {
  if (rows != 64)
    return emitError() << "!ggk.acc holds a warpgroup's 64 rows, got " << rows;
  if (columns < 8 || columns > 256 || columns % 8 != 0)
    return emitError() << "!ggk.acc's columns must be a multiple of 8 in "
                          "[8, 256], got "
                       << columns;
  if (!element.isF32())
    return emitError() << "!ggk.acc accumulates in f32, got " << element;
  if (!llvm::is_contained({1, 2, 4}, warpColumns) ||
      (warpColumns != 1 && columns % (16 * warpColumns) != 0))
    return emitError() << "!ggk.acc's warp_columns must be 1, or 2 or 4 with "
                          "the columns a multiple of 16 per warp column, got "
                       << warpColumns << " with " << columns << " columns";
  return success();
}

/// A (row group, column block, column) position inside `type`'s fragment.
static LogicalResult verifyPosition(Operation *op, AccType type,
                                    ArrayRef<int64_t> position) {
  if (position.size() != 3)
    return op->emitOpError() << "position must be [row group, column block, "
                                "column], got "
                             << position.size() << " indices";
  int64_t bounds[] = {type.getRowGroups(), type.getColumnBlocks(), 2};
  const char *names[] = {"row group", "column block", "column"};
  for (int i = 0; i < 3; ++i)
    if (position[i] < 0 || position[i] >= bounds[i])
      return op->emitOpError()
             << names[i] << " " << position[i] << " is outside [0, "
             << bounds[i] << ") for " << type;
  return success();
}

LogicalResult AccGetOp::verify() {
  return verifyPosition(*this, cast<AccType>(getAcc().getType()),
                        getPosition());
}

LogicalResult AccSetOp::verify() {
  return verifyPosition(*this, cast<AccType>(getAcc().getType()),
                        getPosition());
}
