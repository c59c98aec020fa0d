//===- LowerTransposeScales.cpp - gg-lower-transpose-scales ---------------===//
//
// gg.transpose_scales as one kernel: each thread writes one scale of `out`
// (a grid-stride loop over B x C x A, in out's order, so that a warp's
// stores are one 128-byte line); it reads that scale from row r, column c
// of the input, or writes 0 for rows from R to A. A warp's reads are a row
// apart: L2 serves the eight columns of one 32-byte sector to eight warps.
// (The first form, one row a thread with its C loads together, launched
// B x A / 256 CTAs: 32 for 8192 rows, a quarter of an H200's SMs.)
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

/// `out`'s scales in order, each read from its row of `input` (or 0).
void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(b, module, name, kThreads,
                                 {global, global, b.i64(), b.i64(), b.i64(), b.i64()});
  Value input = args[0], out = args[1];
  Value batches = args[2], rows = args[3], columns = args[4], aligned = args[5];
  Value scales = b.mul(b.mul(batches, columns), aligned);
  gridStride(b, scales, kThreads, b.threadIdx(), [&](Value item) {
    Value row = b.remU(item, aligned);
    Value batchColumn = b.divU(item, aligned);
    Value column = b.remU(batchColumn, columns);
    Value batch = b.divU(batchColumn, columns);
    // Scale c of row r of batch b is at (b R + r) C + c in input.
    Value from = b.add(b.mul(b.add(b.mul(batch, rows), row), columns), column);
    Value value = b.create<scf::IfOp>(
        b.lt(row, rows),
        [&](OpBuilder &, Location) {
          b.create<scf::YieldOp>(ValueRange{load(b, b.f32(), input, from)});
        },
        [&](OpBuilder &, Location) {
          b.create<scf::YieldOp>(ValueRange{b.f32c(0.0)});
        }).getResult(0);
    store(b, value, out, item);
  });
}

struct LowerTransposeScalesPass
    : public ggc::impl::LowerTransposeScalesBase<LowerTransposeScalesPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::TransposeScalesOp>(
            getOperation(), "one kernel",
            [&](gg::TransposeScalesOp op, func::FuncOp func, KernelBuilder &b) {
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_transpose_scales").str());
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
