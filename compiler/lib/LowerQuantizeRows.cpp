//===- LowerQuantizeRows.cpp - gg-lower-quantize-rows ---------------------===//
//
// gg.quantize_rows as one kernel: a warp `steps` steps of a row at a time,
// half a warp a 128-column block a step, each lane 8 columns. The block's
// amax comes from butterfly shuffles within the half-warp, its factor
// 448 / amax from one IEEE division, and each lane converts its products
// to e4m3 in pairs.
//
//===----------------------------------------------------------------------===//
#include "Activations.h"
#include "SimpleKernel.h"
#include "Target.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERQUANTIZEROWS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

constexpr int64_t kBlock = 128;    // columns a scale covers
constexpr int64_t kLaneCols = kBf16PerVector; // columns a lane loads
constexpr double kE4M3Max = 448.0; // the largest finite e4m3
constexpr double kAmaxFloor = 1e-12; // an all-zero block's scale divides to 0
/// What the kernel knows of the op, and its parameters.
struct Quantize {
  int64_t k, inK, blocks, threads, steps;
  bool gated;
  Value input, rows, out, scales, m, r, ld;
};

/// The 8 bf16 at `input[row, col]` as f32 (16 bytes, aligned).
SmallVector<Value> loadEight(KernelBuilder &b, const Quantize &q, Value row,
                             Value col) {
  return loadBf16x8(b, q.input, b.add(b.mul(row, b.c64(q.inK)), b.toI64(col)));
}

/// silu(gate) * up, rounded to bf16 as a stored activation is.
Value storedSwiglu(KernelBuilder &b, Value gate, Value up) {
  Value rounded =
      b.create<arith::TruncFOp>(b.getBF16Type(), ggc::swiglu(b, gate, up));
  return b.create<arith::ExtFOp>(b.f32(), rounded);
}

/// The largest |v| over the lane's values and the 16 lanes of its half.
Value halfWarpAmax(KernelBuilder &b, ArrayRef<Value> values) {
  Value amax = b.f32c(0.0);
  for (Value v : values)
    amax = b.create<arith::MaximumFOp>(amax, b.create<math::AbsFOp>(v));
  for (int64_t lanes = 8; lanes >= 1; lanes /= 2) {
    Value bits = b.create<arith::BitcastOp>(b.i32(), amax);
    Value theirs = b.create<ggk::WarpShuffleXorOp>(b.i32(), bits, lanes);
    amax = b.create<arith::MaximumFOp>(
        amax, b.create<arith::BitcastOp>(b.f32(), theirs));
  }
  return amax;
}

/// values * factor as e4m3, stored as 8 bytes at out[row, col].
void storeQuantized(KernelBuilder &b, const Quantize &q, ArrayRef<Value> values,
                    Value factor, Value row, Value col) {
  auto wordsType = VectorType::get({2}, b.i32());
  Value words = b.create<LLVM::PoisonOp>(wordsType);
  for (int64_t w = 0; w < 2; ++w) {
    Value word = b.c32(0);
    for (int64_t pair = 0; pair < 2; ++pair) {
      int64_t i = 4 * w + 2 * pair;
      Value lo = b.create<arith::MulFOp>(values[i], factor);
      Value hi = b.create<arith::MulFOp>(values[i + 1], factor);
      Value packed = b.create<ggk::ConvertE4M3x2Op>(b.getI16Type(), lo, hi);
      Value wide = b.create<arith::ExtUIOp>(b.i32(), packed);
      if (pair == 1)
        wide = b.create<arith::ShLIOp>(wide, b.c32(16));
      word = b.create<arith::OrIOp>(word, wide);
    }
    words = b.create<LLVM::InsertElementOp>(words, word, b.c32(w));
  }
  Value index = b.add(b.mul(row, b.c64(q.k)), b.toI64(col));
  b.create<LLVM::StoreOp>(words, at(b, b.getI8Type(), q.out, index),
                          /*alignment=*/8);
}

/// One 128-column block a half-warp takes: where it lies, whether it is
/// one of the row's, and its lane's loaded values.
struct BlockLoad {
  Value block, active, col;
  SmallVector<Value> values, ups;
};

/// Block `block`'s loads (issued before any block of the step is used, so
/// that they are in flight together).
BlockLoad loadBlock(KernelBuilder &b, const Quantize &q, Value source,
                    Value block, Value lane16) {
  BlockLoad load;
  load.block = block;
  load.active = b.lt(block, b.c32(q.blocks));
  // Past the row's last block (an odd block count, the last step) a half
  // reads the last block and stores nothing.
  Value readBlock = b.minS(block, b.c32(q.blocks - 1));
  load.col = b.add(b.mul(readBlock, b.c32(kBlock)),
                   b.mul(lane16, b.c32(kLaneCols)));
  load.values = loadEight(b, q, source, load.col);
  if (q.gated)
    load.ups = loadEight(b, q, source, b.add(load.col, b.c32(q.k)));
  return load;
}

