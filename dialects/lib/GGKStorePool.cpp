//===- GGKStorePool.cpp - verifiers of the TMA store pool's ops ------------===//
//
// ggk.await_staged_tile, ggk.stage_output and ggk.store_staged_tile: the
// staged tile's shape and layout, and the pool of box heights that stores
// any prefix of its rows.
//
//===----------------------------------------------------------------------===//
#include "ggk/GGKDialect.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/InterleavedRange.h"

using namespace mlir;
using namespace mlir::ggk;

namespace {

/// `tile_shape` is [rows, columns], both positive.
LogicalResult verifyTileShape(Operation *op, ArrayRef<int64_t> shape) {
  if (shape.size() != 2 || shape[0] <= 0 || shape[1] <= 0)
    return op->emitOpError() << "tile_shape must be [rows, columns], both "
                                "positive, got "
                             << shape.size() << " sizes";
  return success();
}

/// bar.sync counts whole warps; the issuer's wait and the barrier after it
/// assume the threads it names.
LogicalResult verifyThreads(Operation *op, int64_t issuer, int64_t threads) {
  if (issuer < 0)
    return op->emitOpError() << "issuer must be a thread index, got "
                             << issuer;
  if (threads <= 0 || threads % 32 != 0)
    return op->emitOpError() << "consumer_threads must be a positive "
                                "multiple of 32 (whole warps), got "
                             << threads;
  return success();
}

int64_t byteWidth(Type type) { return type.getIntOrFloatBitWidth() / 8; }

/// Consumer warpgroups that store their own rows (`warpgroup_rows` 64)
/// each own 64 rows of the tile, 128 threads a warpgroup; 0: one issuer
/// for the tile.
LogicalResult verifyWarpgroupRows(Operation *op, int64_t warpgroupRows,
                                  int64_t issuer,
                                  std::optional<int64_t> tileRows,
                                  std::optional<int64_t> threads) {
  if (warpgroupRows == 0)
    return success();
  if (warpgroupRows != 64)
    return op->emitOpError() << "warpgroup_rows must be 0 (one issuer for the "
                                "tile) or 64 (a consumer warpgroup's rows), "
                                "got "
                             << warpgroupRows;
  if (issuer % 128 != 0)
    return op->emitOpError() << "stores each consumer warpgroup's rows from "
                                "its first thread: issuer must be the first "
                                "consumer warpgroup's first thread (a multiple "
                                "of 128), got "
                             << issuer;
  if (threads && *threads % 128 != 0)
    return op->emitOpError() << "stores each consumer warpgroup's rows: "
                                "consumer_threads must be whole warpgroups (a "
                                "multiple of 128), got "
                             << *threads;
  if (threads && tileRows && *tileRows != *threads / 128 * warpgroupRows)
    return op->emitOpError() << "stores each consumer warpgroup's 64 rows: "
                                "the tile's rows must be 64 for every 128 "
                                "consumer threads, got "
                             << *tileRows << " rows and " << *threads
                             << " threads";
  return success();
}

/// A swizzled tile's rows are whole chunks of TMA's 64- or 128-byte
/// swizzle (`swizzle` bytes; 0: dense rows).
LogicalResult verifySwizzle(Operation *op, int64_t swizzle,
                            int64_t rowBytes) {
  if (swizzle != 0 && swizzle != 64 && swizzle != 128)
    return op->emitOpError() << "swizzle must be 0 (dense), 64 or 128 "
                                "bytes, got "
                             << swizzle;
  if (swizzle && rowBytes % swizzle != 0)
    return op->emitOpError() << "a tile swizzled by " << swizzle
                             << " bytes must have rows of whole " << swizzle
                             << "-byte chunks, got " << rowBytes << " bytes";
  return success();
}

} // namespace

LogicalResult AwaitStagedTileOp::verify() {
  if (failed(verifyThreads(*this, getIssuer(), getConsumerThreads())))
    return failure();
  if (getPending() != 0 && getPending() != 1)
    return emitOpError() << "pending must be 0 (every earlier store has read "
                            "the tile) or 1 (all but the newest: a ring of two "
                            "buffers), got "
                         << getPending();
  return verifyWarpgroupRows(*this, getWarpgroupRows(), getIssuer(),
                             std::nullopt, getConsumerThreads());
}

LogicalResult StageOutputOp::verify() {
  ArrayRef<int64_t> shape = getTileShape();
  if (failed(verifyTileShape(*this, shape)))
    return failure();
  int64_t rowBytes = shape[1] * byteWidth(getPair().getType().getElementType());
  std::optional<ArrayRef<int64_t>> fragment = getFragment();
  if (fragment && (fragment->size() != 2 || (*fragment)[0] < 0 ||
                   (*fragment)[0] > 1 || (*fragment)[1] < 0))
    return emitOpError() << "fragment must be [row group 0 or 1, column "
                            "block >= 0], got ["
                         << llvm::interleaved(*fragment) << "]";
  return verifySwizzle(*this, getSwizzle(), rowBytes);
}

