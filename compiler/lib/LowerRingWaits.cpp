//===- LowerRingWaits.cpp - ggk-lower-ring-waits --------------------------===//
//
// The ring's waits, stated by the generator as what they wait for (a free
// stage, a loaded stage), lowered for sm_90a: the stages' full and empty
// barriers are mbarriers, and a wait is a try-wait loop on the phase's
// parity.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERRINGWAITS
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

struct LowerRingWaits
    : public ggc::impl::LowerRingWaitsBase<LowerRingWaits> {
  void runOnOperation() override {
    SmallVector<Operation *> waits;
    getOperation().walk([&](Operation *op) {
      if (isa<ggk::AcquireStageOp, ggk::WaitStageOp>(op))
        waits.push_back(op);
    });
    for (Operation *op : waits) {
      if (auto acquire = dyn_cast<ggk::AcquireStageOp>(op))
        lower(acquire);
      else
        lower(cast<ggk::WaitStageOp>(op));
    }
  }
};

} // namespace
