//===- Host.cpp - the executor's decisions that need no GPU -----------------===//
//
// Names, configuration checks, the algorithm rules and the token-to-expert
// mapping: all on the host, all testable without a device.
//
//===----------------------------------------------------------------------===//
#include "ggc/Executor.h"
#include "ggc-c/Compiler.h"

#include <cstring>
#include <stdexcept>

namespace ggc::executor {

namespace {

[[noreturn]] void bad(const std::string &message) {
  throw std::invalid_argument("ggc executor: " + message);
}

const ggc_target_info *targetNamed(const char *name) {
  for (size_t i = 0; i < ggc_num_targets(); ++i)
    if (std::strcmp(ggc_target(i)->name, name) == 0)
      return ggc_target(i);
  return nullptr;
}

/// The compiler's targets that `fp8Only` keeps, with the compute
/// capabilities that run each: "sm_90a: 9.0; sm_80: 8.0; ...".
std::string targetList(bool fp8Only) {
  std::string list;
  for (size_t i = 0; i < ggc_num_targets(); ++i) {
    const ggc_target_info &t = *ggc_target(i);
    if (fp8Only && !t.fp8_mma)
      continue;
    list += (list.empty() ? "" : "; ") + std::string(t.name) + ":";
    for (size_t c = 0; c < t.num_capabilities; ++c)
      list += (c ? ", " : " ") + std::to_string(t.capabilities[c] / 10) +
              "." + std::to_string(t.capabilities[c] % 10);
  }
  return list;
}

[[noreturn]] void noFp8(const std::string &device) {
  throw Error("ggc executor: precision 'fp8' needs FP8 tensor cores (" +
              targetList(true) + "); device " + device +
              " has none: use 'bf16' or 'fp16'");
}

} // namespace

const char *DeviceCapabilities::ggcTarget() const {
  return ggc_target_for_capability(major, minor);
}

bool DeviceCapabilities::ggcFp8() const {
  const char *target = ggcTarget();
  return target && targetNamed(target)->fp8_mma;
}

const char *name(Algorithm a) {
  switch (a) {
  case Algorithm::Ggc: return "ggc";
  case Algorithm::CublasGrouped: return "cublas_grouped";
  case Algorithm::CublasSequential: return "cublas_sequential";
  case Algorithm::Auto: return "auto";
  }
  return "?";
}

const char *name(Precision p) {
  switch (p) {
  case Precision::FP32: return "fp32";
  case Precision::TF32: return "tf32";
  case Precision::FP16: return "fp16";
  case Precision::BF16: return "bf16";
  case Precision::FP8: return "fp8";
  }
  return "?";
}

const char *name(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F8E4M3: return "f8e4m3fn";
  }
  return "?";
}

Algorithm parseAlgorithm(const std::string &text, const char *argument) {
  for (Algorithm a : {Algorithm::Ggc, Algorithm::CublasGrouped,
                      Algorithm::CublasSequential, Algorithm::Auto})
    if (text == name(a))
      return a;
  bad(std::string(argument) + " must be 'ggc', 'cublas_grouped', "
      "'cublas_sequential' or 'auto', got '" + text + "'");
}

Precision parsePrecision(const std::string &text, const char *argument) {
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::FP16,
                      Precision::BF16, Precision::FP8})
    if (text == name(p))
      return p;
  bad(std::string(argument) + " must be 'fp32', 'tf32', 'fp16', 'bf16' or "
      "'fp8', got '" + text + "'");
}

int64_t dtypeBytes(DType t) {
  switch (t) {
  case DType::F32: return 4;
  case DType::F16:
  case DType::BF16: return 2;
  case DType::F8E4M3: return 1;
  }
  return 0;
}

DType inputType(Precision p) {
  switch (p) {
  case Precision::FP32:
  case Precision::TF32: return DType::F32;
  case Precision::FP16: return DType::F16;
  case Precision::BF16:
  case Precision::FP8: return DType::BF16;
  }
  return DType::BF16;
}

