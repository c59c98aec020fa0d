//===- LowerSwigluRows.cpp - gg-lower-swiglu-rows -------------------------===//
//
// gg.swiglu_rows as one kernel: each thread takes 8 output columns of one
// row, loads the gate's and the up half's 16 bytes together, and stores
// silu(gate) * up (times the row's routing weight, where the op has one)
// rounded to bf16. gg.swiglu_rows_backward likewise, with the gradient's
// 16 bytes: the gate's and the up half's gradients. Routed, the backward
// gives each row to a warp, whose lanes sum the routing weight's gradient
// by shuffles; with `quantized`, each half-warp also quantises its 128
// columns of the gradient to e4m3 (gg.quantize_rows' rule).
//
//===----------------------------------------------------------------------===//
#include "Activations.h"
#include "E4M3.h"
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERSWIGLUROWS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name,
                 int64_t inter, int64_t threads, bool routed) {
  Type global = b.ptr(ggc::kGlobal);
  SmallVector<Type> params{global, global, b.i64()};
  if (routed)
    params.insert(params.begin() + 1, global);
  ValueRange args = createKernel(b, module, name, threads, params);
  Value input = args[0], route = routed ? args[1] : Value();
  Value out = args[routed ? 2 : 1], rows = args[routed ? 3 : 2];
  int64_t vectors = inter / kBf16PerVector;
  gridStride(b, b.mul(rows, b.c64(vectors)), threads, b.threadIdx(), [&](Value item) {
    Value row = b.divU(item, b.c64(vectors));
    Value col = b.mul(b.remU(item, b.c64(vectors)), b.c64(kBf16PerVector));
    Value gateAt = b.add(b.mul(row, b.c64(2 * inter)), col);
    SmallVector<Value> gate = loadBf16x8(b, input, gateAt);
    SmallVector<Value> up = loadBf16x8(b, input, b.add(gateAt, b.c64(inter)));
    Value weight = routed ? load(b, b.f32(), route, row) : Value();
    SmallVector<Value> act;
    for (int64_t i = 0; i < kBf16PerVector; ++i) {
      Value a = ggc::swiglu(b, gate[i], up[i]);
      act.push_back(routed ? b.create<arith::MulFOp>(a, weight) : a);
    }
    storeBf16x8(b, act, out, b.add(b.mul(row, b.c64(inter)), col));
  });
}

/// One vector's gradients, for 8 columns of gate `g`, up `u` and the
/// gradient `d` of silu(g) * u (times `weight` where given: d the routed
/// rows' gradient): the gate's d * u * s * (1 + g * (1 - s)), up's
/// d * silu(g), and where weighted the sum of d * silu(g) * u over the 8
/// columns (the weight's gradient), else null.
struct VectorGradients {
  SmallVector<Value> gate, up;
  Value weight;
};

VectorGradients vectorGradients(KernelBuilder &b, ArrayRef<Value> gate, ArrayRef<Value> up,
                                ArrayRef<Value> d, Value weight) {
  VectorGradients grads;
  Value one = b.f32c(1.0);
  grads.weight = weight ? b.f32c(0.0) : Value();
  for (int64_t i = 0; i < kBf16PerVector; ++i) {
    Value s = ggc::sigmoid(b, gate[i]);
    Value silu = b.create<arith::MulFOp>(gate[i], s);
    Value dAct = d[i];
    if (weight) {
      grads.weight = b.create<arith::AddFOp>(
          grads.weight,
          b.create<arith::MulFOp>(d[i], b.create<arith::MulFOp>(silu, up[i])));
      dAct = b.create<arith::MulFOp>(d[i], weight);
    }
    Value slope = b.create<arith::AddFOp>(
        one, b.create<arith::MulFOp>(gate[i], b.create<arith::SubFOp>(one, s)));
    Value dSilu = b.create<arith::MulFOp>(b.create<arith::MulFOp>(dAct, up[i]), s);
    grads.gate.push_back(b.create<arith::MulFOp>(dSilu, slope));
    grads.up.push_back(b.create<arith::MulFOp>(dAct, silu));
  }
  return grads;
}

/// vectorGradients' gate and up gradients stored at `gateAt` and `upAt`;
/// returns the weight's gradient (null unweighted).
Value storeVectorGradients(KernelBuilder &b, ArrayRef<Value> gate, ArrayRef<Value> up,
                           ArrayRef<Value> d, Value weight, Value out, Value gateAt,
                           Value upAt) {
  VectorGradients grads = vectorGradients(b, gate, up, d, weight);
  storeBf16x8(b, grads.gate, out, gateAt);
  storeBf16x8(b, grads.up, out, upAt);
  return grads.weight;
}

