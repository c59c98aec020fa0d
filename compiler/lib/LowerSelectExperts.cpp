//===- LowerSelectExperts.cpp - gg-lower-select-experts -------------------===//
//
// gg.select_experts as one kernel: a warp a token, each lane the logits of
// every 32nd expert. The row's largest logit, and K times the best expert
// not yet chosen, come from butterfly shuffles, so every lane agrees on
// each winner without shared memory or a barrier. Experts compare by an
// integer key (the logit's order as a float, then the lower expert on
// equal logits), a strict order in which every lane's reduction ends on
// the same winner. gg.select_experts_backward's kernel gives the
// renormalised weights' gradient to the logits, a warp a token too.
//
//===----------------------------------------------------------------------===//
#include "Activations.h"
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <limits>

namespace ggc {
#define GEN_PASS_DEF_LOWERSELECTEXPERTS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

constexpr int64_t kLanes = 32;
/// A chosen expert's key and index, or a lane's slot past E: below every
/// logit's key, and behind every expert on an equal key.
constexpr int64_t kTakenKey = std::numeric_limits<int32_t>::min();
constexpr int64_t kTakenExpert = std::numeric_limits<int32_t>::max();

struct Shape {
  Type logit;
  int64_t experts, topK, threads;
  bool renormalize;
};

/// The bits of an f32 as an i32 that orders as the floats do (a negative
/// float's magnitude bits flipped); the map is its own inverse.
Value orderedKey(KernelBuilder &b, Value bits) {
  Value sign = b.create<arith::ShRSIOp>(bits, b.c32(31));
  return b.xorI(bits, b.andI(sign, b.c32(0x7fffffff)));
}

/// One expert on offer: its key and its index.
struct Candidate {
  Value key, expert;
};

/// The better of two candidates: the larger key, on equal keys the lower
/// expert.
Candidate better(KernelBuilder &b, Candidate x, Candidate y) {
  Value larger = b.create<arith::CmpIOp>(arith::CmpIPredicate::sgt, x.key, y.key);
  Value lower = b.andI(b.eq(x.key, y.key), b.lt(x.expert, y.expert));
  Value wins = b.create<arith::OrIOp>(larger, lower);
  return {b.select(wins, x.key, y.key), b.select(wins, x.expert, y.expert)};
}

/// The warp's best candidate, in every lane.
Candidate warpBest(KernelBuilder &b, Candidate mine) {
  for (int64_t lanes = 16; lanes >= 1; lanes /= 2) {
    Candidate theirs{b.create<ggk::WarpShuffleXorOp>(b.i32(), mine.key, lanes),
                     b.create<ggk::WarpShuffleXorOp>(b.i32(), mine.expert, lanes)};
    mine = better(b, theirs, mine);
  }
  return mine;
}

/// The warp's largest of `value` (f32; NaN if any lane's is), in every lane.
Value warpMax(KernelBuilder &b, Value value) {
  for (int64_t lanes = 16; lanes >= 1; lanes /= 2)
    value = b.create<arith::MaximumFOp>(value, shuffleXorF32(b, value, lanes));
  return value;
}

/// One lane's logits of experts lane + 32 i: as f32, as keys (kTakenKey
/// past E) and their experts (kTakenExpert past E).
struct LaneLogits {
  SmallVector<Value> values, keys, experts, inRange;
};

LaneLogits loadLogits(KernelBuilder &b, const Shape &s, Value logits, Value token,
                      Value lane) {
  LaneLogits l;
  Value rowStart = b.mul(token, b.c64(s.experts));
  for (int64_t slot = 0; slot * kLanes < s.experts; ++slot) {
    Value expert = b.add(lane, b.c32(slot * kLanes));
    Value inRange = b.lt(expert, b.c32(s.experts));
    // A slot past E reads the row's last logit and offers nothing.
    Value column = b.minS(expert, b.c32(s.experts - 1));
    Value raw = load(b, s.logit, logits, b.add(rowStart, b.toI64(column)));
    Value value = s.logit.isF32() ? raw : b.create<arith::ExtFOp>(b.f32(), raw);
    Value key = orderedKey(b, b.create<arith::BitcastOp>(b.i32(), value));
    l.values.push_back(value);
    l.keys.push_back(b.select(inRange, key, b.c32(kTakenKey)));
    l.experts.push_back(b.select(inRange, expert, b.c32(kTakenExpert)));
    l.inRange.push_back(inRange);
  }
  return l;
}

/// The sum of exp(l - largest) over the row's E logits, in every lane.
Value rowSum(KernelBuilder &b, const LaneLogits &l, Value largest) {
  Value sum = b.f32c(0.0);
  for (auto [value, inRange] : llvm::zip(l.values, l.inRange)) {
    Value e = ggc::exp(b, b.create<arith::SubFOp>(value, largest));
    sum = b.create<arith::AddFOp>(sum, b.select(inRange, e, b.f32c(0.0)));
  }
  return warpSum(b, sum);
}

/// What lane j keeps of round j: the chosen expert and exp(l - largest);
/// and the chosen ones' sum in round order.
struct Chosen {
  Value expert, weight, sum;
};

/// K rounds, each choosing the best expert not yet chosen.
Chosen chooseExperts(KernelBuilder &b, const Shape &s, LaneLogits &l, Value lane,
                     Value largest) {
  Chosen c{b.c32(0), b.f32c(0.0), b.f32c(0.0)};
  for (int64_t round = 0; round < s.topK; ++round) {
    Candidate best{l.keys[0], l.experts[0]};
    for (size_t slot = 1; slot < l.keys.size(); ++slot)
      best = better(b, {l.keys[slot], l.experts[slot]}, best);
    best = warpBest(b, best);
    Value ownerLane = b.remU(best.expert, b.c32(kLanes));
    Value ownerSlot = b.divU(best.expert, b.c32(kLanes));
    Value owns = b.eq(lane, ownerLane);
    for (size_t slot = 0; slot < l.keys.size(); ++slot) {
      Value taken = b.andI(owns, b.eq(ownerSlot, b.c32(slot)));
      l.keys[slot] = b.select(taken, b.c32(kTakenKey), l.keys[slot]);
      l.experts[slot] = b.select(taken, b.c32(kTakenExpert), l.experts[slot]);
    }
    Value logit = b.create<arith::BitcastOp>(b.f32(), orderedKey(b, best.key));
    Value e = ggc::exp(b, b.create<arith::SubFOp>(logit, largest));
    c.sum = b.create<arith::AddFOp>(c.sum, e);
    Value mine = b.eq(lane, b.c32(round));
    c.expert = b.select(mine, best.expert, c.expert);
    c.weight = b.select(mine, e, c.weight);
  }
  return c;
}

void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name, const Shape &s) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(b, module, name, s.threads,
                                 {global, global, global, b.i64()});
  Value logits = args[0], weights = args[1], ids = args[2], tokens = args[3];
  Value tid = b.threadIdx();
  Value warp = b.warpUniform(b.divU(tid, b.c32(kLanes)));
  Value lane = b.remU(tid, b.c32(kLanes));
  gridStride(b, tokens, s.threads / kLanes, warp, [&](Value token) {
    LaneLogits l = loadLogits(b, s, logits, token, lane);
    Value largest = l.values[0];
    for (auto [value, inRange] : llvm::zip(l.values, l.inRange))
      largest = b.create<arith::MaximumFOp>(largest, b.select(inRange, value, largest));
    largest = warpMax(b, largest);
    Value total = s.renormalize ? Value() : rowSum(b, l, largest);
    Chosen c = chooseExperts(b, s, l, lane, largest);
    Value weight = b.create<arith::DivFOp>(c.weight, s.renormalize ? c.sum : total);
    ifThen(b, b.lt(lane, b.c32(s.topK)), [&] {
      Value at = b.add(b.mul(token, b.c64(s.topK)), b.toI64(lane));
      store(b, weight, weights, at);
      store(b, c.expert, ids, at);
    });
  });
}