DType outputType(Precision p) { return inputType(p); }

void ExecutorConfig::validate() const {
  if (groupCount < 1)
    bad("config.group_count must be at least 1, got " + std::to_string(groupCount));
  // cuBLAS and ggc's kernels count groups in 32-bit integers.
  if (groupCount > (1 << 20))
    bad("config.group_count must be at most 2^20, got " + std::to_string(groupCount));
  if (workspaceBytes < (1 << 20))
    bad("config.workspace_bytes must be at least 1 MiB (cuBLAS's grouped GEMM "
        "needs its pointer arrays there), got " + std::to_string(workspaceBytes));
  if (maxConcurrentCalls < 1 || maxConcurrentCalls > 64)
    bad("config.max_concurrent_calls must be in [1, 64], got " +
        std::to_string(maxConcurrentCalls));
  int64_t perCall = workspaceBytes / maxConcurrentCalls;
  if (perCall < 3 * 8 * groupCount + (256 << 10))
    bad("config.workspace_bytes (" + std::to_string(workspaceBytes) +
        ") shared by " + std::to_string(maxConcurrentCalls) +
        " concurrent calls leaves each less than 256 KiB plus its " +
        std::to_string(3 * groupCount) + " GEMM pointers");
  if (device < 0)
    bad("config.device must not be negative, got " + std::to_string(device));
  if (!useTensorCores && (precision == Precision::TF32 || precision == Precision::FP8))
    bad(std::string("config.use_tensor_cores is false, but precision ") +
        name(precision) + " exists only on tensor cores");
  if (algorithm == Algorithm::Ggc && !useTensorCores)
    bad("config.algorithm 'ggc' runs on tensor cores only; "
        "config.use_tensor_cores is false");
}

int64_t ExpertMapping::activeExperts() const {
  int64_t active = 0;
  for (int32_t count : tokensPerExpert)
    active += count > 0;
  return active;
}

ExpertMapping mapTokens(const RoutingDecision &routing) {
  if (routing.numTokens < 0)
    bad("routing.num_tokens must not be negative, got " +
        std::to_string(routing.numTokens));
  if (routing.topK < 1)
    bad("routing.top_k must be at least 1, got " + std::to_string(routing.topK));
  if (routing.numExperts < 1)
    bad("routing.num_experts must be at least 1, got " +
        std::to_string(routing.numExperts));
  // Bounded before the product, which could overflow.
  if (routing.numTokens > (int64_t(1) << 30) / routing.topK)
    bad("routing has " + std::to_string(routing.numTokens) + " tokens of top_k " +
        std::to_string(routing.topK) + "; the kernels index rows in 32 bits (at most "
        "2^30 assignments)");
  int64_t assignments = routing.numTokens * routing.topK;
  if (assignments > (int64_t(1) << 30))
    bad("routing has " + std::to_string(assignments) +
        " assignments; the kernels index rows in 32 bits (at most 2^30)");
  if (static_cast<int64_t>(routing.expertIds.size()) != assignments)
    bad("routing.expert_ids must hold num_tokens * top_k = " +
        std::to_string(assignments) + " entries, got " +
        std::to_string(routing.expertIds.size()));
  ExpertMapping m;
  m.tokensPerExpert.assign(routing.numExperts, 0);
  for (int64_t i = 0; i < assignments; ++i) {
    int32_t e = routing.expertIds[i];
    if (e < 0 || e >= routing.numExperts)
      bad("routing.expert_ids[" + std::to_string(i) + "] = " + std::to_string(e) +
          " is not an expert in [0, " + std::to_string(routing.numExperts) + ")");
    ++m.tokensPerExpert[e];
  }
  m.expertOffsets.assign(routing.numExperts + 1, 0);
  for (int64_t e = 0; e < routing.numExperts; ++e)
    m.expertOffsets[e + 1] = m.expertOffsets[e] + m.tokensPerExpert[e];
  // A counting sort: stable, so rows of an expert keep the tokens' order.
  std::vector<int32_t> next(m.expertOffsets.begin(), m.expertOffsets.end() - 1);
  m.assignmentOfRow.resize(assignments);
  m.tokenOfRow.resize(assignments);
  m.expertOfRow.resize(assignments);
  for (int64_t i = 0; i < assignments; ++i) {
    int32_t e = routing.expertIds[i];
    int32_t row = next[e]++;
    m.assignmentOfRow[row] = static_cast<int32_t>(i);
    m.tokenOfRow[row] = static_cast<int32_t>(i / routing.topK);
    m.expertOfRow[row] = e;
  }
  return m;
}

