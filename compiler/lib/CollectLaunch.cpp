//===- CollectLaunch.cpp - ggk-collect-launch ------------------------------===//
//
// The kernel's launch contract, completed from the kernel that remains at
// the end of the pipeline: gg-lower-to-nvvm wrote what the source op fixes
// (#ggk.launch's tile, sizes, grid bound and tensors); the block is the
// kernel's nvvm.maxntid (ggk-warp-specialize made the roles), the dynamic
// shared memory its ggk.shared_bytes (ggk-allocate-shared-memory placed the
// buffers), and the parameters: each ggk.kernel_param, in order, made an
// argument of the kernel after those it has, whose ggk.param say what
// feeds them.
//
//===----------------------------------------------------------------------===//
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace ggc {
#define GEN_PASS_DEF_COLLECTLAUNCH
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;

namespace {

using ggk::kParamAttrName;
using ggk::kSharedBytesAttrName;

/// Each ggk.kernel_param of `fn`, in the order they appear, as an argument
/// after those `fn` has, with its #ggk.param.
void addParameters(LLVM::LLVMFuncOp fn) {
  SmallVector<ggk::KernelParamOp> found;
  fn.walk([&](ggk::KernelParamOp op) { found.push_back(op); });
  if (found.empty())
    return;
  MLIRContext *ctx = fn.getContext();
  // (LLVMFuncOp's insertArgument cannot retype a void function.)
  LLVM::LLVMFunctionType type = fn.getFunctionType();
  SmallVector<Type> inputs(type.getParams());
  SmallVector<DictionaryAttr> argAttrs;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    argAttrs.push_back(fn.getArgAttrDict(i) ? fn.getArgAttrDict(i)
                                            : DictionaryAttr::get(ctx));
  Block &entry = fn.getBody().front();
  for (ggk::KernelParamOp op : found) {
    NamedAttrList attrs;
    attrs.set(kParamAttrName, op.getParam());
    if (op.getParam().getKind() == ggk::ParamKind::tensor_map) {
      // Tensor maps are passed by value as __grid_constant__ parameters, so
      // the TMA unit reads them from parameter space with no copy to
      // device memory.
      attrs.set("llvm.byval", TypeAttr::get(LLVM::LLVMArrayType::get(
                                  IntegerType::get(ctx, 8), 128)));
      attrs.set("llvm.align",
                IntegerAttr::get(IntegerType::get(ctx, 64), 64));
      attrs.set("nvvm.grid_constant", UnitAttr::get(ctx));
    }
    inputs.push_back(op.getValue().getType());
    argAttrs.push_back(attrs.getDictionary(ctx));
    op.getValue().replaceAllUsesWith(
        entry.addArgument(op.getValue().getType(), op.getLoc()));
    op.erase();
  }
  fn.setFunctionType(LLVM::LLVMFunctionType::get(type.getReturnType(), inputs,
                                                 type.isVarArg()));
  fn.setAllArgAttrs(argAttrs);
}

/// The complete contract of `fn`, or failure with an error on `fn`.
FailureOr<ggk::LaunchAttr> collect(LLVM::LLVMFuncOp fn,
                                   ggk::LaunchAttr partial) {
  auto block = fn->getAttrOfType<DenseI32ArrayAttr>("nvvm.maxntid");
  if (!block || block.size() != 3 || block[1] != 1 || block[2] != 1)
    return fn.emitOpError() << "has no nvvm.maxntid [threads, 1, 1] for its "
                               "launch; ggk-warp-specialize sets it";
  auto shared = fn->getAttrOfType<IntegerAttr>(kSharedBytesAttrName);
  if (!shared)
    return fn.emitOpError() << "has no " << kSharedBytesAttrName
                            << " for its launch; ggk-allocate-shared-memory "
                               "sets it";
  SmallVector<Attribute> params;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto param = fn.getArgAttrOfType<ggk::ParamAttr>(i, kParamAttrName);
    if (!param)
      return fn.emitOpError()
             << "argument " << i << " has no " << kParamAttrName
             << ": nothing says what feeds it at launch";
    params.push_back(param);
  }
  std::optional<int64_t> threads = block[0], bytes = shared.getInt();
  auto emitError = [&] { return fn.emitOpError(); };
  return ggk::LaunchAttr::getChecked(
      emitError, fn.getContext(), partial.getName(), partial.getLayout(),
      threads, bytes, partial.getCluster(), partial.getMaxGrid(),
      partial.getTile(), partial.getNumGroups(), partial.getN(),
      partial.getK(), ArrayAttr::get(fn.getContext(), params),
      partial.getArgs(), partial.getUngroupedSpans(),
      partial.getDependentLaunch());
}

struct CollectLaunchPass
    : public ggc::impl::CollectLaunchBase<CollectLaunchPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto partial = fn->getAttrOfType<ggk::LaunchAttr>("ggk.launch");
      if (!partial)
        continue;
      addParameters(fn);
      FailureOr<ggk::LaunchAttr> launch = collect(fn, partial);
      if (failed(launch) || !*launch)
        return signalPassFailure();
      fn->setAttr("ggk.launch", *launch);
      fn->removeAttr(kSharedBytesAttrName);
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        fn.removeArgAttr(i, kParamAttrName);
    }
  }
};

} // namespace