LogicalResult StoreStagedTileOp::verify() {
  ArrayRef<int64_t> shape = getTileShape();
  if (failed(verifyTileShape(*this, shape)) ||
      failed(verifyThreads(*this, getIssuer(), getConsumerThreads())))
    return failure();
  // Any count of rows below the tile's is a sum of distinct heights.
  ArrayRef<int64_t> heights = getHeights();
  int64_t largest = int64_t(llvm::bit_floor(uint64_t(shape[0])));
  bool halving = !heights.empty() && heights.front() == largest &&
                 heights.back() == 1;
  for (size_t i = 1; halving && i < heights.size(); ++i)
    halving = heights[i] * 2 == heights[i - 1];
  if (!halving)
    return emitOpError() << "heights must halve from " << largest
                         << " (the largest power of two not above the "
                            "tile's rows) down to 1";
  if (getMaps().size() != heights.size())
    return emitOpError() << "takes one tensor map per height, "
                         << heights.size() << ", got " << getMaps().size();
  Type element = getElementType();
  if (!isa<FloatType>(element))
    return emitOpError() << "element_type must be a float type, got "
                         << element;
  int64_t chunk = getChunkColumns(), columns = shape[1];
  if (chunk <= 0 || columns % chunk != 0 ||
      (chunk != columns && chunk * byteWidth(element) != 64 &&
       chunk * byteWidth(element) != 128))
    return emitOpError() << "chunk_columns must be the tile's columns ("
                         << columns << ", dense) or 64 or 128 bytes of them "
                         << "(the maps' swizzle), got " << chunk;
  if (getN() <= 0)
    return emitOpError() << "n must be positive, got " << getN();
  if (getAdd() && !element.isF32())
    return emitOpError() << "adds its boxes to the output with TMA's "
                            "reduce-add, which takes an f32 element_type, got "
                         << element;
  int64_t blockColumns = getBlockColumns() ? getBlockColumns() : columns;
  if (getFirstColumn() < 0 || getFirstColumn() % columns != 0 ||
      getFirstColumn() + columns > blockColumns || blockColumns % columns != 0)
    return emitOpError() << "stores a slice of " << columns
                         << " columns at first_column " << getFirstColumn()
                         << " of a block of " << blockColumns
                         << ": it must be a whole slice inside the block";
  return verifyWarpgroupRows(*this, getWarpgroupRows(), getIssuer(),
                             shape[0], getConsumerThreads());
}

