//===- PipelinePromotion.cpp - ggk-pipeline-promotion -----------------------===//
//
// Two-level accumulation (DeepGEMM's promotion): each K block's wgmma
// product lands in a fresh partial accumulator, which is scaled by the
// block's scales and added to the main f32 one. A ggk.promotion_loop states
// the steps of one block as regions; this pass orders them as the op's
// #gg.kernel_plan says. Serial: issue, wait, promote, block after block,
// the tensor core idle through every promotion. Pipelined: block k's
// promotion runs while block k + 1's wgmma does, the blocks in pairs so
// that no wgmma is pending across the loop's back edge (ptxas serialises
// every wgmma then: C7514).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "RegionBodies.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"


namespace ggc {
#define GEN_PASS_DEF_PIPELINEPROMOTION
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

class Lowering {
public:
  Lowering(ggk::PromotionLoopOp op)
      : op(op), b(op.getLoc(), op),
        scales(op.getPlan().getScales()) {}

  void serial();
  void pipelined();

private:
  std::pair<Value, Value> ringSlot(Value it) {
    return b.ringSlot(it, op.getStages());
  }
  void prefetch(Value k) { ggc::cloneBody(op.getPrefetch(), {k}, b); }
  Value issue(Value k, Value stage, Value phase) {
    return ggc::cloneBody(op.getIssue(), {k, stage, phase}, b)[0];
  }
  SmallVector<Value> readScales(Value k, Value stage) {
    return ggc::cloneBody(op.getReadScales(), {k, stage}, b);
  }
  Value promote(Value acc, Value partial, Value k, ValueRange blockScales) {
    SmallVector<Value> args = {acc, partial, k};
    args.append(blockScales.begin(), blockScales.end());
    return ggc::cloneBody(op.getPromote(), args, b)[0];
  }
  void release(Value stage) { ggc::cloneBody(op.getRelease(), {stage}, b); }
  void finish(ValueRange results) {
    op.replaceAllUsesWith(results);
    op.erase();
  }

