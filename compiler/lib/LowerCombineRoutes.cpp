//===- LowerCombineRoutes.cpp - gg-lower-combine-routes -------------------===//
//
// gg.combine_routes as one kernel: each thread sums 8 columns of one
// token's routed rows in f32, in slot order (the same bits on every run),
// and stores them rounded to bf16.
//
//===----------------------------------------------------------------------===//
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERCOMBINEROUTES
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

constexpr int64_t kThreadCols = kBf16PerVector; // 16 bytes of bf16

/// What the kernel knows of the op, and its parameters.
struct Combine {
  int64_t h, topK, threads;
  Type positionType;
  Value input, position, out, tokens, rows;
};

/// The 8 bf16 at input[row, col] as f32, zeros where `valid` is false.
SmallVector<Value> loadEight(KernelBuilder &b, const Combine &c, Value row,
                             Value col, Value valid) {
  SmallVector<Value> values =
      loadBf16x8(b, c.input, b.add(b.mul(row, b.c64(c.h)), col));
  for (Value &v : values)
    v = b.select(valid, v, b.f32c(0.0));
  return values;
}

/// One token's 8 columns: the slots' loads first, then their sum in slot
/// order, stored as 16 bytes of bf16.
void combineColumns(KernelBuilder &b, const Combine &c, Value token,
                    Value col) {
  SmallVector<SmallVector<Value>> slots;
  Value last = b.sub(c.rows, b.c64(1));
  for (int64_t j = 0; j < c.topK; ++j) {
    Value route = b.add(b.mul(token, b.c64(c.topK)), b.c64(j));
    Value row = b.toI64(load(b, c.positionType, c.position, route));
    Value valid = b.andI(b.ge(row, b.c64(0)), b.lt(row, c.rows));
    slots.push_back(loadEight(b, c, b.clampS(row, b.c64(0), last), col, valid));
  }
  SmallVector<Value> sums;
  for (int64_t i = 0; i < kThreadCols; ++i) {
    Value sum = slots[0][i];
    for (int64_t j = 1; j < c.topK; ++j)
      sum = b.create<arith::AddFOp>(sum, slots[j][i]);
    sums.push_back(sum);
  }
  storeBf16x8(b, sums, c.out, b.add(b.mul(token, b.c64(c.h)), col));
}

void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name,
                 Combine c) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(b, module, name, c.threads,
                                 {global, global, global, b.i64(), b.i64()});
  c.input = args[0];
  c.position = args[1];
  c.out = args[2];
  c.tokens = args[3];
  c.rows = args[4];
  int64_t chunks = c.h / kThreadCols;
  Value items = b.mul(c.tokens, b.c64(chunks));
  gridStride(b, items, c.threads, b.threadIdx(), [&](Value item) {
    Value token = b.divU(item, b.c64(chunks));
    Value col = b.mul(b.remU(item, b.c64(chunks)), b.c64(kThreadCols));
    combineColumns(b, c, token, col);
  });
}

struct LowerCombineRoutesPass
    : public ggc::impl::LowerCombineRoutesBase<LowerCombineRoutesPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::CombineRoutesOp>(
            getOperation(), "one kernel",
            [&](gg::CombineRoutesOp op, func::FuncOp func, KernelBuilder &b) {
              Combine c{cast<MemRefType>(op.getOut().getType()).getDimSize(1),
                        int64_t(op.getTopK()), int64_t(op.getThreads()),
                        cast<MemRefType>(op.getPosition().getType())
                            .getElementType()};
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_combine").str(), c);
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
