//===- LowerQuantizeGroupTokens.cpp - gg-lower-quantize-group-tokens ------===//
//
// gg.quantize_group_tokens as one kernel: a CTA of 256 threads takes one
// 128-token x 128-column block of out at a time, each thread an 8x8
// square (8 tokens by 8 columns: 16-byte loads of 8 bf16 per token). A
// cursor over the groups, carried along the CTA's blocks (which come in
// token order), finds the group whose padded span holds the block. Each
// column's amax over the block's 128 tokens comes from the thread's 8, the
// other square of the warp with those columns (one shuffle) and the eight
// warps' through shared memory; each thread then stores its square's
// columns, 8 tokens of e4m3 each, into out's rows.
//
//===----------------------------------------------------------------------===//
#include "E4M3.h"
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERQUANTIZEGROUPTOKENS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

constexpr int64_t kBlock = 128;                // tokens and columns of a block
constexpr int64_t kSquare = 8;                 // a thread's tokens and columns
constexpr int64_t kSquaresPerSide = kBlock / kSquare; // 16
constexpr int64_t kThreads = kSquaresPerSide * kSquaresPerSide; // 256
constexpr int64_t kWarps = kThreads / 32;

/// What the kernel knows of the op, and its parameters (T, G, P as i64).
struct GroupTokens {
  int64_t columns;
  Value input, groups, out, scales, padded, tokens, numGroups, capacity;
  /// Shared memory: each warp's column maxima, then each column's factor.
  Value warpMaxima, factors;
};

/// Group g's rows of input [lo, hi), clamped to [0, T] and hi >= lo; a
/// g of G or more reads groups[G] twice (an empty group).
std::pair<Value, Value> groupRows(KernelBuilder &b, const GroupTokens &q,
                                  Value g) {
  Value last = b.toI32(q.numGroups), tokens = b.toI32(q.tokens);
  Value lo = load(b, b.i32(), q.groups, b.minS(g, last));
  Value hi = load(b, b.i32(), q.groups, b.minS(b.add(g, b.c32(1)), last));
  lo = b.clampS(lo, b.c32(0), tokens);
  return {lo, b.clampS(hi, lo, tokens)};
}

/// A group's tokens rounded up to whole blocks: its span of out.
Value paddedSpan(KernelBuilder &b, std::pair<Value, Value> rows) {
  return b.mul(b.ceilDivU(b.sub(rows.second, rows.first), kBlock),
               b.c32(kBlock));
}

/// CTA 0's thread 0 writes padded_groups: each group's first token of out.
void writePaddedGroups(KernelBuilder &b, const GroupTokens &q) {
  Value first = b.andI(b.eq(b.blockIdx(), b.c32(0)),
                       b.eq(b.threadIdx(), b.c32(0)));
  ifThen(b, first, [&] {
    Value numGroups = b.toI32(q.numGroups);
    auto loop = b.create<scf::ForOp>(b.c32(0), numGroups, b.c32(1),
                                     ValueRange{b.c32(0)});
    atEnd(b, loop.getBody(), [&] {
      Value g = loop.getInductionVar(), start = loop.getRegionIterArgs()[0];
      store(b, start, q.padded, g);
      Value next = b.add(start, paddedSpan(b, groupRows(b, q, g)));
      b.create<scf::YieldOp>(ValueRange{next});
    });
    store(b, loop.getResult(0), q.padded, numGroups);
  });
}

/// The cursor (group, its first token of out) moved on to the group whose
/// span holds token `position` of out, or to G past the last group.
std::pair<Value, Value> advanceCursor(KernelBuilder &b, const GroupTokens &q,
                                      Value group, Value start,
                                      Value position) {
  Type i32 = b.i32();
  auto loop = b.create<scf::WhileOp>(
      TypeRange{i32, i32, i32}, ValueRange{group, start},
      [&](OpBuilder &, Location, ValueRange args) {
        Value span = paddedSpan(b, groupRows(b, q, args[0]));
        Value past = b.ge(position, b.add(args[1], span));
        Value more = b.andI(b.lt(args[0], b.toI32(q.numGroups)), past);
        b.create<scf::ConditionOp>(more, ValueRange{args[0], args[1], span});
      },
      [&](OpBuilder &, Location, ValueRange args) {
        b.create<scf::YieldOp>(ValueRange{b.add(args[0], b.c32(1)),
                                          b.add(args[1], args[2])});
      });
  return {loop.getResult(0), loop.getResult(1)};
}

