//===- GGOpChecks.h - operand checks the gg verifiers share -----*- C++ -*-===//
//
// Rank, layout and element-type checks of memref operands, and sizes as
// error messages print them, for the verifiers of gg's ops beside the
// GEMMs (GGRouteOps.cpp, GGBlockScaleOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GG_OPCHECKS_H
#define GG_OPCHECKS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::gg::checks {

/// `value` (operand `name`) as a memref of rank `rank` with the identity
/// layout holding `element` (`expected` names it); an error otherwise.
inline FailureOr<MemRefType> shaped(Operation *op, Value value, StringRef name,
                                    int64_t rank, Type element,
                                    StringRef expected) {
  auto type = cast<MemRefType>(value.getType());
  if (type.getRank() != rank || !type.getLayout().isIdentity())
    return op->emitOpError() << name << " must be a " << rank
                             << "-D memref with the identity layout, got "
                             << type;
  if (type.getElementType() != element)
    return op->emitOpError() << name << " must hold " << expected << ", got "
                             << type.getElementType();
  return type;
}

inline bool known(int64_t size) { return !ShapedType::isDynamic(size); }

/// A size for an error message: the number, or "?" where dynamic.
inline std::string sizeText(int64_t size) {
  return known(size) ? std::to_string(size) : std::string("?");
}

} // namespace mlir::gg::checks

#endif // GG_OPCHECKS_H
