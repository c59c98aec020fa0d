//===- Consumer.cpp - the consumer warpgroups -----------------------------===//
//
// The consumers' K loops: wait for a full stage, run wgmma on their rows
// and columns of its tiles, promote each K block (two-level accumulation,
// serial or pipelined), release the stage, and end each tile in the
// epilogue.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

/// The MMA of one K block's steps on the stage's tiles (ggk.mma; ggk-lower-mma
/// makes sm_90a's wgmma of it). With `fresh`, the first K step overwrites
/// the accumulator instead of adding.
Value KernelGenerator::issueMma(Value acc, Value aTile, Value bTile,
                                   bool fresh, int64_t firstStep,
                                   int64_t numSteps) {
  if (numSteps < 0)
    numSteps = p.kSteps();
  // B is read N-major unless it was transposed into a K-major copy.
  bool bNMajor = p.bMNMajor && !p.smem.transposesB;
  auto mma = b.create<ggk::MmaOp>(
      accType, acc, aTile, bTile, TypeAttr::get(p.aElem),
      TypeAttr::get(p.bElem), b.getI64IntegerAttr(p.kPerStep()),
      b.getI64IntegerAttr(p.blockK),
      b.getI64IntegerAttr(firstStep), b.getI64IntegerAttr(numSteps));
  mma.setFresh(fresh);
  mma.setThreeTf32(p.aElem.isF32() && !op.getTf32());
  mma.setAMnMajor(p.aReadMNMajor());
  mma.setBMnMajor(bNMajor);
  return mma.getResult();
}

Value KernelGenerator::zeroAccumulator() {
  return b.create<ggk::AccZeroOp>(accType);
}

KernelGenerator::Fragment KernelGenerator::fragment(Value consumerIndex) {
  // Where the thread's accumulator values lie is the accumulator type's
  // (ggk.acc_origin); the warpgroup's place in the tile is the plan's:
  // rows 64 * (index / split_n), columns warpgroupN * (index % split_n).
  Fragment f;
  f.lane = b.remU(b.threadIdx(), b.c32(32));
  Value rowBlock = b.divU(consumerIndex, b.c32(p.splitN));
  f.colBase =
      b.mul(b.remU(consumerIndex, b.c32(p.splitN)), b.c32(p.warpgroupN));
  auto origin = b.create<ggk::AccOriginOp>(
      accType, b.mul(rowBlock, b.c32(64)), f.colBase);
  f.warpRow = origin.getWarpRow();
  f.row = origin.getRow();
  f.col = origin.getColumn();
  return f;
}

void KernelGenerator::emitConsumer(Value consumerIndex) {
  // This warpgroup's 64 rows of the A tile: 64 swizzled rows when A is
  // K-major, one [BK, 64] chunk when it is M-major.
  Value rowBlock = b.divU(consumerIndex, b.c32(p.splitN));
  Value rowOffset = b.mul(b.toI64(rowBlock),
                          b.c64(p.aReadMNMajor() ? p.blockK * kSwizzleBytes
                                                 : 64 * kSwizzleBytes));
  Fragment f = fragment(consumerIndex);
  forEachTile([&](const Tile &t, Value counter) -> Value {
    Value acc = zeroAccumulator();
    // Busy or idle, every consumer copies its share of the stages when
    // there is no producer.
    loadPrologue(t, counter);
    SmallVector<Value> done = warpgroupTile(
        t, consumerIndex,
        [&] {
          auto [result, end] = emitMainLoop(t, counter, acc, consumerIndex, f,
                                            rowOffset);
          return SmallVector<Value>{result, end};
        },
        [&] { return SmallVector<Value>{acc, emitIdleLoop(t, counter)}; });
    // The epilogue keeps every consumer at the staged store's barriers; an
    // idle one's rows are never stored.
    tileEpilogue(t, f, done[0]);
    return done[1];
  });
}

void KernelGenerator::tileEpilogue(const Tile &t, const Fragment &f,
                                   Value acc) {
  SmallVector<Value> fields = tileValues(t);
  auto end = b.create<ggk::TileEpilogueOp>(fields, acc);
  SmallVector<Type> types(fields.size(), b.i32());
  types.push_back(acc.getType());
  OpBuilder::InsertionGuard guard(b);
  Block *body =
      b.createBlock(&end.getBody(), {}, types,
                    SmallVector<Location>(types.size(), b.getUnknownLoc()));
  // Only through the block's arguments: ggk-defer-epilogue may run it on
  // the values another tile carries.
  emitEpilogue(tileFromValues(body->getArguments().drop_back()), f,
               body->getArguments().back());
  b.create<ggk::YieldOp>(ValueRange{});
}

