//===- QuantizedEpilogue.cpp - an out quantised to FP8 in the epilogue ----===//
//
// gg's out_scale: the epilogue's f32 values of a row, in blocks of 128
// output columns, become e4m3 with one scale a block (gg.quantize_rows'
// rule, E4M3.h). The columns of a row lie in one quad of one warp (the
// accumulator fragment's lanes 4i .. 4i + 3), so a block's amax is each
// thread's over its pairs, then two shuffles within the quad; lane 0 of
// the quad stores the scale. Where two warpgroups share a block (split_n
// = 2 over 128 outputs: gg's column_halves with f8 operands, whose two
// accumulators a warpgroup holds only 128 columns of the product), each
// takes its half's amax and the two exchange them in shared memory.
//
//===----------------------------------------------------------------------===//
#include "E4M3.h"
#include "KernelGenerator.h"

using namespace mlir;

namespace ggc {

void KernelGenerator::storeQuantizedOutputs(ArrayRef<PendingPair> pairs,
                                            int64_t rowGroups,
                                            int64_t columnBlocks) {
  // A column block holds 8 columns of the product: 8 outputs of a row, or
  // 4 where column_pairs combines them. With split_n = 2 over 128 outputs
  // (checkQuantizedOutput) a warpgroup holds half of a scale's blocks.
  int64_t blocksPerScale = p.columnPairs ? 32 : 16;
  int64_t ownBlocks = std::min(blocksPerScale, columnBlocks);
  bool shared = ownBlocks < blocksPerScale;
  auto pairAt = [&](int64_t c, int64_t half) -> const PendingPair & {
    return pairs[c * rowGroups + half];
  };
  Value quadLead =
      b.eq(b.remU(b.threadIdx(), b.c32(4)), b.c32(0));
  // The scales' rows: align4(M), M the product's rows.
  Value rows = b.toI64(dynamicSize);
  Value scaleRows =
      b.mul(b.divU(b.add(rows, b.c64(3)), b.c64(4)), b.c64(4));
  // Each (row group, first block) of the thread's: its block's amax.
  SmallVector<std::pair<int64_t, int64_t>> blocks;
  SmallVector<Value> amaxes;
  for (int64_t half = 0; half < rowGroups; ++half)
    for (int64_t first = 0; first < columnBlocks; first += ownBlocks) {
      Value amax = b.f32c(0.0);
      for (int64_t c = first; c < first + ownBlocks; ++c) {
        const PendingPair &pair = pairAt(c, half);
        for (Value v : pair.values)
          amax = b.create<arith::MaximumFOp>(
              amax, b.select(pair.colValid, b.create<math::AbsFOp>(v),
                             b.f32c(0.0)));
      }
      for (int64_t lanes : {1, 2})
        amax = b.create<arith::MaximumFOp>(
            amax, simple::shuffleXorF32(b, amax, lanes));
      blocks.push_back({half, first});
      amaxes.push_back(amax);
    }
  if (shared) {
    SmallVector<const PendingPair *> leads;
    for (auto [half, first] : blocks)
      leads.push_back(&pairAt(first, half));
    shareBlockAmax(amaxes, leads, quadLead);
  }
  for (auto [block, amax] : llvm::zip(blocks, amaxes)) {
    auto [half, first] = block;
    simple::BlockScale scale = simple::blockScale(b, amax);
    // The quad's lane 0 holds the block's first column: the block lies
    // in out where that column does (with shared blocks, in the first
    // warpgroup's lead).
    const PendingPair &lead = pairAt(first, half);
    Value stores =
        b.andI(quadLead, b.andI(lead.rowValid, lead.colValid));
    if (shared)
      stores = b.andI(stores, b.eq(b.remU(lead.outCol, b.c32(128)), b.c32(0)));
    b.create<scf::IfOp>(stores, [&](OpBuilder &, Location) {
      Value scaleBlock = b.toI64(b.divU(lead.outCol, b.c32(128)));
      Value index = b.add(b.mul(scaleBlock, scaleRows), lead.rowIndex);
      b.storeGlobal(scale.scale, outScalePtr, b.mul(index, b.c64(4)));
      b.create<scf::YieldOp>();
    });
    for (int64_t c = first; c < first + ownBlocks; ++c) {
      const PendingPair &pair = pairAt(c, half);
      storePair(pair, e4m3Bytes(pair.values, scale.factor));
    }
  }
}

void KernelGenerator::shareBlockAmax(MutableArrayRef<Value> amaxes,
                                     ArrayRef<const PendingPair *> leads,
                                     Value quadLead) {
  // [block M][split_n] f32 (rowAmaxBytes: one 128-column block a tile):
  // the quads' leads write their row's amax, every consumer waits, each
  // thread takes the other warpgroups' and every consumer waits again
  // before a later tile may write the buffer.
  int64_t split = p.splitN, wgOutputs = p.outBlockN() / split;
  auto slot = [&](const PendingPair &lead, Value warpgroup) {
    return sharedAddress(kRowAmax,
                         b.add(b.mul(lead.rowInStaged, b.c32(split)), warpgroup),
                         4);
  };
  // The thread's warpgroup among those sharing its rows: where its
  // outputs start in the tile.
  Value own = b.divU(leads.front()->colInStaged, b.c32(wgOutputs));
  b.create<scf::IfOp>(quadLead, [&](OpBuilder &, Location) {
    for (auto [lead, amax] : llvm::zip(leads, amaxes))
      b.create<LLVM::StoreOp>(amax, slot(*lead, own));
    b.create<scf::YieldOp>();
  });
  consumerBarrier();
  for (auto [lead, amax] : llvm::zip(leads, amaxes))
    for (int64_t other = 1; other < split; ++other) {
      Value theirs = b.remU(b.add(own, b.c32(other)), b.c32(split));
      amax = b.create<arith::MaximumFOp>(
          amax, b.create<LLVM::LoadOp>(b.f32(), slot(*lead, theirs)));
    }
  consumerBarrier();
}

Value KernelGenerator::e4m3Bytes(ArrayRef<Value> values, Value factor) {
  Value lo = b.create<arith::MulFOp>(values[0], factor);
  Value hi = values.size() > 1 ? b.create<arith::MulFOp>(values[1], factor)
                               : b.f32c(0.0);
  Value packed = b.create<ggk::ConvertE4M3x2Op>(b.getI16Type(), lo, hi);
  if (values.size() > 1)
    return b.create<LLVM::BitcastOp>(VectorType::get({2}, b.getI8Type()),
                                     packed);
  Value byte = b.create<arith::TruncIOp>(b.getI8Type(), packed);
  Value one = b.create<LLVM::PoisonOp>(VectorType::get({1}, b.getI8Type()));
  return b.create<LLVM::InsertElementOp>(one, byte, b.c32(0));
}

} // namespace ggc
