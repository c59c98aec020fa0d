//===- LowerRing.cpp - ggk-lower-ring --------------------------===//
//
// The ring's protocol, stated by the generator as what it waits for (a
// free stage, a loaded stage) and what a stage's loads will bring, lowered
// for sm_90a: the stages' full and empty barriers are mbarriers, a wait is
// a try-wait loop on the phase's parity, a commit an arrive with expect_tx.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERRING
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

template <typename WaitOp> void lower(WaitOp op) {
  KernelBuilder b(op.getLoc(), op);
  b.mbarrierWait(op.getBarrier(), op.getParity());
  op.erase();
}

void lower(ggk::CommitStageOp op) {
  KernelBuilder b(op.getLoc(), op);
  b.mbarrierArriveExpectTx(op.getBarrier(), op.getBytes());
  op.erase();
}

struct LowerRing
    : public ggc::impl::LowerRingBase<LowerRing> {
  void runOnOperation() override {
    SmallVector<Operation *> waits;
    getOperation().walk([&](Operation *op) {
      if (isa<ggk::AcquireStageOp, ggk::WaitStageOp, ggk::CommitStageOp>(op))
        waits.push_back(op);
    });
    for (Operation *op : waits) {
      if (auto acquire = dyn_cast<ggk::AcquireStageOp>(op))
        lower(acquire);
      else if (auto commit = dyn_cast<ggk::CommitStageOp>(op))
        lower(commit);
      else
        lower(cast<ggk::WaitStageOp>(op));
    }
  }
};

} // namespace