/// The gradient of the renormalised weights: a warp a token, lane j < K
/// holding the j-th chosen expert's weight w, gradient g and id; the
/// row's zeros first, then (after the warp meets, so that they land
/// before) w * (g - sum of w * g) at each chosen expert.
void buildBackward(KernelBuilder &b, ModuleOp module, StringRef name, const Shape &s) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(b, module, name, s.threads,
                                 {global, global, global, global, b.i64()});
  Value weights = args[0], ids = args[1], grad = args[2], out = args[3];
  Value tokens = args[4];
  Value tid = b.threadIdx();
  Value warp = b.warpUniform(b.divU(tid, b.c32(kLanes)));
  Value lane = b.remU(tid, b.c32(kLanes));
  Value chooses = b.lt(lane, b.c32(s.topK));
  Value zero = b.create<arith::ConstantOp>(b.getFloatAttr(s.logit, 0.0));
  gridStride(b, tokens, s.threads / kLanes, warp, [&](Value token) {
    Value at = b.add(b.mul(token, b.c64(s.topK)),
                     b.toI64(b.minS(lane, b.c32(s.topK - 1))));
    Value w = load(b, b.f32(), weights, at), g = load(b, b.f32(), grad, at);
    Value expert = load(b, b.i32(), ids, at);
    Value mine = b.select(chooses, b.create<arith::MulFOp>(w, g), b.f32c(0.0));
    Value sum = warpSum(b, mine);
    Value d = b.create<arith::MulFOp>(w, b.create<arith::SubFOp>(g, sum));
    Value rowStart = b.mul(token, b.c64(s.experts));
    for (int64_t slot = 0; slot * kLanes < s.experts; ++slot) {
      Value column = b.add(lane, b.c32(slot * kLanes));
      ifThen(b, b.lt(column, b.c32(s.experts)),
             [&] { store(b, zero, out, b.add(rowStart, b.toI64(column))); });
    }
    b.warpSync();
    Value inRange = b.andI(b.ge(expert, b.c32(0)), b.lt(expert, b.c32(s.experts)));
    ifThen(b, b.andI(chooses, inRange), [&] {
      Value rounded = s.logit.isF32() ? d : b.create<arith::TruncFOp>(s.logit, d);
      store(b, rounded, out, b.add(rowStart, b.toI64(expert)));
    });
  });
}

