//===- LowerEpilogue.cpp - ggk-lower-epilogue ------------------------------===//
//
// The user's epilogue (ggk.epilogue) inlined where it sits, with what
// NVPTX has no instruction for expanded.
//
//===----------------------------------------------------------------------===//
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

/// exp(x) = exp2(x * log2(e)): NVPTX has ex2 but no exp.
Value exp(KernelBuilder &b, Value x) {
  Value scaled = b.create<arith::MulFOp>(
      x, b.create<arith::ConstantOp>(
             b.getFloatAttr(x.getType(), 1.4426950408889634)));
  return b.create<math::Exp2Op>(scaled);
}

Value sigmoid(KernelBuilder &b, Value x) {
  Value one = b.create<arith::ConstantOp>(b.getFloatAttr(x.getType(), 1.0));
  Value e = exp(b, b.create<arith::NegFOp>(x));
  // 1 / (1 + e) >= 1 never needs IEEE division's slow path: an
  // approximate reciprocal (one MUFU.RCP, within 2 ulp) serves, where
  // div.rn is a Newton refinement and a call.
  return b.create<arith::DivFOp>(one, b.create<arith::AddFOp>(one, e),
                                 arith::FastMathFlags::arcp |
                                     arith::FastMathFlags::afn);
}

Value lower(Operation *op, KernelBuilder &b) {
  auto epilogue = cast<ggk::EpilogueOp>(op);
  Block &body = epilogue.getBody().front();
  IRMapping map;
  map.map(body.getArguments(), epilogue.getInputs());
  for (Operation &inner : body.without_terminator()) {
    auto operand = [&](unsigned i) { return map.lookup(inner.getOperand(i)); };
    Value result;
    if (isa<gg::SigmoidOp>(inner))
      result = sigmoid(b, operand(0));
    else if (isa<gg::SiluOp>(inner))
      result = b.create<arith::MulFOp>(operand(0), sigmoid(b, operand(0)));
    else if (isa<math::ExpOp>(inner))
      result = exp(b, operand(0));
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
    ggc::convertEach<ggk::EpilogueOp>(getOperation(), lower);
  }
};

} // namespace
