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

namespace {

NVVM::WGMMATypes wgmmaType(Type t) {
  if (t.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (t.isF16())
    return NVVM::WGMMATypes::f16;
  if (t.isF32())
    return NVVM::WGMMATypes::tf32;
  if (isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  return NVVM::WGMMATypes::e5m2;
}

} // namespace

namespace ggc {

/// Issues the wgmma instructions of one K block on the stage's tiles. With
/// `fresh`, the first K step overwrites the accumulator instead of adding.
Value KernelGenerator::issueWgmmas(Value acc, Value aTile, Value bTile,
                                   bool fresh, int64_t firstStep,
                                   int64_t numSteps) {
  MLIRContext *ctx = b.getContext();
  NVVM::WGMMATypes typeA = wgmmaType(p.aElem), typeB = wgmmaType(p.bElem);
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, p.warpgroupN, p.kPerStep());
  if (numSteps < 0)
    numSteps = p.kSteps();
  // K-major tiles move 32 bytes along the swizzled 128-byte rows per K
  // step; MN-major tiles move 16 rows of 128 bytes, and their 64-wide MN
  // chunks lie BK rows apart.
  bool bNMajor = p.bMNMajor && !p.smem.transposesB;
  int64_t aStepBytes = p.aReadMNMajor() ? 16 * kSwizzleBytes : 32;
  int64_t bStepBytes = bNMajor ? 16 * kSwizzleBytes : 32;
  Value tileDescA =
      b.wgmmaDescriptor(aTile, p.aReadMNMajor() ? p.blockK * kSwizzleBytes : 16,
                        1024);
  Value tileDescB =
      b.wgmmaDescriptor(bTile, bNMajor ? p.blockK * kSwizzleBytes : 16, 1024);
  for (int64_t s = firstStep; s < firstStep + numSteps; ++s) {
    // A K step's descriptor is its tile's plus the step's offset in the
    // start-address field (bytes / 16, bits 0-13), which no address in
    // shared memory overflows: one descriptor computation per tile, not
    // per step (they were a third of the K loop's instructions).
    Value descA = b.add(tileDescA, b.c64(s * aStepBytes / 16));
    Value descB = b.add(tileDescB, b.c64(s * bStepBytes / 16));
    acc = b.create<NVVM::WgmmaMmaAsyncOp>(
        accType, acc, descA, descB, shape, typeA, typeB, NVVM::WGMMATypes::f32,
        fresh && s == firstStep ? NVVM::WGMMAScaleOut::zero
                                : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        p.aReadMNMajor() ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        bNMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        NVVM::MMAIntOverflowAttr());
  }
  return acc;
}

Value KernelGenerator::zeroAccumulator() {
  Value acc = b.create<LLVM::UndefOp>(accType);
  Value zero = b.f32c(0.0);
  for (int64_t i = 0; i < p.warpgroupN / 2; ++i)
    acc = b.create<LLVM::InsertValueOp>(acc, zero, i);
  return acc;
}

KernelGenerator::Fragment KernelGenerator::fragment(Value consumerIndex) {
  // wgmma m64nNk16 accumulator fragment: thread `lane` of warp `w` holds rows
  // w*16 + lane/4 (+8) and column pairs 8*c + 2*(lane%4), at register index
  // 4*c + 2*half + j.
  Value tid = b.remU(b.threadIdx(), b.c32(kWarpgroupThreads));
  Value warp = b.warpUniform(b.divU(tid, b.c32(32)));
  Value lane = b.remU(tid, b.c32(32));
  Fragment f;
  Value rowBlock = b.divU(consumerIndex, b.c32(p.splitN));
  f.colBase = b.mul(b.remU(consumerIndex, b.c32(p.splitN)), b.c32(p.warpgroupN));
  f.lane = lane;
  f.warpRow = b.add(b.mul(rowBlock, b.c32(64)), b.mul(warp, b.c32(16)));
  f.row = b.add(f.warpRow, b.divU(lane, b.c32(4)));
  f.col = b.add(f.colBase, b.mul(b.remU(lane, b.c32(4)), b.c32(2)));
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
  if (p.pipelinedPromotion)
    return emitPipelinedConsumer(consumerIndex, f, rowOffset);

  forEachTile([&](const Tile &t, Value counter) -> Value {
    Value acc = zeroAccumulator();
    SmallVector<Value> done = warpgroupTile(
        t, consumerIndex, /*works=*/Value(),
        [&] {
          auto [result, end] = emitMainLoop(t, counter, acc, consumerIndex, f,
                                            rowOffset);
          return SmallVector<Value>{result, end};
        },
        [&] { return SmallVector<Value>{acc, emitIdleLoop(t, counter)}; });
    // The epilogue keeps every consumer at the staged store's barriers; an
    // idle one's rows are never stored.
    emitEpilogue(t, f, done[0]);
    return done[1];
  });
}

SmallVector<Value> KernelGenerator::warpgroupTile(
    const Tile &t, Value consumerIndex, Value works,
    function_ref<SmallVector<Value>()> work,
    function_ref<SmallVector<Value>()> idle) {
  // Consumer i works on rows [64 r, 64 r + 64), r = i / split_n.
  Value firstRow =
      b.mul(b.divU(consumerIndex, b.c32(p.splitN)), b.c32(64));
  auto op = b.create<ggk::WarpgroupTileOp>(
      TypeRange{accType, b.i32()}, firstRow, t.rowsValid, works, p.padding);
  for (auto [region, body] : {std::pair{&op.getWork(), work},
                              std::pair{&op.getIdle(), idle}}) {
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(region);
    b.create<ggk::YieldOp>(body());
  }
  return SmallVector<Value>(op.getResults());
}

/// The consumer of a pipelined-promotion kernel: each tile's epilogue is
/// deferred into the next tile, where it runs while that tile's first K
/// block computes; the tensor core would otherwise idle through every
/// epilogue (two consumer warpgroups finish a tile together). The loop
/// over tiles carries the finished tile (its fields and accumulator), never
/// a wgmma in flight.
void KernelGenerator::emitPipelinedConsumer(Value consumerIndex,
                                            const Fragment &f,
                                            Value rowOffset) {
  Value zeroAcc = zeroAccumulator();
  // State: counter, whether a tile is pending, its fields, its accumulator.
  Tile none;
  none.group = none.mBlock = none.nBlock = none.rowStart = none.groupStart =
      none.rowsValid = none.kStart = none.kFirst = none.kEnd =
          none.numKBlocks = b.c32(0);
  SmallVector<Value> initial = {b.c32(0), b.create<arith::ConstantIntOp>(
                                              b.getI1Type(), 0)};
  SmallVector<Value> noFields = tileValues(none);
  llvm::append_range(initial, noFields);
  initial.push_back(zeroAcc);
  auto pendingTile = [&, fields = noFields.size()](ValueRange state) {
    return tileFromValues(state.slice(2, fields));
  };
  auto finishPending = [&](ValueRange state) {
    b.create<scf::IfOp>(state[1], [&](OpBuilder &, Location) {
      emitEpilogue(pendingTile(state), f, state.back());
      b.create<scf::YieldOp>();
    });
  };
  SmallVector<Value> last = forEachTile(
      initial, [&](const Tile &t, ValueRange state) -> SmallVector<Value> {
        Value counter = state[0];
        // The pipelined main loop needs a K block: a tile with none (an
        // empty k_grouped group) takes the idle path, and its deferred
        // epilogue stores the zero accumulator.
        Value works = b.lt(b.c32(0), t.numKBlocks);
        SmallVector<Value> tile = warpgroupTile(
            t, consumerIndex, works,
            [&] {
              auto [acc, end] = emitPipelinedMainLoop(
                  t, counter, consumerIndex, f, rowOffset,
                  [&] { finishPending(state); });
              return SmallVector<Value>{acc, end};
            },
            [&] {
              finishPending(state);
              return SmallVector<Value>{zeroAcc, emitIdleLoop(t, counter)};
            });
        SmallVector<Value> next = {tile[1],
                                   b.create<arith::ConstantIntOp>(
                                       b.getI1Type(), 1)};
        llvm::append_range(next, tileValues(t));
        next.push_back(tile[0]);
        return next;
      });
  finishPending(last);
}

/// Waits for each of the tile's K blocks and releases it unread: the
/// consumer's rows of the tile are all padding.
Value KernelGenerator::emitIdleLoop(const Tile &t, Value counter) {
  auto loop = b.create<scf::ForOp>(
      b.c32(0), t.numKBlocks, b.c32(1), ValueRange{counter},
      [&](OpBuilder &, Location, Value, ValueRange iter) {
        Value it = iter[0];
        auto [stage, phase] = ringSlot(it);
        b.mbarrierWait(fullBarrier(stage), phase);
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
  // Block scales are copied to this thread's slots one K block ahead
  // (issueScaleCopies), so their latency hides behind a whole block of
  // wgmma.
  bool hasSlots = p.scaleSlots.words() > 0;
  SmallVector<Value> initial = {acc, counter};
  // Per-column scales of B go through shared memory, one K block ahead:
  // block k reads buffer k % 2 while block k + 1's are published.
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
        // K block kBlock's scales, read while its wgmma runs (and, from
        // the stage, before it is released).
        auto blockScales = [&]() {
          return p.stageScales ? readStageScales(t, stage, f)
                               : readScales(kBlock, f);
        };
        b.mbarrierWait(fullBarrier(stage), phase);
        auto [aTile, bTile] = stageTiles(t, kBlock, stage, f, rowOffset);
        b.create<NVVM::WgmmaFenceAlignedOp>();
        if (p.mx) {
          acc = emitMxBlock(t, kBlock, stage, aTile, bTile, acc, f,
                            consumerIndex, blockScales);
        } else if (p.twoLevel()) {
          // The block's product lands in a fresh accumulator, which is
          // scaled and added to the main one in f32 once it is complete,
          // so a long K never accumulates in the tensor core's f8 path.
          Value partial = issueWgmmas(b.create<LLVM::UndefOp>(accType),
                                      aTile, bTile, /*fresh=*/true);
          b.create<NVVM::WgmmaGroupSyncAlignedOp>();
          BlockScales scales = blockScales();
          b.create<NVVM::WgmmaWaitGroupSyncOp>(0);
          releaseStage(stage);
          acc = promoteBlock(acc, partial, scales, t, f, consumerIndex, kBlock);
          if (p.columnScales)
            publishColumnScale(readColumnWord(nextBlock, f), consumerIndex,
                               b.remU(nextBlock, b.c32(2)), f,
                               scaleBlock(t, nextBlock));
        } else {
          // One wgmma batch stays in flight while the next is issued:
          // after committing block k, wait until only it is pending, so
          // block k-1's buffer can go back to the producer.
          acc = issueWgmmas(acc, aTile, bTile, /*fresh=*/false);
          b.create<NVVM::WgmmaGroupSyncAlignedOp>();
          b.create<NVVM::WgmmaWaitGroupSyncOp>(1);
          b.create<scf::IfOp>(
              b.ge(kBlock, b.c32(1)), [&](OpBuilder &, Location) {
                Value previous =
                    b.remU(b.add(it, b.c32(p.stages - 1)), b.c32(p.stages));
                releaseStage(previous);
                b.create<scf::YieldOp>();
              });
        }
        b.create<scf::YieldOp>(ValueRange{acc, b.add(it, b.c32(1))});
      });
  if (!p.twoLevel()) {
    b.create<NVVM::WgmmaWaitGroupSyncOp>(0);
    Value end = kLoop.getResult(1);
    b.create<scf::IfOp>(b.lt(counter, end), [&](OpBuilder &, Location) {
      Value last = b.remU(b.add(end, b.c32(p.stages - 1)), b.c32(p.stages));
      releaseStage(last);
      b.create<scf::YieldOp>();
    });
  }
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
    Value partial = issueWgmmas(b.create<LLVM::UndefOp>(accType),
                                aTile, bTile, /*fresh=*/true,
                                j * per, per);
    b.create<NVVM::WgmmaGroupSyncAlignedOp>();
    if (j == 0)
      scales = blockScales();
    b.create<NVVM::WgmmaWaitGroupSyncOp>(0);
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

/// Two-level accumulation in which each K block's promotion runs while the
/// next block's wgmma does: the serial loop leaves the tensor core idle
/// from a block's completion until the next block is issued (scales read,
/// 64 FMAs), so one warpgroup alone never keeps it busy.
///
/// Blocks go in pairs, each block of a pair into a fresh partial
/// accumulator of its own (X, then Y): issue X(k); promote Y(k-1); issue
/// Y(k+1); wait for X; promote X(k); wait for Y. The loop ends each pair with no wgmma in
/// flight: a wgmma pending across the loop's back edge makes ptxas
/// serialise every wgmma (C7514), it cannot tell which accumulator is
/// still being written. Block 0 goes before the loop, a last odd block
/// after it. The tile has at least one K block; `whileFirstBlockRuns`
/// emits work that overlaps block 0's wgmma (the previous tile's
/// epilogue).
///
/// Scale slots (issueScaleCopies) run two blocks ahead here: block k's
/// slots are refilled with block k + 2's words once they are read, since
/// block k + 1's are in use by then.
std::pair<Value, Value> KernelGenerator::emitPipelinedMainLoop(
    const Tile &t, Value counter, Value consumerIndex, const Fragment &f,
    Value rowOffset, function_ref<void()> whileFirstBlockRuns) {
  Value ownColumn =
      b.add(f.colBase, b.remU(b.threadIdx(), b.c32(kWarpgroupThreads)));
  Value undef = b.create<LLVM::UndefOp>(accType);
  // A K block in flight: its partial accumulator and, when the stages carry
  // them, its scales (read before the stage goes back to the producer), as
  // one list of values the pair loop can carry.
  auto issueBlock = [&](Value kBlock, Value it) {
    auto [stage, phase] = ringSlot(it);
    b.mbarrierWait(fullBarrier(stage), phase);
    SmallVector<Value> block;
    auto [aTile, bTile] = stageTiles(t, kBlock, stage, f, rowOffset);
    b.create<NVVM::WgmmaFenceAlignedOp>();
    block.push_back(issueWgmmas(undef, aTile, bTile, /*fresh=*/true));
    b.create<NVVM::WgmmaGroupSyncAlignedOp>();
    if (p.stageScales)
      block.append(readStageScales(t, stage, f).values());
    return block;
  };
  auto awaitBlocks = [&](int64_t pending, Value it) {
    b.create<NVVM::WgmmaWaitGroupSyncOp>(pending);
    releaseStage(ringSlot(it).first);
  };
  auto promote = [&](Value acc, ValueRange block, Value kBlock) {
    BlockScales scales;
    if (p.stageScales) {
      scales = BlockScales::fromValues(block.drop_front());
    } else {
      scales = readScales(kBlock, f);
      issueScaleCopies(t, b.add(kBlock, b.c32(2)), f, ownColumn);
    }
    return b.pinRegisters(
        promoteBlock(acc, block[0], scales, t, f, consumerIndex, kBlock));
  };
  Value one = b.c32(1), two = b.c32(2);
  Value n = t.numKBlocks;
  if (!p.stageScales) {
    issueScaleCopies(t, b.c32(0), f, ownColumn);
    issueScaleCopies(t, one, f, ownColumn);
  }
  SmallVector<Value> first = issueBlock(b.c32(0), counter);
  whileFirstBlockRuns();
  awaitBlocks(0, counter);
  // The main accumulator starts at zero; block 0's product is promoted
  // into it in the first pair (or after the loop when it is the only one).
  Value acc = zeroAccumulator();
  Value pairs = b.divU(b.sub(n, one), two);
  SmallVector<Value> initial = {acc, b.add(counter, one)};
  initial.append(first);
  auto pairLoop = b.create<scf::ForOp>(
      b.c32(0), pairs, one, initial,
      [&](OpBuilder &, Location, Value pair, ValueRange iter) {
        Value acc = iter[0], it = iter[1];
        ValueRange y = iter.drop_front(2);
        Value kx = b.add(b.mul(pair, two), one);
        Value ky = b.add(kx, one);
        SmallVector<Value> x = issueBlock(kx, it);
        acc = promote(acc, y, b.sub(kx, one));
        SmallVector<Value> nextY = issueBlock(ky, b.add(it, one));
        awaitBlocks(1, it);
        acc = promote(acc, x, kx);
        awaitBlocks(0, b.add(it, one));
        SmallVector<Value> next = {acc, b.add(it, two)};
        next.append(nextY);
        b.create<scf::YieldOp>(next);
      });
  acc = pairLoop.getResult(0);
  Value it = pairLoop.getResult(1);
  SmallVector<Value> y(pairLoop.getResults().drop_front(2));
  Value ky = b.mul(pairs, two); // Y's block
  auto tail = b.create<scf::IfOp>(
      b.lt(b.add(ky, one), n),
      [&](OpBuilder &, Location) {
        Value kx = b.add(ky, one);
        SmallVector<Value> x = issueBlock(kx, it);
        Value sum = promote(acc, y, ky);
        awaitBlocks(0, it);
        sum = promote(sum, x, kx);
        b.create<scf::YieldOp>(ValueRange{sum, b.add(it, one)});
      },
      [&](OpBuilder &, Location) {
        b.create<scf::YieldOp>(ValueRange{promote(acc, y, ky), it});
      });
  return {tail.getResult(0), tail.getResult(1)};
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
