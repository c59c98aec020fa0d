//===- LowerAsyncCopies.cpp - ggk-lower-async-copies ----------------------===//
//
// The threads' asynchronous copies into shared memory (the block scales'
// slots), lowered to cp.async and its groups, which sm_80 and sm_90a share.
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERASYNCCOPIES
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

Value lower(Operation *op, KernelBuilder &b) {
  if (auto copy = dyn_cast<ggk::CopyAsyncOp>(op)) {
    // Tiles stream through L2 only (.cg takes just 16 bytes).
    int32_t bytes = static_cast<int32_t>(copy.getBytes());
    b.create<NVVM::CpAsyncOp>(copy.getDestination(), copy.getSource(), bytes,
                              bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                          : NVVM::LoadCacheModifierKind::CA,
                              copy.getReadBytes());
  } else if (auto arrive = dyn_cast<ggk::CopyAsyncArriveOp>(op))
    b.create<NVVM::CpAsyncMBarrierArriveOp>(arrive.getBarrier(),
                                            /*noinc=*/true);
  else if (isa<ggk::CopyAsyncCommitOp>(op))
    b.create<NVVM::CpAsyncCommitGroupOp>();
  else
    b.create<NVVM::CpAsyncWaitGroupOp>(
        static_cast<int32_t>(cast<ggk::CopyAsyncWaitOp>(op).getPending()));
  return Value();
}

struct LowerAsyncCopies
    : public ggc::impl::LowerAsyncCopiesBase<LowerAsyncCopies> {
  void runOnOperation() override {
    ggc::convertEach<ggk::CopyAsyncOp, ggk::CopyAsyncCommitOp,
                     ggk::CopyAsyncArriveOp, ggk::CopyAsyncWaitOp>(getOperation(), lower);
  }
};

} // namespace
