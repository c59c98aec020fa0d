//===- Producer.cpp - the producer warpgroup ------------------------------===//
//
// The producer's one thread: for each K block of each tile, waits for a
// free stage of the ring and issues the TMA loads of A's and B's tiles
// (multicast in a cluster) and of the scales the stages carry.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

void KernelGenerator::emitProducer() {
  // A's block scales come with the tiles when the stages carry them.
  int64_t aScaleBytes = p.stageScales ? p.aScaleWindowRows() * 4 : 0;
  forEachTile([&](const Tile &t, Value counter) -> Value {
    auto kLoop = b.create<scf::ForOp>(
        b.c32(0), t.numKBlocks, b.c32(1), ValueRange{counter},
        [&](OpBuilder &, Location, Value kBlock, ValueRange iter) {
          Value it = iter[0];
          auto [stage, phase] = ringSlot(it);
          // Wait until the consumers have released this buffer (the first
          // pass through the ring waits on the "previous" phase, which is
          // complete for a fresh barrier).
          b.mbarrierWait(emptyBarrier(stage), b.xorI(phase, b.c32(1)));
          Value full = fullBarrier(stage);
          Value k = b.add(t.kStart, b.mul(kBlock, b.c32(p.blockK)));
          if (p.stageScales)
            copyStageBScales(t, kBlock, stage, full);
          loadATile(t, stage, full, k, aScaleBytes);
          if (p.stageScales)
            loadStageAScales(t, kBlock, stage, full);
          loadBTile(t, stage, full, k);
          b.create<scf::YieldOp>(ValueRange{b.add(it, b.c32(1))});
        });
    return kLoop.getResult(0);
  });
}

void KernelGenerator::loadATile(const Tile &t, Value stage, Value full,
                                Value k, int64_t aScaleBytes) {
  if (p.aMNMajor) {
    // M-major A: one [BK, 64] box per 64 rows of the tile, always whole
    // (gg-plan-overfetch gives k_grouped no row granule).
    b.mbarrierArriveExpectTx(
        full, b.c32(p.aTileBytes + p.bTileBytes + aScaleBytes));
    int64_t chunk = kSwizzleBytes / byteWidth(p.aElem);
    for (int64_t j = 0; j < p.blockM / chunk; ++j)
      b.tmaLoad(b.gep(stageA(stage), b.c64(j * p.blockK * kSwizzleBytes)),
                aMaps[0], {b.add(t.rowStart, b.c32(j * chunk)), k}, full);
    return;
  }
  // K-major A: the rows the tile needs, whole or, with gg-plan-overfetch's
  // granule, its valid rows rounded up to it (ggk-split-partial-loads).
  bool partial = p.aLoadBoxes.size() > 1;
  b.create<mlir::ggk::LoadTileRowsOp>(
      full, stageA(stage), aMaps, k, t.rowStart,
      p.layout == GroupLayout::masked ? t.group : Value(), t.rowsValid,
      p.blockM, p.blockK * byteWidth(p.aElem), p.bTileBytes + aScaleBytes,
      partial ? p.aLoadGranule : p.blockM, p.aLoadBoxes);
}

void KernelGenerator::loadBTile(const Tile &t, Value stage, Value full,
                                Value k) {
  int64_t chunk = kSwizzleBytes / byteWidth(p.aElem);
  Value n0 = b.mul(t.nBlock, b.c32(p.blockN));
  // In a cluster, each CTA loads its share of the B tile and
  // multicasts it to the same place in every CTA of the cluster.
  auto loadB = [&](Value dst, ArrayRef<Value> coords) {
    // gg-schedule-groups' L2 policy for B.
    Value bHint = p.bCachePolicy ? b.c64(p.bCachePolicy) : Value();
    if (p.cluster == 1) {
      b.tmaLoad(dst, tensorMapB, coords, full, bHint);
      return;
    }
    SmallVector<Value> coords32;
    for (Value c : coords)
      coords32.push_back(b.toI32(c));
    b.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
        clusterAddress(dst, clusterRank), tensorMapB, coords32, full,
        ValueRange{}, b.create<arith::ConstantIntOp>(b.getI16Type(),
                                                     (1 << p.cluster) - 1),
        bHint, NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
        NVVM::CTAGroupKindAttr(), Value());
  };
  if (p.bMNMajor) {
    // N-major B: one [BK, 64] box per 64 columns, each its own
    // 128B-swizzled block of BK rows; a cluster CTA loads its half.
    int64_t chunks = p.blockN / chunk / p.cluster;
    for (int64_t jj = 0; jj < chunks; ++jj) {
      Value j = b.add(b.mul(clusterRank, b.c32(chunks)), b.c32(jj));
      Value n = b.add(n0, b.mul(j, b.c32(chunk)));
      Value dst = b.gep(stageB(stage),
                        b.mul(b.toI64(j), b.c64(p.blockK * kSwizzleBytes)));
      if (p.layout == GroupLayout::k_grouped)
        loadB(dst, {n, k});
      else
        loadB(dst, {n, k, t.group});
    }
  } else {
    // K-major B: rows of N; a cluster CTA loads its half of them.
    Value half = b.mul(clusterRank, b.c32(p.blockN / p.cluster));
    Value dst = b.gep(stageB(stage),
                      b.mul(b.toI64(half), b.c64(kSwizzleBytes)));
    if (p.layout == GroupLayout::k_grouped)
      loadB(dst, {k, b.add(n0, half)});
    else
      loadB(dst, {k, b.add(n0, half), t.group});
  }
}

} // namespace ggc
