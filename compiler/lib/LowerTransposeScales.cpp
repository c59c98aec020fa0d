//===- LowerTransposeScales.cpp - gg-lower-transpose-scales ---------------===//
//
// gg.transpose_scales as one kernel: each thread takes one row of one
// batch (a grid-stride loop over B x A), reads its C scales (all at once
// where C is static) and writes each a row of `out` apart, so that a warp
// writes one K block's scales of 32 adjacent rows together; rows from R to
// A write zeros.
//
//===----------------------------------------------------------------------===//
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERTRANSPOSESCALES
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

constexpr int64_t kThreads = 256;

/// The row's C scales from `from` on (0s past the rows): with C known, C
/// loads issued together, so that they are in flight at once.
SmallVector<Value> rowScales(KernelBuilder &b, Value input, Value from,
                             Value inRows, int64_t columns) {
  SmallVector<Type> types(columns, b.f32());
  auto read = b.create<scf::IfOp>(
      inRows,
      [&](OpBuilder &, Location) {
        SmallVector<Value> values;
        for (int64_t c = 0; c < columns; ++c)
          values.push_back(load(b, b.f32(), input, b.add(from, b.c64(c))));
        b.create<scf::YieldOp>(values);
      },
      [&](OpBuilder &, Location) {
        b.create<scf::YieldOp>(SmallVector<Value>(columns, b.f32c(0.0)));
      });
  return SmallVector<Value>(read.getResults());
}

/// `staticColumns`: C where the op's type gives it (dynamic: a loop).
void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name,
                 int64_t staticColumns) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(b, module, name, kThreads,
                                 {global, global, b.i64(), b.i64(), b.i64(), b.i64()});
  Value input = args[0], out = args[1];
  Value batches = args[2], rows = args[3], columns = args[4], aligned = args[5];
  gridStride(b, b.mul(batches, aligned), kThreads, b.threadIdx(), [&](Value item) {
    Value batch = b.divU(item, aligned);
    Value row = b.remU(item, aligned);
    Value inRows = b.lt(row, rows);
    // Row r of batch b starts at (b R + r) C in input; block c of it goes
    // to (b C + c) A + r in out.
    Value from = b.mul(b.add(b.mul(batch, rows), row), columns);
    Value to = b.add(b.mul(b.mul(batch, columns), aligned), row);
    if (!ShapedType::isDynamic(staticColumns)) {
      for (auto [c, value] : llvm::enumerate(
               rowScales(b, input, from, inRows, staticColumns)))
        store(b, value, out, b.add(to, b.mul(b.c64(c), aligned)));
      return;
    }
    auto loop = b.create<scf::ForOp>(b.c64(0), columns, b.c64(1));
    buildAt(b, loop.getBody(), [&] {
      Value c = loop.getInductionVar();
      Value value = b.create<scf::IfOp>(
          inRows,
          [&](OpBuilder &, Location) {
            b.create<scf::YieldOp>(
                ValueRange{load(b, b.f32(), input, b.add(from, c))});
          },
          [&](OpBuilder &, Location) {
            b.create<scf::YieldOp>(ValueRange{b.f32c(0.0)});
          }).getResult(0);
      store(b, value, out, b.add(to, b.mul(c, aligned)));
    });
  });
}

struct LowerTransposeScalesPass
    : public ggc::impl::LowerTransposeScalesBase<LowerTransposeScalesPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::TransposeScalesOp>(
            getOperation(), "one kernel",
            [&](gg::TransposeScalesOp op, func::FuncOp func, KernelBuilder &b) {
              auto type = cast<MemRefType>(op.getInput().getType());
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_transpose_scales").str(),
                          type.getShape().back());
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
