//===- Producer.cpp - the producer warpgroup ------------------------------===//
//
// The producer's one thread: for each K block of each tile, waits for a
// free stage of the ring and issues the TMA loads of A's and B's tiles
// (multicast in a cluster), and states the K block's block scales where
// they could go with the stage (ggk.stage_block_scales). Gathered rows of
// A (gg's a_rows) take the whole warpgroup instead: every thread copies
// its share of A's rows, the leader alone arms the stage and loads B.
// Without a producer (the plan's producer = none) the consumers run the
// same loads of a stage in their own K loop, stages - 1 K blocks ahead.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

void KernelGenerator::emitProducer() {
  forEachTile([&](const Tile &t, Value counter) -> Value {
    auto kLoop = b.create<scf::ForOp>(
        b.c32(0), t.numKBlocks, b.c32(1), ValueRange{counter},
        [&](OpBuilder &, Location, Value kBlock, ValueRange iter) {
          Value it = iter[0];
          loadStage(t, kBlock, it);
          b.create<scf::YieldOp>(ValueRange{b.add(it, b.c32(1))});
        });
    Value end = kLoop.getResult(0);
    if (!p.passesEmptyStages())
      return end;
    // The rest of the last turn, passed on empty.
    auto rest = b.create<scf::ForOp>(
        t.numKBlocks, ringBlocks(t), b.c32(1), ValueRange{end},
        [&](OpBuilder &, Location, Value, ValueRange iter) {
          auto [stage, phase] = ringSlot(iter[0]);
          acquireStage(stage, b.xorI(phase, b.c32(1)));
          b.create<mlir::ggk::PassStageOp>(fullBarrier(stage),
                                           op.getKernelPlanAttr());
          b.create<scf::YieldOp>(ValueRange{b.add(iter[0], b.c32(1))});
        });
    return rest.getResult(0);
  });
}

Value KernelGenerator::ringBlocks(const Tile &t) {
  if (!p.passesEmptyStages())
    return t.numKBlocks;
  return b.mul(b.ceilDivU(t.numKBlocks, p.stages), b.c32(p.stages));
}

void KernelGenerator::loadStage(const Tile &t, Value kBlock, Value it) {
  auto [stage, phase] = ringSlot(it);
  // Wait until the consumers have released this buffer (the first pass
  // through the ring waits on the "previous" phase, which is complete for a
  // fresh barrier).
  acquireStage(stage, b.xorI(phase, b.c32(1)));
  Value full = fullBarrier(stage);
  Value k = b.add(t.kStart, b.mul(kBlock, b.c32(p.blockK)));
  if (p.producerAllThreads) {
    // Gathered rows of A: the leader arms the stage with B's bytes and
    // loads B by TMA; every thread copies its share of A, each arriving
    // once its copies land.
    Value leader = b.eq(b.threadIdx(), b.c32(0));
    b.create<scf::IfOp>(leader, [&](OpBuilder &, Location) {
      b.create<mlir::ggk::CommitStageOp>(full, b.c32(p.bTileBytes));
      loadBTile(t, stage, full, k);
      b.create<scf::YieldOp>();
    });
    loadATile(t, stage, full, k);
    return;
  }
  if (p.scalesCanRideStages)
    stageBlockScales(t, kBlock, stage, full);
  loadATile(t, stage, full, k);
  loadBTile(t, stage, full, k);
}

void KernelGenerator::loadAhead(const Tile &t, Value kBlock, Value it) {
  if (!p.consumersCopy)
    return;
  Value ahead = b.add(kBlock, b.c32(p.stages - 1));
  b.create<scf::IfOp>(b.lt(ahead, t.numKBlocks), [&](OpBuilder &, Location) {
    loadStage(t, ahead, b.add(it, b.c32(p.stages - 1)));
    b.create<scf::YieldOp>();
  });
}

void KernelGenerator::loadPrologue(const Tile &t, Value counter) {
  if (!p.consumersCopy)
    return;
  for (int64_t j = 0; j + 1 < p.stages; ++j)
    b.create<scf::IfOp>(b.lt(b.c32(j), t.numKBlocks),
                        [&](OpBuilder &, Location) {
                          loadStage(t, b.c32(j), b.add(counter, b.c32(j)));
                          b.create<scf::YieldOp>();
                        });
}