struct LowerSelectExpertsPass
    : public ggc::impl::LowerSelectExpertsBase<LowerSelectExpertsPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::SelectExpertsOp>(
            getOperation(), "one kernel",
            [&](gg::SelectExpertsOp op, func::FuncOp func, KernelBuilder &b) {
              auto logits = cast<MemRefType>(op.getLogits().getType());
              auto weights = cast<MemRefType>(op.getWeights().getType());
              Shape shape{logits.getElementType(), logits.getDimSize(1),
                          weights.getDimSize(1), int64_t(op.getThreads()),
                          op.getRenormalize()};
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_select_experts").str(), shape);
              return success();
            })) ||
        failed(lowerEachFunction<gg::SelectExpertsBackwardOp>(
            getOperation(), "one kernel",
            [&](gg::SelectExpertsBackwardOp op, func::FuncOp func, KernelBuilder &b) {
              auto out = cast<MemRefType>(op.getOut().getType());
              auto weights = cast<MemRefType>(op.getWeights().getType());
              Shape shape{out.getElementType(), out.getDimSize(1), weights.getDimSize(1),
                          int64_t(op.getThreads()), /*renormalize=*/true};
              buildBackward(b, getOperation(),
                            (func.getSymName() + "_select_experts_backward").str(), shape);
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
