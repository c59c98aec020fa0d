//===- PipelinePromotion.cpp - ggk-pipeline-promotion -----------------------===//
//
// Two-level accumulation (DeepGEMM's promotion): each scale block's wgmma
// product lands in a fresh partial accumulator, which is scaled by the
// block's scales and added to the main f32 one. A ggk.promotion_loop states
// the steps of one scale block as regions (a K block has `promotions` of
// them: MX 1x32 has four); this pass orders them as the op's
// #gg.kernel_plan says. Serial: issue, wait, promote, scale block after
// scale block, the tensor core idle through every promotion. Pipelined:
// one scale block's promotion runs while the next one's wgmma does, the
// scale blocks in pairs so that no wgmma is pending across the loop's
// back edge (ptxas serialises every wgmma then: C7514). Where the promotion
// reads its stage (promote_reads_stage: B's per-column scales ride it), a
// stage goes back after its K block's last promotion instead of its last
// wgmma.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "RegionBodies.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

#include <functional>


namespace ggc {
#define GEN_PASS_DEF_PIPELINEPROMOTION
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

class Lowering {
public:
  explicit Lowering(ggk::PromotionLoopOp op)
      : op(op), b(op.getLoc(), op),
        scales(op.getPlan().getScales()), promotions(op.getPromotions()),
        promoteReadsStage(op.getPromoteReadsStage()) {
    for (int64_t j = 0; j < promotions; ++j)
      scaleBlockIndex.push_back(b.c32(j));
  }

  /// Fails where the plan's ring_stages = constant cannot be kept.
  LogicalResult serial();
  /// Fails where the plan's ring_stages = constant cannot be kept.
  LogicalResult pipelined();

private:
  /// Scale block `j` of K block `k`, whose stage is ring counter `it`'s
  /// (computed when needed: `ringCounter`), or, with constant stages, the
  /// stage and phase given (`fixedSlot`).
  struct ScaleBlock {
    Value k;
    int64_t j;
    std::function<Value()> ringCounter;
    std::optional<std::pair<Value, Value>> fixedSlot = std::nullopt;
  };
  /// The stage and phase of `s`'s K block.
  std::pair<Value, Value> slotOf(const ScaleBlock &s) {
    return s.fixedSlot ? *s.fixedSlot : ringSlot(s.ringCounter());
  }
  static ScaleBlock onStage(Value k, Value stage, Value phase) {
    return ScaleBlock{k, 0, nullptr, std::pair{stage, phase}};
  }
  /// Serial K block `k` on ring `stage` at `phase` on `acc`: each scale
  /// block issued, waited for and promoted in turn; with `overlapFirst`,
  /// the overlap step runs while the first one's wgmma does.
  Value serialBlock(Value acc, Value k, Value stage, Value phase,
                    bool overlapFirst);
  /// Whether the ring counter starts at a multiple of the stages: each
  /// tile's K blocks rounded up to whole turns of the ring, every tile then
  /// starts at stage 0.
  bool ringStartsAligned();
  /// Whether ring_stages = constant can be kept over `blocks` K blocks a
  /// tile (unknown: counted at run time): an aligned ring counter, and an
  /// 'await' region where a tile's last turn may be partial. Reports why
  /// not.
  LogicalResult checkRingTurns(std::optional<int64_t> blocks);
  /// The serial loop a turn of the ring at a time (ring_stages =
  /// constant) over a tile of `blocks` K blocks or none (unknown: a count
  /// that comes at run time, k_grouped's).
  void constantStageLoop(Value acc, Value counter,
                         std::optional<int64_t> blocks);
  /// One turn from ring counter `it` (a multiple of the stages) on `acc`:
  /// K blocks `first`, `first` + 1, ... on stages 0, 1, ...; from stage
  /// `alwaysBusy` on, a stage past the tile's `n` blocks is awaited and
  /// released empty. Returns the accumulator.
  Value constantStageTurn(Value acc, Value it, Value first, Value n,
                          int64_t alwaysBusy);
  void pipelinedBlocks();
  /// pipelinedBlocks with a constant stage for each K block (ring_stages =
  /// constant) over `blocks` K blocks, one scale block each.
  void pipelinedConstantStages(int64_t blocks);
  /// Issues the K blocks `first` + 1 .. `first` + `count` on the stages
  /// after `firstStage` (block `first`'s, in the turn of phase `phase`;
  /// past the last stage the next turn's, the phase flipped), each beside
  /// the promotion of the block before it, from `pending`, block `first`'s
  /// finished partial. Returns the accumulator and the last block's
  /// partial, finished.
  std::pair<Value, SmallVector<Value>>
  pipelinedTurn(Value acc, SmallVector<Value> pending, Value first,
                int64_t firstStage, Value zero, Value phase, int64_t count);
  /// The tile's K block count where it is known when compiling: a
  /// constant, or the enclosing tile loop's num_k_blocks field where the
  /// op's K is static (every layout but k_grouped, whose groups' K ranges
  /// come at run time).
  std::optional<int64_t> knownBlocks();
  void pipelinedScaleBlocks();
  /// Issues `s`'s wgmma; returns its partial, then its stage's scales
  /// when the stages carry them.
  SmallVector<Value> issueStep(const ScaleBlock &s);
  /// Waits until at most `pending` wgmma groups are in flight, `s`'s
  /// done, and gives its stage back after its K block's last scale block
  /// (unless the promotion reads the stage: promoteStep gives it back).
  void awaitStep(int64_t pending, const ScaleBlock &s);
  /// Adds `s`'s partial (`block`, from issueStep) to `acc`, pinned.
  Value promoteStep(Value acc, ValueRange block, const ScaleBlock &s);
  bool lastOfBlock(const ScaleBlock &s) const {
    return s.j == promotions - 1;
  }

