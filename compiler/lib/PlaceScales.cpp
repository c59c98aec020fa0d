//===- PlaceScales.cpp - ggk-place-scales ---------------------------------===//
//
// Puts each K block's block scales where the kernel plan's `scales` says.
// With `stages` the producer sends them with the ring's stage (DeepGEMM's
// placement): B's few block scales by cp.async, counted as an arrival on
// the stage's full barrier (or, per column, the tile's as one TMA box),
// and A's for the tile's rows as one TMA box, counted in its bytes; the
// consumers read them from the stage (B's columns in the promotion). With
// `slots` each consumer warp copies its own rows' scales a block ahead
// into its scale slots and reads them there. With `none` they are 1.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "ScaleAccess.h"
#include "Target.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_PLACESCALES
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// The kernel's shared-memory buffer `id` at stage `stage`, `stride` bytes
/// a stage.
Value stageBuffer(KernelBuilder &b, Value smem, ggc::SharedBufferId id,
                  Value stage, int64_t stride) {
  return b.create<ggk::SharedAddressOp>(b.ptr(ggc::kShared), smem,
                                        ggc::sharedBufferName(id), stage,
                                        stride, 0);
}

/// The `ggk.load_tile_rows` after `op` in its block that arms `op`'s
/// barrier: the stage's one expect_tx, which A's window is counted in.
ggk::LoadTileRowsOp armingLoad(ggk::StageBlockScalesOp op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (auto load = dyn_cast<ggk::LoadTileRowsOp>(next))
      if (load.getBarrier() == op.getBarrier())
        return load;
  return {};
}

LogicalResult lowerStageScales(ggk::StageBlockScalesOp op) {
  if (op.getPlan().getScales() != gg::ScalePlacement::stages) {
    op.erase();
    return success();
  }
  ggk::LoadTileRowsOp arm = armingLoad(op);
  if (!arm)
    return op.emitOpError()
           << "has no ggk.load_tile_rows after it in its block arming the "
              "same barrier: A's scale window is counted in that expect_tx";
  KernelBuilder b(op.getLoc(), op);
  Value smem = op.getSmem(), stage = op.getStage(), full = op.getBarrier();
  // B's, 4 bytes each, by cp.async, which the full barrier tracks from here
  // on (cp.async.mbarrier.arrive.noinc is one of the two arrivals the
  // barrier expects, so the phase cannot complete without them; the
  // counting variant, which raises the pending count, is reported by
  // compute-sanitizer synccheck as a missing wait).
  int64_t bColumns = op.getBColumns();
  Value bScales = stageBuffer(b, smem, ggc::kStageBScales, stage,
                              ggc::stageBScaleBytes(bColumns));
  ggc::BBlockScaleShape shape = {int64_t(op.getN()), int64_t(op.getBlockN()),
                                 op.getBKMajor(), op.getColumnHalves()};
  Value bSource = op.getBScales();
  for (int64_t j = 0; j < int64_t(op.getBBlocks()); ++j) {
    Value kBlocks = b.toI64(b.c32((int64_t(op.getK()) + 127) / 128));
    Value block = b.toI64(op.getScaleBlock());
    Value index = ggc::bBlockScaleIndex(b, shape, kBlocks, block, op.getGroup(),
                                        op.getNBlock(), b.c32(0), j);
    Value source = b.create<LLVM::GEPOp>(bSource.getType(), b.f32(), bSource,
                                         ArrayRef<LLVM::GEPArg>{index});
    b.copyAsync(b.gep(bScales, b.c64(4 * j)), source, 4);
  }
  // With per-column scales (b_columns) the arrival has no copy before it:
  // the barrier's count stays that of 128x128 blocks.
  b.create<ggk::CopyAsyncArriveOp>(full);
  // A's for the tile's rows: one box at (row rounded down to 4, block[,
  // group]); rows past the tensor (a group's tail) read as zeros and are
  // never stored. Loaded once the stage is armed for its bytes.
  arm.setOtherBytesAttr(b.getI64IntegerAttr(int64_t(arm.getOtherBytes()) +
                                            int64_t(op.getWindowBytes()) +
                                            4 * bColumns));
  b.setInsertionPointAfter(arm);
  // B's per-column scales: the tile's columns at (n block, scale block).
  if (bColumns)
    b.tmaLoad(bScales, op.getBMap(),
              {b.mul(op.getNBlock(), b.c32(bColumns)), op.getScaleBlock()},
              full);
  SmallVector<Value> coords = {b.andI(op.getRowStart(), b.c32(~3)),
                               op.getScaleBlock()};
  if (op.getAKMajor()) // four K blocks by the window's rows
    coords = {b.andI(op.getScaleBlock(), b.c32(~3)), coords[0]};
  if (op.getAGroup())
    coords.push_back(op.getGroup());
  b.tmaLoad(stageBuffer(b, smem, ggc::kStageAScales, stage,
                        int64_t(op.getWindowStride())),
            op.getAMap(), coords, full);
  op.erase();
  return success();
}

