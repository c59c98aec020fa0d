//===- Target.cpp - the GPU a module's kernels are compiled for -----------===//
#include "Target.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace ggc {

namespace {
// The opt-in shared memory of a CTA: 227 KiB on Hopper, 163 KiB on A100
// (sm_80), 99 KiB on sm_86/sm_89 (RTX 30/40, L40S, A10).
const Target kTargets[] = {
    {"sm_90a", true, 232448, true},
    {"sm_80", false, 166912, false},
    {"sm_86", false, 101376, false},
    {"sm_89", false, 101376, true},
};
} // namespace

std::optional<Target> lookupTarget(llvm::StringRef arch) {
  for (const Target &t : kTargets)
    if (t.name == arch)
      return t;
  return std::nullopt;
}

std::string supportedTargets() {
  std::string names;
  for (const Target &t : kTargets)
    names += (names.empty() ? "" : ", ") + t.name.str();
  return names;
}

FailureOr<Target> readTarget(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op)
                                  : op->getParentOfType<ModuleOp>();
  Attribute attr = module ? module->getAttr(kTargetAttr) : Attribute();
  if (!attr)
    return *lookupTarget("sm_90a");
  auto name = dyn_cast<StringAttr>(attr);
  if (std::optional<Target> t =
          name ? lookupTarget(name.getValue()) : std::nullopt)
    return *t;
  return module->emitError()
         << kTargetAttr << " must be a string naming one of "
         << supportedTargets() << ", got " << attr;
}

Target targetOf(Operation *op) {
  FailureOr<Target> t = readTarget(op);
  return succeeded(t) ? *t : *lookupTarget("sm_90a");
}

} // namespace ggc