/// The gradient of silu(gate) * up for 8 columns of one row, each thread
/// a vector.
void buildBackward(KernelBuilder &b, ModuleOp module, StringRef name,
                   int64_t inter, int64_t threads) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(b, module, name, threads,
                                 {global, global, global, b.i64()});
  Value input = args[0], grad = args[1], out = args[2], rows = args[3];
  int64_t vectors = inter / kBf16PerVector;
  gridStride(b, b.mul(rows, b.c64(vectors)), threads, b.threadIdx(), [&](Value item) {
    Value row = b.divU(item, b.c64(vectors));
    Value col = b.mul(b.remU(item, b.c64(vectors)), b.c64(kBf16PerVector));
    Value gateAt = b.add(b.mul(row, b.c64(2 * inter)), col);
    SmallVector<Value> gate = loadBf16x8(b, input, gateAt);
    SmallVector<Value> up = loadBf16x8(b, input, b.add(gateAt, b.c64(inter)));
    SmallVector<Value> d = loadBf16x8(b, grad, b.add(b.mul(row, b.c64(inter)), col));
    storeVectorGradients(b, gate, up, d, Value(), out, gateAt,
                         b.add(gateAt, b.c64(inter)));
  });
}

/// The routed gradient: a warp a row, each lane 8 columns at a time, the
/// lanes' sums of the routing weight's gradient added by shuffles and
/// stored by lane 0.
void buildRoutedBackward(KernelBuilder &b, ModuleOp module, StringRef name,
                         int64_t inter, int64_t threads) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(b, module, name, threads,
                                 {global, global, global, global, global, b.i64()});
  Value input = args[0], grad = args[1], route = args[2], out = args[3];
  Value routeGrad = args[4], rows = args[5];
  Value tid = b.threadIdx();
  Value warp = b.warpUniform(b.divU(tid, b.c32(32)));
  Value lane = b.toI64(b.remU(tid, b.c32(32)));
  gridStride(b, rows, threads / 32, warp, [&](Value row) {
    Value weight = load(b, b.f32(), route, row);
    auto loop = b.create<scf::ForOp>(b.mul(lane, b.c64(kBf16PerVector)), b.c64(inter),
                                     b.c64(32 * kBf16PerVector),
                                     ValueRange{b.f32c(0.0)});
    atEnd(b, loop.getBody(), [&] {
      Value col = loop.getInductionVar();
      Value gateAt = b.add(b.mul(row, b.c64(2 * inter)), col);
      Value upAt = b.add(gateAt, b.c64(inter));
      SmallVector<Value> gate = loadBf16x8(b, input, gateAt);
      SmallVector<Value> up = loadBf16x8(b, input, upAt);
      SmallVector<Value> d = loadBf16x8(b, grad, b.add(b.mul(row, b.c64(inter)), col));
      Value part = storeVectorGradients(b, gate, up, d, weight, out, gateAt, upAt);
      b.create<scf::YieldOp>(ValueRange{
          b.create<arith::AddFOp>(loop.getRegionIterArgs()[0], part)});
    });
    Value total = warpSum(b, loop.getResult(0));
    ifThen(b, b.eq(lane, b.c64(0)), [&] { store(b, total, routeGrad, row); });
  });
}

/// The 8 gradient values of a lane rounded to bf16, and their 128-column
/// block (the half-warp's 16 lanes) quantised to e4m3: the words and the
/// block's scale, as gg.quantize_rows takes a block.
struct QuantizedVector {
  SmallVector<Value> rounded;
  Value words, scale;
};

QuantizedVector quantizeVector(KernelBuilder &b, ArrayRef<Value> values) {
  QuantizedVector q;
  for (Value v : values)
    q.rounded.push_back(roundedToBf16(b, v));
  HalfWarpBlock block = quantizeHalfWarpBlock(b, q.rounded);
  q.words = block.words;
  q.scale = block.scale;
  return q;
}

