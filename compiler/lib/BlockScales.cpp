//===- BlockScales.cpp - scales that change along K -----------------------===//
//
// Where a K block's scales are in global memory (1x128 and 128x128
// blocks, MX words), the slots' and per-column buffers' copies, the
// stated reads (ggk.read_block_scales, placed by ggk-place-scales) and
// the promotion that applies them to a K block's product.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"
#include "Target.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

Value KernelGenerator::scaleBlock(const Tile &t, Value kBlock) {
  if (p.layout != GroupLayout::k_grouped)
    return kBlock;
  return b.add(b.divU(t.kStart, b.c32(128)), kBlock);
}

Value KernelGenerator::scaleBlockCount() {
  if (p.layout != GroupLayout::k_grouped)
    return b.c32((p.k + 127) / 128);
  return b.ceilDivU(b.toI32(dynamicSize), 128);
}

Value KernelGenerator::aScaleIndex(const Tile &t, Value kBlock,
                                   Value rowInTile) {
  Value rows = p.layout == GroupLayout::k_grouped ? b.c32(p.m)
                                                  : b.toI32(dynamicSize);
  Value row = b.add(t.rowStart, rowInTile);
  if (p.mx) {
    // Four exponents share a word, so a 128-wide K block reads one word
    // per row whether the scale blocks are 32 (its four bytes) or 128 (one
    // byte of it) wide.
    int64_t perWord = 4 * p.aScale.getBlockK();
    Value rowWords = mxWordsPerRow(perWord);
    Value word = b.toI64(
        b.divU(b.mul(scaleBlock(t, kBlock), b.c32(128)), b.c32(perWord)));
    Value scaleRow;
    switch (p.layout) {
    case GroupLayout::contiguous: {
      // FlashInfer's layout: each group's scale rows start on a multiple of
      // 4, at (first row + 3g) / 4 * 4; (M + 3G) / 4 * 4 rows in all.
      Value base = b.andI(b.add(t.groupStart, b.mul(t.group, b.c32(3))),
                          b.c32(~3));
      Value total = b.andI(b.add(rows, b.c32(3 * p.numGroups)), b.c32(~3));
      scaleRow = b.minS(b.add(base, b.sub(row, t.groupStart)),
                        b.sub(total, b.c32(1)));
      break;
    }
    case GroupLayout::masked:
      scaleRow = b.add(b.mul(t.group, rows),
                       b.minS(row, b.sub(rows, b.c32(1))));
      break;
    default:
      scaleRow = b.minS(row, b.sub(rows, b.c32(1)));
      break;
    }
    return b.add(b.mul(b.toI64(scaleRow), rowWords), word);
  }
  // 1x128 blocks. M-major: [ceil(K/128), align4(M)]; K-major:
  // [M, ceil(K/128)]; each with a leading G for masked (M = M_max).
  // k_grouped: M is static and M-major rows are not padded.
  bool kGrouped = p.layout == GroupLayout::k_grouped;
  Value kBlocks = b.toI64(scaleBlockCount());
  Value block = b.toI64(scaleBlock(t, kBlock));
  bool mMajor = p.aScale.getMajor() == ScaleMajor::mn_major;
  Value rowStride = kGrouped ? rows : b.andI(b.add(rows, b.c32(3)), b.c32(~3));
  Value groupBase = b.c64(0);
  if (p.layout == GroupLayout::masked)
    groupBase = b.mul(b.toI64(t.group),
                      b.mul(kBlocks, b.toI64(mMajor ? rowStride : rows)));
  Value clamped = b.toI64(b.minS(row, b.sub(rows, b.c32(1))));
  Value index = mMajor ? b.add(b.mul(block, b.toI64(rowStride)), clamped)
                       : b.add(b.mul(clamped, kBlocks), block);
  return b.add(groupBase, index);
}

Value KernelGenerator::bBlockScaleIndex(const Tile &t, Value kBlock,
                                        Value colBase, int64_t j) {
  Value kBlocks = b.toI64(scaleBlockCount());
  Value block = b.toI64(scaleBlock(t, kBlock));
  // k_grouped B has no group dimension: [ceil(N/128), ceil(K/128)].
  return ggc::bBlockScaleIndex(
      b,
      {p.n, p.blockN, p.bScale.getMajor() == ScaleMajor::k_major,
       p.columnHalves},
      kBlocks,
      block, p.layout == GroupLayout::k_grouped ? Value() : t.group, t.nBlock,
      colBase, j);
}

