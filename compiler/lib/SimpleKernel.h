//===- SimpleKernel.h - small kernels built op by op ------------*- C++ -*-===//
//
// Control flow, memory and the kernel function for the small kernels that
// lower gg's MoE ops (gg-lower-sort-routes, gg-lower-quantize-rows,
// gg-lower-quantize-blocks, gg-lower-quantize-group-tokens,
// gg-lower-combine-routes, gg-lower-swiglu-rows, gg-lower-select-experts): a
// few lines each, so that those passes read as their algorithm.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_SIMPLEKERNEL_H
#define GGC_SIMPLEKERNEL_H

#include "KernelBuilder.h"
#include "ggk/GGKDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace ggc::simple {

using mlir::Block;
using mlir::function_ref;
using mlir::ModuleOp;
using mlir::SmallVector;
using mlir::StringRef;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;

/// The body of a loop or a branch, built at its terminator.
inline void buildAt(KernelBuilder &b, Block *block, function_ref<void()> body) {
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(block->getTerminator());
  body();
}

/// body() built at the end of `block`, which has no terminator yet (an
/// scf.for with iter_args, an scf.if with results): body makes its yield.
inline void atEnd(KernelBuilder &b, Block *block, function_ref<void()> body) {
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(block);
  body();
}

/// for (i = lb; i < ub; i += step) body(i), on i32 values.
inline void forEach(KernelBuilder &b, Value lb, Value ub, Value step,
             function_ref<void(Value)> body) {
  auto loop = b.create<mlir::scf::ForOp>(lb, ub, step);
  buildAt(b, loop.getBody(), [&] { body(loop.getInductionVar()); });
}

/// The sums `inits` + body(i) over the loop: body returns the addends.
inline SmallVector<Value> sumOver(KernelBuilder &b, Value lb, Value ub, Value step,
                           ValueRange inits,
                           function_ref<SmallVector<Value>(Value)> body) {
  auto loop = b.create<mlir::scf::ForOp>(lb, ub, step, inits);
  atEnd(b, loop.getBody(), [&] {
    SmallVector<Value> sums;
    for (auto [acc, addend] :
         llvm::zip(loop.getRegionIterArgs(), body(loop.getInductionVar())))
      sums.push_back(b.add(acc, addend));
    b.create<mlir::scf::YieldOp>(sums);
  });
  return SmallVector<Value>(loop.getResults());
}

/// body(item) for item = this worker's index, stepping by the grid's
/// workers, while item < count (i64): a grid-stride loop, `perCta` workers
/// a CTA (threads or warps), `worker` this one's index in its CTA.
inline void gridStride(KernelBuilder &b, Value count, int64_t perCta, Value worker,
                       function_ref<void(Value)> body) {
  Value first = b.toI64(b.add(b.mul(b.blockIdx(), b.c32(perCta)), worker));
  Value stride = b.toI64(b.mul(b.gridDim(), b.c32(perCta)));
  auto loop = b.create<mlir::scf::ForOp>(first, count, stride);
  buildAt(b, loop.getBody(), [&] { body(loop.getInductionVar()); });
}

inline void ifThen(KernelBuilder &b, Value condition, function_ref<void()> then) {
  auto op = b.create<mlir::scf::IfOp>(condition, /*withElseRegion=*/false);
  buildAt(b, op.thenBlock(), then);
}

inline void ifThenElse(KernelBuilder &b, Value condition, function_ref<void()> then,
                function_ref<void()> otherwise) {
  auto op = b.create<mlir::scf::IfOp>(condition, /*withElseRegion=*/true);
  buildAt(b, op.thenBlock(), then);
  buildAt(b, op.elseBlock(), otherwise);
}

inline Value at(KernelBuilder &b, Type element, Value base, Value index) {
  return b.create<mlir::LLVM::GEPOp>(base.getType(), element, base,
                               mlir::ArrayRef<mlir::LLVM::GEPArg>{b.toI64(index)});
}
inline void store(KernelBuilder &b, Value value, Value base, Value index) {
  b.create<mlir::LLVM::StoreOp>(value, at(b, value.getType(), base, index));
}
inline Value load(KernelBuilder &b, Type element, Value base, Value index) {
  return b.loadGlobal(element, base, index);
}
inline void atomicAdd(KernelBuilder &b, Value base, Value index, Value value) {
  b.create<mlir::LLVM::AtomicRMWOp>(mlir::LLVM::AtomicBinOp::add,
                              at(b, b.i32(), base, index), value,
                              mlir::LLVM::AtomicOrdering::monotonic);
}
inline void syncCta(KernelBuilder &b) { b.create<mlir::ggk::SyncCtaOp>(); }

/// `value` (f32) from lane `lane ^ lanes` of the warp.
inline Value shuffleXorF32(KernelBuilder &b, Value value, int64_t lanes) {
  Value bits = b.create<mlir::arith::BitcastOp>(b.i32(), value);
  Value theirs = b.create<mlir::ggk::WarpShuffleXorOp>(b.i32(), bits, lanes);
  return b.create<mlir::arith::BitcastOp>(b.f32(), theirs);
}

/// The sum of `value` (f32) over the warp's 32 lanes, in every lane:
/// butterfly shuffles, the same order every run.
inline Value warpSum(KernelBuilder &b, Value value) {
  for (int64_t lanes = 16; lanes >= 1; lanes /= 2)
    value = b.create<mlir::arith::AddFOp>(value, shuffleXorF32(b, value, lanes));
  return value;
}

