//===- Epilogue.cpp - the consumers' epilogue -----------------------------===//
//
// A tile's end: the scales that do not change along K, the user's
// epilogue per element, and the store of each pair of outputs
// (ggk.store_tile and ggk.store_pair, which ggk-stage-tile-stores makes
// per-thread stores or the TMA store pool's staged tile).
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::gg;

namespace {

bool isKind(ScaleAttr s, ScaleKind kind) {
  return s && s.getKind() == kind;
}

} // namespace

namespace ggc {

/// The user's epilogue for one accumulator element (with column_pairs or
/// column_halves, for a pair's two): a ggk.epilogue holding a copy of the region, which
/// ggk-lower-epilogue lowers. Fails, with an error on the user's op, on
/// an op it cannot lower.
FailureOr<Value> KernelGenerator::emitEpilogueRegion(
    ArrayRef<Value> accs, ArrayRef<Value> rowValues, ArrayRef<Value> colValues,
    ArrayRef<Value> scalarValues, Value group) {
  Block *block = op.getEpilogueBlock();
  if (!block)
    return accs[0];
  SmallVector<Value> inputs(accs);
  llvm::append_range(inputs, rowValues);
  llvm::append_range(inputs, colValues);
  llvm::append_range(inputs, scalarValues);
  inputs.push_back(b.create<arith::IndexCastOp>(b.getIndexType(), group));
  Value yielded = cast<YieldOp>(block->getTerminator()).getValue();
  auto epilogue = b.create<ggk::EpilogueOp>(yielded.getType(), inputs);
  {
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Location> locs;
    for (BlockArgument arg : block->getArguments())
      locs.push_back(arg.getLoc());
    Block *body = b.createBlock(&epilogue.getBody(), {},
                                block->getArgumentTypes(), locs);
    IRMapping map;
    map.map(block->getArguments(), body->getArguments());
    for (Operation &inner : block->without_terminator())
      b.clone(inner, map);
    b.create<ggk::YieldOp>(ValueRange{map.lookup(yielded)});
  }
  // The copies keep the user's locations: an op the lowering cannot take
  // is reported where the user wrote it.
  if (failed(mlir::verify(epilogue)))
    return failure();
  return epilogue.getResult();
}

void KernelGenerator::emitEpilogue(const Tile &t, const Fragment &f,
                                   Value acc, ValueRange rowWords) {
  // Whether the outputs go through the TMA store pool (gg-tma-store-pool's
  // `store_pool`) is ggk-stage-tile-stores'; the maps are 3-D where the
  // group is the outermost coordinate.
  bool groupMaps = p.layout == GroupLayout::masked ||
                   p.layout == GroupLayout::k_grouped;
  ValueRange tags = rowWords.take_back(tagWordCount());
  rowWords = rowWords.drop_back(tagWordCount());
  auto stores = b.create<ggk::StoreTileOp>(
      smem, outPtr, t.rowsValid, t.rowStart, t.nBlock, t.group, poolMaps,
      outRowsPtr, outRowCount, tags, p.storePool, ArrayRef<int64_t>{p.blockM, p.outBlockN()},
      p.stagingChunkColumns(), p.stagingSwizzle, p.warpgroupStoreRows,
      p.storeSlice,
      p.outN(), p.m, p.outElem, p.outNM,
      p.columnPairs, p.accumulate, groupMaps, kWarpgroupThreads,
      kWarpgroupThreads * p.numConsumers, p.storeColumns);
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&stores.getBody());
  emitTileOutputs(t, f, acc, rowWords);
  if (!failedEpilogue)
    b.create<ggk::YieldOp>(ValueRange{});
}

