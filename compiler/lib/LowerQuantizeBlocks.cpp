//===- LowerQuantizeBlocks.cpp - gg-lower-quantize-blocks -----------------===//
//
// gg.quantize_blocks as one kernel: a CTA of 256 threads takes one 128x128
// block at a time, each thread an 8x8 square of it (16-byte loads of 8
// bf16 per row). The block's amax comes from the thread's 64 values, the
// warp's shuffles and the 8 warps' maxima in shared memory; each thread
// then stores its square as 8 rows of 8 e4m3 and, for the transposed
// copy, as 8 columns of 8 (the square transposed in registers). N and K
// are multiples of 16, so a square of a partial last block lies wholly in
// the weights or wholly past them: a square past them reads its block's
// first square, counts as zeros and stores nothing.
//
//===----------------------------------------------------------------------===//
#include "E4M3.h"
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERQUANTIZEBLOCKS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

constexpr int64_t kBlock = 128;                // a block's rows and columns
constexpr int64_t kSquare = 8;                 // a thread's rows and columns
constexpr int64_t kSquaresPerSide = kBlock / kSquare; // 16
constexpr int64_t kThreads = kSquaresPerSide * kSquaresPerSide; // 256
constexpr int64_t kWarps = kThreads / 32;

/// What the kernel knows of the op, and its parameters.
struct Blocks {
  int64_t n, k;
  bool transposed;
  Value input, out, transposedOut, scales, experts;
};

/// The largest |v| of the CTA's values: each warp's by shuffles, then the
/// warps' through `shared` (the first barrier keeps the previous block's
/// readers from seeing this one's maxima).
Value ctaAmax(KernelBuilder &b, Value amax, Value shared, Value warp,
              Value lane) {
  amax = shuffleMax(b, amax, 16);
  syncCta(b);
  ifThen(b, b.eq(lane, b.c32(0)), [&] { store(b, amax, shared, warp); });
  syncCta(b);
  Value all = b.f32c(0.0);
  for (int64_t w = 0; w < kWarps; ++w)
    all = b.create<arith::MaximumFOp>(all, load(b, b.f32(), shared, b.c32(w)));
  return all;
}

/// Blocks of `size` rows or columns, the last possibly partial.
int64_t blocksOf(int64_t size) { return (size + kBlock - 1) / kBlock; }

void storeSquare(KernelBuilder &b, const Blocks &q,
                 ArrayRef<SmallVector<Value>> rows, const BlockScale &scale,
                 Value expert, Value row0, Value col0, ArrayRef<Value> at);

/// Block `block` (linear over [G, ceil(N/128), ceil(K/128)], the scales'
/// index).
void quantizeBlock(KernelBuilder &b, const Blocks &q, Value shared,
                   Value block, Value squareRow, Value squareCol, Value warp,
                   Value lane) {
  int64_t blocksK = blocksOf(q.k), perExpert = blocksOf(q.n) * blocksK;
  Value expert = b.divU(block, b.c64(perExpert));
  Value within = b.remU(block, b.c64(perExpert));
  Value blockRow0 = b.mul(b.divU(within, b.c64(blocksK)), b.c64(kBlock));
  Value blockCol0 = b.mul(b.remU(within, b.c64(blocksK)), b.c64(kBlock));
  Value row0 = b.add(blockRow0, b.toI64(b.mul(squareRow, b.c32(kSquare))));
  Value col0 = b.add(blockCol0, b.toI64(b.mul(squareCol, b.c32(kSquare))));
  // rows[i][j] = input[expert, row0 + i, col0 + j], at index at[i] + j of
  // input and of out alike; with partial blocks a square past the weights
  // reads the block's first one (always in them). Whole blocks need no
  // check (null inWeights).
  Value inWeights, readRow0 = row0, readCol0 = col0;
  if (q.n % kBlock != 0 || q.k % kBlock != 0) {
    inWeights = b.andI(b.lt(row0, b.c64(q.n)), b.lt(col0, b.c64(q.k)));
    readRow0 = b.select(inWeights, row0, blockRow0);
    readCol0 = b.select(inWeights, col0, blockCol0);
  }
  SmallVector<Value> at;
  SmallVector<SmallVector<Value>> rows;
  Value amax = b.f32c(0.0);
  for (int64_t i = 0; i < kSquare; ++i) {
    Value row = b.add(b.mul(expert, b.c64(q.n)), b.add(row0, b.c64(i)));
    Value readRow = b.add(b.mul(expert, b.c64(q.n)), b.add(readRow0, b.c64(i)));
    at.push_back(b.add(b.mul(row, b.c64(q.k)), col0));
    rows.push_back(
        loadBf16x8(b, q.input, b.add(b.mul(readRow, b.c64(q.k)), readCol0)));
    if (inWeights)
      for (Value &v : rows.back())
        v = b.select(inWeights, v, b.f32c(0.0));
    amax = absMax(b, amax, rows.back());
  }
  BlockScale scale = blockScale(b, ctaAmax(b, amax, shared, warp, lane));
  auto storeOut = [&] { storeSquare(b, q, rows, scale, expert, row0, col0, at); };
  if (inWeights)
    ifThen(b, inWeights, storeOut);
  else
    storeOut();
  ifThen(b, b.eq(b.add(squareRow, squareCol), b.c32(0)),
         [&] { store(b, scale.scale, q.scales, block); });
}

