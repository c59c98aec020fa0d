//===- Rematerialize.cpp - recompute an operand's address next to each use ===//
#include "Rematerialize.h"

using namespace mlir;

namespace ggc {

Rematerialized::Rematerialized(Value value, Operation *user)
    : value(value), user(user) {
  collect(value);
  llvm::sort(ops, [](Operation *x, Operation *y) {
    return x->isBeforeInBlock(y);
  });
}

void Rematerialized::collect(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isPure(def) || def->getBlock() != user->getBlock() ||
      llvm::is_contained(ops, def))
    return;
  for (Operation *other : def->getUsers())
    if (other != user && !llvm::is_contained(ops, other))
      return;
  ops.push_back(def);
  for (Value operand : def->getOperands())
    collect(operand);
}

Value Rematerialized::at(OpBuilder &b) const {
  IRMapping clones;
  for (Operation *def : ops)
    b.clone(*def, clones);
  return clones.lookupOrDefault(value);
}

void Rematerialized::eraseOriginals() {
  for (Operation *def : llvm::reverse(ops))
    def->erase();
}

} // namespace ggc