/// A statically sized shared array of `count` `element`s, one per kernel.
inline Value sharedArray(KernelBuilder &b, ModuleOp module, StringRef name,
                         Type element, int64_t count) {
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    b.create<mlir::LLVM::GlobalOp>(mlir::LLVM::LLVMArrayType::get(element, count),
                                   /*isConstant=*/false, mlir::LLVM::Linkage::Internal,
                                   name, mlir::Attribute(), /*alignment=*/16,
                                   ggc::kShared);
  }
  return b.create<mlir::LLVM::AddressOfOp>(b.ptr(ggc::kShared), name);
}

/// Elements of bf16 in the 16 bytes a thread loads or stores at once.
constexpr int64_t kBf16PerVector = 8;

/// The 8 bf16 at base[index..] (16 bytes, aligned) as f32.
inline SmallVector<Value> loadBf16x8(KernelBuilder &b, Value base, Value index) {
  Value address = at(b, b.getBF16Type(), base, index);
  Value loaded = b.create<mlir::LLVM::LoadOp>(
      mlir::VectorType::get({4}, b.i32()), address, /*alignment=*/16);
  Value halves = b.create<mlir::LLVM::BitcastOp>(
      mlir::VectorType::get({kBf16PerVector}, b.getBF16Type()), loaded);
  SmallVector<Value> values;
  for (int64_t i = 0; i < kBf16PerVector; ++i) {
    Value element = b.create<mlir::LLVM::ExtractElementOp>(halves, b.c32(i));
    values.push_back(b.create<mlir::arith::ExtFOp>(b.f32(), element));
  }
  return values;
}

/// `value` rounded to bf16 and back to f32: what a stored bf16 reads as.
inline Value roundedToBf16(KernelBuilder &b, Value value) {
  Value rounded = b.create<mlir::arith::TruncFOp>(b.getBF16Type(), value);
  return b.create<mlir::arith::ExtFOp>(b.f32(), rounded);
}

/// 8 f32 `values` rounded to bf16, stored as 16 bytes at base[index..].
inline void storeBf16x8(KernelBuilder &b, mlir::ArrayRef<Value> values,
                        Value base, Value index) {
  Value packed = b.create<mlir::LLVM::PoisonOp>(
      mlir::VectorType::get({kBf16PerVector}, b.getBF16Type()));
  for (int64_t i = 0; i < kBf16PerVector; ++i) {
    Value rounded = b.create<mlir::arith::TruncFOp>(b.getBF16Type(), values[i]);
    packed = b.create<mlir::LLVM::InsertElementOp>(packed, rounded, b.c32(i));
  }
  Value words = b.create<mlir::LLVM::BitcastOp>(
      mlir::VectorType::get({4}, b.i32()), packed);
  b.create<mlir::LLVM::StoreOp>(words, at(b, b.getBF16Type(), base, index),
                                /*alignment=*/16);
}

/// An empty kernel `name` of `threads` threads taking `params`, with the
/// builder at its end; returns its arguments.
inline ValueRange createKernel(KernelBuilder &b, ModuleOp module, StringRef name,
                        int64_t threads, mlir::ArrayRef<Type> params) {
  mlir::MLIRContext *ctx = b.getContext();
  b.setInsertionPointToEnd(module.getBody());
  auto fn = b.create<mlir::LLVM::LLVMFuncOp>(
      name, mlir::LLVM::LLVMFunctionType::get(mlir::LLVM::LLVMVoidType::get(ctx), params));
  fn->setAttr("nvvm.kernel", mlir::UnitAttr::get(ctx));
  fn->setAttr("nvvm.maxntid",
              mlir::DenseI32ArrayAttr::get(ctx, {int32_t(threads), 1, 1}));
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToEnd(entry);
  b.create<mlir::LLVM::ReturnOp>(ValueRange());
  b.setInsertionPoint(entry->getTerminator());
  return entry->getArguments();
}

/// Runs `build` on each function's one `OpT` (with a builder at the op),
/// then erases the function; marks the module's triple for NVPTX. A
/// function holding more than one `OpT` is an error naming `what` (the
/// op's kernels); so is whatever `build` fails on.
template <typename OpT>
mlir::LogicalResult
lowerEachFunction(ModuleOp module, StringRef what,
                  function_ref<mlir::LogicalResult(OpT, mlir::func::FuncOp,
                                                   KernelBuilder &)>
                      build) {
  SmallVector<mlir::func::FuncOp> funcs(module.getOps<mlir::func::FuncOp>());
  for (mlir::func::FuncOp func : funcs) {
    SmallVector<OpT> ops(func.getOps<OpT>());
    if (ops.empty())
      continue;
    if (ops.size() > 1)
      return func.emitOpError()
             << "holds " << ops.size() << " " << OpT::getOperationName()
             << " ops; its lowering makes " << what << " per function";
    KernelBuilder b(ops.front().getLoc(), module.getContext());
    if (mlir::failed(build(ops.front(), func, b)))
      return mlir::failure();
    func.erase();
  }
  module->setAttr("llvm.target_triple",
                  mlir::StringAttr::get(module.getContext(),
                                        "nvptx64-nvidia-cuda"));
  return mlir::success();
}

} // namespace ggc::simple

#endif // GGC_SIMPLEKERNEL_H
