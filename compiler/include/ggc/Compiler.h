//===- Compiler.h - ggc compiler library (C++ side) -------------*- C++ -*-===//
//
// The pipeline as a list of named stages, and one entry point that runs it.
// The C API (ggc-c/Compiler.h), the `ggc` driver and the Python bindings all
// go through `compile`.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_COMPILER_H
#define GGC_COMPILER_H

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ggc {

struct StageInfo {
  const char *name;
  const char *description;
};

/// Every stage of the pipeline in order. The first is the verified input.
llvm::ArrayRef<StageInfo> stages();

struct CompileOptions {
  std::string emit = "ptx";       ///< last stage to run
  std::string arch = "sm_90a";    ///< target GPU architecture
  int64_t numSMs = 132;           ///< multiprocessors of the target
  /// Shared memory one CTA of the device may use (its opt-in maximum);
  /// 0: the target's (an sm_80 kernel for an unknown card keeps to an
  /// A100's 163 KiB).
  int64_t sharedMemoryBytes = 0;
  /// The device's peak DRAM bandwidth, GB/s; 0: unknown (gg-select-config
  /// plans as for a card of high bandwidth, an H200).
  int64_t memoryGBps = 0;
  bool printIRAfterAll = false;   ///< record IR after every pass
  /// Time every stage and every pass (CompileResult::timing).
  bool timing = false;
  std::string ptxas;              ///< ptxas to use; "" finds one
};

struct StageOutput {
  std::string stage;
  std::string text;
};

struct CompileResult {
  bool ok = false;
  /// The output of every stage that ran, in order; the last is `emit`.
  std::vector<StageOutput> stageOutputs;
  /// Errors and warnings, as text with source locations.
  std::string diagnostics;
  /// IR after each pass, when printIRAfterAll was set.
  std::string irAfterAll;
  /// The wall time of every stage that ran and of its passes, as text,
  /// when timing was set and the input parsed and held a kernel ("" otherwise).
  std::string timing;
  /// The launch contract of every kernel (its #ggk.launch), as a JSON
  /// array, once the `ggk` stage has run ("" before).
  std::string kernelInfo;
  /// The plan of every gg.grouped_matmul (config, schedule, ... and every
  /// plan attribute as printed), as a JSON array, once the `gg-config` stage
  /// has run ("" before).
  std::string kernelPlans;
};

CompileResult compile(llvm::StringRef source, llvm::StringRef sourceName,
                      const CompileOptions &options);

/// The dialects a gg program and the pipeline use.
void registerDialects(mlir::DialectRegistry &registry);

/// Registers every ggc pass (for ggc-opt and textual pipelines).
void registerAllPasses();

/// A hash of the dialect's and the compiler's sources at build time.
const char *sourceFingerprint();

/// "ggc <version> (LLVM <version>; sources <sourceFingerprint()>)".
const char *versionString();

/// The ptxas stage 'cubin' runs with `options` (CompileOptions::ptxas,
/// else $GGC_PTXAS, else the CUDA toolkit's, else PATH's), or "" where
/// none is found.
std::string findPtxas(const CompileOptions &options);

} // namespace ggc

#endif // GGC_COMPILER_H
