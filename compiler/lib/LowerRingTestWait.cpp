//===- LowerRingTestWait.cpp - ggk-lower-ring-test-wait -------------------===//
//
// The ring's protocol for targets without mbarrier try_wait and expect_tx
// (sm_80, sm_86, sm_89): a wait for a free or a loaded stage polls its
// mbarrier's phase with mbarrier.test_wait.parity, sleeping between polls.
// A stage's loads arrive on its full barrier themselves, per thread, once
// their copies land (ggk-lower-loads-cp-async), so a commit of bytes
// lowers to nothing.
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERRINGTESTWAIT
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// Nanoseconds between two polls of an incomplete phase (nanosleep's
/// bound; a K block's MMAs take a few microseconds).
constexpr int32_t kPollSleepNs = 32;

void pollPhase(KernelBuilder &b, Value barrier, Value parity) {
  b.create<scf::WhileOp>(
      TypeRange{}, ValueRange{},
      [&](OpBuilder &ob, Location loc, ValueRange) {
        Value done = ob.create<NVVM::MBarrierTestWaitOp>(loc, ob.getI1Type(),
                                                         barrier, parity);
        Value waiting = ob.create<arith::XOrIOp>(
            loc, done, ob.create<arith::ConstantIntOp>(loc, 1, 1));
        ob.create<scf::ConditionOp>(loc, waiting, ValueRange{});
      },
      [&](OpBuilder &ob, Location loc, ValueRange) {
        // A thread that keeps polling takes issue slots from the warps
        // that will complete the phase (the producer's copies, the
        // consumers' MMAs): it sleeps between polls.
        ob.create<NVVM::NanosleepOp>(
            loc, ob.create<arith::ConstantIntOp>(loc, kPollSleepNs, 32));
        ob.create<scf::YieldOp>(loc);
      });
}

Value lower(Operation *op, KernelBuilder &b) {
  // The bytes for TMA's transaction count: here the loads arrive on the
  // barrier themselves.
  if (isa<ggk::CommitStageOp>(op))
    return Value();
  if (auto acquire = dyn_cast<ggk::AcquireStageOp>(op))
    pollPhase(b, acquire.getBarrier(), acquire.getParity());
  else
    pollPhase(b, cast<ggk::WaitStageOp>(op).getBarrier(),
              cast<ggk::WaitStageOp>(op).getParity());
  return Value();
}

struct LowerRingTestWait
    : public ggc::impl::LowerRingTestWaitBase<LowerRingTestWait> {
  void runOnOperation() override {
    ggc::convertEach<ggk::AcquireStageOp, ggk::WaitStageOp,
                     ggk::CommitStageOp>(getOperation(), lower);
  }
};

} // namespace
