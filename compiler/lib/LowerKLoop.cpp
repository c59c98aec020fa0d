//===- LowerKLoop.cpp - ggk-lower-k-loop ----------------------------------===//
//
// One-level accumulation's K loop: each K block's product goes straight
// into the accumulator. A ggk.k_loop states one block's steps as regions
// (issue, release, load-ahead, and the overlap step where the previous
// tile's epilogue runs beside block 0) and the release lag as an
// attribute; this pass writes the loop, the ring slot of each block and
// when its stage goes back to the producer.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "RegionBodies.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERKLOOP
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// Stage `it - 1` of a ring of `stages`, for `it` >= 1 (as `it % stages`
/// is stage `it`'s).
Value previousStage(KernelBuilder &b, Value it, int64_t stages) {
  return b.remU(b.add(it, b.c32(stages - 1)), b.c32(stages));
}

void lower(ggk::KLoopOp op) {
  KernelBuilder b(op.getLoc(), op);
  int64_t stages = op.getStages();
  bool lagging = op.getReleaseLag() == 1;
  auto release = [&](Value stage) {
    ggc::cloneBody(op.getRelease(), {stage}, b);
  };
  auto loop = b.create<scf::ForOp>(
      b.c32(0), op.getNumKBlocks(), b.c32(1),
      ValueRange{op.getAcc(), op.getCounter()},
      [&](OpBuilder &, Location, Value k, ValueRange iter) {
        Value acc = iter[0], it = iter[1];
        auto [stage, phase] = b.ringSlot(it, stages);
        acc = ggc::cloneBody(op.getIssue(), {k, stage, phase, acc}, b)[0];
        // The overlap step (the previous tile's epilogue) while block 0's
        // multiply computes.
        if (!op.getOverlap().empty())
          b.create<scf::IfOp>(b.eq(k, b.c32(0)), [&](OpBuilder &, Location) {
            ggc::cloneBody(op.getOverlap(), {}, b);
            b.create<scf::YieldOp>();
          });
        // With a lag of 1 block k's multiply stays in flight, and block
        // k - 1's stage goes back once only it is pending.
        b.create<ggk::MmaWaitOp>(op.getReleaseLag());
        if (!lagging)
          release(stage);
        else
          b.create<scf::IfOp>(b.ge(k, b.c32(1)), [&](OpBuilder &, Location) {
            release(previousStage(b, it, stages));
            b.create<scf::YieldOp>();
          });
        ggc::cloneBody(op.getLoadAhead(), {k, it}, b);
        b.create<scf::YieldOp>(ValueRange{acc, b.add(it, b.c32(1))});
      });
  if (lagging) {
    b.create<ggk::MmaWaitOp>(0);
    Value end = loop.getResult(1);
    b.create<scf::IfOp>(b.lt(op.getCounter(), end), [&](OpBuilder &, Location) {
      release(previousStage(b, end, stages));
      b.create<scf::YieldOp>();
    });
  }
  op.replaceAllUsesWith(loop.getResults());
  op.erase();
}

struct LowerKLoopPass : public ggc::impl::LowerKLoopBase<LowerKLoopPass> {
  void runOnOperation() override {
    SmallVector<ggk::KLoopOp> loops;
    getOperation().walk([&](ggk::KLoopOp op) { loops.push_back(op); });
    for (ggk::KLoopOp op : loops)
      lower(op);
  }
};

} // namespace
