//===- GGKTma.cpp - verifiers of the TMA copies ----------------------------===//
//
// ggk.tma_load, ggk.tma_load_multicast and ggk.tma_store: a box has one to
// five coordinates, one per dimension of its tensor map.
//
//===----------------------------------------------------------------------===//
#include "ggk/GGKDialect.h"

using namespace mlir;
using namespace mlir::ggk;

namespace {

/// TMA's tensor maps have one to five dimensions.
constexpr size_t kMaxTmaDims = 5;

LogicalResult verifyCoords(Operation *op, size_t count) {
  if (count < 1 || count > kMaxTmaDims)
    return op->emitOpError() << "takes one coordinate per dimension of its "
                                "tensor map, 1 to "
                             << kMaxTmaDims << ", got " << count;
  return success();
}

} // namespace

LogicalResult TmaLoadOp::verify() {
  return verifyCoords(*this, getCoords().size());
}

LogicalResult TmaLoadMulticastOp::verify() {
  return verifyCoords(*this, getCoords().size());
}

LogicalResult TmaStoreOp::verify() {
  return verifyCoords(*this, getCoords().size());
}