  ggk::PromotionLoopOp op;
  KernelBuilder b;
  gg::ScalePlacement scales;
};

/// Block k + 1's slot scales are copied while block k computes.
void Lowering::serial() {
  if (scales == gg::ScalePlacement::slots)
    prefetch(b.c32(0));
  ggc::cloneBody(op.getStart(), {}, b);
  auto loop = b.create<scf::ForOp>(
      b.c32(0), op.getNumKBlocks(), b.c32(1),
      ValueRange{op.getAcc(), op.getCounter()},
      [&](OpBuilder &, Location, Value k, ValueRange iter) {
        Value acc = iter[0], it = iter[1];
        auto [stage, phase] = ringSlot(it);
        if (scales == gg::ScalePlacement::slots)
          prefetch(b.add(k, b.c32(1)));
        Value partial = issue(k, stage, phase);
        SmallVector<Value> blockScales = readScales(k, stage);
        b.create<ggk::MmaWaitOp>(0);
        release(stage);
        acc = promote(acc, partial, k, blockScales);
        b.create<scf::YieldOp>(ValueRange{acc, b.add(it, b.c32(1))});
      });
  finish(loop.getResults());
}

/// issue X(k); promote Y(k-1); issue Y(k+1); wait for X; promote X(k); wait
/// for Y. Block 0 goes before the loop and an odd last block after it; the
/// tile has at least one K block. Slot scales run two blocks ahead (block
/// k's slots are refilled with block k + 2's once read, block k + 1's
/// being in use by then); scales in the stages are read at each issue,
/// before the stage goes back, and carried with the block's partial.
void Lowering::pipelined() {
  bool stageScales = scales == gg::ScalePlacement::stages;
  // A block in flight: its partial accumulator, then its stage's scales.
  auto issueBlock = [&](Value k, Value it) {
    auto [stage, phase] = ringSlot(it);
    SmallVector<Value> block = {issue(k, stage, phase)};
    if (stageScales)
      block.append(readScales(k, stage));
    return block;
  };
  auto awaitBlocks = [&](int64_t pending, Value it) {
    b.create<ggk::MmaWaitOp>(pending);
    release(ringSlot(it).first);
  };
  // The block was issued at ring counter `it` - `age`.
  auto promoteBlock = [&](Value acc, ValueRange block, Value k, Value it,
                          int64_t age) {
    SmallVector<Value> blockScales;
    if (stageScales) {
      blockScales.assign(block.begin() + 1, block.end());
    } else {
      // From the slots: the stage is not read (and its index folds away).
      blockScales =
          readScales(k, ringSlot(age ? b.sub(it, b.c32(age)) : it).first);
      prefetch(b.add(k, b.c32(2)));
    }
    Value sum = promote(acc, block[0], k, blockScales);
    return b.create<ggk::AccPinOp>(sum.getType(), sum);
  };
  Value one = b.c32(1), two = b.c32(2);
  Value n = op.getNumKBlocks(), counter = op.getCounter();
  if (!stageScales) {
    prefetch(b.c32(0));
    prefetch(one);
  }
  ggc::cloneBody(op.getStart(), {}, b);
  SmallVector<Value> first = issueBlock(b.c32(0), counter);
  ggc::cloneBody(op.getOverlap(), {}, b);
  awaitBlocks(0, counter);
  // The main accumulator starts as `acc`; block 0's product is promoted
  // into it in the first pair (or after the loop when it is the only one).
  Value pairs = b.divU(b.sub(n, one), two);
  SmallVector<Value> initial = {op.getAcc(), b.add(counter, one)};
  initial.append(first);
  auto pairLoop = b.create<scf::ForOp>(
      b.c32(0), pairs, one, initial,
      [&](OpBuilder &, Location, Value pair, ValueRange iter) {
        Value acc = iter[0], it = iter[1];
        ValueRange y = iter.drop_front(2);
        Value kx = b.add(b.mul(pair, two), one);
        Value ky = b.add(kx, one);
        SmallVector<Value> x = issueBlock(kx, it);
        acc = promoteBlock(acc, y, b.sub(kx, one), it, 1);
        SmallVector<Value> nextY = issueBlock(ky, b.add(it, one));
        awaitBlocks(1, it);
        acc = promoteBlock(acc, x, kx, it, 0);
        awaitBlocks(0, b.add(it, one));
        SmallVector<Value> next = {acc, b.add(it, two)};
        next.append(nextY);
        b.create<scf::YieldOp>(next);
      });
  Value acc = pairLoop.getResult(0);
  Value it = pairLoop.getResult(1);
  SmallVector<Value> y(pairLoop.getResults().drop_front(2));
  Value ky = b.mul(pairs, two); // Y's block
  auto tail = b.create<scf::IfOp>(
      b.lt(b.add(ky, one), n),
      [&](OpBuilder &, Location) {
        Value kx = b.add(ky, one);
        SmallVector<Value> x = issueBlock(kx, it);
        Value sum = promoteBlock(acc, y, ky, it, 1);
        awaitBlocks(0, it);
        sum = promoteBlock(sum, x, kx, it, 0);
        b.create<scf::YieldOp>(ValueRange{sum, b.add(it, one)});
      },
      [&](OpBuilder &, Location) {
        b.create<scf::YieldOp>(ValueRange{promoteBlock(acc, y, ky, it, 1), it});
      });
  finish(tail.getResults());
}

struct PipelinePromotionPass
    : public ggc::impl::PipelinePromotionBase<PipelinePromotionPass> {
  void runOnOperation() override {
    SmallVector<ggk::PromotionLoopOp> ops;
    getOperation().walk([&](ggk::PromotionLoopOp op) { ops.push_back(op); });
    for (ggk::PromotionLoopOp op : ops) {
      Lowering lowering(op);
      if (op.getPlan().getPromotion() == gg::Promotion::pipelined)
        lowering.pipelined();
      else
        lowering.serial();
    }
  }
};

} // namespace