/// The block's activation, amax, scale and stores.
void quantizeBlock(KernelBuilder &b, const Quantize &q, BlockLoad load,
                   Value row, Value readable, Value lane16) {
  SmallVector<Value> values = load.values;
  if (q.gated)
    for (int64_t i = 0; i < kLaneCols; ++i)
      values[i] = storedSwiglu(b, values[i], load.ups[i]);
  for (Value &v : values)
    v = b.select(readable, v, b.f32c(0.0));
  Value amax = b.create<arith::MaximumFOp>(halfWarpAmax(b, values),
                                          b.f32c(kAmaxFloor));
  // The scale: amax times 1/448 rounded to f32 (torch's division by a
  // scalar, which multiplies by its reciprocal); the values times 448 /
  // amax (quant.quantize_rows' bits: a division a block, not an element).
  Value scale =
      b.create<arith::MulFOp>(amax, b.f32c(float(1.0f / float(kE4M3Max))));
  Value factor = b.create<arith::DivFOp>(b.f32c(kE4M3Max), amax);
  ifThen(b, load.active, [&] {
    storeQuantized(b, q, values, factor, row, load.col);
    ifThen(b, b.eq(lane16, b.c32(0)), [&] {
      Value index = b.add(b.mul(b.toI64(load.block), q.ld), row);
      store(b, scale, q.scales, index);
    });
  });
}

void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name,
                 Quantize q) {
  Type global = b.ptr(ggc::kGlobal);
  SmallVector<Type> params(q.rows ? 4 : 3, global);
  params.append({b.i64(), b.i64(), b.i64()});
  ValueRange args = createKernel(b, module, name, q.threads, params);
  unsigned next = 0;
  q.input = args[next++];
  q.rows = q.rows ? args[next++] : Value();
  q.out = args[next++];
  q.scales = args[next++];
  q.m = args[next++];
  q.r = args[next++];
  q.ld = args[next++];

  Value tid = b.threadIdx();
  Value warp = b.warpUniform(b.divU(tid, b.c32(32)));
  Value lane = b.remU(tid, b.c32(32));
  Value half = b.divU(lane, b.c32(16)), lane16 = b.remU(lane, b.c32(16));
  int64_t warps = q.threads / 32;
  // A warp's unit of work: `steps` steps (two blocks each) of one
  // row, so that a short batch of long rows (a decode step) still spreads
  // over many warps. Units run row by row, a grid-stride loop over them.
  int64_t steps = (q.blocks + 1) / 2;
  int64_t unitsPerRow = (steps + q.steps - 1) / q.steps;
  gridStride(b, b.mul(q.m, b.c64(unitsPerRow)), warps, warp, [&](Value unit) {
    Value row = b.divU(unit, b.c64(unitsPerRow));
    Value firstStep = b.toI32(b.mul(b.remU(unit, b.c64(unitsPerRow)),
                                    b.c64(q.steps)));
    Value source = q.rows ? b.toI64(load(b, b.i32(), q.rows, row)) : row;
    Value readable = b.andI(b.ge(source, b.c64(0)), b.lt(source, q.r));
    Value clamped = b.clampS(source, b.c64(0), b.sub(q.r, b.c64(1)));
    // The unit's loads first, then its blocks.
    SmallVector<BlockLoad> loads;
    for (int64_t u = 0; u < q.steps; ++u) {
      Value step = b.add(firstStep, b.c32(u));
      loads.push_back(loadBlock(b, q, clamped,
                                b.add(b.mul(step, b.c32(2)), half), lane16));
    }
    for (const BlockLoad &load : loads)
      quantizeBlock(b, q, load, row, readable, lane16);
  });
}

struct LowerQuantizeRowsPass
    : public ggc::impl::LowerQuantizeRowsBase<LowerQuantizeRowsPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::QuantizeRowsOp>(
            getOperation(), "one kernel",
            [&](gg::QuantizeRowsOp op, func::FuncOp func,
                KernelBuilder &b) -> LogicalResult {
              ggc::Target target = ggc::targetOf(op);
              if (!target.fp8Mma)
                return op.emitOpError()
                       << "cannot be lowered for " << target.name
                       << ": converting to e4m3 takes sm_89 or sm_90a";
              int64_t k =
                  cast<MemRefType>(op.getOut().getType()).getDimSize(1);
              Quantize q{k, op.getGated() ? 2 * k : k, k / kBlock,
                         int64_t(op.getThreads()), int64_t(op.getSteps()),
                         op.getGated()};
              q.rows = op.getRows(); // non-null: the kernel takes the list
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_quantize").str(), q);
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
