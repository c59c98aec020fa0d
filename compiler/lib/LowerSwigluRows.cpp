//===- LowerSwigluRows.cpp - gg-lower-swiglu-rows -------------------------===//
//
// gg.swiglu_rows as one kernel: each thread takes 8 output columns of one
// row, loads the gate's and the up half's 16 bytes together, and stores
// silu(gate) * up rounded to bf16.
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

struct LowerSwigluRowsPass
    : public ggc::impl::LowerSwigluRowsBase<LowerSwigluRowsPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::SwigluRowsOp>(
            getOperation(), "one kernel",
            [&](gg::SwigluRowsOp op, func::FuncOp func, KernelBuilder &b) {
              int64_t inter =
                  cast<MemRefType>(op.getOut().getType()).getDimSize(1);
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_swiglu").str(), inter,
                          int64_t(op.getThreads()));
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
