//===- GGDialect.cpp - the gg dialect ---------------------------------------===//
#include "gg/GGDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gg;

#include "gg/GGDialect.cpp.inc"
#include "gg/GGEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "gg/GGAttrs.cpp.inc"

void GGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "gg/GGOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gg/GGAttrs.cpp.inc"
      >();
}