SmallVector<Value> readStageScales(KernelBuilder &b,
                                   ggk::ReadBlockScalesOp op) {
  Value smem = op.getSmem(), stage = op.getStage();
  SmallVector<Value> scales;
  // The window starts at the tile's first row rounded down to 4; K-major,
  // a row is four K blocks' words, of which the block's is block % 4.
  Value first = b.add(b.andI(op.getRowStart(), b.c32(3)), op.getRow());
  Value aScales = stageBuffer(b, smem, ggc::kStageAScales, stage,
                              int64_t(op.getWindowStride()));
  int64_t rowWords = op.getAKMajor() ? 4 : 1;
  Value word = op.getAKMajor() ? b.andI(op.getBlock(), b.c32(3)) : b.c32(0);
  for (int half = 0; half < 2; ++half) {
    Value row = b.add(first, b.c32(8 * half));
    Value index = b.add(b.mul(row, b.c32(rowWords)), word);
    scales.push_back(b.create<LLVM::LoadOp>(
        b.f32(), b.gep(aScales, b.toI64(b.mul(index, b.c32(4))))));
  }
  // 128x128 block scales: 16 bytes a stage (ggc::stageBScaleBytes(0)).
  Value bScales = stageBuffer(b, smem, ggc::kStageBScales, stage,
                              ggc::stageBScaleBytes(0));
  for (int64_t j = 0; j < int64_t(op.getBBlocks()); ++j)
    scales.push_back(
        b.create<LLVM::LoadOp>(b.f32(), b.gep(bScales, b.c64(4 * j))));
  // Per-column scales of B: the promotion reads them from the stage.
  if (op.getBBlocks() == 0)
    scales.push_back(b.f32c(1.0));
  return scales;
}

void lowerReadScales(ggk::ReadBlockScalesOp op) {
  KernelBuilder b(op.getLoc(), op);
  SmallVector<Value> scales;
  switch (op.getPlan().getScales()) {
  case gg::ScalePlacement::none:
    scales.assign(op.getNumResults(), b.f32c(1.0));
    break;
  case gg::ScalePlacement::stages:
    scales = readStageScales(b, op);
    break;
  case gg::ScalePlacement::slots:
    scales = ggc::readSlotScales(
        b, op.getSmem(),
        {int64_t(op.getARows()), int64_t(op.getBBlocks()),
         int64_t(op.getSlotWords()), int64_t(op.getSlotWarps()),
         ggc::targetOf(op).firstConsumerThread()},
        op.getBlock(), op.getLane(), b.f32());
    break;
  }
  op.replaceAllUsesWith(scales);
  op.erase();
}

/// The producer's expect_tx, and where the stages carry the scales the
/// arrival of B's cp.async (.noinc). Without TMA, each producer thread's
/// arrival after its copies of A's tile and after B's
/// (ggk-lower-loads-cp-async).
/// The leader's arrivals on a stage's full barrier under TMA: its arming,
/// and the scales' copy where the stages carry them.
int64_t leaderArrivals(gg::KernelPlanAttr plan) {
  return plan.getScales() == gg::ScalePlacement::stages ? 2 : 1;
}

void lowerInit(ggk::InitFullBarrierOp op) {
  KernelBuilder b(op.getLoc(), op);
  // TMA: the leader's; gathered rows: each copying thread's arrival
  // besides. cp.async: each thread's, for A and B.
  bool gathers = op.getPlan().getProducer() == gg::Producer::all_threads;
  int64_t arrivals = ggc::targetOf(op).asyncCopy == ggc::AsyncCopyKind::tma
                         ? leaderArrivals(op.getPlan()) +
                               (gathers ? int64_t(op.getCopyThreads()) : 0)
                         : 2 * int64_t(op.getCopyThreads());
  b.mbarrierInit(op.getBarrier(), arrivals);
  op.erase();
}

/// The leader's arrivals with no bytes armed (gg-check-kernel-plan keeps
/// gathered rows, whose copying threads arrive too, away from it).
LogicalResult lowerPass(ggk::PassStageOp op) {
  if (ggc::targetOf(op).asyncCopy != ggc::AsyncCopyKind::tma ||
      op.getPlan().getProducer() == gg::Producer::all_threads)
    return op.emitOpError() << "takes a TMA producer of one thread (not "
                               "gathered rows, not cp.async)";
  KernelBuilder b(op.getLoc(), op);
  for (int64_t i = 0, n = leaderArrivals(op.getPlan()); i < n; ++i)
    b.mbarrierArrive(op.getBarrier());
  op.erase();
  return success();
}

struct PlaceScalesPass : public ggc::impl::PlaceScalesBase<PlaceScalesPass> {
  void runOnOperation() override {
    SmallVector<ggk::StageBlockScalesOp> stageOps;
    SmallVector<ggk::ReadBlockScalesOp> readOps;
    SmallVector<ggk::PassStageOp> passes;
    getOperation().walk([&](Operation *op) {
      if (auto stage = dyn_cast<ggk::StageBlockScalesOp>(op))
        stageOps.push_back(stage);
      else if (auto read = dyn_cast<ggk::ReadBlockScalesOp>(op))
        readOps.push_back(read);
      else if (auto init = dyn_cast<ggk::InitFullBarrierOp>(op))
        lowerInit(init);
      else if (auto pass = dyn_cast<ggk::PassStageOp>(op))
        passes.push_back(pass);
    });
    for (ggk::PassStageOp op : passes)
      if (failed(lowerPass(op)))
        return signalPassFailure();
    for (ggk::StageBlockScalesOp op : stageOps)
      if (failed(lowerStageScales(op)))
        return signalPassFailure();
    for (ggk::ReadBlockScalesOp op : readOps)
      lowerReadScales(op);
  }
};

} // namespace
