//===- Target.h - the GPU a module's kernels are compiled for ---*- C++ -*-===//
//
// The target is the user's choice (ggc --arch, the runtime's device), held
// in the IR as the module's `gg.target` string so that every pass reads
// the same one and a lit test can set it. Without the attribute a module
// targets sm_90a.
//
// Two lowerings share the generator's ggk kernel: Hopper's (TMA, wgmma,
// setmaxnreg, clusters) and the one for sm_80/sm_86/sm_89 (cp.async into
// the same swizzled stages, ldmatrix and mma.sync on the same accumulator
// fragment).
//
//===----------------------------------------------------------------------===//
#ifndef GGC_TARGET_H
#define GGC_TARGET_H

#include "mlir/IR/Operation.h"

#include <optional>

namespace ggc {

struct Target {
  llvm::StringRef name; // "sm_90a", "sm_80", "sm_86", "sm_89"
  /// TMA, wgmma, setmaxnreg, clusters and mbarrier try_wait/expect_tx.
  bool hopper;
  /// Shared memory one CTA may use (the opt-in maximum).
  int64_t sharedMemoryBytes;
  /// Tensor cores that multiply FP8 (e4m3, e5m2): wgmma's, or sm_89's
  /// mma.sync m16n8k32.
  bool fp8;
  /// The first consumer thread: after the producer's warpgroup on sm_90a
  /// (its one thread issues the TMA loads), the first thread before it (a
  /// producer warpgroup, where there is one, comes last).
  int64_t firstConsumerThread() const { return hopper ? 128 : 0; }
};

/// The shared memory one CTA may use: the device's opt-in maximum where
/// the caller knows the device (`deviceBytes` > 0: an A100's 163 KiB, an
/// H100's 227 KiB, an RTX 4090's 99 KiB), else (0; gg-select-config
/// refuses a negative budget before any other pass reads one) the
/// target's.
inline int64_t sharedMemoryBudget(const Target &target, int64_t deviceBytes) {
  return deviceBytes > 0 ? deviceBytes : target.sharedMemoryBytes;
}

/// The module attribute that names the target.
constexpr llvm::StringLiteral kTargetAttr = "gg.target";

/// The target named `arch`, or none when ggc has no lowering for it.
std::optional<Target> lookupTarget(llvm::StringRef arch);
/// The targets ggc lowers to, for messages: "sm_90a, sm_80, sm_86, sm_89".
std::string supportedTargets();
/// The target of `op`'s module (sm_90a without `gg.target`), or failure,
/// reported on the module, when `gg.target` names none.
mlir::FailureOr<Target> readTarget(mlir::Operation *op);
/// The same, for passes after gg-select-config, which checked it.
Target targetOf(mlir::Operation *op);

} // namespace ggc

#endif // GGC_TARGET_H
