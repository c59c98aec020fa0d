//===- LowerSelectExperts.cpp - gg-lower-select-experts -------------------===//
//
// gg.select_experts as one kernel: a warp a token, each lane the logits of
// every 32nd expert. The row's largest logit, the groups' ranks, and K
// times the best expert not yet chosen, come from butterfly shuffles, so
// every lane agrees on each winner without shared memory or a barrier.
// Experts compare by an integer key (the ranking value's order as a
// float, then the lower expert on equal values), a strict order in which
// every lane's reduction ends on the same winner.
// gg.select_experts_backward's kernel gives the renormalised weights'
// gradient to the logits, a warp a token too.
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
  bool sigmoid = false, bias = false;
  int64_t groups = 1, keptGroups = 1;
  double scaling = 1.0;
};

/// The bits of an f32 as an i32 that orders as the floats do (a negative
/// float's magnitude bits flipped).
Value orderedKey(KernelBuilder &b, Value value) {
  Value bits = b.create<arith::BitcastOp>(b.i32(), value);
  Value sign = b.create<arith::ShRSIOp>(bits, b.c32(31));
  return b.xorI(bits, b.andI(sign, b.c32(0x7fffffff)));
}

/// One expert on offer: its key, its index and its score (what weights
/// it).
struct Candidate {
  Value key, expert, score;
};

/// The better of two candidates: the larger key, on equal keys the lower
/// expert.
Candidate better(KernelBuilder &b, Candidate x, Candidate y) {
  Value larger = b.create<arith::CmpIOp>(arith::CmpIPredicate::sgt, x.key, y.key);
  Value lower = b.andI(b.eq(x.key, y.key), b.lt(x.expert, y.expert));
  Value wins = b.create<arith::OrIOp>(larger, lower);
  return {b.select(wins, x.key, y.key), b.select(wins, x.expert, y.expert),
          b.select(wins, x.score, y.score)};
}

