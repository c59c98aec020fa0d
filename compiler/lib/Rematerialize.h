//===- Rematerialize.h - recompute an operand's address next to each use --===//
//
// A ggk op that a pass lowers into several uses of one operand (a stage's
// address, say) would, left alone, have that operand computed once before
// the op. The generator used to compute such addresses next to each use,
// and LLVM keeps address arithmetic where it is made, so the PTX's
// instruction order would change. This recomputes the pure ops that make
// the operand, and nothing else, wherever a use needs it.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_REMATERIALIZE_H
#define GGC_REMATERIALIZE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace ggc {

class Rematerialized {
public:
  /// The pure ops before `user` in its block that compute `value` and
  /// nothing else (a value other ops use too, such as a stage index, stays
  /// where it is), in program order.
  Rematerialized(mlir::Value value, mlir::Operation *user);

  /// `value`, recomputed at `b`'s insertion point.
  mlir::Value at(mlir::OpBuilder &b) const;
  /// Erases the original ops (after `user` has been erased).
  void eraseOriginals();

private:
  void collect(mlir::Value v);

  mlir::Value value;
  mlir::Operation *user;
  llvm::SmallVector<mlir::Operation *> ops;
};

} // namespace ggc

#endif // GGC_REMATERIALIZE_H