/// The thread's square: values[i][j] = input[first + row0 + i, col0 + j]
/// for the rows below `valid`, zeros elsewhere (a square of no valid row
/// or past the columns loads nothing).
SmallVector<SmallVector<Value>> loadSquare(KernelBuilder &b,
                                           const GroupTokens &q, Value first,
                                           Value valid, Value row0,
                                           Value col0) {
  Value any = b.lt(row0, valid);
  if (q.columns % kBlock != 0)
    any = b.andI(any, b.lt(col0, b.c32(q.columns)));
  SmallVector<Type> types(kSquare * kSquare, b.f32());
  auto branch = b.create<scf::IfOp>(types, any, /*withElseRegion=*/true);
  atEnd(b, branch.thenBlock(), [&] {
    SmallVector<Value> values;
    for (int64_t i = 0; i < kSquare; ++i) {
      Value row = b.add(row0, b.c32(i));
      Value inGroup = b.lt(row, valid);
      // A row past the group's tokens reads its first (always there).
      Value read = b.toI64(b.add(first, b.select(inGroup, row, b.c32(0))));
      Value index = b.add(b.mul(read, b.c64(q.columns)), b.toI64(col0));
      for (Value v : loadBf16x8(b, q.input, index))
        values.push_back(b.select(inGroup, v, b.f32c(0.0)));
    }
    b.create<scf::YieldOp>(values);
  });
  atEnd(b, branch.elseBlock(), [&] {
    b.create<scf::YieldOp>(SmallVector<Value>(types.size(), b.f32c(0.0)));
  });
  SmallVector<SmallVector<Value>> square(kSquare);
  for (int64_t i = 0; i < kSquare; ++i)
    for (int64_t j = 0; j < kSquare; ++j)
      square[i].push_back(branch.getResult(i * kSquare + j));
  return square;
}

/// Each of the block's 128 columns' factor 448 / amax in q.factors (and
/// its scale stored at scales[block, column]): the square's column maxima,
/// the warp's other square's by a shuffle, the eight warps' through shared
/// memory, finished by 128 threads, one a column.
void columnFactors(KernelBuilder &b, const GroupTokens &q,
                   ArrayRef<SmallVector<Value>> square, Value tokenBlock,
                   Value colBlock, Value squareCol, Value warp, Value lane) {
  SmallVector<Value> maxima;
  for (int64_t j = 0; j < kSquare; ++j) {
    Value amax = b.f32c(0.0);
    for (int64_t i = 0; i < kSquare; ++i)
      amax = b.create<arith::MaximumFOp>(amax,
                                         b.create<math::AbsFOp>(square[i][j]));
    Value bits = b.create<arith::BitcastOp>(b.i32(), amax);
    Value theirs = b.create<ggk::WarpShuffleXorOp>(b.i32(), bits, 16);
    maxima.push_back(b.create<arith::MaximumFOp>(
        amax, b.create<arith::BitcastOp>(b.f32(), theirs)));
  }
  // Two barriers a block suffice: the previous block's readers of
  // warpMaxima passed its second one before these writes, and its readers
  // of factors reach this block's first one before they are written.
  ifThen(b, b.lt(lane, b.c32(kSquaresPerSide)), [&] {
    Value base = b.add(b.mul(warp, b.c32(kBlock)),
                       b.mul(squareCol, b.c32(kSquare)));
    for (int64_t j = 0; j < kSquare; ++j)
      store(b, maxima[j], q.warpMaxima, b.add(base, b.c32(j)));
  });
  syncCta(b);
  Value tid = b.threadIdx();
  ifThen(b, b.lt(tid, b.c32(kBlock)), [&] {
    Value amax = b.f32c(0.0);
    for (int64_t w = 0; w < kWarps; ++w)
      amax = b.create<arith::MaximumFOp>(
          amax, load(b, b.f32(), q.warpMaxima, b.add(tid, b.c32(w * kBlock))));
    BlockScale scale = blockScale(b, amax);
    store(b, scale.factor, q.factors, tid);
    Value column = b.add(b.mul(colBlock, b.c32(kBlock)), tid);
    auto storeScale = [&] {
      Value index = b.add(b.mul(b.toI64(tokenBlock), b.c64(q.columns)),
                          b.toI64(column));
      store(b, scale.scale, q.scales, index);
    };
    if (q.columns % kBlock != 0)
      ifThen(b, b.lt(column, b.c32(q.columns)), storeScale);
    else
      storeScale();
  });
  syncCta(b);
}

