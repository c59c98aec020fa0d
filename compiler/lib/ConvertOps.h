//===- ConvertOps.h - one-for-one conversions of ggk ops -------*- C++ -*-===//
//
// The per-target conversions at the end of the ggk pass list (the ring,
// the MMA, M-major loads, async copies, threads) each replace some ggk ops
// one for one, wherever they sit; they share this loop.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_CONVERTOPS_H
#define GGC_CONVERTOPS_H

#include "KernelBuilder.h"
#include "ggk/GGKDialect.h"

namespace ggc {

/// Replaces every op of types `Ops` under `root`: `lower(op, b)` emits its
/// instructions with `b` just before it and returns the value standing for
/// its result (null for an op without one); then the op is erased.
template <typename... Ops>
void convertEach(mlir::Operation *root,
                 llvm::function_ref<mlir::Value(mlir::Operation *,
                                                KernelBuilder &)>
                     lower) {
  llvm::SmallVector<mlir::Operation *> found;
  root->walk([&](mlir::Operation *op) {
    if (mlir::isa<Ops...>(op))
      found.push_back(op);
  });
  for (mlir::Operation *op : found) {
    KernelBuilder b(op->getLoc(), op);
    if (mlir::Value result = lower(op, b))
      op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }
}

/// The registers of accumulator `acc` (a !ggk.acc), for a conversion that
/// computes on them before ggk-lower-accumulators has made every
/// accumulator a struct; `asAccumulator` hands them back. Each is a
/// builtin.unrealized_conversion_cast, which ggk-lower-accumulators drops.
inline mlir::Value accumulatorRegisters(KernelBuilder &b, mlir::Value acc) {
  auto type = mlir::cast<mlir::ggk::AccType>(acc.getType());
  return b
      .create<mlir::UnrealizedConversionCastOp>(type.getRegisterStruct(), acc)
      .getResult(0);
}
inline mlir::Value asAccumulator(KernelBuilder &b, mlir::Value registers,
                                 mlir::Type type) {
  return b.create<mlir::UnrealizedConversionCastOp>(type, registers)
      .getResult(0);
}

} // namespace ggc

#endif // GGC_CONVERTOPS_H
