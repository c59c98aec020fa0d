//===- LowerQuantizeRows.cpp - gg-lower-quantize-rows ---------------------===//
//
// gg.quantize_rows as one kernel: a warp `steps` steps of a row at a time,
// half a warp a 128-column block a step, each lane 8 columns. The block's
// amax comes from butterfly shuffles within the half-warp, its factor
// 448 / amax from one IEEE division, and each lane converts its products
// to e4m3 in pairs. A row's last block may be partial: the lanes past its
// end read nothing, count as zeros and store nothing. With `scatter` the
// warp's row is an input row, quantised once and stored to each of the
// rows its `copies` indices name (its scales once, where `input_scales`).
// Gated with `route`, each row's SwiGLU is weighted before it is rounded;
// with `activation` the rounded bf16 values are stored there as well.
//
//===----------------------------------------------------------------------===//
#include "Activations.h"
#include "E4M3.h"
#include "SimpleKernel.h"
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
/// What the kernel knows of the op, and its parameters.
struct Quantize {
  int64_t k, inK, blocks, threads, steps, copies;
  bool gated, inputScales;
  Type scatterIndex; // i32 or i64 with `scatter`, else null
  // Non-null where the op has them (at first the op's values, then the
  // kernel's arguments).
  Value input, rows, scatter, route, out, scales, activation, m, r, ld;
};

/// The 8 bf16 at `input[row, col]` as f32 (16 bytes, aligned).
SmallVector<Value> loadEight(KernelBuilder &b, const Quantize &q, Value row,
                             Value col) {
  return loadBf16x8(b, q.input, b.add(b.mul(row, b.c64(q.inK)), b.toI64(col)));
}

/// silu(gate) * up (times the row's `weight` where given), rounded to
/// bf16 as a stored activation is (gg.swiglu_rows' values).
Value storedSwiglu(KernelBuilder &b, Value gate, Value up, Value weight) {
  Value act = ggc::swiglu(b, gate, up);
  if (weight)
    act = b.create<arith::MulFOp>(act, weight);
  return roundedToBf16(b, act);
}

/// One 128-column block a half-warp takes: where it lies, whether it is
/// one of the row's, whether the lane's 8 columns are (a partial last
/// block), and its lane's loaded values.
struct BlockLoad {
  Value block, active, col, inRow;
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
  // Past the row's last column (k a multiple of 8, not of 128) a lane
  // reads its block's first columns instead, which are always in the row;
  // rows of whole blocks need no check (null inRow).
  Value readCol = load.col;
  if (q.k % kBlock != 0) {
    load.inRow = b.lt(load.col, b.c32(q.k));
    readCol = b.select(load.inRow, load.col, b.mul(readBlock, b.c32(kBlock)));
  }
  load.values = loadEight(b, q, source, readCol);
  if (q.gated)
    load.ups = loadEight(b, q, source, b.add(readCol, b.c32(q.k)));
  return load;
}

/// A block quantised: the lane's 8 values as e4m3 words and the scale,
/// and with `activation` the values themselves (bf16-rounded f32).
struct QuantizedBlock {
  BlockLoad load;
  Value words, scale;
  SmallVector<Value> activation;
};

/// The block's activation (weighted by the row's `weight` where given),
/// amax, scale and e4m3 values.
QuantizedBlock quantizeBlock(KernelBuilder &b, const Quantize &q,
                             BlockLoad load, Value weight = Value()) {
  SmallVector<Value> values = load.values;
  if (q.gated)
    for (int64_t i = 0; i < kLaneCols; ++i)
      values[i] = storedSwiglu(b, values[i], load.ups[i], weight);
  // A lane past a partial block's end counts as zeros.
  if (load.inRow)
    for (Value &v : values)
      v = b.select(load.inRow, v, b.f32c(0.0));
  // The half-warp's 16 lanes hold the block.
  HalfWarpBlock block = quantizeHalfWarpBlock(b, values);
  return {load, block.words, block.scale, q.activation ? values : SmallVector<Value>()};
}

/// A block of zeros (a row off the input): e4m3 zeros and the floor's scale.
QuantizedBlock zeroBlock(KernelBuilder &b, BlockLoad load) {
  Value zeros = b.create<LLVM::ZeroOp>(VectorType::get({2}, b.i32()));
  return {load, zeros, blockScale(b, b.f32c(0.0)).scale};
}

/// The block's scale stored for row `row` by the half-warp's first lane.
void storeScale(KernelBuilder &b, const Quantize &q, const QuantizedBlock &block,
                Value row, Value lane16) {
  ifThen(b, b.andI(block.load.active, b.eq(lane16, b.c32(0))), [&] {
    Value scaleAt = b.add(b.mul(b.toI64(block.load.block), q.ld), row);
    store(b, block.scale, q.scales, scaleAt);
  });
}

/// The block's values (and, with `withScale`, its scale) stored as row
/// `row` of out.
void storeBlock(KernelBuilder &b, const Quantize &q, const QuantizedBlock &block,
                Value row, Value lane16, bool withScale) {
  const BlockLoad &load = block.load;
  ifThen(b, load.active, [&] {
    auto storeValues = [&] {
      Value index = b.add(b.mul(row, b.c64(q.k)), b.toI64(load.col));
      storeWords(b, block.words, q.out, index);
      if (!block.activation.empty())
        storeBf16x8(b, block.activation, q.activation, index);
    };
    if (load.inRow)
      ifThen(b, load.inRow, storeValues);
    else
      storeValues();
    if (withScale)
      storeScale(b, q, block, row, lane16);
  });
}

