//===- StageTileStores.cpp - ggk-stage-tile-stores ------------------------===//
//
// Where a tile's outputs go. With gg-tma-store-pool's pool (TMA-Adaptive
// FP8 Grouped GEMM's descriptor pool) the consumers stage the tile in
// shared memory and one thread stores its valid rows as TMA boxes of the
// pool's heights (ggk ops that ggk-lower-store-pool lowers); without one,
// each thread stores its pairs that belong to the group.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "RegionBodies.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_STAGETILESTORES
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// A scattering tile's row for output row `rowIndex`: entry `rowIndex` of
/// its index list (negative: the row is dropped).
Value scatteredRow(KernelBuilder &b, ggk::StoreTileOp tile, Value rowIndex) {
  return b.toI64(b.loadGlobal(b.i32(), tile.getIndices(), rowIndex));
}

/// The pair at row `pair.getOutRow()` of `out` (its flattened [rows, N]
/// view; with a scatter, the row its index list gives) and columns
/// `pair.getOutCol()` + 0, 1 (a combined pair: its one column), when valid.
void storeByThread(ggk::StoreTileOp tile, ggk::StorePairOp pair,
                   KernelBuilder &b) {
  int64_t n = tile.getN(), m = tile.getM();
  int64_t outBytes = ggc::byteWidth(tile.getOutType());
  Value valid = b.andI(pair.getRowValid(), pair.getColValid());
  Value out = tile.getOut(), rowIndex = pair.getOutRow(), col = pair.getOutCol();
  if (tile.getIndices()) {
    // The index is read only for a valid pair: rows past the group's may
    // lie past the list.
    auto read = b.create<scf::IfOp>(
        valid,
        [&](OpBuilder &, Location) {
          b.create<scf::YieldOp>(
              ValueRange{scatteredRow(b, tile, rowIndex)});
        },
        [&](OpBuilder &, Location) {
          b.create<scf::YieldOp>(ValueRange{b.c64(-1)});
        });
    rowIndex = read.getResult(0);
    valid = b.ge(rowIndex, b.c64(0));
  }
  b.create<scf::IfOp>(valid, [&](OpBuilder &, Location) {
    if (tile.getOutNm()) {
      // The pair's two columns are two rows of the transposed output.
      Value group = b.toI64(tile.getGroup());
      Value row = b.sub(rowIndex, b.mul(group, b.c64(m)));
      for (int j = 0; j < 2; ++j) {
        Value outCol = b.add(b.mul(b.toI64(tile.getGroup()), b.c64(n)),
                             b.toI64(b.add(col, b.c32(j))));
        Value offset = b.mul(b.add(b.mul(outCol, b.c64(m)), row),
                             b.c64(outBytes));
        b.storeGlobal(
            b.create<LLVM::ExtractElementOp>(pair.getPair(), b.c32(j)), out,
            offset);
      }
    } else {
      Value offset = b.mul(b.add(b.mul(rowIndex, b.c64(n)), b.toI64(col)),
                           b.c64(outBytes));
      // A combined column pair (column_pairs) is one output.
      Value values = pair.getPair();
      if (pair.getPair().getType().getNumElements() == 1)
        values = b.create<LLVM::ExtractElementOp>(values, b.c32(0));
      b.storeGlobal(values, out, offset);
    }
    b.create<scf::YieldOp>();
  });
}

/// The CTA must not end while its last TMA stores are in flight: the
/// consumers' role (where the tile stands in a ggk.warp_specialize) ends
/// with one drain.
void drainAtTheConsumersEnd(ggk::StoreTileOp tile) {
  auto roles = tile->getParentOfType<ggk::WarpSpecializeOp>();
  if (!roles)
    return;
  Block &consumers = roles.getConsumers().front();
  if (llvm::any_of(consumers, llvm::IsaPred<ggk::DrainTileStoresOp>))
    return;
  OpBuilder(consumers.getTerminator())
      .create<ggk::DrainTileStoresOp>(tile.getLoc(), tile.getIssuer());
}

void lower(ggk::StoreTileOp tile) {
  KernelBuilder b(tile.getLoc(), tile);
  bool pooled = !tile.getPool().empty();
  SmallVector<int64_t> shape(tile.getTileShape());
  Value staging;
  if (pooled) {
    staging = b.create<ggk::SharedAddressOp>(
        b.ptr(ggc::kShared), tile.getSmem(),
        ggc::sharedBufferName(ggc::kStagedOutput), Value(), 0, 0);
    // Before this tile's outputs overwrite it, the previous tile's stores
    // must have read it.
    b.create<ggk::AwaitStagedTileOp>(staging, tile.getIssuer(),
                                     tile.getThreads());
  }
  SmallVector<ggk::StorePairOp> pairs;
  tile.getBody().walk([&](ggk::StorePairOp pair) { pairs.push_back(pair); });
  ggc::moveBody(tile.getBody(), {}, b);
  for (ggk::StorePairOp pair : pairs) {
    b.setInsertionPoint(pair);
    if (pooled)
      b.create<ggk::StageOutputOp>(pair.getPair(), staging, pair.getRow(),
                                   pair.getCol(), tile.getSwizzled(), shape);
    else
      storeByThread(tile, pair, b);
    pair.erase();
  }
  if (pooled) {
    b.setInsertionPoint(tile);
    b.create<ggk::StoreStagedTileOp>(
        staging, tile.getRowsValid(), tile.getRowStart(), tile.getNBlock(),
        tile.getGroupMaps() ? tile.getGroup() : Value(), tile.getPoolMaps(),
        tile.getPool(), shape, tile.getChunkColumns(), tile.getN(),
        tile.getOutType(), tile.getIssuer(), tile.getThreads());
    drainAtTheConsumersEnd(tile);
  }
  tile.erase();
}

struct StageTileStoresPass
    : public ggc::impl::StageTileStoresBase<StageTileStoresPass> {
  void runOnOperation() override {
    SmallVector<ggk::StoreTileOp> tiles;
    getOperation().walk([&](ggk::StoreTileOp tile) { tiles.push_back(tile); });
    for (ggk::StoreTileOp tile : tiles)
      lower(tile);
  }
};

} // namespace