  std::pair<Value, Value> ringSlot(Value it) {
    return b.ringSlot(it, op.getStages());
  }
  void prefetch(Value k) { ggc::cloneBody(op.getPrefetch(), {k}, b); }
  Value issue(Value k, int64_t j, Value stage, Value phase) {
    return ggc::cloneBody(op.getIssue(), {k, scaleBlockIndex[j], stage, phase},
                          b)[0];
  }
  SmallVector<Value> readScales(Value k, int64_t j, Value stage) {
    return ggc::cloneBody(op.getReadScales(), {k, scaleBlockIndex[j], stage},
                          b);
  }
  Value promote(Value acc, Value partial, Value k, int64_t j,
                ValueRange blockScales) {
    SmallVector<Value> args = {acc, partial, k, scaleBlockIndex[j]};
    args.append(blockScales.begin(), blockScales.end());
    return ggc::cloneBody(op.getPromote(), args, b)[0];
  }
  void endBlock(Value k) { ggc::cloneBody(op.getEndBlock(), {k}, b); }
  void release(Value stage) { ggc::cloneBody(op.getRelease(), {stage}, b); }
  void await(Value stage, Value phase) {
    ggc::cloneBody(op.getAwait(), {stage, phase}, b);
  }
  void finish(ValueRange results) {
    op.replaceAllUsesWith(results);
    op.erase();
  }

