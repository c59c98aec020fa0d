//===- LowerThreads.cpp - ggk-lower-threads -------------------------------===//
//
// What the kernel asks of its threads (their, their CTA's and their
// cluster's index, warp-uniform values, warps' and named groups' meeting
// points, the async proxy's fence, the special-function unit's
// approximations), lowered to the special register, shuffle, barrier,
// fence and MUFU instructions.
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERTHREADS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// The instructions of one thread op; its result if it has one.
Value lower(Operation *op, KernelBuilder &b) {
  if (isa<ggk::ThreadIndexOp>(op))
    return b.create<NVVM::ThreadIdXOp>(b.i32());
  if (isa<ggk::BlockIndexOp>(op))
    return b.create<NVVM::BlockIdXOp>(b.i32());
  if (isa<ggk::GridSizeOp>(op))
    return b.create<NVVM::GridDimXOp>(b.i32());
  if (isa<ggk::ClusterRankOp>(op))
    return b.create<NVVM::ClusterId>(b.i32());
  if (isa<ggk::FenceAsyncSharedOp>(op)) {
    b.create<NVVM::FenceProxyOp>(
        NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    return Value();
  }
  if (auto opaque = dyn_cast<ggk::OpaqueOp>(op))
    return b
        .create<LLVM::InlineAsmOp>(b.i32(), ValueRange{opaque.getValue()},
                                   "mov.b32 $0, $1;", "=r,r",
                                   /*has_side_effects=*/true,
                                   /*is_align_stack=*/false,
                                   LLVM::TailCallKind::None,
                                   LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  if (auto broadcast = dyn_cast<ggk::WarpBroadcastOp>(op))
    return b.create<NVVM::ShflOp>(b.i32(), b.c32(-1), broadcast.getValue(),
                                  b.c32(0), b.c32(0x1f), NVVM::ShflKind::idx,
                                  UnitAttr());
  if (auto shuffle = dyn_cast<ggk::WarpShuffleXorOp>(op))
    return b.create<NVVM::ShflOp>(b.i32(), b.c32(-1), shuffle.getValue(),
                                  b.c32(shuffle.getLanes()), b.c32(0x1f),
                                  NVVM::ShflKind::bfly, UnitAttr());
  if (auto match = dyn_cast<ggk::WarpMatchAnyOp>(op))
    return b.create<NVVM::MatchSyncOp>(b.i32(), b.c32(-1), match.getValue(),
                                       NVVM::MatchSyncKind::any);
  if (auto ballot = dyn_cast<ggk::WarpBallotOp>(op))
    return b.create<NVVM::VoteSyncOp>(b.i32(), b.c32(-1),
                                      ballot.getPredicate(),
                                      NVVM::VoteSyncKind::ballot);
  if (isa<ggk::LanesBelowOp>(op))
    return b.create<NVVM::LaneMaskLtOp>(b.i32());
  if (auto convert = dyn_cast<ggk::ConvertE4M3x2Op>(op))
    // cvt's first operand fills the high byte.
    return b.create<NVVM::ConvertF32x2ToF8x2Op>(
        b.getI16Type(), convert.getHi(), convert.getLo(),
        NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
        /*relu=*/false, b.getType<Float8E4M3FNType>());
  if (auto exp2 = dyn_cast<ggk::Exp2ApproxOp>(op))
    return b
        .create<LLVM::CallIntrinsicOp>(
            b.f32(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
            ValueRange{exp2.getX()})
        .getResult(0);
  if (auto reciprocal = dyn_cast<ggk::ReciprocalApproxOp>(op))
    return b.create<NVVM::RcpApproxFtzF32Op>(b.f32(), reciprocal.getX());
  if (isa<ggk::SyncCtaOp>(op)) {
    b.create<NVVM::Barrier0Op>();
    return Value();
  }
  if (isa<ggk::ClusterSyncOp>(op)) {
    b.create<NVVM::ClusterArriveOp>(UnitAttr());
    b.create<NVVM::ClusterWaitOp>(UnitAttr());
    return Value();
  }
  if (isa<ggk::WarpSyncOp>(op)) {
    b.create<NVVM::SyncWarpOp>(b.c32(-1));
    return Value();
  }
  auto sync = cast<ggk::SyncThreadsOp>(op);
  b.create<NVVM::BarrierOp>(Type(), sync.getId(), sync.getCount(),
                            NVVM::BarrierReductionAttr(), Value());
  return Value();
}

struct LowerThreads : public ggc::impl::LowerThreadsBase<LowerThreads> {
  void runOnOperation() override {
    ggc::convertEach<ggk::ThreadIndexOp, ggk::BlockIndexOp, ggk::GridSizeOp,
                     ggk::ClusterRankOp, ggk::FenceAsyncSharedOp,
                     ggk::WarpBroadcastOp, ggk::OpaqueOp, ggk::WarpShuffleXorOp,
                     ggk::WarpSyncOp, ggk::SyncThreadsOp, ggk::SyncCtaOp,
                     ggk::ClusterSyncOp, ggk::WarpMatchAnyOp, ggk::WarpBallotOp,
                     ggk::LanesBelowOp, ggk::ConvertE4M3x2Op,
                     ggk::Exp2ApproxOp, ggk::ReciprocalApproxOp>(
        getOperation(), lower);
  }
};

} // namespace