/// The routed gradient with its FP8 copy: a warp a row, 256 columns a
/// step (every lane takes every step, as the half-warps' shuffles need;
/// with I an odd multiple of 128 the last step's upper half reads the
/// lower half's columns and stores nothing); each half-warp quantises its
/// gate block and its up block.
void buildQuantizedRoutedBackward(KernelBuilder &b, ModuleOp module, StringRef name,
                                  int64_t inter, int64_t threads) {
  Type global = b.ptr(ggc::kGlobal);
  SmallVector<Type> params(7, global);
  params.append({b.i64(), b.i64()});
  ValueRange args = createKernel(b, module, name, threads, params);
  Value input = args[0], grad = args[1], route = args[2], out = args[3];
  Value routeGrad = args[4], quantized = args[5], scales = args[6];
  Value rows = args[7], ld = args[8];
  Value tid = b.threadIdx();
  Value warp = b.warpUniform(b.divU(tid, b.c32(32)));
  Value lane = b.toI64(b.remU(tid, b.c32(32)));
  Value lane16 = b.remU(lane, b.c64(16));
  int64_t step = 32 * kBf16PerVector;
  gridStride(b, rows, threads / 32, warp, [&](Value row) {
    Value weight = load(b, b.f32(), route, row);
    auto loop = b.create<scf::ForOp>(b.c64(0), b.c64(inter), b.c64(step),
                                     ValueRange{b.f32c(0.0)});
    atEnd(b, loop.getBody(), [&] {
      Value col = b.add(loop.getInductionVar(), b.mul(lane, b.c64(kBf16PerVector)));
      Value active = b.lt(col, b.c64(inter));
      Value readCol = b.select(active, col, b.sub(col, b.c64(128)));
      Value gateAt = b.add(b.mul(row, b.c64(2 * inter)), readCol);
      Value upAt = b.add(gateAt, b.c64(inter));
      SmallVector<Value> gate = loadBf16x8(b, input, gateAt);
      SmallVector<Value> up = loadBf16x8(b, input, upAt);
      SmallVector<Value> d = loadBf16x8(b, grad, b.add(b.mul(row, b.c64(inter)), readCol));
      VectorGradients grads = vectorGradients(b, gate, up, d, weight);
      QuantizedVector qGate = quantizeVector(b, grads.gate);
      QuantizedVector qUp = quantizeVector(b, grads.up);
      ifThen(b, active, [&] {
        storeBf16x8(b, qGate.rounded, out, gateAt);
        storeBf16x8(b, qUp.rounded, out, upAt);
        storeWords(b, qGate.words, quantized, gateAt);
        storeWords(b, qUp.words, quantized, upAt);
        ifThen(b, b.eq(lane16, b.c64(0)), [&] {
          Value gateBlock = b.divU(col, b.c64(128));
          Value upBlock = b.add(gateBlock, b.c64(inter / 128));
          store(b, qGate.scale, scales, b.add(b.mul(gateBlock, ld), row));
          store(b, qUp.scale, scales, b.add(b.mul(upBlock, ld), row));
        });
      });
      Value part = b.select(active, grads.weight, b.f32c(0.0));
      b.create<scf::YieldOp>(ValueRange{
          b.create<arith::AddFOp>(loop.getRegionIterArgs()[0], part)});
    });
    Value total = warpSum(b, loop.getResult(0));
    ifThen(b, b.eq(lane, b.c64(0)), [&] { store(b, total, routeGrad, row); });
  });
}

struct LowerSwigluRowsPass
    : public ggc::impl::LowerSwigluRowsBase<LowerSwigluRowsPass> {
  void runOnOperation() override {
    auto interOf = [](Value narrow) {
      return cast<MemRefType>(narrow.getType()).getDimSize(1);
    };
    if (failed(lowerEachFunction<gg::SwigluRowsOp>(
            getOperation(), "one kernel",
            [&](gg::SwigluRowsOp op, func::FuncOp func, KernelBuilder &b) {
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_swiglu").str(),
                          interOf(op.getOut()), int64_t(op.getThreads()),
                          bool(op.getRoute()));
              return success();
            })) ||
        failed(lowerEachFunction<gg::SwigluRowsBackwardOp>(
            getOperation(), "one kernel",
            [&](gg::SwigluRowsBackwardOp op, func::FuncOp func,
                KernelBuilder &b) {
              std::string name = (func.getSymName() + "_swiglu_backward").str();
              if (op.getQuantized()) {
                if (failed(checkConvertsE4M3(op)))
                  return failure();
                buildQuantizedRoutedBackward(b, getOperation(), name,
                                             interOf(op.getGrad()),
                                             int64_t(op.getThreads()));
              } else if (op.getRoute())
                buildRoutedBackward(b, getOperation(), name, interOf(op.getGrad()),
                                    int64_t(op.getThreads()));
              else
                buildBackward(b, getOperation(), name, interOf(op.getGrad()),
                              int64_t(op.getThreads()));
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