void KernelGenerator::stageBlockScales(const Tile &t, Value kBlock,
                                       Value stage, Value full) {
  // Whether they do is the plan's `scales` (ggk-place-scales).
  b.create<mlir::ggk::StageBlockScalesOp>(
      smem, full, stage, scaleBlock(t, kBlock), t.rowStart, t.nBlock, t.group,
      bScalePtr, tensorMapAScale, tensorMapBScale, op.getKernelPlanAttr(),
      p.bBlocks, /*b_columns=*/p.columnScales ? p.blockN : 0, p.blockN, p.n,
      p.k, p.bScale.getMajor() == ScaleMajor::k_major, p.columnHalves,
      p.layout == GroupLayout::masked,
      ggc::aScaleWindowBytes(p.blockM, p.aScaleKMajor), p.smem.stageAScaleBytes,
      p.aScaleKMajor);
}

void KernelGenerator::loadATile(const Tile &t, Value stage, Value full,
                                Value k) {
  if (p.aMNMajor) {
    // M-major A: one [BK, 64] box per 64 rows of the tile, always whole
    // (gg-plan-overfetch gives k_grouped no row granule).
    b.create<mlir::ggk::CommitStageOp>(full,
                                       b.c32(p.aTileBytes + p.bTileBytes));
    int64_t chunk = kSwizzleBytes / byteWidth(p.aElem);
    b.create<mlir::ggk::LoadMNMajorTileOp>(
        full, stageA(stage), aMaps[0], k, t.rowStart, extentsOf(op.getA()),
        p.blockM / chunk, chunk, p.blockK * kSwizzleBytes,
        p.copyThreads());
    return;
  }
  if (p.gatherA) {
    // Rows through the list, from A's address: T rows of K.
    b.create<mlir::ggk::LoadTileRowsOp>(
        full, stageA(stage), aMaps, k, t.rowStart, Value(), t.rowsValid,
        ValueRange{b.c32(p.k), b.toI32(aSourceRows)}, aRowsPtr,
        /*shared=*/Value(), /*rank=*/Value(), b.getI64IntegerAttr(byteWidth(p.aElem)), p.blockM,
        p.blockK * byteWidth(p.aElem), p.bTileBytes, p.blockM,
        ArrayRef<int64_t>{p.blockM}, p.copyThreads());
    return;
  }
  // K-major A: the rows the tile needs, whole or, with gg-plan-overfetch's
  // granule, its valid rows rounded up to it (ggk-split-partial-loads). A
  // pair's CTAs load the same rows where they do not share B (a group's
  // odd last M block): with odd_block_a = multicast, one load for both.
  bool partial = p.aLoadBoxes.size() > 1;
  Value sharedRows =
      p.oddBlockAMulticast ? b.eq(t.sharesB, b.c32(0)) : Value();
  b.create<mlir::ggk::LoadTileRowsOp>(
      full, stageA(stage), aMaps, k, t.rowStart,
      p.layout == GroupLayout::masked ? t.group : Value(), t.rowsValid,
      extentsOf(op.getA()), /*indices=*/Value(), sharedRows,
      p.oddBlockAMulticast ? clusterRank : Value(),
      b.getI64IntegerAttr(byteWidth(p.aElem)), p.blockM,
      p.blockK * byteWidth(p.aElem), p.bTileBytes,
      partial ? p.aLoadGranule : p.blockM, p.aLoadBoxes, p.copyThreads());
}

void KernelGenerator::loadBTile(const Tile &t, Value stage, Value full,
                                Value k) {
  // In a cluster, each CTA loads its share and multicasts it where the
  // pair shares the N block (the tile's shares_b; ggk-multicast).
  b.create<mlir::ggk::LoadBTileOp>(
      full, stageB(stage), tensorMapB, k, t.nBlock,
      p.layout == GroupLayout::k_grouped ? Value() : t.group,
      p.cluster == 1 ? Value() : clusterRank,
      p.cluster == 1 ? Value() : b.ne(t.sharesB, b.c32(0)),
      extentsOf(op.getB()), p.blockN,
      p.blockK,
      kSwizzleBytes / byteWidth(p.aElem), p.bMNMajor, p.cluster,
      p.bCachePolicy, p.copyThreads(), p.columnHalves ? p.n / 2 : 0,
      p.columnHalves ? p.splitN : 1);
}

SmallVector<Value> KernelGenerator::extentsOf(Value operand) {
  auto type = cast<mlir::MemRefType>(operand.getType());
  SmallVector<Value> extents;
  for (int64_t d : llvm::reverse(type.getShape()))
    extents.push_back(mlir::ShapedType::isDynamic(d) ? b.toI32(dynamicSize)
                                                     : b.c32(d));
  return extents;
}

} // namespace ggc