/// 2^(e - 127) for the UE8M0 exponent in byte `byteIndex` of `word`
/// (ggk.decode_ue8m0, lowered by ggk-lower-promotion).
Value KernelGenerator::decodeUE8M0(Value word, Value byteIndex) {
  return b.create<ggk::DecodeUE8M0Op>(b.f32(), word, byteIndex);
}

Value KernelGenerator::columnScaleIndex(const Tile &t, Value kBlock,
                                       Value colInTile) {
  Value colBase = b.mul(t.nBlock, b.c32(p.blockN));
  Value col = b.toI64(b.minS(b.add(colBase, colInTile), b.c32(p.n - 1)));
  // k_grouped B has no group dimension.
  Value g = p.layout == GroupLayout::k_grouped ? b.c64(0) : b.toI64(t.group);
  if (!p.mx) {
    // 1x128 f32 blocks: K-major [G, N, ceil(K/128)] or M-major
    // [G, ceil(K/128), N].
    Value kBlocks = b.toI64(scaleBlockCount());
    Value block = b.toI64(scaleBlock(t, kBlock));
    return p.bScale.getMajor() == ScaleMajor::k_major
               ? b.add(b.mul(b.add(b.mul(g, b.c64(p.n)), col), kBlocks), block)
               : b.add(b.mul(b.add(b.mul(g, kBlocks), block), b.c64(p.n)),
                       col);
  }
  int64_t perWord = 4 * p.bScale.getBlockK();
  Value word = b.toI64(
      b.divU(b.mul(scaleBlock(t, kBlock), b.c32(128)), b.c32(perWord)));
  return b.add(b.mul(b.add(b.mul(g, b.c64(p.n)), col), mxWordsPerRow(perWord)),
               word);
}

Value KernelGenerator::mxWordsPerRow(int64_t perWord) {
  // k_grouped: over the concatenated K, the run-time size.
  if (p.layout == GroupLayout::k_grouped)
    return b.toI64(b.ceilDivU(b.toI32(dynamicSize), perWord));
  return b.c64((p.k + perWord - 1) / perWord);
}

SlotShape KernelGenerator::slotShape() const {
  return {p.scaleSlots.aRows, p.scaleSlots.bBlocks, p.scaleSlots.words(),
          p.numConsumers * 4, ggc::targetOf(op).firstConsumerThread()};
}

Value KernelGenerator::scaleSlot(Value buffer, Value word,
                                 int64_t wordOffset) {
  return scaleSlotAddress(b, smem, slotShape(), buffer, word, wordOffset);
}

void KernelGenerator::issueScaleCopies(const Tile &t, Value kBlock,
                                       const Fragment &f, Value ownColumn) {
  const ggc::ScaleSlots &slots = p.scaleSlots;
  Value buffer = b.remU(kBlock, b.c32(ggc::kScaleSlotBuffers));
  // Lanes may still be reading this buffer's previous block.
  b.warpSync();
  b.create<scf::IfOp>(b.lt(kBlock, t.numKBlocks), [&](OpBuilder &, Location) {
    // Each lane copies into its own word of the slots, past `skip` words.
    auto copy = [&](int64_t skip, Value base, Value index) {
      Value source = b.create<LLVM::GEPOp>(base.getType(), b.i32(), base,
                                           ArrayRef<LLVM::GEPArg>{index});
      b.copyAsync(scaleSlot(buffer, f.lane, skip), source, 4);
    };
    // Lane i < 16 copies the word of the warp's row i; the next lanes
    // copy B's block scales.
    if (slots.aRows)
      b.create<scf::IfOp>(b.lt(f.lane, b.c32(slots.aRows)),
                          [&](OpBuilder &, Location) {
                            copy(0, aScalePtr,
                                 aScaleIndex(t, kBlock,
                                             b.add(f.warpRow, f.lane)));
                            b.create<scf::YieldOp>();
                          });
    for (int64_t j = 0; j < slots.bBlocks; ++j)
      b.create<scf::IfOp>(b.eq(f.lane, b.c32(slots.aRows + j)),
                          [&](OpBuilder &, Location) {
                            copy(0, bScalePtr,
                                 bBlockScaleIndex(t, kBlock, f.colBase, j));
                            b.create<scf::YieldOp>();
                          });
    if (slots.columns)
      copy(slots.aRows + slots.bBlocks, bScalePtr,
           columnScaleIndex(t, kBlock, ownColumn));
    b.create<scf::YieldOp>();
  });
  b.copyAsyncCommit();
}

KernelGenerator::BlockScales
KernelGenerator::readScales(Value kBlock, const Fragment &f) {
  return BlockScales::fromValues(readSlotScales(
      b, smem, slotShape(), kBlock, f.lane, p.mx ? b.i32() : b.f32()));
}

