//===- LowerEpilogue.cpp - ggk-lower-epilogue ------------------------------===//
//
// The user's epilogue (ggk.epilogue) inlined where it sits, with what
// NVPTX has no instruction for expanded; the scales constant along K
// (ggk.scale) and the pair's conversion to the stored type
// (ggk.insert_output) written where they sit.
//
//===----------------------------------------------------------------------===//
#include "Activations.h"
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

namespace ggc {
#define GEN_PASS_DEF_LOWEREPILOGUE
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

Value lowerScale(ggk::ScaleOp op, KernelBuilder &b) {
  Value product = op.getValue();
  for (Value factor : op.getFactors())
    product = b.create<arith::MulFOp>(product, factor);
  return product;
}

Value lowerInsertOutput(ggk::InsertOutputOp op, KernelBuilder &b) {
  Value out = op.getValue();
  Type stored = op.getInto().getType().getElementType();
  if (out.getType().getIntOrFloatBitWidth() < stored.getIntOrFloatBitWidth())
    out = b.create<arith::ExtFOp>(stored, out);
  else if (out.getType() != stored)
    out = b.create<arith::TruncFOp>(stored, out);
  return b.create<LLVM::InsertElementOp>(
      op.getInto(), out, b.c32(static_cast<int64_t>(op.getPosition())));
}

Value lower(Operation *op, KernelBuilder &b) {
  if (auto scale = dyn_cast<ggk::ScaleOp>(op))
    return lowerScale(scale, b);
  if (auto insert = dyn_cast<ggk::InsertOutputOp>(op))
    return lowerInsertOutput(insert, b);
  auto epilogue = cast<ggk::EpilogueOp>(op);
  Block &body = epilogue.getBody().front();
  IRMapping map;
  map.map(body.getArguments(), epilogue.getInputs());
  for (Operation &inner : body.without_terminator()) {
    auto operand = [&](unsigned i) { return map.lookup(inner.getOperand(i)); };
    Value result;
    if (isa<gg::SigmoidOp>(inner))
      result = ggc::sigmoid(b, operand(0));
    else if (isa<gg::SiluOp>(inner))
      result = ggc::silu(b, operand(0));
    else if (isa<math::ExpOp>(inner))
      result = ggc::exp(b, operand(0));
    if (!result) {
      b.clone(inner, map);
      continue;
    }
    map.map(inner.getResult(0), result);
  }
  return map.lookup(cast<ggk::YieldOp>(body.getTerminator()).getValues()[0]);
}

struct LowerEpilogue : public ggc::impl::LowerEpilogueBase<LowerEpilogue> {
  void runOnOperation() override {
    ggc::convertEach<ggk::EpilogueOp, ggk::ScaleOp, ggk::InsertOutputOp>(
        getOperation(), lower);
  }
};

} // namespace