/// The warp's best candidate, in every lane.
Candidate warpBest(KernelBuilder &b, Candidate mine) {
  for (int64_t lanes = 16; lanes >= 1; lanes /= 2) {
    Candidate theirs{b.create<ggk::WarpShuffleXorOp>(b.i32(), mine.key, lanes),
                     b.create<ggk::WarpShuffleXorOp>(b.i32(), mine.expert, lanes),
                     shuffleXorF32(b, mine.score, lanes)};
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

/// One lane's experts lane + 32 i: logit (f32), score, the value that
/// ranks it, its candidate's key (kTakenKey past E) and expert
/// (kTakenExpert past E).
struct LaneExperts {
  SmallVector<Value> logits, scores, choices, keys, experts, inRange;
};

LaneExperts loadLogits(KernelBuilder &b, const Shape &s, Value logits, Value token,
                       Value lane) {
  LaneExperts l;
  Value rowStart = b.mul(token, b.c64(s.experts));
  for (int64_t slot = 0; slot * kLanes < s.experts; ++slot) {
    Value expert = b.add(lane, b.c32(slot * kLanes));
    Value inRange = b.lt(expert, b.c32(s.experts));
    // A slot past E reads the row's last logit and offers nothing.
    Value column = b.minS(expert, b.c32(s.experts - 1));
    Value raw = load(b, s.logit, logits, b.add(rowStart, b.toI64(column)));
    l.logits.push_back(s.logit.isF32() ? raw : b.create<arith::ExtFOp>(b.f32(), raw));
    l.experts.push_back(expert);
    l.inRange.push_back(inRange);
  }
  return l;
}

/// Each slot's score: exp(l - largest) (softmax; and the row's sum of
/// them, where needed) or sigmoid(l).
Value scoreExperts(KernelBuilder &b, const Shape &s, LaneExperts &l) {
  if (s.sigmoid) {
    for (Value logit : l.logits)
      l.scores.push_back(ggc::sigmoid(b, logit));
    return Value();
  }
  Value largest = l.logits[0];
  for (auto [logit, inRange] : llvm::zip(l.logits, l.inRange))
    largest = b.create<arith::MaximumFOp>(largest, b.select(inRange, logit, largest));
  largest = warpMax(b, largest);
  Value sum = b.f32c(0.0);
  for (auto [logit, inRange] : llvm::zip(l.logits, l.inRange)) {
    Value e = ggc::exp(b, b.create<arith::SubFOp>(logit, largest));
    l.scores.push_back(e);
    sum = b.create<arith::AddFOp>(sum, b.select(inRange, e, b.f32c(0.0)));
  }
  return (s.renormalize && !s.bias) ? Value() : warpSum(b, sum);
}

/// Each slot's ranking value: score (softmax's normalised) plus bias
/// with a bias, else the logit (the scores' order, exactly); and its
/// candidate's key and expert.
void rankExperts(KernelBuilder &b, const Shape &s, LaneExperts &l, Value bias, Value rowSum) {
  for (size_t slot = 0; slot < l.logits.size(); ++slot) {
    Value choice = l.logits[slot];
    if (s.bias) {
      Value score = s.sigmoid ? l.scores[slot]
                              : b.create<arith::DivFOp>(l.scores[slot], rowSum);
      Value column = b.minS(l.experts[slot], b.c32(s.experts - 1));
      choice = b.create<arith::AddFOp>(score, load(b, b.f32(), bias, column));
    }
    l.choices.push_back(choice);
    l.keys.push_back(b.select(l.inRange[slot], orderedKey(b, choice), b.c32(kTakenKey)));
    l.experts[slot] = b.select(l.inRange[slot], l.experts[slot], b.c32(kTakenExpert));
  }
}

/// A group's rank: its best ranking value, or with a bias the sum of its
/// two best, in every lane.
Value groupRank(KernelBuilder &b, const Shape &s, const LaneExperts &l, Value lane,
                int64_t group) {
  Value lowest = b.f32c(-std::numeric_limits<float>::infinity());
  Value first = lowest, second = lowest;
  int64_t size = s.experts / s.groups;
  for (size_t slot = 0; slot < l.choices.size(); ++slot) {
    // Slot i holds experts [32 i, 32 i + 32): only the groups it meets.
    int64_t slotStart = int64_t(slot) * kLanes;
    if (slotStart >= (group + 1) * size || slotStart + kLanes <= group * size)
      continue;
    Value expert = b.add(lane, b.c32(slotStart));
    Value inGroup = b.andI(l.inRange[slot], b.eq(b.divU(expert, b.c32(size)), b.c32(group)));
    Value v = b.select(inGroup, l.choices[slot], lowest);
    Value above = b.create<arith::CmpFOp>(arith::CmpFPredicate::OGT, v, first);
    second = b.select(above, first, b.create<arith::MaximumFOp>(second, v));
    first = b.select(above, v, first);
  }
  for (int64_t lanes = 16; lanes >= 1; lanes /= 2) {
    Value theirFirst = shuffleXorF32(b, first, lanes);
    if (s.bias) {
      Value theirSecond = shuffleXorF32(b, second, lanes);
      Value mineAbove = b.create<arith::CmpFOp>(arith::CmpFPredicate::OGE, first, theirFirst);
      second = b.select(mineAbove, b.create<arith::MaximumFOp>(second, theirFirst),
                        b.create<arith::MaximumFOp>(first, theirSecond));
    }
    first = b.create<arith::MaximumFOp>(first, theirFirst);
  }
  return s.bias ? b.create<arith::AddFOp>(first, second) : first;
}

/// With groups: the kept groups' mask (the best `keptGroups` ranks, equal
/// ranks the lower group), the same in every lane; a slot outside them
/// offers nothing.
void keepBestGroups(KernelBuilder &b, const Shape &s, LaneExperts &l, Value lane) {
  if (s.groups == 1)
    return;
  SmallVector<Value> ranks;
  for (int64_t g = 0; g < s.groups; ++g)
    ranks.push_back(groupRank(b, s, l, lane, g));
  Value kept = b.c32(0);
  for (int64_t round = 0; round < s.keptGroups; ++round) {
    Value best = b.c32(s.groups), bestRank = b.f32c(0.0);
    for (int64_t g = 0; g < s.groups; ++g) {
      // Group 31's bit as the i32 it is (INT32_MIN), not 2^31.
      Value bit = b.c32(int32_t(uint32_t(1) << g));
      Value free = b.eq(b.andI(kept, bit), b.c32(0));
      Value none = b.eq(best, b.c32(s.groups));
      Value above = b.create<arith::CmpFOp>(arith::CmpFPredicate::OGT, ranks[g], bestRank);
      Value take = b.andI(free, b.create<arith::OrIOp>(none, above));
      best = b.select(take, b.c32(g), best);
      bestRank = b.select(take, ranks[g], bestRank);
    }
    kept = b.create<arith::OrIOp>(kept, b.create<arith::ShLIOp>(b.c32(1), best));
  }
  int64_t size = s.experts / s.groups;
  for (size_t slot = 0; slot < l.keys.size(); ++slot) {
    Value expert = b.add(lane, b.c32(int64_t(slot) * kLanes));
    Value group = b.minS(b.divU(expert, b.c32(size)), b.c32(s.groups - 1));
    Value bit = b.andI(b.create<arith::ShRUIOp>(kept, group), b.c32(1));
    Value out = b.eq(bit, b.c32(0));
    l.keys[slot] = b.select(out, b.c32(kTakenKey), l.keys[slot]);
    l.experts[slot] = b.select(out, b.c32(kTakenExpert), l.experts[slot]);
  }
}

/// What lane j keeps of round j: the chosen expert and its score; and the
/// chosen scores' sum in round order.
struct Chosen {
  Value expert, score, sum;
};

/// K rounds, each choosing the best expert not yet chosen.
Chosen chooseExperts(KernelBuilder &b, const Shape &s, LaneExperts &l, Value lane) {
  Chosen c{b.c32(0), b.f32c(0.0), b.f32c(0.0)};
  for (int64_t round = 0; round < s.topK; ++round) {
    Candidate best{l.keys[0], l.experts[0], l.scores[0]};
    for (size_t slot = 1; slot < l.keys.size(); ++slot)
      best = better(b, {l.keys[slot], l.experts[slot], l.scores[slot]}, best);
    best = warpBest(b, best);
    Value ownerLane = b.remU(best.expert, b.c32(kLanes));
    Value ownerSlot = b.divU(best.expert, b.c32(kLanes));
    Value owns = b.eq(lane, ownerLane);
    for (size_t slot = 0; slot < l.keys.size(); ++slot) {
      Value taken = b.andI(owns, b.eq(ownerSlot, b.c32(slot)));
      l.keys[slot] = b.select(taken, b.c32(kTakenKey), l.keys[slot]);
      l.experts[slot] = b.select(taken, b.c32(kTakenExpert), l.experts[slot]);
    }
    c.sum = b.create<arith::AddFOp>(c.sum, best.score);
    Value mine = b.eq(lane, b.c32(round));
    c.expert = b.select(mine, best.expert, c.expert);
    c.score = b.select(mine, best.score, c.score);
  }
  return c;
}

/// Lane j's weight: its score over the chosen ones' sum (renormalised),
/// the row's (softmax) or one (sigmoid), times the scaling.
Value chosenWeight(KernelBuilder &b, const Shape &s, const Chosen &c, Value rowSum) {
  Value weight = c.score;
  if (s.renormalize)
    weight = b.create<arith::DivFOp>(weight, c.sum);
  else if (!s.sigmoid)
    weight = b.create<arith::DivFOp>(weight, rowSum);
  if (s.scaling != 1.0)
    weight = b.create<arith::MulFOp>(weight, b.f32c(s.scaling));
  return weight;
}

void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name, const Shape &s) {
  Type global = b.ptr(ggc::kGlobal);
  SmallVector<Type> params{global, global, global, b.i64()};
  if (s.bias)
    params.insert(params.begin() + 1, global);
  ValueRange args = createKernel(b, module, name, s.threads, params);
  Value logits = args[0], bias = s.bias ? args[1] : Value();
  Value weights = args[s.bias ? 2 : 1], ids = args[s.bias ? 3 : 2];
  Value tokens = args[s.bias ? 4 : 3];
  Value tid = b.threadIdx();
  Value warp = b.warpUniform(b.divU(tid, b.c32(kLanes)));
  Value lane = b.remU(tid, b.c32(kLanes));
  gridStride(b, tokens, s.threads / kLanes, warp, [&](Value token) {
    LaneExperts l = loadLogits(b, s, logits, token, lane);
    Value rowSum = scoreExperts(b, s, l);
    rankExperts(b, s, l, bias, rowSum);
    keepBestGroups(b, s, l, lane);
    Chosen c = chooseExperts(b, s, l, lane);
    Value weight = chosenWeight(b, s, c, rowSum);
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
              shape.sigmoid = op.getSigmoid();
              shape.bias = bool(op.getBias());
              shape.groups = int64_t(op.getGroups());
              shape.keptGroups = int64_t(op.getTopkGroups().value_or(shape.groups));
              shape.scaling = op.getScaling().convertToDouble();
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