KernelGenerator::BlockScales
KernelGenerator::readBlockScales(const Tile &t, Value kBlock, Value stage,
                                 const Fragment &f) {
  int64_t results = 2 + std::max<int64_t>(1, p.bBlocks);
  auto read = b.create<mlir::ggk::ReadBlockScalesOp>(
      SmallVector<Type>(results, b.f32()), smem, kBlock, stage, t.rowStart,
      f.row, f.lane, op.getKernelPlanAttr(), p.bBlocks, p.scaleSlots.aRows,
      p.scaleSlots.words(), p.numConsumers * 4, p.smem.stageAScaleBytes,
      p.aScaleKMajor);
  return BlockScales::fromValues(read.getResults());
}

Value KernelGenerator::readColumnWord(Value kBlock, const Fragment &f) {
  // Serial promotion reads block k's word once it is the newest copy
  // group; pipelined, block k + 1's copies were issued just before, and
  // may stay in flight.
  bool pipelined = op.getKernelPlanAttr() &&
                   op.getKernelPlanAttr().getPromotion() ==
                       gg::Promotion::pipelined;
  b.copyAsyncWait(pipelined ? 1 : 0);
  Value buffer = b.remU(kBlock, b.c32(ggc::kScaleSlotBuffers));
  return b.create<LLVM::LoadOp>(
      b.i32(), scaleSlot(buffer, f.lane,
                         p.scaleSlots.aRows + p.scaleSlots.bBlocks));
}

Value KernelGenerator::columnScales(Value consumerIndex, Value buffer) {
  Value index = b.add(b.mul(consumerIndex, b.c32(2)), buffer);
  return sharedAddress(kColumnScales, index, p.blockN * 4 * p.columnEntries);
}

void KernelGenerator::publishColumnScale(Value word, Value consumerIndex,
                                          Value buffer, const Fragment &f,
                                          Value scaleBlock) {
  // The thread's column of the warpgroup's share of the tile.
  Value own = b.remU(b.threadIdx(), b.c32(kWarpgroupThreads));
  Value column = b.add(f.colBase, own);
  Value factors = columnScales(consumerIndex, buffer);
  b.create<scf::IfOp>(b.lt(own, b.c32(p.warpgroupN)), [&](OpBuilder &,
                                                          Location) {
    if (!p.mx) {
      b.create<LLVM::StoreOp>(
          word, b.gep(factors, b.mul(b.toI64(column), b.c64(4))));
    } else {
      // Decoded here once, not by each of the 32 threads reading the
      // column: block k's scale blocks take bytes (k * entries + j) % 4.
      for (int64_t j = 0; j < p.columnEntries; ++j) {
        Value byte = b.remU(
            b.add(b.mul(scaleBlock, b.c32(p.columnEntries)), b.c32(j)),
            b.c32(4));
        Value entry = b.add(b.mul(b.c32(j), b.c32(p.blockN)), column);
        b.create<LLVM::StoreOp>(decodeUE8M0(word, byte),
                                b.gep(factors, b.mul(b.toI64(entry), b.c64(4))));
      }
    }
    b.create<scf::YieldOp>();
  });
  // Named barrier 2 + i for consumer warpgroup i (1 is all consumers).
  b.warpSync();
  b.syncThreads(b.add(consumerIndex, b.c32(2)), b.c32(kWarpgroupThreads));
}

/// Adds a K block's completed partial product to the f32 accumulator,
/// scaled by the block's scales (two-level accumulation): a ggk.promote,
/// lowered by ggk-lower-promotion.
Value KernelGenerator::promoteBlock(Value acc, Value partial,
                                    const BlockScales &scales, const Tile &t,
                                    const Fragment &f, Value consumerIndex,
                                    Value kBlock, Value columnFactors,
                                    ValueRange columnValues) {
  // Per-column scales of B (1x128 blocks, MX factors): one f32 per column,
  // from shared memory, or read already (columnValues).
  SmallVector<Value> bScales = scales.b;
  if (p.columnScales) {
    bScales.assign(columnValues.begin(), columnValues.end());
    if (!columnFactors && columnValues.empty())
      columnFactors = columnScales(consumerIndex, b.remU(kBlock, b.c32(2)));
  }
  return b.create<ggk::PromoteOp>(
      acc.getType(), acc, partial, ValueRange{scales.a[0], scales.a[1]}, bScales,
      columnFactors, t.nBlock, f.colBase, f.col,
      b.getI64IntegerAttr(p.blockN),
      p.columnHalves && !p.columnScales ? b.getUnitAttr() : UnitAttr(),
      columnValues.empty() ? UnitAttr() : b.getUnitAttr());
}

} // namespace ggc
