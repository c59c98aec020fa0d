//===- LowerSwigluRows.cpp - gg-lower-swiglu-rows -------------------------===//
//
// gg.swiglu_rows as one kernel: each thread takes 8 output columns of one
// row, loads the gate's and the up half's 16 bytes together, and stores
// silu(gate) * up rounded to bf16. gg.swiglu_rows_backward likewise, with
// the gradient's 16 bytes: the gate's and the up half's gradients.
//
//===----------------------------------------------------------------------===//
#include "Activations.h"
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
                 int64_t inter, int64_t threads) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args =
      createKernel(b, module, name, threads, {global, global, b.i64()});
  Value input = args[0], out = args[1], rows = args[2];
  int64_t vectors = inter / kBf16PerVector;
  gridStride(b, b.mul(rows, b.c64(vectors)), threads, b.threadIdx(), [&](Value item) {
    Value row = b.divU(item, b.c64(vectors));
    Value col = b.mul(b.remU(item, b.c64(vectors)), b.c64(kBf16PerVector));
    Value gateAt = b.add(b.mul(row, b.c64(2 * inter)), col);
    SmallVector<Value> gate = loadBf16x8(b, input, gateAt);
    SmallVector<Value> up = loadBf16x8(b, input, b.add(gateAt, b.c64(inter)));
    SmallVector<Value> act;
    for (int64_t i = 0; i < kBf16PerVector; ++i)
      act.push_back(ggc::swiglu(b, gate[i], up[i]));
    storeBf16x8(b, act, out, b.add(b.mul(row, b.c64(inter)), col));
  });
}

/// The gradient of silu(gate) * up for 8 columns of one row, each thread
/// a vector: gate's gradient d * u * s * (1 + g * (1 - s)), up's d * silu(g).
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
    Value upAt = b.add(gateAt, b.c64(inter));
    SmallVector<Value> gate = loadBf16x8(b, input, gateAt);
    SmallVector<Value> up = loadBf16x8(b, input, upAt);
    SmallVector<Value> d = loadBf16x8(b, grad, b.add(b.mul(row, b.c64(inter)), col));
    SmallVector<Value> dGate, dUp;
    Value one = b.f32c(1.0);
    for (int64_t i = 0; i < kBf16PerVector; ++i) {
      Value s = ggc::sigmoid(b, gate[i]);
      Value slope = b.create<arith::AddFOp>(
          one, b.create<arith::MulFOp>(gate[i], b.create<arith::SubFOp>(one, s)));
      Value dSilu = b.create<arith::MulFOp>(b.create<arith::MulFOp>(d[i], up[i]), s);
      dGate.push_back(b.create<arith::MulFOp>(dSilu, slope));
      dUp.push_back(b.create<arith::MulFOp>(
          d[i], b.create<arith::MulFOp>(gate[i], s)));
    }
    storeBf16x8(b, dGate, out, gateAt);
    storeBf16x8(b, dUp, out, upAt);
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
                          interOf(op.getOut()), int64_t(op.getThreads()));
              return success();
            })) ||
        failed(lowerEachFunction<gg::SwigluRowsBackwardOp>(
            getOperation(), "one kernel",
            [&](gg::SwigluRowsBackwardOp op, func::FuncOp func,
                KernelBuilder &b) {
              buildBackward(b, getOperation(),
                            (func.getSymName() + "_swiglu_backward").str(),
                            interOf(op.getGrad()), int64_t(op.getThreads()));
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
