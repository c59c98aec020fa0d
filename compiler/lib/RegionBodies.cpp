//===- RegionBodies.cpp - a ggk region's body where its op stood ----------===//
#include "RegionBodies.h"
#include "ggk/GGKDialect.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace ggc {

SmallVector<Value> cloneBody(Region &region, ValueRange args, OpBuilder &b) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> yields;
  for (Value v : cast<ggk::YieldOp>(block.getTerminator()).getValues())
    yields.push_back(mapping.lookupOrDefault(v));
  return yields;
}

SmallVector<Value> moveBody(Region &region, ValueRange args, OpBuilder &b) {
  Block &block = region.front();
  auto yield = cast<ggk::YieldOp>(block.getTerminator());
  for (auto [argument, value] : llvm::zip_equal(block.getArguments(), args))
    argument.replaceAllUsesWith(value);
  // After the replacement: the block may yield its arguments themselves.
  SmallVector<Value> yielded(yield.getValues());
  yield.erase();
  b.getInsertionBlock()->getOperations().splice(b.getInsertionPoint(),
                                                block.getOperations());
  return yielded;
}

} // namespace ggc