/// A unit's loads: `steps` steps of input row `source` from `firstStep`.
SmallVector<BlockLoad> loadUnit(KernelBuilder &b, const Quantize &q,
                                Value source, Value firstStep, Value half,
                                Value lane16) {
  SmallVector<BlockLoad> loads;
  for (int64_t u = 0; u < q.steps; ++u) {
    Value step = b.add(firstStep, b.c32(u));
    loads.push_back(loadBlock(b, q, source,
                              b.add(b.mul(step, b.c32(2)), half), lane16));
  }
  return loads;
}

/// A unit of out row `row`, quantised from input row `source`.
void quantizeOutRow(KernelBuilder &b, const Quantize &q, Value row,
                    Value source, Value firstStep, Value half, Value lane16) {
  // Out's rows may name rows off the input (a gathered index, or out longer
  // than the input): they read a clamped row and are zeros.
  Value readable = b.andI(b.ge(source, b.c64(0)), b.lt(source, q.r));
  Value clamped = b.clampS(source, b.c64(0), b.sub(q.r, b.c64(1)));
  SmallVector<BlockLoad> loads =
      loadUnit(b, q, clamped, firstStep, half, lane16);
  // A routed row is its own source (no rows list): always readable.
  Value weight = q.route ? load(b, b.f32(), q.route, row) : Value();
  // The row is the warp's: one branch for it, not a select a value.
  auto storeAll = [&](function_ref<QuantizedBlock(const BlockLoad &)> make) {
    for (const BlockLoad &load : loads)
      storeBlock(b, q, make(load), row, lane16, /*withScale=*/true);
  };
  ifThenElse(
      b, readable,
      [&] {
        storeAll([&](const BlockLoad &l) { return quantizeBlock(b, q, l, weight); });
      },
      [&] { storeAll([&](const BlockLoad &l) { return zeroBlock(b, l); }); });
}

/// A unit of input row `row`, quantised once and stored to each out row
/// its copies' indices name (its scales once, where `input_scales`).
void scatterInputRow(KernelBuilder &b, const Quantize &q, Value row,
                     Value firstStep, Value half, Value lane16) {
  // The indices load with the values.
  SmallVector<Value> targets;
  for (int64_t c = 0; c < q.copies; ++c) {
    Value at = b.add(b.mul(row, b.c64(q.copies)), b.c64(c));
    targets.push_back(b.toI64(load(b, q.scatterIndex, q.scatter, at)));
  }
  SmallVector<QuantizedBlock> blocks;
  for (const BlockLoad &load : loadUnit(b, q, row, firstStep, half, lane16))
    blocks.push_back(quantizeBlock(b, q, load));
  if (q.inputScales)
    for (const QuantizedBlock &block : blocks)
      storeScale(b, q, block, row, lane16);
  for (Value target : targets) {
    Value inOut = b.andI(b.ge(target, b.c64(0)), b.lt(target, q.m));
    ifThen(b, inOut, [&] {
      for (const QuantizedBlock &block : blocks)
        storeBlock(b, q, block, target, lane16, !q.inputScales);
    });
  }
}

void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name,
                 Quantize q) {
  Type global = b.ptr(ggc::kGlobal);
  int pointers = 3 + bool(q.rows || q.scatter) + bool(q.route) + bool(q.activation);
  SmallVector<Type> params(pointers, global);
  params.append({b.i64(), b.i64(), b.i64()});
  ValueRange args = createKernel(b, module, name, q.threads, params);
  unsigned next = 0;
  q.input = args[next++];
  q.rows = q.rows ? args[next++] : Value();
  q.scatter = q.scatter ? args[next++] : Value();
  q.route = q.route ? args[next++] : Value();
  q.out = args[next++];
  q.scales = args[next++];
  q.activation = q.activation ? args[next++] : Value();
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
  // Scattered, the units walk the input's rows; else out's.
  int64_t steps = (q.blocks + 1) / 2;
  int64_t unitsPerRow = (steps + q.steps - 1) / q.steps;
  Value walked = q.scatter ? q.r : q.m;
  gridStride(b, b.mul(walked, b.c64(unitsPerRow)), warps, warp, [&](Value unit) {
    Value row = b.divU(unit, b.c64(unitsPerRow));
    Value firstStep = b.toI32(b.mul(b.remU(unit, b.c64(unitsPerRow)),
                                    b.c64(q.steps)));
    if (q.scatter) {
      scatterInputRow(b, q, row, firstStep, half, lane16);
      return;
    }
    Value source = q.rows ? b.toI64(load(b, b.i32(), q.rows, row)) : row;
    quantizeOutRow(b, q, row, source, firstStep, half, lane16);
  });
}

struct LowerQuantizeRowsPass
    : public ggc::impl::LowerQuantizeRowsBase<LowerQuantizeRowsPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::QuantizeRowsOp>(
            getOperation(), "one kernel",
            [&](gg::QuantizeRowsOp op, func::FuncOp func,
                KernelBuilder &b) -> LogicalResult {
              if (failed(checkConvertsE4M3(op)))
                return failure();
              int64_t k =
                  cast<MemRefType>(op.getOut().getType()).getDimSize(1);
              Quantize q{k, op.getGated() ? 2 * k : k, (k + kBlock - 1) / kBlock,
                         int64_t(op.getThreads()), int64_t(op.getSteps()),
                         int64_t(op.getCopies()), op.getGated(),
                         op.getInputScales()};
              // Non-null: the kernel takes the list.
              q.rows = op.getRows();
              q.scatter = op.getScatter();
              q.route = op.getRoute();
              q.activation = op.getActivation();
              if (q.scatter)
                q.scatterIndex =
                    cast<MemRefType>(q.scatter.getType()).getElementType();
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_quantize").str(), q);
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