void KernelGenerator::emitTileOutputs(const Tile &t, const Fragment &f,
                                      Value acc, ValueRange rowWords) {
  Value rowInTile = f.row, colInBlock = f.col;
  Value colBase = b.mul(t.nBlock, b.c32(p.blockN));
  bool kGrouped = p.layout == GroupLayout::k_grouped;
  SmallVector<Row> rows;
  // out_scale: the f32 outputs of every pair, quantised once all of a
  // row's 128-column blocks are known.
  SmallVector<PendingPair> quantized;
  size_t vectors = op.getRowVectors().size();
  for (int64_t r = 0; r < accType.getRowGroups(); ++r)
    rows.push_back(epilogueRow(t, rowInTile, r,
                               rowWords.slice(r * vectors, vectors)));
  SmallVector<Value> scalarValues;
  for (auto [i, v] : llvm::enumerate(op.getGroupScalars()))
    scalarValues.push_back(b.loadGlobal(
        cast<MemRefType>(v.getType()).getElementType(), scalarPtrs[i], t.group));

  // column_halves pairs column block c with c + blocks / 2 (the up half of
  // the warpgroup's B rows), and its outputs fill a tile of BN / 2
  // columns, a warpgroup's from its first column / 2 (split_n).
  int64_t blocks = accType.getColumnBlocks();
  int64_t outBlocks = p.columnHalves ? blocks / 2 : blocks;
  if (p.columnHalves) {
    colBase = b.mul(t.nBlock, b.c32(p.outBlockN()));
    if (p.splitN > 1)
      colInBlock = b.sub(f.col, b.divU(f.colBase, b.c32(2)));
  }
  for (int64_t c = 0; c < outBlocks; ++c) {
    Value col = b.add(colBase, b.add(colInBlock, b.c32(8 * c)));
    Value colValid = b.lt(col, b.c32(p.columnHalves ? p.outN() : p.n));
    Value safeCol = b.select(colValid, col, colBase);
    // Column-vector values and scales of B for the two columns of the pair.
    SmallVector<Value> colValues[2];
    Value colScale[2];
    for (int j = 0; j < 2; ++j) {
      // Per-channel scales of B: [G, N]; k_grouped's B has no group
      // dimension, so neither have its scales ([N]).
      if (isKind(p.bScale, ScaleKind::channel))
        colScale[j] = b.loadGlobal(
            b.f32(), bScalePtr,
            b.add(kGrouped ? b.c64(0) : b.mul(b.toI64(t.group), b.c64(p.n)),
                  b.toI64(b.add(safeCol, b.c32(j)))));
      else if (isKind(p.bScale, ScaleKind::tensor))
        colScale[j] = b.loadGlobal(b.f32(), bScalePtr, t.group);
      colScale[j] = scaleOfTile(t, colScale[j]);
    }
    for (int j = 0; j < 2; ++j)
      for (auto [i, v] : llvm::enumerate(op.getColVectors())) {
        auto type = cast<MemRefType>(v.getType());
        Value index = b.toI64(b.add(safeCol, b.c32(j)));
        if (type.getRank() == 2)
          index = b.add(b.mul(b.toI64(t.group), b.c64(p.n)), index);
        colValues[j].push_back(
            b.loadGlobal(type.getElementType(), colPtrs[i], index));
      }
    for (auto [half, row] : llvm::enumerate(rows)) {
      auto accumulator = [&, half = half, &row = row](int64_t block,
                                                      int j) -> Value {
        Value v = b.create<ggk::AccGetOp>(
            acc, ArrayRef<int64_t>{int64_t(half), block, j});
        // Scales that do not change along K apply once, to the sum.
        SmallVector<Value, 2> factors;
        for (Value factor : {row.scale, colScale[j]})
          if (factor)
            factors.push_back(factor);
        if (factors.empty())
          return v;
        return b.create<ggk::ScaleOp>(v.getType(), v, factors);
      };
      // The epilogue's accumulators for output j of the pair.
      auto inputs = [&](int j) -> SmallVector<Value, 2> {
        if (p.columnHalves)
          return {accumulator(c, j), accumulator(c + outBlocks, j)};
        if (p.columnPairs)
          return {accumulator(c, 0), accumulator(c, 1)};
        return {accumulator(c, j)};
      };
      ArrayRef<Value> colRefs[2] = {colValues[0], colValues[1]};
      // A combined pair is output column col / 2 (col is even), in the
      // staged tile too.
      PendingPair pending;
      pending.outCol = p.columnPairs ? b.divU(col, b.c32(2)) : col;
      pending.rowInStaged = b.add(f.row, b.c32(8 * half));
      pending.colInStaged = b.add(colInBlock, b.c32(8 * c));
      if (p.columnPairs)
        pending.colInStaged = b.divU(pending.colInStaged, b.c32(2));
      pending.rowIndex = row.index;
      pending.rowValid = row.valid;
      pending.colValid = colValid;
      pending.fragment = {int64_t(half), c};
      FailureOr<SmallVector<Value, 2>> values =
          emitPairValues(inputs, row, colRefs, scalarValues, t.group);
      if (failed(values)) {
        failedEpilogue = true;
        return;
      }
      if (p.quantizeOut) {
        pending.values = std::move(*values);
        quantized.push_back(pending);
        continue;
      }
      storePair(pending, pairVector(*values));
    }
  }
  if (p.quantizeOut)
    storeQuantizedOutputs(quantized, rows.size(), outBlocks);
}