SmallVector<Value> KernelGenerator::warpgroupTile(
    const Tile &t, Value consumerIndex,
    function_ref<SmallVector<Value>()> work,
    function_ref<SmallVector<Value>()> idle) {
  // Consumer i works on rows [64 r, 64 r + 64), r = i / split_n.
  Value firstRow =
      b.mul(b.divU(consumerIndex, b.c32(p.splitN)), b.c32(64));
  auto op = b.create<ggk::WarpgroupTileOp>(
      TypeRange{accType, b.i32()}, firstRow, t.rowsValid, /*works=*/Value(),
      p.padding);
  for (auto [region, body] : {std::pair{&op.getWork(), work},
                              std::pair{&op.getIdle(), idle}}) {
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(region);
    b.create<ggk::YieldOp>(body());
  }
  return SmallVector<Value>(op.getResults());
}

/// Waits for each of the tile's K blocks and releases it unread: the
/// consumer's rows of the tile are all padding.
Value KernelGenerator::emitIdleLoop(const Tile &t, Value counter) {
  auto loop = b.create<scf::ForOp>(
      b.c32(0), t.numKBlocks, b.c32(1), ValueRange{counter},
      [&](OpBuilder &, Location, Value kBlock, ValueRange iter) {
        Value it = iter[0];
        loadAhead(t, kBlock, it);
        auto [stage, phase] = ringSlot(it);
        waitStage(stage, phase);
        releaseStage(stage);
        b.create<scf::YieldOp>(ValueRange{b.add(it, b.c32(1))});
      });
  return loop.getResult(0);
}

/// The tile's K loop on this consumer's 64 rows: wgmma on each stage, block
/// scales and two-level accumulation where the op needs them. Returns the
/// accumulator and the stage counter after the tile.
std::pair<Value, Value>
KernelGenerator::emitMainLoop(const Tile &t, Value counter, Value acc,
                              Value consumerIndex, const Fragment &f,
                              Value rowOffset) {
  if (p.mx)
    return emitMxLoop(t, counter, acc, consumerIndex, f, rowOffset);
  if (p.twoLevel())
    return emitPromotionLoop(t, counter, acc, consumerIndex, f, rowOffset);
  return emitKLoop(t, counter, acc, f, rowOffset);
}

void KernelGenerator::fillStep(
    Region &region, ArrayRef<Type> arguments,
    function_ref<SmallVector<Value>(ValueRange)> body) {
  OpBuilder::InsertionGuard guard(b);
  Block *block =
      b.createBlock(&region, {}, arguments,
                    SmallVector<Location>(arguments.size(), b.getUnknownLoc()));
  b.create<ggk::YieldOp>(body(block->getArguments()));
}

std::pair<Value, Value> KernelGenerator::emitKLoop(const Tile &t,
                                                   Value counter, Value acc,
                                                   const Fragment &f,
                                                   Value rowOffset) {
  auto loop = b.create<ggk::KLoopOp>(
      acc.getType(), b.i32(), t.numKBlocks, counter, acc,
      b.getI64IntegerAttr(p.stages), b.getI64IntegerAttr(p.releaseLag));
  Type i32 = b.i32();
  fillStep(loop.getIssue(), {i32, i32, i32, acc.getType()},
           [&](ValueRange a) -> SmallVector<Value> {
             waitStage(a[1], a[2]);
             auto [aTile, bTile] = stageTiles(t, a[0], a[1], f, rowOffset);
             b.create<ggk::MmaFenceOp>();
             Value sum = issueMma(a[3], aTile, bTile, /*fresh=*/false);
             b.create<ggk::MmaCommitOp>();
             return {sum};
           });
  fillStep(loop.getRelease(), {i32}, [&](ValueRange stage) -> SmallVector<Value> {
    releaseStage(stage[0]);
    return {};
  });
  // Without a producer: the copies of a later block, issued while the
  // tensor cores work through this one's mma.sync.
  fillStep(loop.getLoadAhead(), {i32, i32},
           [&](ValueRange a) -> SmallVector<Value> {
             loadAhead(t, a[0], a[1]);
             return {};
           });
  return {loop.getResult(), loop.getEnd()};
}

