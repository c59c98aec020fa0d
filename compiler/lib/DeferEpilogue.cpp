//===- DeferEpilogue.cpp - ggk-defer-epilogue -----------------------------===//
//
// Where a consumer's end of a tile (ggk.tile_epilogue) runs. With a K
// loop whose plan overlaps (a promotion loop pipelined or serial with
// epilogue_blocks = 1; a one-level ggk.k_loop with epilogue_blocks = 1),
// two consumer warpgroups finish a tile together and the tensor core
// would idle through their epilogues: each tile's epilogue is deferred
// into the next tile, where it runs while that tile's first K block
// computes (the loop's `overlap` step). Without a
// producer (the plan's `producer = none`) the consumers copy a tile's
// first stages before its K loop: each tile's epilogue is deferred to just
// after the next tile's first copies are issued, so that their latency
// passes behind its stores. The loop over tiles then carries the finished
// tile (its fields, the words it carries and its accumulator; never a
// wgmma in flight) and the last one is stored after the loop. Otherwise
// the epilogue runs where it stands.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "RegionBodies.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

#include "mlir/IR/Dominance.h"

namespace ggc {
#define GEN_PASS_DEF_DEFEREPILOGUE
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// A copy of `end`'s body at `b`'s insertion point, on `fields` and `acc`.
void emitEpilogue(ggk::TileEpilogueOp end, ValueRange fields, Value acc,
                  OpBuilder &b) {
  SmallVector<Value> args(fields);
  args.push_back(acc);
  ggc::cloneBody(end.getBody(), args, b);
}

/// The epilogue of the tile a loop carries, when `pending` holds.
void finishPending(ggk::TileEpilogueOp end, Value pending, ValueRange fields,
                   Value acc, KernelBuilder &b) {
  b.create<scf::IfOp>(pending, [&](OpBuilder &, Location) {
    emitEpilogue(end, fields, acc, b);
    b.create<scf::YieldOp>();
  });
}

/// The tile's K loops whose plan runs the previous tile's epilogue beside
/// their first K blocks: pipelined promotion loops, serial ones with
/// `epilogue_blocks = 1`, and one-level k_loops with `epilogue_blocks = 1`
/// (a consumer's tile has one K loop).
SmallVector<Operation *> overlappingLoops(ggk::ForeachTileOp tiles) {
  SmallVector<Operation *> found;
  tiles.getBody().walk([&](Operation *op) {
    if (auto loop = dyn_cast<ggk::PromotionLoopOp>(op);
        loop && loop.getPlan().getEpilogueBlocks() > 0)
      found.push_back(loop);
    if (auto loop = dyn_cast<ggk::KLoopOp>(op);
        loop && loop.getEpilogueBlocks() > 0)
      found.push_back(loop);
  });
  return found;
}

/// The loop's step that runs beside its first K block.
Region &overlapStep(Operation *loop) {
  if (auto promotion = dyn_cast<ggk::PromotionLoopOp>(loop))
    return promotion.getOverlap();
  return cast<ggk::KLoopOp>(loop).getOverlap();
}

/// The body reads the tile only through its arguments: a value it takes
/// from above is defined outside the loop over tiles.
LogicalResult checkSelfContained(ggk::TileEpilogueOp end,
                                 ggk::ForeachTileOp tiles) {
  WalkResult walk = end.getBody().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!end.getBody().isAncestor(v.getParentRegion()) &&
          tiles.getBody().isAncestor(v.getParentRegion()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return end.emitOpError() << "reads a value of its tile's body other than "
                                "its operands; the deferred epilogue would "
                                "read the next tile's";
  return success();
}

/// Where the previous tile's epilogue runs in a tile's body: `place`
/// inserts its `finish` there (and may change the body around it).
using PlacePending = function_ref<void(KernelBuilder &b, Block *body,
                                       function_ref<void()> finish)>;

/// The overlapping loop stands in the work region of its tile's
/// ggk.warpgroup_tile, whose overlap step or idle path takes the previous
/// tile's epilogue.
LogicalResult checkOverlapStep(Operation *loop, ggk::ForeachTileOp tiles) {
  auto work = dyn_cast<ggk::WarpgroupTileOp>(loop->getParentOp());
  if (!work || loop->getParentRegion() != &work.getWork() ||
      work->getParentOp() != tiles.getOperation())
    return loop->emitOpError() << "must stand in the work region of a "
                                 "ggk.warpgroup_tile of its tile's body to "
                                 "take the previous tile's epilogue";
  return success();
}

/// The previous tile's epilogue in the loop's overlap step or on the idle
/// path: one of them runs in every tile. The overlapping K loop needs a K
/// block: a tile with none (an empty k_grouped group) takes the idle path,
/// which also finishes the pending epilogue, and its zero accumulator is
/// stored in turn. (At the body's start: the PTX of the consumer that had
/// this pass's work done in the generator, byte for byte.)
void inOverlapStep(Operation *loop, KernelBuilder &b, Block *body,
                   function_ref<void()> finish) {
  auto work = cast<ggk::WarpgroupTileOp>(loop->getParentOp());
  b.setInsertionPointToStart(body);
  Value numKBlocks = body->getArgument(ggk::ForeachTileOp::kNumKBlocksField);
  Value works = b.lt(b.c32(0), numKBlocks);
  if (Value given = work.getWorks()) {
    b.setInsertionPoint(work);
    works = b.create<arith::AndIOp>(works, given);
  }
  work.getWorksMutable().assign(works);
  b.setInsertionPoint(overlapStep(loop).front().getTerminator());
  finish();
  b.setInsertionPointToStart(&work.getIdle().front());
  finish();
}

/// Without a producer: the tile's ggk.warpgroup_tile, after which the
/// consumers' first copies of the tile stand, or null.
ggk::WarpgroupTileOp consumersCopyBefore(ggk::ForeachTileOp tiles) {
  auto roles = tiles->getParentOfType<ggk::WarpSpecializeOp>();
  if (!roles || roles.getPlan().getProducer() != gg::Producer::none)
    return {};
  auto works = tiles.getBodyBlock()->getOps<ggk::WarpgroupTileOp>();
  return llvm::hasSingleElement(works) ? *works.begin()
                                       : ggk::WarpgroupTileOp();
}

/// Runs each tile's epilogue in the next tile, where `place` puts it.
LogicalResult defer(ggk::ForeachTileOp tiles, ggk::TileEpilogueOp end,
                    PlacePending place) {
  if (failed(checkSelfContained(end, tiles)))
    return failure();
  auto accType = dyn_cast<ggk::AccType>(end.getAcc().getType());
  if (!accType)
    return end.emitOpError() << "carries its accumulator to the next tile, "
                                "which starts as zeros: it must be a "
                                "!ggk.acc, got "
                             << end.getAcc().getType();
  KernelBuilder b(tiles.getLoc(), tiles);
  // Nothing pending before the first tile.
  Value zeros = b.create<ggk::AccZeroOp>(accType);
  SmallVector<Value> inits(tiles.getInits());
  size_t carried = inits.size();
  inits.push_back(b.create<arith::ConstantIntOp>(b.getI1Type(), 0));
  // The tile's fields and the words it carries besides (tileEpilogue's).
  size_t fields = end.getFields().size();
  inits.append(fields, b.c32(0));
  inits.push_back(zeros);
  auto next = b.create<ggk::ForeachTileOp>(
      ValueRange(inits).getTypes(), tiles.getLayout(), tiles.getNFastest(),
      tiles.getZeroUngrouped(), tiles.getMBand(), tiles.getTile(), tiles.getNumGroups(), tiles.getM(),
      tiles.getN(), tiles.getK(), tiles.getCluster(), tiles.getKAlignment(),
      tiles.getGroupsType(), tiles.getGroups(), tiles.getSize(),
      tiles.getClusterRank(), tiles.getTable(), inits);
  next.getBody().takeBody(tiles.getBody());
  Block *body = next.getBodyBlock();
  for (Value v : ValueRange(inits).drop_front(carried))
    body->addArgument(v.getType(), tiles.getLoc());
  ValueRange state = body->getArguments().drop_front(
      ggk::ForeachTileOp::kTileFields + carried);
  Value pending = state[0], pendingAcc = state.back();
  ValueRange pendingFields = state.slice(1, fields);
  place(b, body, [&] {
    finishPending(end, pending, pendingFields, pendingAcc, b);
  });
  // This tile's end is the next one's pending epilogue.
  auto yield = cast<ggk::YieldOp>(body->getTerminator());
  b.setInsertionPoint(yield);
  SmallVector<Value> carry(yield.getValues());
  carry.push_back(b.create<arith::ConstantIntOp>(b.getI1Type(), 1));
  llvm::append_range(carry, end.getFields());
  carry.push_back(end.getAcc());
  yield.getValuesMutable().assign(carry);
  b.setInsertionPointAfter(next);
  ValueRange last = next.getResults().drop_front(carried);
  finishPending(end, last[0], last.slice(1, fields), last.back(), b);
  end.erase();
  tiles.replaceAllUsesWith(next.getResults().take_front(carried));
  tiles.erase();
  return success();
}

struct DeferEpiloguePass
    : public ggc::impl::DeferEpilogueBase<DeferEpiloguePass> {
  void runOnOperation() override {
    SmallVector<ggk::TileEpilogueOp> ends;
    getOperation().walk([&](ggk::TileEpilogueOp end) { ends.push_back(end); });
    for (ggk::TileEpilogueOp end : ends) {
      auto tiles = dyn_cast<ggk::ForeachTileOp>(end->getParentOp());
      if (!tiles) {
        end.emitOpError() << "must stand in a ggk.foreach_tile's body: it "
                             "ends one of its tiles";
        return signalPassFailure();
      }
      SmallVector<Operation *> loops = overlappingLoops(tiles);
      size_t ends = llvm::count_if(tiles.getBodyBlock()->getOperations(),
                                   llvm::IsaPred<ggk::TileEpilogueOp>);
      if (!loops.empty() && (loops.size() > 1 || ends > 1)) {
        tiles.emitOpError() << "has " << loops.size()
                            << " overlapping K loops and " << ends
                            << " tile epilogues; a deferred epilogue needs "
                               "one of each per tile";
        return signalPassFailure();
      }
      if (!loops.empty()) {
        if (failed(checkOverlapStep(loops.front(), tiles)) ||
            failed(defer(tiles, end, [&](KernelBuilder &b, Block *body,
                                         function_ref<void()> finish) {
              inOverlapStep(loops.front(), b, body, finish);
            })))
          return signalPassFailure();
        continue;
      }
      if (auto work = consumersCopyBefore(tiles)) {
        if (failed(defer(tiles, end, [&](KernelBuilder &b, Block *,
                                         function_ref<void()> finish) {
              b.setInsertionPoint(work);
              finish();
            })))
          return signalPassFailure();
        continue;
      }
      OpBuilder b(end);
      emitEpilogue(end, end.getFields(), end.getAcc(), b);
      end.erase();
    }
  }
};

} // namespace
