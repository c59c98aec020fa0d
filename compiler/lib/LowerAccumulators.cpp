//===- LowerAccumulators.cpp - ggk-lower-accumulators ---------------------===//
//
// The typed accumulators (!ggk.acc) made registers: each value becomes an
// !llvm.struct of its thread's f32, and the ops that make, read and write
// one name the registers its layout gives. Runs after the MMA's lowerings
// (which read the layout from the type), on every target.
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERACCUMULATORS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// The accumulator type an op makes or reads.
ggk::AccType accTypeOf(Operation *op) {
  if (auto origin = dyn_cast<ggk::AccOriginOp>(op))
    return origin.getAccType();
  if (auto get = dyn_cast<ggk::AccGetOp>(op))
    return cast<ggk::AccType>(get.getAcc().getType());
  return cast<ggk::AccType>(op->getResult(0).getType());
}

/// Zeros in every register.
Value zeros(KernelBuilder &b, LLVM::LLVMStructType type) {
  Value zeros = b.create<LLVM::UndefOp>(type);
  Value zero = b.f32c(0.0);
  for (size_t i = 0; i < type.getBody().size(); ++i)
    zeros = b.create<LLVM::InsertValueOp>(zeros, zero, i);
  return zeros;
}

/// The registers through an empty side-effecting inline asm, each output
/// tied to its input: whatever computes them stays before it, and no
/// side-effecting op (wgmma, a barrier wait) moves above it. Without it
/// LLVM sinks pure arithmetic past a wgmma issue, keeping registers live
/// that the schedule meant to free.
Value pin(KernelBuilder &b, Value registers) {
  auto type = cast<LLVM::LLVMStructType>(registers.getType());
  int64_t n = type.getBody().size();
  SmallVector<Value> operands;
  std::string constraints;
  for (int64_t i = 0; i < n; ++i) {
    operands.push_back(b.create<LLVM::ExtractValueOp>(registers, i));
    constraints += "=f,";
  }
  for (int64_t i = 0; i < n; ++i)
    constraints += std::to_string(i) + (i + 1 < n ? "," : "");
  return b
      .create<LLVM::InlineAsmOp>(type, operands, /*asm_string=*/"",
                                 constraints, /*has_side_effects=*/true,
                                 /*is_align_stack=*/false,
                                 LLVM::TailCallKind::None,
                                 LLVM::AsmDialectAttr(),
                                 /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

/// The thread's first row and column in the tile, and its warp's first
/// row, for an accumulator at (`firstRow`, `firstColumn`).
SmallVector<Value> origin(KernelBuilder &b, ggk::AccType type, Value firstRow,
                          Value firstColumn) {
  int64_t warpColumns = type.getWarpColumns();
  Value tid = b.remU(b.threadIdx(), b.c32(128));
  Value warp = b.warpUniform(b.divU(tid, b.c32(32)));
  Value lane = b.remU(tid, b.c32(32));
  Value warpRow = b.add(firstRow, b.mul(b.divU(warp, b.c32(warpColumns)),
                                        b.c32(16 * warpColumns)));
  Value warpColumn = b.add(
      firstColumn, b.mul(b.remU(warp, b.c32(warpColumns)),
                         b.c32(type.getColumns() / warpColumns)));
  return {b.add(warpRow, b.divU(lane, b.c32(4))),
          b.add(warpColumn, b.mul(b.remU(lane, b.c32(4)), b.c32(2))),
          warpRow};
}

int64_t registerAt(ggk::AccType type, ArrayRef<int64_t> position) {
  return type.getRegister(position[0], position[1], position[2]);
}

/// Lowers `op` (its accumulator operands already structs) with `type`,
/// the accumulator type it had.
void lower(Operation *op, ggk::AccType type) {
  KernelBuilder b(op->getLoc(), op);
  auto registers = type.getRegisterStruct();
  SmallVector<Value> results;
  if (isa<ggk::AccZeroOp>(op))
    results = {zeros(b, registers)};
  else if (isa<ggk::AccUndefOp>(op))
    results = {b.create<LLVM::UndefOp>(registers)};
  else if (auto get = dyn_cast<ggk::AccGetOp>(op))
    results = {b.create<LLVM::ExtractValueOp>(
        get.getAcc(), registerAt(type, get.getPosition()))};
  else if (auto set = dyn_cast<ggk::AccSetOp>(op))
    results = {b.create<LLVM::InsertValueOp>(
        set.getAcc(), set.getValue(), registerAt(type, set.getPosition()))};
  else if (auto pinned = dyn_cast<ggk::AccPinOp>(op))
    results = {pin(b, pinned.getAcc())};
  else {
    auto at = cast<ggk::AccOriginOp>(op);
    results = origin(b, type, at.getFirstRow(), at.getFirstColumn());
  }
  op->replaceAllUsesWith(results);
  op->erase();
}

bool holdsAcc(TypeRange types) {
  return llvm::any_of(types, [](Type t) { return isa<ggk::AccType>(t); });
}

/// What the in-place retyping cannot rewrite: an MMA not yet lowered (its
/// operand would become a struct), and a function signature that names
/// the type (accumulators live inside a kernel).
LogicalResult checkLowerable(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    if (isa<ggk::MmaOp>(op)) {
      op->emitOpError() << "must be lowered (ggk-lower-mma or "
                           "ggk-lower-mma-sync) before its accumulator is";
      return WalkResult::interrupt();
    }
    auto fn = dyn_cast<FunctionOpInterface>(op);
    if (fn && (holdsAcc(fn.getArgumentTypes()) ||
               holdsAcc(fn.getResultTypes()))) {
      op->emitOpError() << "takes or returns a !ggk.acc, which "
                           "ggk-lower-accumulators lowers only inside a "
                           "function";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct LowerAccumulators
    : public ggc::impl::LowerAccumulatorsBase<LowerAccumulators> {
  void runOnOperation() override {
    if (failed(checkLowerable(getOperation())))
      return signalPassFailure();
    // The ops with the types they had: once the values are structs, the
    // layout is known only from here. The casts to and from registers
    // (the MMA lowerings') must cast a struct to itself once retyped.
    SmallVector<std::pair<Operation *, ggk::AccType>> ops;
    SmallVector<UnrealizedConversionCastOp> casts;
    getOperation().walk([&](Operation *op) {
      if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op))
        if (holdsAcc(cast->getOperandTypes()) ||
            holdsAcc(cast->getResultTypes()))
          casts.push_back(cast);
      if (isa<ggk::AccZeroOp, ggk::AccUndefOp, ggk::AccGetOp, ggk::AccSetOp,
              ggk::AccPinOp, ggk::AccOriginOp>(op))
        ops.push_back({op, accTypeOf(op)});
    });
    auto retype = [](Value v) {
      if (auto type = dyn_cast<ggk::AccType>(v.getType()))
        v.setType(type.getRegisterStruct());
    };
    // Every accumulator value at once, wherever it flows (loop-carried,
    // yielded, region arguments), so that no op sees two types for it.
    getOperation().walk([&](Operation *op) {
      for (Value result : op->getResults())
        retype(result);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument argument : block.getArguments())
            retype(argument);
    });
    for (auto [op, type] : ops)
      lower(op, type);
    for (UnrealizedConversionCastOp cast : casts) {
      if (cast->getNumOperands() != 1 || cast->getNumResults() != 1 ||
          cast.getOperand(0).getType() != cast.getResult(0).getType()) {
        cast.emitOpError() << "casts a !ggk.acc to or from something other "
                              "than its registers, "
                           << cast->getResultTypes();
        return signalPassFailure();
      }
      cast.getResult(0).replaceAllUsesWith(cast.getOperand(0));
      cast.erase();
    }
  }
};

} // namespace