/// MX's K loop. Block scales are copied to this thread's slots one K block
/// ahead (issueScaleCopies), so their latency hides behind a whole block
/// of wgmma; per-column scales of B go through shared memory, one K block
/// ahead: block k reads buffer k % 2 while block k + 1's are published.
std::pair<Value, Value>
KernelGenerator::emitMxLoop(const Tile &t, Value counter, Value acc,
                            Value consumerIndex, const Fragment &f,
                            Value rowOffset) {
  bool hasSlots = p.scaleSlots.words() > 0;
  SmallVector<Value> initial = {acc, counter};
  Value ownColumn =
      b.add(f.colBase, b.remU(b.threadIdx(), b.c32(kWarpgroupThreads)));
  if (hasSlots) {
    issueScaleCopies(t, b.c32(0), f, ownColumn);
    if (p.columnScales)
      publishColumnScale(readColumnWord(b.c32(0), f), consumerIndex, b.c32(0),
                         f, scaleBlock(t, b.c32(0)));
  }
  auto kLoop = b.create<scf::ForOp>(
      b.c32(0), t.numKBlocks, b.c32(1), initial,
      [&](OpBuilder &, Location, Value kBlock, ValueRange iter) {
        Value acc = iter[0], it = iter[1];
        auto [stage, phase] = ringSlot(it);
        Value nextBlock = b.add(kBlock, b.c32(1));
        if (hasSlots)
          issueScaleCopies(t, nextBlock, f, ownColumn);
        // MX's scales, from the slots while the block's wgmma runs (MX
        // scales never travel with the stages).
        auto blockScales = [&]() { return readScales(kBlock, f); };
        waitStage(stage, phase);
        auto [aTile, bTile] = stageTiles(t, kBlock, stage, f, rowOffset);
        b.create<ggk::MmaFenceOp>();
        acc = emitMxBlock(t, kBlock, stage, aTile, bTile, acc, f,
                          consumerIndex, blockScales);
        b.create<scf::YieldOp>(ValueRange{acc, b.add(it, b.c32(1))});
      });
  return {kLoop.getResult(0), kLoop.getResult(1)};
}

/// MX: one promotion per scale block (32 or 128 K) of K block `kBlock`,
/// each with its own UE8M0 factor per row of A and per column of B; then
/// the next block's column factors are published.
Value KernelGenerator::emitMxBlock(const Tile &t, Value kBlock, Value stage,
                                   Value aTile, Value bTile, Value acc,
                                   const Fragment &f, Value consumerIndex,
                                   function_ref<BlockScales()> blockScales) {
  Value nextBlock = b.add(kBlock, b.c32(1));
  int64_t per = p.stepsPerPromotion();
  int64_t promotions = p.kSteps() / per;
  BlockScales scales;
  for (int64_t j = 0; j < promotions; ++j) {
    Value partial = issueMma(b.create<ggk::AccUndefOp>(accType),
                                aTile, bTile, /*fresh=*/true,
                                j * per, per);
    b.create<ggk::MmaCommitOp>();
    if (j == 0)
      scales = blockScales();
    b.create<ggk::MmaWaitOp>(0);
    if (j + 1 == promotions)
      releaseStage(stage);
    // The block's four exponents share one word per row and per
    // column (1x32), or each block takes a byte of its word (1x128).
    Value byte = b.remU(
        b.add(b.mul(scaleBlock(t, kBlock), b.c32(promotions)),
              b.c32(j)),
        b.c32(4));
    BlockScales factors;
    factors.a[0] = decodeUE8M0(scales.a[0], byte);
    factors.a[1] = decodeUE8M0(scales.a[1], byte);
    // Scale block j's factors follow the first j's in the buffer.
    Value columnFactors = b.gep(
        columnScales(consumerIndex, b.remU(kBlock, b.c32(2))),
        b.c64(j * p.blockN * 4));
    acc = promoteBlock(acc, partial, factors, t, f, consumerIndex,
                       kBlock, columnFactors);
  }
  publishColumnScale(readColumnWord(nextBlock, f), consumerIndex,
                     b.remU(nextBlock, b.c32(2)), f,
                     scaleBlock(t, nextBlock));
  return acc;
}

