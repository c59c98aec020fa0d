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
                                   int64_t numSteps, Value stepOffset) {
  if (numSteps < 0)
    numSteps = p.kSteps();
  // B is read N-major unless it was transposed into a K-major copy.
  bool bNMajor = p.bMNMajor && !p.smem.transposesB;
  auto mma = b.create<ggk::MmaOp>(
      accType, acc, aTile, bTile, TypeAttr::get(p.aElem),
      TypeAttr::get(p.bElem), b.getI64IntegerAttr(p.kPerStep()),
      b.getI64IntegerAttr(p.blockK),
      b.getI64IntegerAttr(firstStep), b.getI64IntegerAttr(numSteps),
      UnitAttr(), UnitAttr(), UnitAttr(), UnitAttr(), stepOffset);
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
    SmallVector<Value> rowWords = prefetchRowVectors(t, f);
    llvm::append_range(rowWords, prefetchRowTags(t));
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
    tileEpilogue(t, f, done[0], rowWords);
    return done[1];
  });
}

void KernelGenerator::tileEpilogue(const Tile &t, const Fragment &f,
                                   Value acc, ValueRange rowWords) {
  SmallVector<Value> fields = tileValues(t);
  size_t tileFields = fields.size();
  llvm::append_range(fields, rowWords);
  auto end = b.create<ggk::TileEpilogueOp>(fields, acc);
  SmallVector<Type> types(fields.size(), b.i32());
  types.push_back(acc.getType());
  OpBuilder::InsertionGuard guard(b);
  Block *body =
      b.createBlock(&end.getBody(), {}, types,
                    SmallVector<Location>(types.size(), b.getUnknownLoc()));
  // Only through the block's arguments: ggk-defer-epilogue may run it on
  // the values another tile carries.
  ValueRange arguments = body->getArguments();
  emitEpilogue(tileFromValues(arguments.take_front(tileFields)), f,
               arguments.back(),
               arguments.drop_front(tileFields).drop_back());
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
/// consumer's rows of the tile are all padding. (With constant stages, the
/// empty stages that end its last turn too.)
Value KernelGenerator::emitIdleLoop(const Tile &t, Value counter) {
  auto loop = b.create<scf::ForOp>(
      b.c32(0), ringBlocks(t), b.c32(1), ValueRange{counter},
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
  // epilogue_blocks = 1: an empty overlap step, which ggk-defer-epilogue
  // fills with the previous tile's epilogue.
  int64_t epilogueBlocks = op.getKernelPlanAttr().getEpilogueBlocks();
  auto loop = b.create<ggk::KLoopOp>(
      acc.getType(), b.i32(), t.numKBlocks, counter, acc,
      b.getI64IntegerAttr(p.stages), b.getI64IntegerAttr(p.releaseLag),
      b.getI64IntegerAttr(epilogueBlocks));
  Type i32 = b.i32();
  if (epilogueBlocks == 1)
    fillStep(loop.getOverlap(), {}, [](ValueRange) -> SmallVector<Value> {
      return {};
    });
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

/// The tile's K loop of two-level accumulation as one ggk.promotion_loop:
/// what one scale block's steps are, as regions (a K block has
/// `promotions` scale blocks: MX 1x32's four, else one);
/// ggk-pipeline-promotion orders them as the kernel plan's `promotion`
/// says (serial, or one scale block's promotion beside the next one's
/// wgmma). Its `overlap` step is left empty: ggk-defer-epilogue puts the
/// previous tile's epilogue there. Returns the accumulator and the stage
/// counter after the tile.
std::pair<Value, Value> KernelGenerator::emitPromotionLoop(
    const Tile &t, Value counter, Value acc, Value consumerIndex,
    const Fragment &f, Value rowOffset) {
  Value ownColumn =
      b.add(f.colBase, b.remU(b.threadIdx(), b.c32(kWarpgroupThreads)));
  int64_t promotions = p.kSteps() / p.stepsPerPromotion();
  auto loop = b.create<ggk::PromotionLoopOp>(
      acc.getType(), b.i32(), t.numKBlocks, counter, acc,
      b.getI64IntegerAttr(p.stages), b.getI64IntegerAttr(promotions),
      op.getKernelPlanAttr(),
      p.columnScalesInStages && !p.columnScalesAtIssue ? b.getUnitAttr()
                                                       : UnitAttr());
  // column_scale_reads = at_issue: the thread's columns' scales, two per
  // 8 columns of the warpgroup, read from the stage with A's and carried
  // to the promotion, so that the stage goes back before it.
  int64_t columnCount = p.columnScalesAtIssue ? accType.getColumns() / 4 : 0;
  Type i32 = b.i32();
  // The slots' copies of block k; ggk-pipeline-promotion issues them where
  // the plan puts the scales in the slots.
  fillStep(loop.getPrefetch(), {i32}, [&](ValueRange k) -> SmallVector<Value> {
    issueScaleCopies(t, k[0], f, ownColumn);
    return {};
  });
  // B's per-column scales are published one K block ahead: block k reads
  // buffer k % 2 while block k + 1's are written (unless the stages carry
  // them).
  bool publishesColumns = p.columnScales && !p.columnScalesInStages;
  auto publishColumns = [&](Value k) {
    publishColumnScale(readColumnWord(k, f), consumerIndex,
                       b.remU(k, b.c32(2)), f, scaleBlock(t, k));
  };
  fillStep(loop.getStart(), {}, [&](ValueRange) -> SmallVector<Value> {
    if (publishesColumns)
      publishColumns(b.c32(0));
    return {};
  });
  fillIssueStep(loop, t, f, rowOffset, promotions);
  fillReadScalesStep(loop, t, f, promotions, columnCount);
  fillPromoteStep(loop, t, f, consumerIndex, counter, columnCount);
  fillStep(loop.getEndBlock(), {i32}, [&](ValueRange k) -> SmallVector<Value> {
    if (publishesColumns)
      publishColumns(b.add(k[0], b.c32(1)));
    return {};
  });
  fillStep(loop.getRelease(), {i32}, [&](ValueRange stage) -> SmallVector<Value> {
    releaseStage(stage[0]);
    return {};
  });
  fillStep(loop.getOverlap(), {}, [](ValueRange) -> SmallVector<Value> {
    return {};
  });
  if (p.passesEmptyStages())
    fillStep(loop.getAwait(), {i32, i32},
             [&](ValueRange a) -> SmallVector<Value> {
               waitStage(a[0], a[1]);
               return {};
             });
  return {loop.getResult(), loop.getEnd()};
}

void KernelGenerator::fillIssueStep(ggk::PromotionLoopOp loop, const Tile &t,
                                    const Fragment &f, Value rowOffset,
                                    int64_t promotions) {
  Type i32 = b.i32();
  fillStep(loop.getIssue(), {i32, i32, i32, i32},
           [&](ValueRange a) -> SmallVector<Value> {
    Value stage = a[2];
    // A K block's later scale blocks find its stage full, and cleared
    // outside the group (k_grouped), already.
    if (promotions == 1) {
      waitStage(stage, a[3]);
    } else {
      b.create<scf::IfOp>(b.eq(a[1], b.c32(0)), [&](OpBuilder &, Location) {
        waitStage(stage, a[3]);
        if (p.layout == GroupLayout::k_grouped)
          clearKOutsideGroup(t, a[0], stage);
        b.create<scf::YieldOp>();
      });
    }
    auto [aTile, bTile] =
        stageTiles(t, a[0], stage, f, rowOffset, /*clear=*/promotions == 1);
    b.create<ggk::MmaFenceOp>();
    // Scale block j of the K block: its steps alone.
    int64_t steps = p.stepsPerPromotion();
    Value firstStep = promotions > 1 ? b.mul(a[1], b.c32(steps)) : Value();
    Value partial = issueMma(b.create<ggk::AccUndefOp>(accType), aTile, bTile,
                             /*fresh=*/true, 0, steps, firstStep);
    b.create<ggk::MmaCommitOp>();
    return {partial};
  });
}

void KernelGenerator::fillReadScalesStep(ggk::PromotionLoopOp loop,
                                         const Tile &t, const Fragment &f,
                                         int64_t promotions,
                                         int64_t columnCount) {
  Type i32 = b.i32();
  fillStep(loop.getReadScales(), {i32, i32, i32},
           [&](ValueRange a) -> SmallVector<Value> {
             if (p.mx)
               return readMxFactors(t, a[0], a[1], f, promotions);
             SmallVector<Value> scales =
                 readBlockScales(t, a[0], a[2], f).values();
             if (columnCount) {
               Value table = sharedAddress(kStageBScales, a[2],
                                           stageBScaleBytes(p.blockN));
               auto columns = b.create<ggk::LoadColumnScalesOp>(
                   SmallVector<Type>(columnCount, b.f32()), table, f.col,
                   b.getI64IntegerAttr(accType.getColumns()));
               llvm::append_range(scales, columns.getResults());
             }
             return scales;
           });
}

void KernelGenerator::fillPromoteStep(ggk::PromotionLoopOp loop,
                                      const Tile &t, const Fragment &f,
                                      Value consumerIndex, Value counter,
                                      int64_t columnCount) {
  Type i32 = b.i32();
  // The promotion takes what read_scales yields (fillReadScalesStep runs
  // first).
  SmallVector<Type> promoteArguments = {accType, accType, i32, i32};
  llvm::append_range(promoteArguments,
                     loop.getReadScales().front().getTerminator()->getOperandTypes());
  fillStep(loop.getPromote(), promoteArguments,
           [&](ValueRange a) -> SmallVector<Value> {
             // MX: scale block j's column factors follow the first j's.
             Value columnFactors;
             ValueRange scales = a.drop_front(4);
             if (columnCount) {
               BlockScales blocks =
                   BlockScales::fromValues(scales.drop_back(columnCount));
               return {promoteBlock(a[0], a[1], blocks, t, f, consumerIndex,
                                    a[2], Value(),
                                    scales.take_back(columnCount))};
             }
             if (p.columnScalesInStages)
               // K block k's stage, which the loop keeps until here
               // (promote_reads_stage): ring counter counter + k.
               columnFactors = sharedAddress(
                   kStageBScales, ringSlot(b.add(counter, a[2])).first,
                   stageBScaleBytes(p.blockN));
             else if (p.mx)
               columnFactors = b.gep(
                   columnScales(consumerIndex, b.remU(a[2], b.c32(2))),
                   b.mul(b.toI64(a[3]), b.c64(p.blockN * 4)));
             return {promoteBlock(a[0], a[1],
                                  BlockScales::fromValues(a.drop_front(4)), t,
                                  f, consumerIndex, a[2], columnFactors)};
           });
}

/// MX: scale block `j` of K block `k`'s factors of the thread's two rows
/// of A, decoded from the slots' words. A word holds four exponents:
/// block k's scale blocks take bytes (k * promotions + j) % 4.
SmallVector<Value> KernelGenerator::readMxFactors(const Tile &t, Value k,
                                                  Value j, const Fragment &f,
                                                  int64_t promotions) {
  BlockScales words = readScales(k, f);
  Value byte = b.remU(b.add(b.mul(scaleBlock(t, k), b.c32(promotions)), j),
                      b.c32(4));
  return {decodeUE8M0(words.a[0], byte), decodeUE8M0(words.a[1], byte)};
}

/// The A and B tiles wgmma reads from ring stage `stage`, once it is full:
/// this warpgroup's rows of A and columns of B, after the consumers'
/// in-place work on them (k_grouped's K entries of other groups cleared,
/// tf32 transposes), which ggk ops state and ggk-prepare-operands lowers.
/// `clear`: false where the caller cleared the stage once for its K block.
std::pair<Value, Value> KernelGenerator::stageTiles(const Tile &t, Value kBlock,
                                                    Value stage,
                                                    const Fragment &f,
                                                    Value rowOffset, bool clear) {
  Value aTile = b.gep(stageA(stage), rowOffset);
  Value bTile = stageB(stage);
  if (clear && p.layout == GroupLayout::k_grouped)
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
