//===- LowerSortRoutes.cpp - gg-lower-sort-routes -------------------------===//
//
// gg.sort_routes as two kernels: `_count` counts each chunk's routes per
// expert, `_place` ranks every route and writes it to its sorted row. The
// sort is a counting sort: a route's row is the number of routes of lower
// experts, plus those of its expert in earlier chunks, plus those of its
// expert before it in its own chunk. Only integer counts are added
// atomically (their sum does not depend on the order); every rank comes
// from prefix sums, so the order is stable and the same on every run.
//
//===----------------------------------------------------------------------===//
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERSORTROUTES
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

/// One route a thread holds: its index, whether it exists, its clamped
/// expert (`experts` past the last route), whether its id was invalid,
/// and its weight (where the place kernel reads it).
struct Route {
  Value r, inRange, expert, invalid, weight;
};

/// What both kernels know of the op.
struct Routes {
  int64_t experts, topK, threads, chunk;
  Type idType;
  Value ids, routes; // the ids' pointer, the route count (i64)

  /// Route `r`'s expert clamped into [0, experts) (i32) and whether its id
  /// lay outside.
  std::pair<Value, Value> expertOf(KernelBuilder &b, Value r) const {
    Value id = b.toI64(load(b, idType, ids, r));
    Value clamped = b.clampS(id, b.c64(0), b.c64(experts - 1));
    return {b.toI32(clamped), b.ne(clamped, id)};
  }

  /// The first route of the CTA's chunk and of round `i` (i64), with this
  /// thread's.
  Value routeOf(KernelBuilder &b, Value chunkIdx, Value round, Value tid) const {
    Value first = b.mul(b.toI64(chunkIdx), b.c64(chunk));
    Value inRound = b.add(b.mul(round, b.c32(threads)), tid);
    return b.add(first, b.toI64(inRound));
  }

  /// This thread's routes of the chunk, one a round, read before any is
  /// used so that their loads overlap (and, in the place kernel, overlap
  /// the sums and the scan).
  SmallVector<Route> loadChunk(KernelBuilder &b, Value chunkIdx,
                                      Value tid, Value weights) const;

  /// hist[e] = the routes of the chunk with expert e; every thread meets
  /// after it.
  void countChunk(KernelBuilder &b, Value hist, ArrayRef<Route> mine,
                  Value tid) const;
};

SmallVector<Route> Routes::loadChunk(KernelBuilder &b, Value chunkIdx,
                                     Value tid, Value weights) const {
  SmallVector<Route> mine;
  Value last = b.sub(routes, b.c64(1));
  for (int64_t i = 0; i < chunk / threads; ++i) {
    Route route;
    route.r = routeOf(b, chunkIdx, b.c32(i), tid);
    route.inRange = b.lt(route.r, routes);
    Value readable = b.minS(route.r, last);
    auto [clamped, invalid] = expertOf(b, readable);
    // Lanes past the last route match one another on expert E.
    route.expert = b.select(route.inRange, clamped, b.c32(experts));
    route.invalid = invalid;
    if (weights)
      route.weight = load(b, b.f32(), weights, readable);
    mine.push_back(route);
  }
  return mine;
}

void Routes::countChunk(KernelBuilder &b, Value hist, ArrayRef<Route> mine,
                        Value tid) const {
  forEach(b, tid, b.c32(experts), b.c32(threads),
          [&](Value e) { store(b, b.c32(0), hist, e); });
  syncCta(b);
  for (const Route &route : mine)
    ifThen(b, route.inRange,
           [&] { atomicAdd(b, hist, route.expert, b.c32(1)); });
  syncCta(b);
}

/// `_count(ids, M, chunk_counts)`: chunk_counts[chunk * E + e].
void buildCount(KernelBuilder &b, ModuleOp module, StringRef name,
                Routes routes) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(b, module, name, routes.threads,
                                 {global, b.i64(), global});
  routes.ids = args[0];
  routes.routes = args[1];
  Value counts = args[2];
  Value hist = sharedArray(b, module, (name + "_hist").str(), b.i32(), routes.experts);
  Value tid = b.threadIdx(), chunkIdx = b.blockIdx();
  routes.countChunk(b, hist, routes.loadChunk(b, chunkIdx, tid, Value()), tid);
  Value first = b.mul(chunkIdx, b.c32(routes.experts));
  forEach(b, tid, b.c32(routes.experts), b.c32(routes.threads), [&](Value e) {
    store(b, load(b, b.i32(), hist, e), counts, b.add(first, e));
  });
}

/// The place kernel's shared arrays, carved from one.
struct PlaceShared {
  Value table, running, total, scan, partBefore, partTotal;
};

