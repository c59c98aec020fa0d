//===- Target.h - the GPU a module's kernels are compiled for ---*- C++ -*-===//
//
// The target is the user's choice (ggc --arch, the runtime's device), held
// in the IR as the module's `gg.target` string so that every pass reads
// the same one and a lit test can set it. Without the attribute a module
// targets sm_90a.
//
// A target is a description: what its hardware has, as named fields that
// passes read (a pass asks whether there are tensor maps, never which card
// it is). Two lowerings share the generator's ggk kernel: one by tensor
// maps, wgmma, setmaxnreg and clusters (sm_90a), one by cp.async into the
// same swizzled stages, ldmatrix and mma.sync on the same accumulator
// fragment (sm_80, sm_86, sm_89). `allTargets()` is the one list: the C
// API hands it to Python, the runtime and the executor.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_TARGET_H
#define GGC_TARGET_H

#include "mlir/IR/Operation.h"

#include <optional>

namespace ggc {

/// How a target's tensor cores multiply a tile.
enum class MmaKind {
  /// Warpgroup MMA: asynchronous, operands read from shared memory after
  /// issue (sm_90a).
  wgmma,
  /// Warp MMA on fragments loaded to registers by ldmatrix.
  mmaSync,
};

/// How the stages are filled from global memory.
enum class AsyncCopyKind {
  /// One thread's bulk tensor copies, counted by the full barrier's bytes.
  tma,
  /// Every copying thread's 16-byte cp.async, counted by arrivals.
  cpAsync,
};

struct Target {
  llvm::StringRef name; // "sm_90a", "sm_80", "sm_86", "sm_89"
  /// The compute capabilities (major * 10 + minor) whose devices run this
  /// target's kernels: Orin (8.7) runs sm_86's.
  llvm::ArrayRef<int> capabilities;
  /// Shared memory one CTA may use (the opt-in maximum).
  int64_t sharedMemoryBytes;
  MmaKind mma;
  AsyncCopyKind asyncCopy;
  /// Tensor maps: TMA loads and stores of boxes (tiles, scale windows,
  /// the output's store pool), passed to the kernel as CUtensorMap.
  bool tensorMaps;
  /// Thread-block clusters (multicast loads, distributed shared memory).
  bool clusters;
  /// setmaxnreg: warpgroups hand registers to one another; without it
  /// every thread of a CTA keeps what the CTA starts with.
  bool registerReallocation;
  /// mbarrier.try_wait, which suspends the thread; without it the ring
  /// polls mbarrier.test_wait.
  bool mbarrierTryWait;
  /// Tensor cores that multiply FP8 (e4m3, e5m2): wgmma's, or sm_89's
  /// mma.sync m16n8k32.
  bool fp8Mma;
  /// griddepcontrol: a kernel launched with programmatic stream
  /// serialization may start before the kernel ahead of it in the stream
  /// ends, and waits for that grid's memory where it must (sm_90).
  bool gridDependencies;

  bool runsOn(int major, int minor) const {
    return llvm::is_contained(capabilities, major * 10 + minor);
  }
  /// The first consumer thread: after the producer's warpgroup where one
  /// thread of it issues the TMA loads, else the first thread (a producer
  /// warpgroup, where there is one, comes last).
  int64_t firstConsumerThread() const {
    return asyncCopy == AsyncCopyKind::tma ? 128 : 0;
  }
};

llvm::StringRef stringifyMmaKind(MmaKind kind);
llvm::StringRef stringifyAsyncCopyKind(AsyncCopyKind kind);

/// The shared memory one CTA may use: the device's opt-in maximum where
/// the caller knows the device (`deviceBytes` > 0: an A100's 163 KiB, an
/// H100's 227 KiB, an RTX 4090's 99 KiB), else (0; gg-select-config
/// refuses a negative budget before any other pass reads one) the
/// target's.
inline int64_t sharedMemoryBudget(const Target &target, int64_t deviceBytes) {
  return deviceBytes > 0 ? deviceBytes : target.sharedMemoryBytes;
}

/// A card whose peak DRAM bandwidth (the passes' memory-gbps) is below
/// kNarrowMemoryGBps (an H100 SXM's 3,352 GB/s; an H200's 4,915) takes
/// the narrow-memory rules of gg-select-config and gg-schedule-groups,
/// each with its measurements there. 0 (unknown) plans as for a card of
/// high bandwidth. The rules read the bandwidth through narrowMemory
/// alone: the Python caches key on that class
/// (ggc.compiler.memory_plan_class, NARROW_MEMORY_GBPS).
inline constexpr int64_t kNarrowMemoryGBps = 4000;

inline bool narrowMemory(int64_t memoryGBps) {
  return memoryGBps > 0 && memoryGBps < kNarrowMemoryGBps;
}

/// The module attribute that names the target.
constexpr llvm::StringLiteral kTargetAttr = "gg.target";

/// Every target ggc lowers to, the default (sm_90a) first.
llvm::ArrayRef<Target> allTargets();
/// The target named `arch`, or none when ggc has no lowering for it.
std::optional<Target> lookupTarget(llvm::StringRef arch);
/// The target whose kernels a device of compute capability major.minor
/// runs, or none.
std::optional<Target> targetForCapability(int major, int minor);
/// The targets ggc lowers to, for messages: "sm_90a, sm_80, sm_86, sm_89".
std::string supportedTargets();
/// The target of `op`'s module (sm_90a without `gg.target`), or failure,
/// reported on the module, when `gg.target` names none.
mlir::FailureOr<Target> readTarget(mlir::Operation *op);
/// The same, for passes after gg-select-config, which checked it.
Target targetOf(mlir::Operation *op);

} // namespace ggc

#endif // GGC_TARGET_H
