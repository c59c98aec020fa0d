//===- AwaitPriorGrid.cpp - ggk-await-prior-grid --------------------------===//
//
// Programmatic dependent launch: each kernel's first instruction waits for
// the grid ahead of it in the stream, so that the driver may launch it
// before that grid's writes are flushed. The wait comes before any global
// memory access: whatever the kernel reads (tensors, descriptor pools,
// group offsets) the grid ahead of it may still be writing.
//
//===----------------------------------------------------------------------===//
#include "Target.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace ggc {
#define GEN_PASS_DEF_AWAITPRIORGRID
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;

namespace {

/// `contract` with dependentLaunch set.
ggk::LaunchAttr dependent(ggk::LaunchAttr c) {
  return ggk::LaunchAttr::get(
      c.getContext(), c.getName(), c.getLayout(), c.getBlock(),
      c.getSharedBytes(), c.getCluster(), c.getMaxGrid(), c.getTile(),
      c.getNumGroups(), c.getN(), c.getK(), c.getParams(), c.getArgs(),
      c.getUngroupedSpans(), /*dependentLaunch=*/true);
}

/// `instruction` with a memory clobber, as CUDA's
/// cudaGridDependencySynchronize has it: LLVM's griddepcontrol intrinsics
/// claim no memory, which would let it move a load above the wait.
void emitFence(OpBuilder &b, Location loc, StringRef instruction) {
  b.create<LLVM::InlineAsmOp>(
      loc, TypeRange{}, ValueRange{}, instruction, "~{memory}",
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None, LLVM::AsmDialectAttr(),
      /*operand_attrs=*/ArrayAttr());
}

void awaitPriorGrid(LLVM::LLVMFuncOp kernel, bool launchDependents) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  emitFence(b, kernel.getLoc(), "griddepcontrol.wait;");
  if (launchDependents)
    emitFence(b, kernel.getLoc(), "griddepcontrol.launch_dependents;");
  if (auto contract = kernel->getAttrOfType<ggk::LaunchAttr>("ggk.launch"))
    kernel->setAttr("ggk.launch", dependent(contract));
}

struct AwaitPriorGridPass
    : public ggc::impl::AwaitPriorGridBase<AwaitPriorGridPass> {
  using AwaitPriorGridBase::AwaitPriorGridBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!enabled || !ggc::targetOf(module).gridDependencies)
      return;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (fn->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) &&
          !fn.getBody().empty())
        awaitPriorGrid(fn, launchDependentsAtEntry);
  }
};

} // namespace