PlaceShared placeShared(KernelBuilder &b, ModuleOp module, StringRef name,
                        const Routes &routes) {
  int64_t e = routes.experts, t = routes.threads, warps = t / 32;
  int64_t words = gg::SortRoutesOp::placeSharedBytes(e, t) / 4;
  Value base = sharedArray(b, module, (name + "_shared").str(), b.i32(), words);
  int64_t offset = 0;
  auto carve = [&](int64_t count) {
    Value part = at(b, b.i32(), base, b.c32(offset));
    offset += count;
    return part;
  };
  PlaceShared s;
  s.table = carve(warps * e);
  s.running = carve(e);
  s.total = carve(e);
  s.scan = carve(e);
  s.partBefore = carve(t);
  s.partTotal = carve(t);
  return s;
}

/// The chunks' counts one thread sums per loop step.
constexpr int64_t kSumUnroll = 8;

/// total[e] = the routes of expert e, running[e] = those in chunks before
/// this one: counted here with one chunk, else summed from chunk_counts
/// by `threads / experts` threads an expert.
void expertTotals(KernelBuilder &b, const Routes &routes, const PlaceShared &s,
                  ArrayRef<Route> mine, Value chunks, Value counts,
                  Value chunkIdx, Value tid) {
  int64_t e = routes.experts, slices = routes.threads / routes.experts;
  ifThenElse(
      b, b.eq(chunks, b.c64(1)),
      [&] {
        routes.countChunk(b, s.total, mine, tid);
        ifThen(b, b.lt(tid, b.c32(e)),
               [&] { store(b, b.c32(0), s.running, tid); });
      },
      [&] {
        ifThen(b, b.lt(tid, b.c32(slices * e)), [&] {
          Value slice = b.divU(tid, b.c32(e)), expert = b.remU(tid, b.c32(e));
          Value numChunks = b.toI32(chunks);
          Value lastChunk = b.sub(numChunks, b.c32(1));
          // kSumUnroll chunks a step, their loads issued together.
          SmallVector<Value> sums = sumOver(
              b, slice, numChunks, b.c32(slices * kSumUnroll),
              {b.c32(0), b.c32(0)}, [&](Value first) -> SmallVector<Value> {
                SmallVector<Value> values, chunkOf;
                for (int64_t u = 0; u < kSumUnroll; ++u) {
                  Value c = b.add(first, b.c32(u * slices));
                  Value readable = b.minS(c, lastChunk);
                  values.push_back(load(
                      b, b.i32(), counts,
                      b.add(b.mul(readable, b.c32(e)), expert)));
                  chunkOf.push_back(c);
                }
                Value before = b.c32(0), total = b.c32(0);
                for (int64_t u = 0; u < kSumUnroll; ++u) {
                  Value v = b.select(b.lt(chunkOf[u], numChunks), values[u],
                                     b.c32(0));
                  total = b.add(total, v);
                  before = b.add(before, b.select(b.lt(chunkOf[u], chunkIdx),
                                                  v, b.c32(0)));
                }
                return {before, total};
              });
          store(b, sums[0], s.partBefore, tid);
          store(b, sums[1], s.partTotal, tid);
        });
        syncCta(b);
        ifThen(b, b.lt(tid, b.c32(e)), [&] {
          SmallVector<Value> sums = sumOver(
              b, b.c32(0), b.c32(slices), b.c32(1), {b.c32(0), b.c32(0)},
              [&](Value slice) -> SmallVector<Value> {
                Value i = b.add(b.mul(slice, b.c32(e)), tid);
                return {load(b, b.i32(), s.partBefore, i),
                        load(b, b.i32(), s.partTotal, i)};
              });
          store(b, sums[0], s.running, tid);
          store(b, sums[1], s.total, tid);
        });
      });
  syncCta(b);
}

/// running[e] += the routes of lower experts (a Hillis-Steele scan over
/// the totals); chunk 0 writes them as the group offsets.
void expertStarts(KernelBuilder &b, const Routes &routes, const PlaceShared &s,
                  Value offsets, Value chunkIdx, Value tid) {
  int64_t e = routes.experts;
  Value own = b.minS(tid, b.c32(e - 1)), isExpert = b.lt(tid, b.c32(e));
  ifThen(b, isExpert,
         [&] { store(b, load(b, b.i32(), s.total, tid), s.scan, tid); });
  syncCta(b);
  for (int64_t stride = 1; stride < e; stride *= 2) {
    Value below = load(b, b.i32(), s.scan, b.maxS(b.sub(own, b.c32(stride)),
                                                 b.c32(0)));
    Value sum = b.add(load(b, b.i32(), s.scan, own),
                      b.select(b.ge(own, b.c32(stride)), below, b.c32(0)));
    syncCta(b);
    ifThen(b, isExpert, [&] { store(b, sum, s.scan, tid); });
    syncCta(b);
  }
  Value isFirstChunk = b.eq(chunkIdx, b.c32(0));
  ifThen(b, isExpert, [&] {
    Value start = b.sub(load(b, b.i32(), s.scan, tid),
                        load(b, b.i32(), s.total, tid));
    store(b, b.add(load(b, b.i32(), s.running, tid), start), s.running, tid);
    ifThen(b, isFirstChunk, [&] { store(b, start, offsets, tid); });
  });
  ifThen(b, b.andI(isFirstChunk, b.eq(tid, b.c32(0))), [&] {
    store(b, b.toI32(routes.routes), offsets, b.c32(e));
  });
}

