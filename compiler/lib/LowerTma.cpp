//===- LowerTma.cpp - ggk-lower-tma ----------------------------------------===//
//
// The TMA copies, bulk store groups and mbarriers that the passes before
// ask for (through KernelBuilder), lowered to the NVVM ops of a target
// with tensor maps, one for one, where they sit.
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERTMA
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// `local` in this CTA's shared memory, as an address in the shared memory
/// of cluster CTA `rank`.
Value clusterAddress(KernelBuilder &b, Value local, Value rank) {
  return b.create<NVVM::MapaOp>(LLVM::LLVMPointerType::get(b.getContext(), 7),
                                local, rank);
}

Value lower(Operation *op, KernelBuilder &b) {
  if (auto init = dyn_cast<ggk::MbarrierInitOp>(op)) {
    b.create<NVVM::MBarrierInitOp>(init.getBarrier(),
                                   b.c32(int64_t(init.getCount())), Value());
  } else if (auto arrive = dyn_cast<ggk::MbarrierArriveOp>(op)) {
    b.create<NVVM::MBarrierArriveOp>(b.i64(), arrive.getBarrier(), Value());
  } else if (auto expect = dyn_cast<ggk::MbarrierArriveExpectTxOp>(op)) {
    b.create<NVVM::MBarrierArriveExpectTxOp>(
        Type(), expect.getBarrier(), expect.getBytes(),
        NVVM::MemScopeKind::CTA, false, Value());
  } else if (auto load = dyn_cast<ggk::TmaLoadOp>(op)) {
    b.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
        load.getDst(), load.getMap(), load.getCoords(), load.getBarrier(),
        ValueRange{}, Value(), load.getL2Hint(), NVVM::TMALoadMode::TILE,
        /*isCTAOnly=*/true, NVVM::CTAGroupKindAttr(), Value());
  } else if (auto load = dyn_cast<ggk::TmaLoadMulticastOp>(op)) {
    // The upstream nvgpu.tma.async.load takes a multicast mask but no L2
    // cache hint, which B's loads carry: NVVM's op takes both.
    int64_t cluster = load.getCluster();
    b.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
        clusterAddress(b, load.getDst(), load.getRank()), load.getMap(),
        load.getCoords(), load.getBarrier(), ValueRange{},
        b.create<arith::ConstantIntOp>(b.getI16Type(), (1 << cluster) - 1),
        load.getL2Hint(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
        NVVM::CTAGroupKindAttr(), Value());
  } else if (auto arrive = dyn_cast<ggk::MbarrierArriveClusterOp>(op)) {
    b.create<NVVM::MBarrierArriveOp>(
        Type(), clusterAddress(b, arrive.getBarrier(), arrive.getRank()),
        Value(), NVVM::MemScopeKind::CTA, false);
  } else if (isa<ggk::FenceBarrierInitOp>(op)) {
    b.create<NVVM::FenceMbarrierInitOp>();
  } else if (auto store = dyn_cast<ggk::TmaStoreOp>(op)) {
    if (store.getAdd())
      b.create<NVVM::CpAsyncBulkTensorReduceOp>(
          store.getMap(), store.getSrc(), NVVM::TMAReduxKind::ADD,
          NVVM::TMAStoreMode::TILE, store.getCoords(), Value());
    else
      b.create<NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp>(
          store.getMap(), store.getSrc(), store.getCoords(), Value(),
          NVVM::TMAStoreMode::TILE, Value());
  } else if (isa<ggk::BulkCommitGroupOp>(op)) {
    b.create<NVVM::CpAsyncBulkCommitGroupOp>();
  } else {
    auto wait = cast<ggk::BulkWaitGroupOp>(op);
    b.create<NVVM::CpAsyncBulkWaitGroupOp>(
        static_cast<int32_t>(wait.getPending()),
        wait.getRead() ? UnitAttr::get(b.getContext()) : UnitAttr());
  }
  return Value();
}

struct LowerTma : public ggc::impl::LowerTmaBase<LowerTma> {
  void runOnOperation() override {
    ggc::convertEach<ggk::MbarrierInitOp, ggk::MbarrierArriveOp,
                     ggk::MbarrierArriveExpectTxOp,
                     ggk::MbarrierArriveClusterOp, ggk::FenceBarrierInitOp,
                     ggk::TmaLoadOp, ggk::TmaLoadMulticastOp,
                     ggk::TmaStoreOp, ggk::BulkCommitGroupOp,
                     ggk::BulkWaitGroupOp>(getOperation(), lower);
  }
};

} // namespace
