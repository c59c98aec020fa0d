//===- TileSchedule.cpp - the persistent tile schedule, as one op ----------===//
//
// The walk over the tiles a CTA owns is one ggk.foreach_tile, the same for
// the producer and the consumers: its body receives the tile's fields and
// carries the pipeline counter (and what else a role carries) from tile to
// tile. ggk-lower-tile-schedule turns it into the loop over the group
// offsets or counts.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"
#include "ggk/GGKDialect.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

void KernelGenerator::forEachTile(
    function_ref<Value(const Tile &, Value counter)> body) {
  forEachTile(ValueRange{b.c32(0)},
              [&](const Tile &t, ValueRange state) -> SmallVector<Value> {
                return {body(t, state[0])};
              });
}

SmallVector<Value> KernelGenerator::tileValues(const Tile &t) {
  return {t.group,   t.mBlock, t.nBlock, t.rowStart, t.groupStart,
          t.rowsValid, t.kStart, t.kFirst, t.kEnd,     t.numKBlocks,
          t.sharesB};
}

KernelGenerator::Tile KernelGenerator::tileFromValues(ValueRange v) {
  Tile t;
  t.group = v[0];
  t.mBlock = v[1];
  t.nBlock = v[2];
  t.rowStart = v[3];
  t.groupStart = v[4];
  t.rowsValid = v[5];
  t.kStart = v[6];
  t.kFirst = v[7];
  t.kEnd = v[8];
  t.numKBlocks = v[9];
  t.sharesB = v[10];
  return t;
}

SmallVector<Value> KernelGenerator::forEachTile(
    ValueRange initial,
    function_ref<SmallVector<Value>(const Tile &, ValueRange)> body) {
  auto loop = b.create<ggk::ForeachTileOp>(
      initial.getTypes(), p.layout, p.nFastest, p.zeroUngrouped, p.mBand,
      ArrayRef<int64_t>{p.blockM, p.blockN, p.blockK}, p.numGroups, p.m, p.n,
      p.k, p.cluster, p.kAlignment, p.groupsElem, groupsPtr, dynamicSize,
      p.cluster == 1 ? Value() : clusterRank, groupTable, initial);
  SmallVector<Type> argTypes(ggk::ForeachTileOp::kTileFields, b.i32());
  llvm::append_range(argTypes, initial.getTypes());
  OpBuilder::InsertionGuard guard(b);
  Block *block = b.createBlock(&loop.getBody(), {}, argTypes,
                               SmallVector<Location>(argTypes.size(),
                                                     b.getLoc()));
  Tile t = tileFromValues(
      block->getArguments().take_front(ggk::ForeachTileOp::kTileFields));
  SmallVector<Value> state = body(
      t, block->getArguments().drop_front(ggk::ForeachTileOp::kTileFields));
  b.create<ggk::YieldOp>(state);
  return SmallVector<Value>(loop.getResults());
}

} // namespace ggc