/// The outputs of the place kernel.
struct Outputs {
  Value order, source, position, route;
};

/// Every round of `threads` routes of the chunk, in order: each route's
/// rank, then its sorted row written.
void placeRounds(KernelBuilder &b, const Routes &routes, const PlaceShared &s,
                 const Outputs &out, ArrayRef<Route> mine, Value tid) {
  int64_t e = routes.experts;
  Value warp = b.warpUniform(b.divU(tid, b.c32(32)));
  Value nan = b.create<arith::ConstantFloatOp>(
      b.getF32Type(), APFloat::getQNaN(APFloat::IEEEsingle()));
  for (const Route &route : mine) {
    Value same = b.create<ggk::WarpMatchAnyOp>(b.i32(), route.expert);
    Value below = b.andI(same, b.create<ggk::LanesBelowOp>(b.i32()));
    Value laneRank = b.create<LLVM::CtPopOp>(b.i32(), below);
    Value warpCount = b.create<LLVM::CtPopOp>(b.i32(), same);
    Value leads = b.andI(route.inRange, b.eq(below, b.c32(0)));
    Value slot = b.add(b.mul(warp, b.c32(e)), route.expert);
    ifThen(b, leads, [&] { store(b, warpCount, s.table, slot); });
    syncCta(b);
    ifThen(b, route.inRange, [&] {
      Value before =
          sumOver(b, b.c32(0), warp, b.c32(1), {b.c32(0)},
                  [&](Value w) -> SmallVector<Value> {
                    return {load(b, b.i32(), s.table,
                                 b.add(b.mul(w, b.c32(e)), route.expert))};
                  })[0];
      Value rank = b.add(
          b.add(load(b, b.i32(), s.running, route.expert), before), laneRank);
      store(b, b.toI64(rank), out.position, route.r);
      store(b, route.r, out.order, rank);
      store(b, b.toI32(b.divU(route.r, b.c64(routes.topK))), out.source, rank);
      store(b, b.select(route.invalid, nan, route.weight), out.route, rank);
    });
    syncCta(b);
    ifThen(b, leads, [&] {
      atomicAdd(b, s.running, route.expert, warpCount);
      store(b, b.c32(0), s.table, slot);
    });
    // The next round's leader of this warp may write the slot just cleared.
    b.warpSync();
  }
}

/// `_place(ids, weights, M, chunks, chunk_counts, offsets, order, source,
/// position, route)`.
void buildPlace(KernelBuilder &b, ModuleOp module, StringRef name,
                Routes routes) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(
      b, module, name, routes.threads,
      {global, global, b.i64(), b.i64(), global, global, global, global,
       global, global});
  routes.ids = args[0];
  routes.routes = args[2];
  Value chunks = args[3], counts = args[4], offsets = args[5];
  Outputs out{args[6], args[7], args[8], args[9]};
  PlaceShared s = placeShared(b, module, name, routes);
  Value tid = b.threadIdx(), chunkIdx = b.blockIdx();
  SmallVector<Route> mine = routes.loadChunk(b, chunkIdx, tid, args[1]);
  expertTotals(b, routes, s, mine, chunks, counts, chunkIdx, tid);
  expertStarts(b, routes, s, offsets, chunkIdx, tid);
  int64_t tableWords = (routes.threads / 32) * routes.experts;
  forEach(b, tid, b.c32(tableWords), b.c32(routes.threads),
          [&](Value i) { store(b, b.c32(0), s.table, i); });
  syncCta(b);
  placeRounds(b, routes, s, out, mine, tid);
}

struct LowerSortRoutesPass
    : public ggc::impl::LowerSortRoutesBase<LowerSortRoutesPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::SortRoutesOp>(
            getOperation(), "one pair of kernels",
            [&](gg::SortRoutesOp op, func::FuncOp func, KernelBuilder &b) {
              Routes routes{int64_t(op.getExperts()), int64_t(op.getTopK()),
                            int64_t(op.getThreads()),
                            int64_t(op.getChunkRoutes()),
                            cast<MemRefType>(op.getIds().getType())
                                .getElementType(),
                            Value(), Value()};
              std::string name = func.getSymName().str();
              ModuleOp module = getOperation();
              buildCount(b, module, name + "_count", routes);
              buildPlace(b, module, name + "_place", routes);
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