void KernelGenerator::storePair(const PendingPair &pair, Value values) {
  b.create<ggk::StorePairOp>(values, pair.rowInStaged, pair.colInStaged,
                             pair.rowIndex, pair.outCol, pair.rowValid,
                             pair.colValid,
                             b.getDenseI64ArrayAttr(pair.fragment));
}

FailureOr<SmallVector<Value, 2>> KernelGenerator::emitPairValues(
    function_ref<SmallVector<Value, 2>(int)> inputs, const Row &row,
    ArrayRef<Value> colValues[2], ArrayRef<Value> scalarValues, Value group) {
  // column_pairs: the epilogue takes both accumulators and makes one output.
  int64_t outputs = p.columnPairs ? 1 : 2;
  SmallVector<Value, 2> values;
  for (int64_t j = 0; j < outputs; ++j) {
    FailureOr<Value> result = emitEpilogueRegion(
        inputs(j), row.vectorValues, colValues[j], scalarValues, group);
    if (failed(result))
      return failure();
    values.push_back(*result);
  }
  return values;
}

Value KernelGenerator::pairVector(ArrayRef<Value> values) {
  // An accumulating store adds in f32 and rounds the sum once.
  Type storedElem = p.accumulate ? Type(b.f32()) : p.outElem;
  Value stored = b.create<LLVM::UndefOp>(
      VectorType::get({int64_t(values.size())}, storedElem));
  for (auto [j, value] : llvm::enumerate(values))
    stored = b.create<ggk::InsertOutputOp>(stored.getType(), value, stored,
                                           b.getI64IntegerAttr(j));
  return stored;
}

KernelGenerator::Row KernelGenerator::rowPlace(const Tile &t, Value rowInTile,
                                               int half) {
  bool masked = p.layout == GroupLayout::masked;
  bool kGrouped = p.layout == GroupLayout::k_grouped;
  Value r = b.add(rowInTile, b.c32(8 * half));
  Row row;
  row.valid = b.lt(r, t.rowsValid);
  Value rowInA = b.add(t.rowStart, r); // row of A's row space
  // Output row index in the flattened [rows, N] view of `out`.
  Value outRow = b.toI64(rowInA);
  if (masked)
    outRow = b.add(b.mul(b.toI64(t.group), b.toI64(dynamicSize)), outRow);
  if (kGrouped)
    outRow = b.add(b.mul(b.toI64(t.group), b.c64(p.m)), outRow);
  row.index = outRow;
  Value firstRow = b.toI64(t.rowStart);
  if (masked)
    firstRow = b.add(b.mul(b.toI64(t.group), b.toI64(dynamicSize)), firstRow);
  row.vectorRow = kGrouped
                      ? b.toI64(b.select(row.valid, rowInA, t.rowStart))
                      : b.select(row.valid, outRow, firstRow);
  return row;
}