// The rules of docs/executor.md ("Choosing an algorithm"), in order.
Algorithm selectAlgorithmFor(const ExecutorConfig &config,
                             const DeviceCapabilities &caps, bool cublasLoaded,
                             bool cublasGrouped, int64_t batchSize,
                             int64_t activeExperts) {
  if (batchSize < 0)
    bad("batch_size must not be negative, got " + std::to_string(batchSize));
  if (activeExperts < 0 || activeExperts > config.groupCount)
    bad("active_experts must be in [0, group_count = " +
        std::to_string(config.groupCount) + "], got " + std::to_string(activeExperts));
  if (config.algorithm != Algorithm::Auto)
    return config.algorithm;                        // 1. the user's choice
  if (config.precision == Precision::FP8)
    return Algorithm::Ggc;                          // 2. block-scaled FP8: ggc only
  bool ggcServes = caps.ggcPreferred() && config.useTensorCores &&
                   config.precision != Precision::FP32;
  if (!ggcServes || !cublasLoaded) {                // 3. one of them cannot run
    if (!ggcServes && cublasGrouped && activeExperts > 1)
      return Algorithm::CublasGrouped;
    // Without cuBLAS, ggc runs wherever it compiles (sm_80 to sm_90).
    bool ggcCan = caps.ggcKernels() && config.useTensorCores;
    return ggcServes || (!cublasLoaded && ggcCan) ? Algorithm::Ggc
                                                  : Algorithm::CublasSequential;
  }
  if (activeExperts <= 1 || batchSize == 0)         // 4. one GEMM (or none)
    return Algorithm::CublasSequential;
  return Algorithm::Ggc;                            // 5. ggc's grouped kernels
}

void checkAlgorithm(Algorithm algorithm, const ExecutorConfig &config,
                    const DeviceCapabilities &caps, bool cublasLoaded,
                    bool cublasGrouped) {
  std::string device = caps.name + " (sm_" + std::to_string(caps.major) +
                       std::to_string(caps.minor) + ")";
  if (algorithm == Algorithm::Ggc) {
    if (!caps.ggcKernels())
      throw Error("ggc executor: algorithm 'ggc' needs a GPU ggc compiles for "
                  "(" + targetList(false) + "); device " + device + " is not "
                  "one: use a cuBLAS algorithm or 'auto'");
    if (config.precision == Precision::FP8 && !caps.ggcFp8())
      noFp8(device);
    return;
  }
  if (algorithm == Algorithm::Auto) {
    // Auto sends FP8 to ggc (rule 2): say so before a call, not at it.
    if (config.precision == Precision::FP8 && !caps.ggcFp8())
      noFp8(device);
    return;
  }
  if (config.precision == Precision::FP8)
    throw Error(std::string("ggc executor: algorithm '") + name(algorithm) +
                "' cannot run precision 'fp8' (128x128 block-scaled FP8 is "
                "ggc's only); use 'ggc' or 'auto'");
  if (!cublasLoaded)
    throw Error(std::string("ggc executor: algorithm '") + name(algorithm) +
                "' needs cuBLAS, which is not available");
  if (algorithm == Algorithm::CublasGrouped && !cublasGrouped)
    throw Error("ggc executor: algorithm 'cublas_grouped' needs "
                "cublasGemmGroupedBatchedEx (cuBLAS 12.5 or newer); the loaded "
                "cuBLAS lacks it: use 'cublas_sequential'");
}

} // namespace ggc::executor
