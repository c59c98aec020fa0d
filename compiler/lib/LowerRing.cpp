//===- LowerRing.cpp - ggk-lower-ring --------------------------===//
//
// The ring's protocol, stated by the generator as what it waits for (a
// free stage, a loaded stage) and what a stage's loads will bring, lowered
// for sm_90a: the stages' full and empty barriers are mbarriers, a wait is
// a try-wait loop on the phase's parity, a commit an arrive with expect_tx.
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERRING
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

Value lower(Operation *op, KernelBuilder &b) {
  if (auto commit = dyn_cast<ggk::CommitStageOp>(op))
    b.mbarrierArriveExpectTx(commit.getBarrier(), commit.getBytes());
  else if (auto acquire = dyn_cast<ggk::AcquireStageOp>(op))
    b.mbarrierWait(acquire.getBarrier(), acquire.getParity());
  else
    b.mbarrierWait(cast<ggk::WaitStageOp>(op).getBarrier(),
                   cast<ggk::WaitStageOp>(op).getParity());
  return Value();
}

struct LowerRing : public ggc::impl::LowerRingBase<LowerRing> {
  void runOnOperation() override {
    ggc::convertEach<ggk::AcquireStageOp, ggk::WaitStageOp, ggk::CommitStageOp>(
        getOperation(), lower);
  }
};

} // namespace