/// A row vector's value (f32, bf16 or f16: the gg verifier's) as an i32
/// word a tile's fields can carry, and back.
static Value asWord(KernelBuilder &b, Value v) {
  unsigned bits = v.getType().getIntOrFloatBitWidth();
  Value word = b.create<arith::BitcastOp>(b.getIntegerType(bits), v);
  return bits == 32 ? word : b.create<arith::ExtUIOp>(b.i32(), word);
}
static Value fromWord(KernelBuilder &b, Value word, Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  if (bits != 32)
    word = b.create<arith::TruncIOp>(b.getIntegerType(bits), word);
  return b.create<arith::BitcastOp>(type, word);
}

SmallVector<Value> KernelGenerator::prefetchRowVectors(const Tile &t,
                                                       const Fragment &f) {
  SmallVector<Value> words;
  if (op.getRowVectors().empty())
    return words;
  for (int64_t r = 0; r < accType.getRowGroups(); ++r) {
    Value vectorRow = rowPlace(t, f.row, r).vectorRow;
    for (auto [i, v] : llvm::enumerate(op.getRowVectors())) {
      Type elem = cast<MemRefType>(v.getType()).getElementType();
      words.push_back(asWord(b, b.loadGlobal(elem, rowPtrs[i], vectorRow)));
    }
  }
  return words;
}

int64_t KernelGenerator::tagWordCount() const {
  bool tagged =
      p.layout == GroupLayout::padded_contiguous && !p.storePool.empty();
  return tagged ? p.blockM / 32 : 0;
}

SmallVector<Value> KernelGenerator::prefetchRowTags(const Tile &t) {
  SmallVector<Value> tags;
  Value lane = b.remU(b.threadIdx(), b.c32(32));
  for (int64_t j = 0; j < tagWordCount(); ++j) {
    Value r = b.add(lane, b.c32(32 * j));
    Value inTile = b.lt(r, t.rowsValid);
    Value row = b.add(t.rowStart, b.select(inTile, r, b.c32(0)));
    Value tag = b.loadGlobal(b.i32(), groupsPtr, b.toI64(row));
    tags.push_back(b.select(inTile, tag, b.c32(-1)));
  }
  return tags;
}

KernelGenerator::Row KernelGenerator::epilogueRow(const Tile &t,
                                                 Value rowInTile, int half,
                                                 ValueRange words) {
  Row row = rowPlace(t, rowInTile, half);
  if (p.layout == GroupLayout::padded_contiguous) {
    // Only rows tagged with this tile's group are stored (the tag read at
    // the row's vector row: its own, or the tile's first past the valid
    // rows).
    Value tag = b.loadGlobal(b.i32(), groupsPtr, row.vectorRow);
    row.valid = b.andI(row.valid, b.eq(tag, t.group));
  }
  for (auto [word, v] : llvm::zip(words, op.getRowVectors()))
    row.vectorValues.push_back(
        fromWord(b, word, cast<MemRefType>(v.getType()).getElementType()));
  // Per-row (per-token) scales follow the rows, like row vectors.
  if (isKind(p.aScale, ScaleKind::channel))
    row.scale = b.loadGlobal(b.f32(), aScalePtr, row.vectorRow);
  else if (isKind(p.aScale, ScaleKind::tensor))
    row.scale = b.loadGlobal(b.f32(), aScalePtr, t.group);
  row.scale = scaleOfTile(t, row.scale);
  return row;
}

Value KernelGenerator::scaleOfTile(const Tile &t, Value scale) {
  // The tile's rows lie outside every group (no K block: contiguous K is
  // at least 1), where the caller's scales need not hold a number; an Inf
  // there would make its zeros NaN.
  if (!p.zeroUngrouped || !scale)
    return scale;
  return b.select(b.eq(t.numKBlocks, b.c32(0)), b.f32c(0.0), scale);
}

void KernelGenerator::consumerBarrier() {
  b.consumerBarrier(kWarpgroupThreads * p.numConsumers);
}

} // namespace ggc
