//===- LowerCopyRows.cpp - gg-lower-copy-rows -----------------------------===//
//
// gg.copy_rows as one kernel: each thread moves one `unit_bytes` piece of
// one row, from the input row its list names to the output row its list
// names (a grid-stride loop over the rows' pieces); a row whose index lies
// outside its matrix is skipped.
//
//===----------------------------------------------------------------------===//
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERCOPYROWS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

/// What the kernel knows of the op, and its parameters.
struct Copy {
  int64_t rowBytes, unit, threads;
  bool inputList, outList;
  Value input, inputRows, out, outRows, count, inputCount, outCount;
};

/// The row `r` reads or writes: list[r], or r without a list; and whether
/// it lies inside a matrix of `rows` rows.
std::pair<Value, Value> rowOf(KernelBuilder &b, Value list, Value r,
                              Value rows) {
  Value row = list ? b.toI64(load(b, b.i32(), list, r)) : r;
  return {row, b.andI(b.ge(row, b.c64(0)), b.lt(row, rows))};
}

/// The integer type of one piece (a vector of 4 i32 for 16 bytes).
Type pieceType(KernelBuilder &b, int64_t unit) {
  if (unit == 16)
    return VectorType::get({4}, b.i32());
  return b.getIntegerType(8 * unit);
}

void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name, Copy c) {
  Type global = b.ptr(ggc::kGlobal);
  SmallVector<Type> params = {global};
  if (c.inputList)
    params.push_back(global);
  params.push_back(global);
  if (c.outList)
    params.push_back(global);
  params.append({b.i64(), b.i64(), b.i64()});
  ValueRange args = createKernel(b, module, name, c.threads, params);
  unsigned next = 0;
  c.input = args[next++];
  c.inputRows = c.inputList ? args[next++] : Value();
  c.out = args[next++];
  c.outRows = c.outList ? args[next++] : Value();
  c.count = args[next++];
  c.inputCount = args[next++];
  c.outCount = args[next++];
  int64_t pieces = c.rowBytes / c.unit;
  Type piece = pieceType(b, c.unit);
  gridStride(b, b.mul(c.count, b.c64(pieces)), c.threads, b.threadIdx(), [&](Value item) {
    Value r = b.divU(item, b.c64(pieces));
    Value p = b.remU(item, b.c64(pieces));
    auto [from, fromValid] = rowOf(b, c.inputRows, r, c.inputCount);
    auto [to, toValid] = rowOf(b, c.outRows, r, c.outCount);
    ifThen(b, b.andI(fromValid, toValid), [&] {
      Value source = at(b, piece, c.input, b.add(b.mul(from, b.c64(pieces)), p));
      Value moved = b.create<LLVM::LoadOp>(piece, source, c.unit);
      b.create<LLVM::StoreOp>(moved,
                              at(b, piece, c.out, b.add(b.mul(to, b.c64(pieces)), p)),
                              c.unit);
    });
  });
}

struct LowerCopyRowsPass
    : public ggc::impl::LowerCopyRowsBase<LowerCopyRowsPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::CopyRowsOp>(
            getOperation(), "one kernel",
            [&](gg::CopyRowsOp op, func::FuncOp func, KernelBuilder &b) {
              auto type = cast<MemRefType>(op.getOut().getType());
              int64_t rowBytes =
                  type.getDimSize(1) * type.getElementTypeBitWidth() / 8;
              Copy c{rowBytes, int64_t(op.getUnitBytes()),
                     int64_t(op.getThreads()), bool(op.getInputRows()),
                     bool(op.getOutRows())};
              buildKernel(b, getOperation(), (func.getSymName() + "_copy").str(),
                          c);
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