  ggk::PromotionLoopOp op;
  KernelBuilder b;
  gg::ScalePlacement scales;
  int64_t promotions;
  bool promoteReadsStage;
  /// The i32 constant j for scale block j of a K block.
  SmallVector<Value> scaleBlockIndex;
};

/// Block k + 1's slot scales are copied while block k computes. With
/// epilogue_blocks = 1 block 0 goes before the loop, the overlap step (the
/// previous tile's epilogue) beside its first wgmma; the tile then has at
/// least one K block (the caller guards it).
LogicalResult Lowering::serial() {
  int64_t stages = op.getStages();
  bool constantStages =
      op.getPlan().getRingStages() == gg::RingStages::constant;
  // gg-check-kernel-plan refuses the plans whose loops fail here (and
  // the plan's verifier those with epilogue_blocks other than 0).
  std::optional<int64_t> blocks = knownBlocks();
  if (constantStages && failed(checkRingTurns(blocks)))
    return failure();
  if (scales == gg::ScalePlacement::slots)
    prefetch(b.c32(0));
  ggc::cloneBody(op.getStart(), {}, b);
  Value acc = op.getAcc(), counter = op.getCounter(), first = b.c32(0);
  if (constantStages) {
    constantStageLoop(acc, counter, blocks);
    return success();
  }
  if (op.getPlan().getEpilogueBlocks() == 1) {
    auto [stage, phase] = ringSlot(counter);
    acc = serialBlock(acc, first, stage, phase, /*overlapFirst=*/true);
    counter = b.add(counter, b.c32(1));
    first = b.c32(1);
  }
  auto loop = b.create<scf::ForOp>(
      first, op.getNumKBlocks(), b.c32(1), ValueRange{acc, counter},
      [&](OpBuilder &, Location, Value k, ValueRange iter) {
        auto [stage, phase] = ringSlot(iter[1]);
        Value sum = serialBlock(iter[0], k, stage, phase,
                                /*overlapFirst=*/false);
        b.create<scf::YieldOp>(ValueRange{sum, b.add(iter[1], b.c32(1))});
      });
  finish(loop.getResults());
  return success();
}

void Lowering::constantStageLoop(Value acc, Value counter,
                                 std::optional<int64_t> blocks) {
  int64_t stages = op.getStages();
  // Whole turns; where the blocks are no whole number of turns, the loop
  // runs to the next multiple of the stages, and a turn's stages from
  // alwaysBusy on check whether they hold a block (only the last turn's
  // may not). A count known when compiling leaves its remainder busy in
  // every turn; one counted at run time, stage 0 alone (the loop runs no
  // turn past the tile's blocks). One copy of the turn: a second one for
  // the last turn made ptxas spill in clusters.
  int64_t alwaysBusy = blocks ? *blocks % stages : 1;
  Value n = op.getNumKBlocks();
  Value end = alwaysBusy == 0 ? n : b.mul(b.ceilDivU(n, stages), b.c32(stages));
  auto loop = b.create<scf::ForOp>(
      b.c32(0), end, b.c32(stages), ValueRange{acc, counter},
      [&](OpBuilder &, Location, Value k, ValueRange iter) {
        Value sum = constantStageTurn(iter[0], iter[1], k, n,
                                      alwaysBusy == 0 ? stages : alwaysBusy);
        b.create<scf::YieldOp>(ValueRange{sum, b.add(iter[1], b.c32(stages))});
      });
  finish(loop.getResults());
}

Value Lowering::constantStageTurn(Value acc, Value it, Value first, Value n,
                                  int64_t alwaysBusy) {
  int64_t stages = op.getStages();
  Value phase = b.ringPhase(it, stages);
  // The stages as constants added to a zero LLVM cannot see: their
  // addresses and descriptors are then computed in the loop, each a
  // constant from one value a turn (ggk-lower-mma peels them), rather than
  // hoisted out of it, one register each, which ptxas spilled.
  Value zero = b.create<ggk::OpaqueOp>(b.i32(), b.c32(0));
  for (int64_t s = 0; s < stages; ++s) {
    Value stage = b.add(zero, b.c32(s));
    Value block = b.add(first, b.c32(s));
    if (s < alwaysBusy) {
      acc = serialBlock(acc, block, stage, phase, /*overlapFirst=*/false);
      continue;
    }
    auto step = b.create<scf::IfOp>(
        b.lt(block, n),
        [&](OpBuilder &, Location) {
          b.create<scf::YieldOp>(serialBlock(acc, block, stage, phase,
                                             /*overlapFirst=*/false));
        },
        [&](OpBuilder &, Location) {
          await(stage, phase);
          release(stage);
          b.create<scf::YieldOp>(acc);
        });
    acc = step.getResult(0);
  }
  return acc;
}

LogicalResult Lowering::checkRingTurns(std::optional<int64_t> blocks) {
  int64_t stages = op.getStages();
  if (stages < 2 || !ringStartsAligned())
    return op.emitOpError()
           << "cannot give each K block a constant stage (ring_stages = "
              "constant): that takes a ring counter that starts each tile "
              "at stage 0 (a multiple of the "
           << stages << " stages)";
  if (!op.getAwait().empty())
    return success();
  if (!blocks)
    return op.emitOpError()
           << "may end a tile's K blocks, counted at run time, on empty "
              "stages of the ring (ring_stages = constant), which takes an "
              "'await' region";
  if (*blocks % stages != 0)
    return op.emitOpError()
           << "ends each tile's " << *blocks << " K blocks on "
           << stages - *blocks % stages
           << " empty stages of the ring (ring_stages = constant), which "
              "takes an 'await' region";
  return success();
}

bool Lowering::ringStartsAligned() {
  // Each tile moves the ring counter on by its K block count rounded up
  // to whole turns, busy or idle (gg-plan-kernel's ring_stages = constant:
  // the producer passes a partial last turn's stages on empty). With a
  // counter that starts at a multiple of the stages, every tile starts at
  // stage 0.
  int64_t stages = op.getStages();
  auto startsAligned = [&](Value counter) {
    std::optional<int64_t> start = getConstantIntValue(counter);
    return start && *start % stages == 0;
  };
  Value counter = op.getCounter();
  if (startsAligned(counter))
    return true;
  // The counter the tile loop carries from its initial value.
  auto loop = op->getParentOfType<ggk::ForeachTileOp>();
  auto carried = dyn_cast<BlockArgument>(counter);
  constexpr unsigned kFields = ggk::ForeachTileOp::kTileFields;
  return loop && carried && carried.getOwner() == &loop.getBody().front() &&
         carried.getArgNumber() >= kFields &&
         startsAligned(loop.getInits()[carried.getArgNumber() - kFields]);
}

Value Lowering::serialBlock(Value acc, Value k, Value stage, Value phase,
                           bool overlapFirst) {
  if (scales == gg::ScalePlacement::slots)
    prefetch(b.add(k, b.c32(1)));
  for (int64_t j = 0; j < promotions; ++j) {
    Value partial = issue(k, j, stage, phase);
    SmallVector<Value> blockScales = readScales(k, j, stage);
    if (overlapFirst && j == 0)
      ggc::cloneBody(op.getOverlap(), {}, b);
    b.create<ggk::MmaWaitOp>(0);
    bool last = j == promotions - 1;
    if (last && !promoteReadsStage)
      release(stage);
    acc = promote(acc, partial, k, j, blockScales);
    if (last && promoteReadsStage)
      release(stage);
  }
  endBlock(k);
  return acc;
}

SmallVector<Value> Lowering::issueStep(const ScaleBlock &s) {
  auto [stage, phase] = slotOf(s);
  SmallVector<Value> block = {issue(s.k, s.j, stage, phase)};
  if (scales == gg::ScalePlacement::stages)
    block.append(readScales(s.k, s.j, stage));
  return block;
}

void Lowering::awaitStep(int64_t pending, const ScaleBlock &s) {
  b.create<ggk::MmaWaitOp>(pending);
  if (lastOfBlock(s) && !promoteReadsStage)
    release(slotOf(s).first);
}

/// Slot scales run two K blocks ahead (block k's slots are refilled with
/// block k + 2's once its last scale block has read them, block k + 1's
/// being in use by then); scales in the stages were read at the issue and
/// are carried with the partial, and where the promotion reads the stage
/// too (B's columns) the stage goes back after the K block's last one.
Value Lowering::promoteStep(Value acc, ValueRange block, const ScaleBlock &s) {
  SmallVector<Value> blockScales;
  if (scales == gg::ScalePlacement::stages) {
    blockScales.assign(block.begin() + 1, block.end());
  } else {
    // From the slots: the stage is not read (and its index folds away).
    blockScales = readScales(s.k, s.j, slotOf(s).first);
    if (lastOfBlock(s))
      prefetch(b.add(s.k, b.c32(2)));
  }
  Value sum = promote(acc, block[0], s.k, s.j, blockScales);
  if (lastOfBlock(s) && promoteReadsStage)
    release(slotOf(s).first);
  if (lastOfBlock(s))
    endBlock(s.k);
  return b.create<ggk::AccPinOp>(sum.getType(), sum);
}

LogicalResult Lowering::pipelined() {
  bool constantStages =
      op.getPlan().getRingStages() == gg::RingStages::constant;
  std::optional<int64_t> blocks = knownBlocks();
  if (constantStages) {
    // The straight blocks before the loop and the last turn's empty
    // stages are counted when compiling.
    if (promotions != 1 || !blocks || *blocks < 1)
      return op.emitOpError()
             << "cannot pipeline the promotions over constant stages "
                "(ring_stages = constant): that takes one scale block a K "
                "block and every tile's K block count the same (at least 1), "
                "known when compiling";
    if (failed(checkRingTurns(blocks)))
      return failure();
  }
  if (scales != gg::ScalePlacement::stages) {
    prefetch(b.c32(0));
    prefetch(b.c32(1));
  }
  ggc::cloneBody(op.getStart(), {}, b);
  if (constantStages)
    pipelinedConstantStages(*blocks);
  else if (promotions == 1)
    pipelinedBlocks();
  else
    pipelinedScaleBlocks();
  return success();
}

std::optional<int64_t> Lowering::knownBlocks() {
  Value n = op.getNumKBlocks();
  if (std::optional<int64_t> constant = getConstantIntValue(n))
    return constant;
  auto loop = op->getParentOfType<ggk::ForeachTileOp>();
  // num_k_blocks, a field of the tile.
  constexpr unsigned kNumKBlocksField = ggk::ForeachTileOp::kNumKBlocksField;
  auto field = dyn_cast<BlockArgument>(n);
  if (!loop || loop.getLayout() == gg::GroupLayout::k_grouped || !field ||
      field.getOwner() != &loop.getBody().front() ||
      field.getArgNumber() != kNumKBlocksField ||
      int64_t(loop.getK()) <= 0)
    return std::nullopt;
  int64_t blockK = loop.getTile()[2];
  return (int64_t(loop.getK()) + blockK - 1) / blockK;
}

/// One scale block per K block: issue X(k); promote Y(k-1); issue Y(k+1);
/// wait for X; promote X(k); wait for Y. Block 0 (with epilogue_blocks = 2,
/// blocks 0 and 1: three accumulators live beside the overlap, as in a
/// pair) goes before the loop and an odd last block after it; the tile has
/// at least one K block.
void Lowering::pipelinedBlocks() {
  Value one = b.c32(1), two = b.c32(2);
  Value n = op.getNumKBlocks(), counter = op.getCounter();
  auto at = [](Value k, Value it) {
    return ScaleBlock{k, 0, [it] { return it; }};
  };
  // The block was issued at ring counter `it` - `age`.
  auto issuedBefore = [&](Value k, Value it, int64_t age) {
    return ScaleBlock{k, 0, [this, it, age] {
                        return age ? b.sub(it, b.c32(age)) : it;
                      }};
  };
  Value zero = b.c32(0);
  // Blocks issued before the overlap (the previous tile's deferred
  // epilogue): the plan's epilogue_blocks, where the tile is known to have
  // that many (a count known only at run time takes one).
  std::optional<int64_t> blocks = knownBlocks();
  int64_t ahead = op.getPlan().getEpilogueBlocks();
  if (!blocks || *blocks < ahead)
    ahead = 1;
  SmallVector<Value> first = issueStep(at(zero, counter));
  SmallVector<Value> second;
  if (ahead == 2)
    second = issueStep(at(one, b.add(counter, one)));
  ggc::cloneBody(op.getOverlap(), {}, b);
  Value acc = op.getAcc();
  if (ahead == 2) {
    awaitStep(1, at(zero, counter));
    acc = promoteStep(acc, first, at(zero, counter));
    awaitStep(0, at(one, b.add(counter, one)));
    first = second;
  } else {
    awaitStep(0, at(zero, counter));
  }
  // The main accumulator starts as `acc`; the last block issued before the
  // loop is promoted into it in the first pair (or after the loop when
  // no pair follows).
  Value aheadBlocks = b.c32(ahead);
  Value pairs = b.divU(b.sub(n, aheadBlocks), two);
  SmallVector<Value> initial = {acc, b.add(counter, aheadBlocks)};
  initial.append(first);
  auto pairLoop = b.create<scf::ForOp>(
      b.c32(0), pairs, one, initial,
      [&](OpBuilder &, Location, Value pair, ValueRange iter) {
        Value acc = iter[0], it = iter[1];
        ValueRange y = iter.drop_front(2);
        Value kx = b.add(b.mul(pair, two), aheadBlocks);
        Value ky = b.add(kx, one);
        SmallVector<Value> x = issueStep(at(kx, it));
        acc = promoteStep(acc, y, issuedBefore(b.sub(kx, one), it, 1));
        SmallVector<Value> nextY = issueStep(at(ky, b.add(it, one)));
        awaitStep(1, at(kx, it));
        acc = promoteStep(acc, x, issuedBefore(kx, it, 0));
        awaitStep(0, at(ky, b.add(it, one)));
        SmallVector<Value> next = {acc, b.add(it, two)};
        next.append(nextY);
        b.create<scf::YieldOp>(next);
      });
  Value sum = pairLoop.getResult(0);
  Value it = pairLoop.getResult(1);
  SmallVector<Value> y(pairLoop.getResults().drop_front(2));
  Value ky = b.add(b.mul(pairs, two), b.c32(ahead - 1)); // Y's block
  auto tail = b.create<scf::IfOp>(
      b.lt(b.add(ky, one), n),
      [&](OpBuilder &, Location) {
        Value kx = b.add(ky, one);
        SmallVector<Value> x = issueStep(at(kx, it));
        Value total = promoteStep(sum, y, issuedBefore(ky, it, 1));
        awaitStep(0, at(kx, it));
        total = promoteStep(total, x, issuedBefore(kx, it, 0));
        b.create<scf::YieldOp>(ValueRange{total, b.add(it, one)});
      },
      [&](OpBuilder &, Location) {
        b.create<scf::YieldOp>(ValueRange{
            promoteStep(sum, y, issuedBefore(ky, it, 1)), it});
      });
  finish(tail.getResults());
}

/// Block 0 goes before the loop, beside the overlap (epilogue_blocks = 1),
/// on stage 0, then the (N - 1) % S = r blocks that leave whole turns,
/// straight. Each loop step is a turn of the ring: S blocks on the stages
/// r + 1, r + 2, .. (mod S: the phase flips past stage S - 1), each issued
/// while the block before it is promoted, two wgmma groups at most in
/// flight and none across the back edge (ptxas serialises every wgmma
/// then: C7514). The last block's promotion follows the loop, then the
/// last turn's stages past block N - 1, awaited and released empty (the
/// producer passes them on). The straight blocks go before the loop, not
/// after it: after it, ptxas spilled the accumulators inside the loop.
void Lowering::pipelinedConstantStages(int64_t blocks) {
  int64_t stages = op.getStages();
  int64_t rest = (blocks - 1) % stages, turns = (blocks - 1) / stages;
  Value counter = op.getCounter();
  Value zero = b.create<ggk::OpaqueOp>(b.i32(), b.c32(0));
  Value phase = b.ringPhase(counter, stages);
  ScaleBlock block0 = onStage(b.c32(0), zero, phase);
  SmallVector<Value> pending = issueStep(block0);
  ggc::cloneBody(op.getOverlap(), {}, b);
  awaitStep(0, block0);
  Value acc = op.getAcc();
  if (rest > 0)
    std::tie(acc, pending) =
        pipelinedTurn(acc, pending, b.c32(0), 0, zero, phase, rest);
  SmallVector<Value> initial = {acc, counter};
  initial.append(pending);
  auto loop = b.create<scf::ForOp>(
      b.c32(rest), b.c32(rest + turns * stages), b.c32(stages), initial,
      [&](OpBuilder &, Location, Value first, ValueRange iter) {
        Value it = iter[1];
        Value turnZero = b.create<ggk::OpaqueOp>(b.i32(), b.c32(0));
        auto [sum, last] = pipelinedTurn(
            iter[0], SmallVector<Value>(iter.drop_front(2)), first, rest,
            turnZero, b.ringPhase(it, stages), stages);
        SmallVector<Value> next = {sum, b.add(it, b.c32(stages))};
        next.append(last);
        b.create<scf::YieldOp>(next);
      });
  acc = loop.getResult(0);
  Value it = loop.getResult(1);
  pending.assign(loop.getResults().begin() + 2, loop.getResults().end());
  Value lastZero = b.create<ggk::OpaqueOp>(b.i32(), b.c32(0));
  Value lastPhase = b.ringPhase(it, stages);
  acc = promoteStep(acc, pending,
                    onStage(b.c32(blocks - 1), b.add(lastZero, b.c32(rest)),
                            lastPhase));
  // The last turn's stages past the tile's blocks, passed on empty.
  for (int64_t s = rest + 1; s < stages; ++s) {
    Value stage = b.add(lastZero, b.c32(s));
    await(stage, lastPhase);
    release(stage);
  }
  finish({acc, b.add(counter, b.c32(llvm::alignTo(blocks, stages)))});
}

std::pair<Value, SmallVector<Value>>
Lowering::pipelinedTurn(Value acc, SmallVector<Value> pending, Value first,
                        int64_t firstStage, Value zero, Value phase,
                        int64_t count) {
  int64_t stages = op.getStages();
  // `pending`: block `first`'s partial, finished, on `firstStage` of the
  // turn whose phase is `phase`.
  ScaleBlock previous = onStage(first, b.add(zero, b.c32(firstStage)), phase);
  Value nextPhase;
  SmallVector<Value> inFlight;
  for (int64_t s = 1; s <= count; ++s) {
    int64_t stage = firstStage + s;
    if (stage >= stages && !nextPhase)
      nextPhase = b.xorI(phase, b.c32(1));
    ScaleBlock current =
        onStage(b.add(first, b.c32(s)), b.add(zero, b.c32(stage % stages)),
                stage < stages ? phase : nextPhase);
    SmallVector<Value> issued = issueStep(current);
    if (s > 1) {
      // The block before is done once at most this one is in flight.
      awaitStep(1, previous);
      pending = inFlight;
    }
    acc = promoteStep(acc, pending, previous);
    inFlight = issued;
    previous = current;
  }
  awaitStep(0, previous);
  return {acc, inFlight};
}

/// An even number P of scale blocks per K block (MX 1x32: four): scale
/// block (0, 0) goes before the loop; iteration k takes (k, 1) .. (k, P -
/// 1) and (k + 1, 0), P/2 pairs of issue X; promote the pending Y; issue
/// Y; wait for X; promote X; wait for Y, which is then pending. The last
/// K block's other P - 1 follow the loop, the last one alone.
void Lowering::pipelinedScaleBlocks() {
  Value one = b.c32(1);
  Value n = op.getNumKBlocks(), counter = op.getCounter();
  // Scale block `index` counted from (k, 0), whose ring counter is `it`.
  auto after = [&](Value k, Value it, int64_t index) {
    int64_t blocks = index / promotions;
    Value kb = blocks ? b.add(k, b.c32(blocks)) : k;
    return ScaleBlock{kb, index % promotions, [this, it, blocks] {
                        return blocks ? b.add(it, b.c32(blocks)) : it;
                      }};
  };
  // Runs scale blocks `from` .. `to` - 1 after (k, 0) in pairs (the last
  // alone when their count is odd) behind `pending`; returns the
  // accumulator and what stays pending (none after a lone one, which is
  // promoted).
  auto run = [&](Value acc, SmallVector<Value> pending, ScaleBlock previous,
                 Value k, Value it, int64_t from, int64_t to) {
    for (int64_t i = from; i < to; i += 2) {
      ScaleBlock x = after(k, it, i);
      SmallVector<Value> xBlock = issueStep(x);
      acc = promoteStep(acc, pending, previous);
      if (i + 1 == to) {
        awaitStep(0, x);
        return std::pair{promoteStep(acc, xBlock, x), SmallVector<Value>()};
      }
      ScaleBlock y = after(k, it, i + 1);
      pending = issueStep(y);
      awaitStep(1, x);
      acc = promoteStep(acc, xBlock, x);
      awaitStep(0, y);
      previous = y;
    }
    return std::pair{acc, pending};
  };
  ScaleBlock firstBlock = after(b.c32(0), counter, 0);
  SmallVector<Value> first = issueStep(firstBlock);
  ggc::cloneBody(op.getOverlap(), {}, b);
  awaitStep(0, firstBlock);
  SmallVector<Value> initial = {op.getAcc(), counter};
  initial.append(first);
  auto loop = b.create<scf::ForOp>(
      b.c32(0), b.sub(n, one), one, initial,
      [&](OpBuilder &, Location, Value k, ValueRange iter) {
        Value it = iter[1];
        auto [acc, pending] =
            run(iter[0], SmallVector<Value>(iter.drop_front(2)),
                after(k, it, 0), k, it, 1, promotions + 1);
        SmallVector<Value> next = {acc, b.add(it, one)};
        next.append(pending);
        b.create<scf::YieldOp>(next);
      });
  Value k = b.sub(n, one), it = loop.getResult(1);
  Value acc =
      run(loop.getResult(0), SmallVector<Value>(loop.getResults().drop_front(2)),
          after(k, it, 0), k, it, 1, promotions)
          .first;
  finish(ValueRange{acc, b.add(it, one)});
}

struct PipelinePromotionPass
    : public ggc::impl::PipelinePromotionBase<PipelinePromotionPass> {
  void runOnOperation() override {
    SmallVector<ggk::PromotionLoopOp> ops;
    getOperation().walk([&](ggk::PromotionLoopOp op) { ops.push_back(op); });
    for (ggk::PromotionLoopOp op : ops) {
      Lowering lowering(op);
      bool pipelined =
          op.getPlan().getPromotion() == gg::Promotion::pipelined;
      if (failed(pipelined ? lowering.pipelined() : lowering.serial()))
        return signalPassFailure();
    }
  }
};

} // namespace