/// The square's columns as e4m3, 8 tokens each, into out's rows col0 + j
/// at token `token0` (8-byte aligned: P is a multiple of 128).
void storeColumns(KernelBuilder &b, const GroupTokens &q,
                  ArrayRef<SmallVector<Value>> square, Value squareCol,
                  Value col0, Value token0) {
  auto stores = [&] {
    for (int64_t j = 0; j < kSquare; ++j) {
      Value factor = load(b, b.f32(), q.factors,
                          b.add(b.mul(squareCol, b.c32(kSquare)), b.c32(j)));
      SmallVector<Value> column;
      for (int64_t i = 0; i < kSquare; ++i)
        column.push_back(square[i][j]);
      Value row = b.toI64(b.add(col0, b.c32(j)));
      storeE4M3x8(b, column, factor, q.out,
                  b.add(b.mul(row, q.capacity), b.toI64(token0)));
    }
  };
  if (q.columns % kBlock != 0)
    ifThen(b, b.lt(col0, b.c32(q.columns)), stores);
  else
    stores();
}

/// Block `item` of out (token block item / blocksC, column block item %
/// blocksC) with the cursor at (group, start); returns the cursor moved
/// to the block's group.
std::pair<Value, Value> quantizeBlock(KernelBuilder &b, const GroupTokens &q,
                                      Value item, Value group, Value start) {
  int64_t colBlocks = (q.columns + kBlock - 1) / kBlock;
  Value tokenBlock = b.toI32(b.divU(item, b.c64(colBlocks)));
  Value colBlock = b.toI32(b.remU(item, b.c64(colBlocks)));
  Value position = b.mul(tokenBlock, b.c32(kBlock));
  std::tie(group, start) = advanceCursor(b, q, group, start, position);
  // The block's tokens: the group's from its `local`-th on, or none past
  // the last group.
  auto [lo, hi] = groupRows(b, q, group);
  Value local = b.sub(position, start);
  Value inGroups = b.lt(group, b.toI32(q.numGroups));
  Value valid = b.select(inGroups, b.sub(b.sub(hi, lo), local), b.c32(0));
  Value first = b.add(lo, local);

  Value tid = b.threadIdx();
  Value warp = b.warpUniform(b.divU(tid, b.c32(32)));
  Value lane = b.remU(tid, b.c32(32));
  Value squareRow = b.divU(tid, b.c32(kSquaresPerSide));
  Value squareCol = b.remU(tid, b.c32(kSquaresPerSide));
  Value row0 = b.mul(squareRow, b.c32(kSquare));
  Value col0 = b.add(b.mul(colBlock, b.c32(kBlock)),
                     b.mul(squareCol, b.c32(kSquare)));
  SmallVector<SmallVector<Value>> square =
      loadSquare(b, q, first, valid, row0, col0);
  columnFactors(b, q, square, tokenBlock, colBlock, squareCol, warp, lane);
  storeColumns(b, q, square, squareCol, col0, b.add(position, row0));
  return {group, start};
}

void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name,
                 GroupTokens q) {
  Type global = b.ptr(ggc::kGlobal);
  SmallVector<Type> params(5, global);
  params.append(3, b.i64());
  ValueRange args = createKernel(b, module, name, kThreads, params);
  q.input = args[0];
  q.groups = args[1];
  q.out = args[2];
  q.scales = args[3];
  q.padded = args[4];
  q.tokens = args[5];
  q.numGroups = args[6];
  q.capacity = args[7];
  q.warpMaxima = sharedArray(b, module, (name + "_maxima").str(), b.f32(),
                             kWarps * kBlock);
  q.factors = sharedArray(b, module, (name + "_factors").str(), b.f32(), kBlock);
  writePaddedGroups(b, q);
  int64_t colBlocks = (q.columns + kBlock - 1) / kBlock;
  Value items = b.mul(b.divU(q.capacity, b.c64(kBlock)), b.c64(colBlocks));
  // A CTA's items grow, and so do their token blocks: the cursor only
  // moves forward.
  auto loop = b.create<scf::ForOp>(b.toI64(b.blockIdx()), items,
                                   b.toI64(b.gridDim()),
                                   ValueRange{b.c32(0), b.c32(0)});
  atEnd(b, loop.getBody(), [&] {
    ValueRange cursor = loop.getRegionIterArgs();
    auto [group, start] =
        quantizeBlock(b, q, loop.getInductionVar(), cursor[0], cursor[1]);
    b.create<scf::YieldOp>(ValueRange{group, start});
  });
}

struct LowerQuantizeGroupTokensPass
    : public ggc::impl::LowerQuantizeGroupTokensBase<
          LowerQuantizeGroupTokensPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::QuantizeGroupTokensOp>(
            getOperation(), "one kernel",
            [&](gg::QuantizeGroupTokensOp op, func::FuncOp func,
                KernelBuilder &b) -> LogicalResult {
              if (failed(checkConvertsE4M3(op)))
                return failure();
              auto type = cast<MemRefType>(op.getInput().getType());
              GroupTokens q{};
              q.columns = type.getDimSize(1);
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_quantize_group_tokens").str(),
                          q);
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
