//===- GgcKernels.h - ggc's grouped kernels, compiled in-process -*- C++ -*-===//
#ifndef GGC_EXECUTOR_GGCKERNELS_H
#define GGC_EXECUTOR_GGCKERNELS_H

#include "Json.h"
#include "ggc/Executor.h"
#include "ggc/Runtime.h"

#include <string>
#include <vector>

namespace ggc::executor::ggckernels {

/// The gg function the executor compiles for `precision` with G experts of
/// [N, K] weights: a contiguous grouped matmul over CSR offsets, FP8 with
/// 1x128 scales on the tokens and 128x128 on the weights; with `biases`, a
/// [G, N] bias of the weights' type added to the f32 accumulator.
std::string source(Precision precision, int64_t g, int64_t n, int64_t k,
                   bool biases);

/// The device addresses of one launch, in the gg function's argument order.
struct Operands {
  uint64_t rows = 0, rowScales = 0, weights = 0, weightScales = 0, offsets = 0,
           biases = 0 /* none */, out = 0;
  int64_t numRows = 0;
};

/// One gg function argument as a launch reads it: its address and shape.
struct ArgTensor {
  uint64_t address = 0;
  std::vector<int64_t> shape;
};

/// Bytes of an element of the type a launch contract's `args[].dtype`
/// names (bf16, f16, f32, i32, i64, f8e4m3fn, f8e5m2: the compiler's
/// KernelInfo names); throws Error for another name.
int64_t argumentElementBytes(const std::string &name);

/// The kernel parameters of one launch, from its contract `info` (one
/// kernel's object) and the gg function's arguments in order: tensor maps,
/// pointers (rows that cp.async copies or threads store checked for
/// 16-byte alignment first) and sizes.
std::vector<runtime::KernelArg> launchArguments(const json::Value &info,
                                                const std::vector<ArgTensor> &args);

/// What the kernels are compiled for: the device's SMs (the persistent
/// grid), its opt-in shared memory per CTA and its ggc target.
struct CompileTarget {
  int numSMs = 0;
  int sharedMemoryBytes = 0;
  const char *arch = nullptr;
  int64_t memoryGBps = 0; ///< the device's peak DRAM bandwidth; 0: unknown
};

/// `caps`' SMs, shared memory and ggc target (null arch: none).
CompileTarget targetOf(const DeviceCapabilities &caps);

/// The image the runtime loads (a cubin, or PTX where ptxas is missing) of
/// gg IR `ir` compiled for `target`; throws Error with the diagnostics.
std::string compileImage(const std::string &ir, const CompileTarget &target);

/// Compiles on first use (once per precision, shape, with or without
/// biases and target, shared by threads; a failure is kept and rethrown)
/// and launches on `stream`.
void launch(Precision precision, int64_t g, int64_t n, int64_t k,
            const CompileTarget &target, int device, const Operands &operands,
            uint64_t stream);

} // namespace ggc::executor::ggckernels

#endif // GGC_EXECUTOR_GGCKERNELS_H
