//===- GGKDialect.cpp - the ggk dialect: registration and verifiers --------===//
#include "ggk/GGKDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ggk;

#include "ggk/GGKDialect.cpp.inc"
#include "ggk/GGKEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ggk/GGKAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "ggk/GGKOps.cpp.inc"

void GGKDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ggk/GGKOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ggk/GGKAttrs.cpp.inc"
      >();
}

LogicalResult ForeachTileOp::verify() {
  ArrayRef<int64_t> tile = getTile();
  if (tile.size() != 3 || llvm::any_of(tile, [](int64_t d) { return d <= 0; }))
    return emitOpError() << "tile must be [block M, block N, block K], all "
                            "positive, got "
                         << tile.size() << " sizes";
  if (getCluster() < 1 || (getCluster() > 1) != bool(getClusterRank()))
    return emitOpError() << "takes a cluster_rank exactly when its cluster ("
                         << getCluster() << ") has more than one CTA";
  if (!getGroupsType().isInteger(32) && !getGroupsType().isInteger(64))
    return emitOpError() << "groups_type must be i32 or i64, got "
                         << getGroupsType();
  Block *body = getBodyBlock();
  unsigned expected = kTileFields + getInits().size();
  if (body->getNumArguments() != expected)
    return emitOpError() << "body must take the " << kTileFields
                         << " tile fields and the " << getInits().size()
                         << " carried values, " << expected
                         << " arguments, got " << body->getNumArguments();
  for (unsigned i = 0; i < kTileFields; ++i)
    if (!body->getArgument(i).getType().isInteger(32))
      return emitOpError() << "tile field #" << i << " must be i32, got "
                           << body->getArgument(i).getType();
  for (auto [i, init] : llvm::enumerate(getInits()))
    if (body->getArgument(kTileFields + i).getType() != init.getType() ||
        getResult(i).getType() != init.getType())
      return emitOpError() << "carried value #" << i << " has type "
                           << init.getType()
                           << ", which the body argument and the result must "
                              "have too";
  auto yield = cast<YieldOp>(body->getTerminator());
  if (yield.getValues().getTypes() != getInits().getTypes())
    return yield.emitOpError()
           << "must yield the carried values' types " << getInits().getTypes();
  return success();
}