/// A tile whose quads store a row's 8 columns a thread (`store_columns =
/// 8`: 16 bytes of 16-bit outputs, 8 of e4m3 ones): what the exchange
/// takes.
static LogicalResult verifyStoreColumns(StoreTileOp tile) {
  int64_t columns = tile.getStoreColumns();
  if (columns != 2 && columns != 8)
    return tile.emitOpError() << "store_columns must be 2 or 8, got "
                              << columns;
  if (columns == 2)
    return success();
  auto refuse = [&](StringRef why) {
    return tile.emitOpError()
           << "stores 8 columns a thread (store_columns = 8), which takes "
           << why;
  };
  if (!tile.getPool().empty() && tile.getTags().empty())
    return refuse("per-thread stores (no pool, or a tagged tile's stores "
                  "where its group's rows do not lead)");
  if (tile.getOutNm() || tile.getColumnPairs())
    return refuse("a row-major output of pairs (no out_nm, no column_pairs)");
  if (tile.getOutType().getIntOrFloatBitWidth() != 16 &&
      !isa<Float8E4M3FNType>(tile.getOutType()))
    return refuse("a 16-bit or f8E4M3FN out_type");
  if (tile.getN() % 8 != 0)
    return refuse("n a multiple of 8 (rows of whole 8-column blocks)");
  WalkResult pairs = tile.getBody().walk([](StorePairOp pair) {
    std::optional<ArrayRef<int64_t>> at = pair.getFragment();
    if (!at || at->size() != 2 || (*at)[0] < 0 || (*at)[1] < 0) {
      pair.emitOpError() << "needs fragment = [row group, column block] in a "
                            "ggk.store_tile of store_columns = 8";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(pairs.wasInterrupted());
}

LogicalResult StoreTileOp::verify() {
  if (failed(verifyTileShape(*this, getTileShape())) ||
      failed(verifyThreads(*this, getIssuer(), getThreads())))
    return failure();
  if (getPoolMaps().size() != getPool().size())
    return emitOpError() << "takes one tensor map per pool height, "
                         << getPool().size() << ", got "
                         << getPoolMaps().size();
  if (!isa<FloatType>(getOutType()))
    return emitOpError() << "out_type must be a float type, got "
                         << getOutType();
  if (getN() <= 0)
    return emitOpError() << "n must be positive, got " << getN();
  if (getWarpgroupRows() && getPool().empty())
    return emitOpError() << "stores each consumer warpgroup's rows through "
                            "the TMA store pool (warpgroup_rows), but has no "
                            "pool";
  if (failed(verifyWarpgroupRows(*this, getWarpgroupRows(), getIssuer(),
                                 getTileShape()[0], getThreads())))
    return failure();
  int64_t outBytes = byteWidth(getOutType());
  int64_t slice = getSliceColumns(), columns = getTileShape()[1];
  if (slice && (getPool().empty() || slice < 0 || slice >= columns ||
                columns % slice != 0 || slice * outBytes % 128 != 0 ||
                getColumnPairs()))
    return emitOpError() << "slice_columns must divide the tile's " << columns
                         << " columns, be fewer, make rows of whole 128-byte "
                            "chunks, and come with a pool and no column_pairs, "
                            "got "
                         << slice;
  int64_t staged = slice ? slice : columns;
  if (failed(verifySwizzle(*this, getSwizzle(), staged * outBytes)))
    return failure();
  if (!getPool().empty() &&
      getChunkColumns() != (getSwizzle() ? getSwizzle() / outBytes : staged))
    return emitOpError() << "chunk_columns must be the staged tile's "
                            "column chunk, "
                         << (getSwizzle() ? getSwizzle() / outBytes : staged)
                         << " columns (" << getSwizzle()
                         << " swizzled bytes, or the whole row when dense), "
                            "got "
                         << getChunkColumns();
  if (getOutNm() && (getM() <= 0 || !getPool().empty()))
    return emitOpError() << "stores the transposed [G, N, M] output per "
                            "thread: it needs a positive m and no pool";
  if (getColumnPairs() && getOutNm())
    return emitOpError() << "stores combined column pairs into a row-major "
                            "output: it takes no out_nm";
  if (bool(getIndices()) != bool(getBound()))
    return emitOpError() << "scatters rows by index with the output's row "
                            "count as the indices' bound: it takes both or "
                            "neither";
  if (getIndices() && (!getPool().empty() || getOutNm()))
    return emitOpError() << "scatters rows by index per thread, into a "
                            "row-major output: it takes no pool (TMA boxes "
                            "store consecutive rows) and no out_nm";
  if (!getTags().empty() &&
      (getPool().empty() || getIndices() || getOutNm() ||
       getTileShape()[0] % 32 != 0 ||
       int64_t(getTags().size()) != getTileShape()[0] / 32))
    return emitOpError() << "picks the pool or per-thread stores by its "
                            "rows' tags (tagged): it needs a pool, no "
                            "scatter, no out_nm, and one tag word a lane "
                            "per 32 rows of the tile ("
                         << getTileShape()[0] << "), got "
                         << getTags().size();
  if (getAccumulate() &&
      ((!getPool().empty() && !getOutType().isF32()) ||
       getStoreColumns() != 2 || getIndices()))
    return emitOpError() << "adds each pair to what 'out' holds: it takes "
                            "store_columns = 2, no scatter (repeated indices "
                            "would race) and a pool only for an f32 out_type "
                            "(TMA's reduce-add)";
  if (failed(verifyStoreColumns(*this)))
    return failure();
  Block &body = getBody().front();
  if (body.getNumArguments() != 0)
    return emitOpError() << "region must take no arguments, got "
                         << body.getNumArguments();
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield || !yield.getValues().empty())
    return emitOpError() << "region must end with a ggk.yield of no values";
  return success();
}

LogicalResult StorePairOp::verify() {
  auto tile = (*this)->getParentOfType<StoreTileOp>();
  if (!tile)
    return emitOpError() << "must be inside a ggk.store_tile, which says "
                            "where its tile's outputs go";
  Type element = getPair().getType().getElementType();
  if (tile.getAccumulate() && !element.isF32())
    return emitOpError() << "holds " << element << " values, but its "
                         << "ggk.store_tile accumulates: they are f32, "
                            "added to 'out' before rounding";
  // FP8 outputs travel as their bytes.
  Type stored = tile.getOutType();
  if (isa<Float8E4M3FNType>(stored))
    stored = IntegerType::get(getContext(), 8);
  if (!tile.getAccumulate() && element != stored)
    return emitOpError() << "stores " << element << " outputs, but its "
                         << "ggk.store_tile's out_type is "
                         << tile.getOutType()
                         << (stored != tile.getOutType()
                                 ? " (whose outputs are i8 bytes)"
                                 : "");
  int64_t values = tile.getColumnPairs() ? 1 : 2;
  if (getPair().getType().getNumElements() != values)
    return emitOpError() << "holds " << getPair().getType().getNumElements()
                         << (values == 2 ? " output" : " outputs")
                         << ", but its ggk.store_tile "
                         << (tile.getColumnPairs()
                                 ? "combines column pairs: one a pair"
                                 : "stores two adjacent columns a pair");
  return success();
}

LogicalResult DrainTileStoresOp::verify() {
  return verifyWarpgroupRows(*this, getWarpgroupRows(), getIssuer(),
                             std::nullopt, std::nullopt);
}
