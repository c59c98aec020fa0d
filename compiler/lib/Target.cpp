//===- Target.cpp - the GPU a module's kernels are compiled for -----------===//
#include "Target.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace ggc {

namespace {
const int kHopper[] = {90};
const int kA100[] = {80};
const int kAmpereConsumer[] = {86, 87}; // RTX 30, A10, A40; Orin
const int kAda[] = {89};

// The opt-in shared memory of a CTA: 227 KiB on Hopper, 163 KiB on A100
// (sm_80), 99 KiB on sm_86/sm_89 (RTX 30/40, L40S, A10).
const Target kTargets[] = {
    {"sm_90a", kHopper, 232448, MmaKind::wgmma, AsyncCopyKind::tma,
     /*tensorMaps=*/true, /*clusters=*/true, /*registerReallocation=*/true,
     /*mbarrierTryWait=*/true, /*fp8Mma=*/true,
     /*gridDependencies=*/true},
    {"sm_80", kA100, 166912, MmaKind::mmaSync, AsyncCopyKind::cpAsync,
     /*tensorMaps=*/false, /*clusters=*/false,
     /*registerReallocation=*/false, /*mbarrierTryWait=*/false,
     /*fp8Mma=*/false, /*gridDependencies=*/false},
    {"sm_86", kAmpereConsumer, 101376, MmaKind::mmaSync,
     AsyncCopyKind::cpAsync, /*tensorMaps=*/false, /*clusters=*/false,
     /*registerReallocation=*/false, /*mbarrierTryWait=*/false,
     /*fp8Mma=*/false, /*gridDependencies=*/false},
    {"sm_89", kAda, 101376, MmaKind::mmaSync, AsyncCopyKind::cpAsync,
     /*tensorMaps=*/false, /*clusters=*/false,
     /*registerReallocation=*/false, /*mbarrierTryWait=*/false,
     /*fp8Mma=*/true, /*gridDependencies=*/false},
};
} // namespace

llvm::StringRef stringifyMmaKind(MmaKind kind) {
  return kind == MmaKind::wgmma ? "wgmma" : "mma_sync";
}

llvm::StringRef stringifyAsyncCopyKind(AsyncCopyKind kind) {
  return kind == AsyncCopyKind::tma ? "tma" : "cp_async";
}

llvm::ArrayRef<Target> allTargets() { return kTargets; }

std::optional<Target> lookupTarget(llvm::StringRef arch) {
  for (const Target &t : kTargets)
    if (t.name == arch)
      return t;
  return std::nullopt;
}

std::optional<Target> targetForCapability(int major, int minor) {
  for (const Target &t : kTargets)
    if (t.runsOn(major, minor))
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
    return kTargets[0];
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
  return succeeded(t) ? *t : kTargets[0];
}

} // namespace ggc
