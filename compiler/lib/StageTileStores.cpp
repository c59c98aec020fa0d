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

#include <array>
#include <map>

namespace ggc {
#define GEN_PASS_DEF_STAGETILESTORES
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// A scattering tile's row for output row `rowIndex`: entry `rowIndex` of
/// its index list (negative or not below the bound: the row is dropped).
Value scatteredRow(KernelBuilder &b, ggk::StoreTileOp tile, Value rowIndex) {
  return b.toI64(b.loadGlobal(b.i32(), tile.getIndices(), rowIndex));
}

/// What a tile stores at `address`: `values`, or in an accumulating tile
/// their (f32) sum with what `address` holds, rounded to `out_type`.
Value withStored(ggk::StoreTileOp tile, Value values, Value address,
                 unsigned alignment, KernelBuilder &b) {
  if (!tile.getAccumulate())
    return values;
  Type outType = tile.getOutType();
  Type storedType = outType;
  if (auto vector = dyn_cast<VectorType>(values.getType()))
    storedType = VectorType::get(vector.getShape(), outType);
  Value sum = b.create<LLVM::LoadOp>(storedType, address, alignment);
  if (storedType != values.getType())
    sum = b.create<arith::ExtFOp>(values.getType(), sum);
  sum = b.create<arith::AddFOp>(sum, values);
  if (storedType != values.getType())
    sum = b.create<arith::TruncFOp>(storedType, sum);
  return sum;
}

/// `values` at row `rowIndex` of `out` (its flattened [rows, N] view; with
/// a scatter, the row its index list gives) and columns from `col`, when
/// `valid`; `alignment` is the store's, in bytes (0: its type's).
void storeRow(ggk::StoreTileOp tile, Value values, Value rowIndex, Value col,
              Value valid, unsigned alignment, KernelBuilder &b) {
  if (tile.getIndices()) {
    // The index is read only for a valid row: rows past the group's may
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
    Value fromFirst = b.ge(rowIndex, b.c64(0));
    Value beforeEnd = b.lt(rowIndex, tile.getBound());
    valid = b.andI(fromFirst, beforeEnd);
  }
  int64_t outBytes = ggc::byteWidth(tile.getOutType());
  b.create<scf::IfOp>(valid, [&](OpBuilder &, Location) {
    Value offset =
        b.mul(b.add(b.mul(rowIndex, b.c64(tile.getN())), b.toI64(col)),
              b.c64(outBytes));
    // A combined column pair (column_pairs) is one output.
    auto vector = dyn_cast<VectorType>(values.getType());
    if (vector && vector.getNumElements() == 1)
      values = b.create<LLVM::ExtractElementOp>(values, b.c32(0));
    Value address = b.gep(tile.getOut(), offset);
    b.create<LLVM::StoreOp>(withStored(tile, values, address, alignment, b),
                            address, alignment);
    b.create<scf::YieldOp>();
  });
}

/// The pair at row `pair.getOutRow()` and columns `pair.getOutCol()` + 0, 1
/// (a combined pair: its one column), when valid.
void storeByThread(ggk::StoreTileOp tile, ggk::StorePairOp pair,
                   KernelBuilder &b) {
  Value valid = b.andI(pair.getRowValid(), pair.getColValid());
  if (!tile.getOutNm()) {
    storeRow(tile, pair.getPair(), pair.getOutRow(), pair.getOutCol(), valid,
             /*alignment=*/0, b);
    return;
  }
  // The pair's two columns are two rows of the transposed [G, N, m]
  // output.
  int64_t n = tile.getN(), m = tile.getM();
  int64_t outBytes = ggc::byteWidth(tile.getOutType());
  b.create<scf::IfOp>(valid, [&](OpBuilder &, Location) {
    Value group = b.toI64(tile.getGroup());
    Value row = b.sub(pair.getOutRow(), b.mul(group, b.c64(m)));
    for (int j = 0; j < 2; ++j) {
      Value outCol = b.add(b.mul(group, b.c64(n)),
                           b.toI64(b.add(pair.getOutCol(), b.c32(j))));
      Value offset =
          b.mul(b.add(b.mul(outCol, b.c64(m)), row), b.c64(outBytes));
      Value value = b.create<LLVM::ExtractElementOp>(pair.getPair(), b.c32(j));
      Value address = b.gep(tile.getOut(), offset);
      b.create<LLVM::StoreOp>(withStored(tile, value, address, 0, b),
                              address);
    }
    b.create<scf::YieldOp>();
  });
}

/// The four pairs of one row group and column blocks 4k .. 4k + 3 of a
/// thread's fragment.
using Quad = std::array<ggk::StorePairOp, 4>;

/// A `store_columns = 8` tile's pairs in quads, in the order of their
/// row group and first column block; an error names a quad that is
/// incomplete, holds a fragment twice or is spread over IR blocks.
FailureOr<SmallVector<Quad>> quadsOf(ggk::StoreTileOp tile,
                                     ArrayRef<ggk::StorePairOp> pairs) {
  std::map<std::pair<int64_t, int64_t>, Quad> quads;
  for (ggk::StorePairOp pair : pairs) {
    ArrayRef<int64_t> at = *pair.getFragment();
    ggk::StorePairOp &slot = quads[{at[0], at[1] / 4}][at[1] % 4];
    if (slot)
      return pair.emitOpError()
             << "stores fragment [" << at[0] << ", " << at[1]
             << "] a second time; a quad exchanges one pair of each";
    slot = pair;
  }
  SmallVector<Quad> result;
  for (auto &[at, quad] : quads) {
    bool complete = llvm::all_of(quad, [](ggk::StorePairOp p) { return p; });
    if (!complete || llvm::any_of(quad, [&](ggk::StorePairOp p) {
          return p->getBlock() != quad[0]->getBlock();
        }))
      return tile.emitOpError()
             << "stores 8 columns a thread, but the pairs of row group "
             << at.first << " and column blocks " << 4 * at.second << " .. "
             << 4 * at.second + 3
             << " are not all there, in one IR block: a quad exchanges four";
    result.push_back(quad);
  }
  return result;
}

/// The quad's store of 8 columns by this thread (16 bytes, or 8 of e4m3
/// bytes): its lanes t = 0..3 hold columns 2t, 2t + 1 of the row's four
/// column blocks; after two butterfly rounds (blocks by bit 0 of t over
/// lanes t ^ 1, then halves by bit 1 over lanes t ^ 2) thread t holds
/// block t's 8 columns.
void storeQuad(ggk::StoreTileOp tile, Quad quad, KernelBuilder &b) {
  Operation *last = quad[0];
  for (ggk::StorePairOp pair : quad)
    if (last->isBeforeInBlock(pair))
      last = pair;
  b.setInsertionPoint(last);
  Value lane = b.andI(b.threadIdx(), b.c32(3));
  Value odd = b.ne(b.andI(lane, b.c32(1)), b.c32(0));
  Value high = b.ne(b.andI(lane, b.c32(2)), b.c32(0));
  // A pair of e4m3 bytes travels in the low half of a shuffled word.
  bool bytes = quad[0].getPair().getType().getElementType().isInteger(8);
  Type pairWord = bytes ? b.getI16Type() : b.i32();
  auto word = [&](int j) -> Value {
    Value pair = b.create<LLVM::BitcastOp>(pairWord, quad[j].getPair());
    return bytes ? b.create<arith::ExtUIOp>(b.i32(), pair) : pair;
  };
  auto exchange = [&](Value send, int lanes) -> Value {
    return b.create<ggk::WarpShuffleXorOp>(b.i32(), send, lanes);
  };
  // Round 1: thread t keeps the blocks whose bit 0 is t's and gets its
  // neighbour's columns of them: halves[p] = 4 columns of block 2p + t % 2.
  std::array<Value, 2> halves[2];
  for (int p = 0; p < 2; ++p) {
    Value even = word(2 * p), oddBlock = word(2 * p + 1);
    Value keep = b.select(odd, oddBlock, even);
    Value got = exchange(b.select(odd, even, oddBlock), 1);
    halves[p] = {b.select(odd, got, keep), b.select(odd, keep, got)};
  }
  // Round 2: thread t keeps block t's 4 columns and gets the other 4.
  Value words[4];
  for (int h = 0; h < 2; ++h) {
    Value keep = b.select(high, halves[1][h], halves[0][h]);
    Value got = exchange(b.select(high, halves[0][h], halves[1][h]), 2);
    words[h] = b.select(high, got, keep);
    words[2 + h] = b.select(high, keep, got);
  }
  Value row = b.create<LLVM::UndefOp>(VectorType::get({4}, pairWord));
  for (int i = 0; i < 4; ++i) {
    Value piece = bytes ? b.create<arith::TruncIOp>(pairWord, words[i])
                        : words[i];
    row = b.create<LLVM::InsertElementOp>(row, piece, b.c32(i));
  }
  // Block t starts 8 t columns after block 4k, whose pair of this thread
  // is at column 2 t of it.
  Value col = b.add(quad[0].getOutCol(), b.mul(lane, b.c32(6)));
  Value lowValid = b.select(odd, quad[1].getColValid(), quad[0].getColValid());
  Value highValid =
      b.select(odd, quad[3].getColValid(), quad[2].getColValid());
  Value blockValid = b.select(high, highValid, lowValid);
  storeRow(tile, row, quad[0].getOutRow(), col,
           b.andI(quad[0].getRowValid(), blockValid), bytes ? 8 : 16, b);
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
      .create<ggk::DrainTileStoresOp>(tile.getLoc(), tile.getIssuer(),
                                      tile.getWarpgroupRows());
}

/// The pool's store of the staged tile `buffer` of `shape` (a slice's from
/// column `firstColumn` of the tile's, or the whole tile's).
void storeStaged(ggk::StoreTileOp tile, Value buffer, ArrayRef<int64_t> shape,
                 int64_t firstColumn, KernelBuilder &b) {
  bool slice = shape[1] != tile.getTileShape()[1];
  b.create<ggk::StoreStagedTileOp>(
      buffer, tile.getRowsValid(), tile.getRowStart(), tile.getNBlock(),
      tile.getGroupMaps() ? tile.getGroup() : Value(), tile.getPoolMaps(),
      tile.getPool(), shape, tile.getChunkColumns(), tile.getN(),
      tile.getOutType(), tile.getIssuer(), tile.getThreads(),
      tile.getAccumulate(), tile.getWarpgroupRows(), firstColumn,
      slice ? tile.getTileShape()[1] : 0);
}

/// A tile staged a slice of `slice_columns` at a time: each slice's await,
/// stores into its buffer of the ring of two, and store of its boxes, in
/// place of the pairs (which stand together in column order, as the
/// epilogue emits them).
LogicalResult stageSlices(ggk::StoreTileOp tile, Value staging,
                          MutableArrayRef<ggk::StorePairOp> pairs,
                          KernelBuilder &b) {
  int64_t columns = tile.getSliceColumns(), rows = tile.getTileShape()[0];
  int64_t sliceBytes = rows * columns * ggc::byteWidth(tile.getOutType());
  SmallVector<int64_t> shape = {rows, columns};
  // The ring's two buffers, where the staged tile's address is taken.
  b.setInsertionPointAfter(staging.getDefiningOp());
  Value buffers[2] = {staging, b.gep(staging, b.c64(sliceBytes))};
  auto block = [](ggk::StorePairOp pair) { return (*pair.getFragment())[1]; };
  auto sliceOf = [&](ggk::StorePairOp pair) {
    return block(pair) * 8 / columns;
  };
  for (ggk::StorePairOp pair : pairs)
    if (!pair.getFragment())
      return pair.emitOpError() << "needs its fragment ([row group, column "
                                   "block]): its tile is staged "
                                << columns << " columns at a time";
  // The ring's waits count one store group a slice: every slice is there,
  // each once, in order.
  int64_t slices = tile.getTileShape()[1] / columns;
  for (size_t i = 0; i < pairs.size(); ++i) {
    int64_t previous = i ? sliceOf(pairs[i - 1]) : 0;
    int64_t slice = sliceOf(pairs[i]);
    if ((i ? slice != previous && slice != previous + 1 : slice != 0) ||
        pairs[i]->getBlock() != pairs[0]->getBlock())
      return pairs[i].emitOpError()
             << "stores column block " << block(pairs[i])
             << " out of its slice's place: a tile staged " << columns
             << " columns at a time takes its pairs in column order, every "
                "slice from the first, in one IR block";
  }
  if (pairs.empty() || sliceOf(pairs.back()) != slices - 1)
    return tile.emitOpError() << "stages " << slices << " slices of "
                              << columns << " columns, but its pairs stop "
                              << "short of the last";
  for (size_t i = 0; i < pairs.size(); ++i) {
    ggk::StorePairOp pair = pairs[i];
    int64_t slice = sliceOf(pair);
    bool first = i == 0 || sliceOf(pairs[i - 1]) != slice;
    bool last = i + 1 == pairs.size() || sliceOf(pairs[i + 1]) != slice;
    b.setInsertionPoint(pair);
    Value buffer = buffers[slice % 2];
    // Slice 0 waits for every earlier store to have read its buffer; the
    // next ones for all but the newest (the other buffer's).
    if (first)
      b.create<ggk::AwaitStagedTileOp>(buffer, tile.getIssuer(),
                                       tile.getThreads(),
                                       tile.getWarpgroupRows(), i == 0 ? 0 : 1);
    Value column = b.sub(pair.getCol(), b.c32(slice * columns));
    auto staged = b.create<ggk::StageOutputOp>(
        pair.getPair(), buffer, pair.getRow(), column, tile.getSwizzle(), shape,
        pair.getFragmentAttr());
    if (last) {
      b.setInsertionPointAfter(staged);
      storeStaged(tile, buffer, shape, slice * columns, b);
    }
    pair.erase();
  }
  drainAtTheConsumersEnd(tile);
  return success();
}

/// A tagged tile's count of leading rows tagged with its group, and of all
/// its rows tagged so: each warp ballots the tile's tags 32 rows at a time
/// (lane l's word j: row 32 j + l).
std::pair<Value, Value> taggedRows(ggk::StoreTileOp tile, KernelBuilder &b) {
  Value leading = b.c32(0), all = b.c32(0);
  Value gap = b.create<arith::ConstantIntOp>(b.getI1Type(), 0);
  for (Value tag : tile.getTags()) {
    Value mask = b.create<ggk::WarpBallotOp>(b.i32(),
                                             b.eq(tag, tile.getGroup()));
    all = b.add(all, b.create<LLVM::CtPopOp>(b.i32(), mask));
    // The mask's trailing ones; 32 when every row is tagged.
    Value ones = b.create<LLVM::CountTrailingZerosOp>(
        b.i32(), b.create<LLVM::XOrOp>(mask, b.c32(-1)), false);
    leading = b.add(leading, b.select(gap, b.c32(0), ones));
    gap = b.create<arith::OrIOp>(gap, b.ne(mask, b.c32(-1)));
  }
  return {leading, all};
}

LogicalResult lower(ggk::StoreTileOp tile);

/// A tagged tile: through the pool where its group's rows are its leading
/// ones, else by thread; two untagged copies of it, each lowered as such.
LogicalResult splitTagged(ggk::StoreTileOp tile) {
  KernelBuilder b(tile.getLoc(), tile);
  auto [leading, all] = taggedRows(tile, b);
  ggk::StoreTileOp copies[2];
  auto copy = [&](int i) {
    copies[i] = cast<ggk::StoreTileOp>(b.clone(*tile));
    copies[i].getTagsMutable().clear();
    b.create<scf::YieldOp>();
  };
  b.create<scf::IfOp>(
      b.eq(leading, all), [&](OpBuilder &, Location) { copy(0); },
      [&](OpBuilder &, Location) { copy(1); });
  tile.erase();
  copies[0].getRowsValidMutable().assign(leading);
  copies[0].setStoreColumns(2);
  // The by-thread copy keeps the tile's store_columns (the kernel plan's).
  ggk::StoreTileOp byThread = copies[1];
  byThread.getPoolMapsMutable().clear();
  byThread.setPool({});
  byThread.setWarpgroupRows(0);
  byThread.setSliceColumns(0);
  return success(succeeded(lower(copies[0])) && succeeded(lower(byThread)));
}

LogicalResult lower(ggk::StoreTileOp tile) {
  if (!tile.getTags().empty())
    return splitTagged(tile);
  KernelBuilder b(tile.getLoc(), tile);
  bool pooled = !tile.getPool().empty();
  SmallVector<int64_t> shape(tile.getTileShape());
  Value staging;
  bool sliced = pooled && tile.getSliceColumns();
  if (pooled) {
    staging = b.create<ggk::SharedAddressOp>(
        b.ptr(ggc::kShared), tile.getSmem(),
        ggc::sharedBufferName(ggc::kStagedOutput), Value(), 0, 0);
    // Before this tile's outputs overwrite it, the previous tile's stores
    // must have read it.
    if (!sliced)
      b.create<ggk::AwaitStagedTileOp>(staging, tile.getIssuer(),
                                       tile.getThreads(),
                                       tile.getWarpgroupRows());
  }
  SmallVector<ggk::StorePairOp> pairs;
  tile.getBody().walk([&](ggk::StorePairOp pair) { pairs.push_back(pair); });
  if (sliced) {
    ggc::moveBody(tile.getBody(), {}, b);
    if (failed(stageSlices(tile, staging, pairs, b)))
      return failure();
    tile.erase();
    return success();
  }
  FailureOr<SmallVector<Quad>> quads;
  if (tile.getStoreColumns() == 8 && failed(quads = quadsOf(tile, pairs)))
    return failure();
  ggc::moveBody(tile.getBody(), {}, b);
  // Quads store where each one's last pair stood (its pairs share an IR
  // block; the quads need not).
  if (succeeded(quads))
    for (Quad quad : *quads)
      storeQuad(tile, quad, b);
  for (ggk::StorePairOp pair : pairs) {
    if (succeeded(quads)) {
      pair.erase();
      continue;
    }
    b.setInsertionPoint(pair);
    if (pooled)
      b.create<ggk::StageOutputOp>(pair.getPair(), staging, pair.getRow(),
                                   pair.getCol(), tile.getSwizzle(), shape,
                                   pair.getFragmentAttr());
    else
      storeByThread(tile, pair, b);
    pair.erase();
  }
  if (pooled) {
    b.setInsertionPoint(tile);
    storeStaged(tile, staging, shape, /*firstColumn=*/0, b);
    drainAtTheConsumersEnd(tile);
  }
  tile.erase();
  return success();
}

struct StageTileStoresPass
    : public ggc::impl::StageTileStoresBase<StageTileStoresPass> {
  void runOnOperation() override {
    SmallVector<ggk::StoreTileOp> tiles;
    getOperation().walk([&](ggk::StoreTileOp tile) { tiles.push_back(tile); });
    for (ggk::StoreTileOp tile : tiles)
      if (failed(lower(tile)))
        return signalPassFailure();
  }
};

} // namespace