/// The thread's square as e4m3: 8 rows of `out` at `at`, and with the
/// transposed copy 8 rows of it (the square's columns).
void storeSquare(KernelBuilder &b, const Blocks &q,
                 ArrayRef<SmallVector<Value>> rows, const BlockScale &scale,
                 Value expert, Value row0, Value col0, ArrayRef<Value> at) {
  for (int64_t i = 0; i < kSquare; ++i)
    storeE4M3x8(b, rows[i], scale.factor, q.out, at[i]);
  if (q.transposed) {
    for (int64_t j = 0; j < kSquare; ++j) {
      SmallVector<Value> column;
      for (int64_t i = 0; i < kSquare; ++i)
        column.push_back(rows[i][j]);
      Value row = b.add(b.mul(expert, b.c64(q.k)), b.add(col0, b.c64(j)));
      storeE4M3x8(b, column, scale.factor, q.transposedOut,
                  b.add(b.mul(row, b.c64(q.n)), row0));
    }
  }
}

void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name, Blocks q) {
  Type global = b.ptr(ggc::kGlobal);
  SmallVector<Type> params(q.transposed ? 4 : 3, global);
  params.push_back(b.i64());
  ValueRange args = createKernel(b, module, name, kThreads, params);
  unsigned next = 0;
  q.input = args[next++];
  q.out = args[next++];
  q.transposedOut = q.transposed ? args[next++] : Value();
  q.scales = args[next++];
  q.experts = args[next++];
  Value shared = sharedArray(b, module, (name + "_amax").str(), b.f32(), kWarps);
  Value tid = b.threadIdx();
  Value warp = b.warpUniform(b.divU(tid, b.c32(32)));
  Value lane = b.remU(tid, b.c32(32));
  Value squareRow = b.divU(tid, b.c32(kSquaresPerSide));
  Value squareCol = b.remU(tid, b.c32(kSquaresPerSide));
  int64_t perExpert = blocksOf(q.n) * blocksOf(q.k);
  gridStride(b, b.mul(q.experts, b.c64(perExpert)), 1, b.c32(0), [&](Value block) {
    quantizeBlock(b, q, shared, block, squareRow, squareCol, warp, lane);
  });
}

struct LowerQuantizeBlocksPass
    : public ggc::impl::LowerQuantizeBlocksBase<LowerQuantizeBlocksPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::QuantizeBlocksOp>(
            getOperation(), "one kernel",
            [&](gg::QuantizeBlocksOp op, func::FuncOp func,
                KernelBuilder &b) -> LogicalResult {
              if (failed(checkConvertsE4M3(op)))
                return failure();
              auto type = cast<MemRefType>(op.getInput().getType());
              Blocks q{type.getDimSize(1), type.getDimSize(2),
                       bool(op.getTransposed())};
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_quantize_blocks").str(), q);
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