/// The tile's K loop of two-level accumulation (not MX) as one
/// ggk.promotion_loop: what one K block's steps are, as regions;
/// ggk-pipeline-promotion orders them as the kernel plan's `promotion`
/// says (serial, or block k's promotion beside block k + 1's wgmma). Its
/// `overlap` step is left empty: ggk-defer-epilogue puts the previous
/// tile's epilogue there. Returns the accumulator and the stage counter
/// after the tile.
std::pair<Value, Value> KernelGenerator::emitPromotionLoop(
    const Tile &t, Value counter, Value acc, Value consumerIndex,
    const Fragment &f, Value rowOffset) {
  Value ownColumn =
      b.add(f.colBase, b.remU(b.threadIdx(), b.c32(kWarpgroupThreads)));
  auto loop = b.create<ggk::PromotionLoopOp>(
      acc.getType(), b.i32(), t.numKBlocks, counter, acc,
      b.getI64IntegerAttr(p.stages), op.getKernelPlanAttr());
  Type i32 = b.i32();
  auto step = [&](Region &region, ArrayRef<Type> arguments,
                  function_ref<SmallVector<Value>(ValueRange)> body) {
    fillStep(region, arguments, body);
  };
  // The slots' copies of block k; ggk-pipeline-promotion issues them where
  // the plan puts the scales in the slots.
  step(loop.getPrefetch(), {i32}, [&](ValueRange k) -> SmallVector<Value> {
    issueScaleCopies(t, k[0], f, ownColumn);
    return {};
  });
  // B's per-column scales are published one K block ahead: block k reads
  // buffer k % 2 while block k + 1's are written.
  auto publishColumns = [&](Value k) {
    publishColumnScale(readColumnWord(k, f), consumerIndex,
                       b.remU(k, b.c32(2)), f, scaleBlock(t, k));
  };
  step(loop.getStart(), {}, [&](ValueRange) -> SmallVector<Value> {
    if (p.columnScales)
      publishColumns(b.c32(0));
    return {};
  });
  step(loop.getIssue(), {i32, i32, i32},
       [&](ValueRange a) -> SmallVector<Value> {
    Value stage = a[1];
    waitStage(stage, a[2]);
    auto [aTile, bTile] = stageTiles(t, a[0], stage, f, rowOffset);
    b.create<ggk::MmaFenceOp>();
    Value partial = issueMma(b.create<ggk::AccUndefOp>(accType), aTile,
                                bTile, /*fresh=*/true);
    b.create<ggk::MmaCommitOp>();
    return {partial};
  });
  step(loop.getReadScales(), {i32, i32},
       [&](ValueRange a) -> SmallVector<Value> {
         return readBlockScales(t, a[0], a[1], f).values();
       });
  SmallVector<Type> promoteArguments = {accType, accType, i32};
  llvm::append_range(promoteArguments,
                     loop.getReadScales().front().getTerminator()->getOperandTypes());
  step(loop.getPromote(), promoteArguments,
       [&](ValueRange a) -> SmallVector<Value> {
         Value sum = promoteBlock(a[0], a[1], BlockScales::fromValues(a.drop_front(3)),
                                  t, f, consumerIndex, a[2]);
         if (p.columnScales)
           publishColumns(b.add(a[2], b.c32(1)));
         return {sum};
       });
  step(loop.getRelease(), {i32}, [&](ValueRange stage) -> SmallVector<Value> {
    releaseStage(stage[0]);
    return {};
  });
  step(loop.getOverlap(), {}, [](ValueRange) -> SmallVector<Value> {
    return {};
  });
  return {loop.getResult(), loop.getEnd()};
}

/// The A and B tiles wgmma reads from ring stage `stage`, once it is full:
/// this warpgroup's rows of A and columns of B, after the consumers'
/// in-place work on them (k_grouped's K entries of other groups cleared,
/// tf32 transposes), which ggk ops state and ggk-prepare-operands lowers.
std::pair<Value, Value> KernelGenerator::stageTiles(const Tile &t, Value kBlock,
                                                    Value stage,
                                                    const Fragment &f,
                                                    Value rowOffset) {
  Value aTile = b.gep(stageA(stage), rowOffset);
  Value bTile = stageB(stage);
  if (p.layout == GroupLayout::k_grouped)
    clearKOutsideGroup(t, kBlock, stage);
  if (p.smem.transposesB) {
    transposeTile(stageB(stage), transposedB(stage), p.blockN);
    bTile = transposedB(stage);
  }
  if (p.smem.transposesA) {
    transposeTile(stageA(stage), transposedA(stage), p.blockM);
    aTile = b.gep(transposedA(stage), rowOffset);
  }
  if (p.splitN > 1) {
    // The warpgroup's columns of B: rows of a K-major tile, 128-byte
    // chunks (BK rows each) of an N-major one.
    bool nMajor = p.bMNMajor && !p.smem.transposesB;
    int64_t chunk = kSwizzleBytes / byteWidth(p.bElem);
    bTile = b.gep(bTile, nMajor ? b.mul(b.toI64(b.divU(f.colBase, b.c32(chunk))),
                                        b.c64(p.blockK * kSwizzleBytes))
                                : b.mul(b.toI64(f.colBase),
                                        b.c64(kSwizzleBytes)));
  }
  return {aTile, bTile};
}

} // namespace ggc
