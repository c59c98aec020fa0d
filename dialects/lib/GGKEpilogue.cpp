//===- GGKEpilogue.cpp - verifier of ggk.epilogue -----------------------===//
//
// The user's epilogue as the kernel carries it: its block takes the op's
// inputs and yields the value to store, with only what
// ggk-lower-epilogue lowers.
//
//===----------------------------------------------------------------------===//
#include "ggk/GGKDialect.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::ggk;

bool EpilogueOp::isSupported(Operation *op) {
  // By name: the math dialect is the lowering's, not this library's.
  static const llvm::StringSet<> kSupported = {
      "math.exp",  "math.exp2", "math.absf",     "math.sqrt", "math.rsqrt",
      "math.fma",  "math.copysign", "gg.sigmoid", "gg.silu"};
  return op->getName().getDialectNamespace() == "arith" ||
         kSupported.contains(op->getName().getStringRef());
}

LogicalResult EpilogueOp::verify() {
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError() << "takes its block's arguments as inputs: the block "
                            "has "
                         << body.getNumArguments() << " ("
                         << body.getArgumentTypes() << "), the op "
                         << getInputs().size() << " (" << getInputs().getTypes()
                         << ")";
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != 1 ||
      yield.getValues()[0].getType() != getResult().getType())
    return emitOpError() << "yields one value of its result's type ("
                         << getResult().getType() << ") with ggk.yield";
  for (Operation &inner : body.without_terminator())
    if (!isSupported(&inner))
      return inner.emitOpError()
             << "is not supported in epilogues by the NVPTX lowering (arith "
                "ops, math.exp, math.exp2, math.absf, math.sqrt, math.rsqrt, "
                "math.fma, math.copysign, gg.sigmoid and gg.silu are)";
  return success();
}

LogicalResult ScaleOp::verify() {
  if (getFactors().empty())
    return emitOpError() << "takes at least one factor: an element without "
                            "scales along N or M is the accumulator itself";
  return success();
}

LogicalResult InsertOutputOp::verify() {
  int64_t length = getInto().getType().getDimSize(0);
  if (static_cast<int64_t>(getPosition()) < 0 ||
      static_cast<int64_t>(getPosition()) >= length)
    return emitOpError() << "position " << static_cast<int64_t>(getPosition())
                         << " is outside the pair's " << length
                         << " outputs";
  return success();
}
