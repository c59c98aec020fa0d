//===- WarpSpecialize.cpp - ggk-warp-specialize ---------------------------===//
//
// The kernel's warp roles: warpgroup 0's one thread issues the loads (all
// of its threads where they copy gathered rows of A: the plan's producer =
// all_threads), the other warpgroups compute. The producer needs few
// registers and the consumers' accumulators many, so each role moves its
// threads' register count with setmaxnreg (the plan's `registers`) before
// it starts.
// Targets without TMA have no setmaxnreg, and their loads are per-thread
// copies that all of the producer's threads share: there the consumer
// warpgroups come first and the producer's warpgroup, if the plan has one,
// after them (or the consumers copy themselves: the plan's producer =
// none).
// The roles make the CTA: the pass gives the kernel its `nvvm.maxntid`
// (ggk-collect-launch reads the launch's block there).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "RegionBodies.h"
#include "Target.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_WARPSPECIALIZE
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// Before sm_90a: warpgroups 0 .. consumers - 1 compute, the producer's
/// warps after them copy, every thread of them.
void lowerWithoutSetmaxnreg(ggk::WarpSpecializeOp op) {
  KernelBuilder b(op.getLoc(), op);
  Value warpgroup = b.divU(op.getThread(), b.c32(ggc::kWarpgroupThreads));
  b.create<scf::IfOp>(
      b.lt(warpgroup, b.c32(op.getConsumerWarpgroups())),
      [&](OpBuilder &, Location) {
        Value consumer = b.warpUniform(warpgroup);
        auto yield = b.create<scf::YieldOp>();
        b.setInsertionPoint(yield);
        ggc::moveBody(op.getConsumers(), {consumer}, b);
      },
      [&](OpBuilder &, Location) {
        ggc::moveBody(op.getProducer(), {}, b);
        b.create<scf::YieldOp>();
      });
  op.erase();
}

/// sm_90a: warpgroup 0 gives registers back and its leader issues the TMA
/// loads; the warpgroups after it take the registers and compute.
void lowerWithSetmaxnreg(ggk::WarpSpecializeOp op) {
  KernelBuilder b(op.getLoc(), op);
  gg::KernelPlanAttr plan = op.getPlan();
  Value warpgroup = b.divU(op.getThread(), b.c32(ggc::kWarpgroupThreads));
  b.create<scf::IfOp>(
      b.eq(warpgroup, b.c32(0)),
      [&](OpBuilder &, Location) {
        b.create<NVVM::SetMaxRegisterOp>(plan.getProducerRegisters(),
                                         NVVM::SetMaxRegisterAction::decrease);
        if (plan.getProducer() == gg::Producer::all_threads) {
          // Gathered rows: every thread copies; the body guards its TMA.
          ggc::moveBody(op.getProducer(), {}, b);
        } else {
          b.create<scf::IfOp>(op.getLeader(), [&](OpBuilder &, Location) {
            auto yield = b.create<scf::YieldOp>();
            b.setInsertionPoint(yield);
            ggc::moveBody(op.getProducer(), {}, b);
          });
        }
        b.create<scf::YieldOp>();
      },
      [&](OpBuilder &, Location) {
        b.create<NVVM::SetMaxRegisterOp>(plan.getConsumerRegisters(),
                                         NVVM::SetMaxRegisterAction::increase);
        // Uniform: the consumer's tile addresses and wgmma descriptors then
        // stay in uniform registers, off the vector register file that the
        // promotion's FMAs and the in-flight wgmma compete for.
        Value consumer = b.warpUniform(b.sub(warpgroup, b.c32(1)));
        auto yield = b.create<scf::YieldOp>();
        b.setInsertionPoint(yield);
        ggc::moveBody(op.getConsumers(), {consumer}, b);
      });
  op.erase();
}

struct WarpSpecializePass
    : public ggc::impl::WarpSpecializeBase<WarpSpecializePass> {
  void runOnOperation() override {
    SmallVector<ggk::WarpSpecializeOp> ops;
    getOperation().walk([&](ggk::WarpSpecializeOp op) { ops.push_back(op); });
    for (ggk::WarpSpecializeOp op : ops) {
      if (auto fn = op->getParentOfType<LLVM::LLVMFuncOp>())
        fn->setAttr("nvvm.maxntid",
                    DenseI32ArrayAttr::get(
                        op.getContext(),
                        {static_cast<int32_t>(ggc::ctaThreads(
                             op.getConsumerWarpgroups(),
                             op.getPlan().getProducer())),
                         1, 1}));
      if (ggc::targetOf(op).registerReallocation)
        lowerWithSetmaxnreg(op);
      else
        lowerWithoutSetmaxnreg(op);
    }
  }
};

} // namespace
