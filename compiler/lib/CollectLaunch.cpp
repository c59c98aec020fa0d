//===- CollectLaunch.cpp - ggk-collect-launch ------------------------------===//
//
// The kernel's launch contract, completed from the kernel that remains at
// the end of the pipeline: gg-lower-to-nvvm wrote what the source op fixes
// (#ggk.launch's tile, sizes, grid bound and tensors); the block is the
// kernel's nvvm.maxntid (ggk-warp-specialize made the roles), the dynamic
// shared memory its ggk.shared_bytes (ggk-allocate-shared-memory placed the
// buffers), and the parameters each argument's ggk.param, in order.
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
      partial.getArgs());
}

struct CollectLaunchPass
    : public ggc::impl::CollectLaunchBase<CollectLaunchPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto partial = fn->getAttrOfType<ggk::LaunchAttr>("ggk.launch");
      if (!partial)
        continue;
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
