//===- Executor.h - grouped-GEMM executor for MoE layers --------*- C++ -*-===//
//
// Runs every expert's GEMM of a MoE layer: out[r] = x[r] W[e(r)]^T (+ b[e]),
// for the rows r that the router sent to expert e, through one of three
// algorithms: ggc's compiled grouped kernels (sm_90a), cuBLAS's grouped GEMM
// (cublasGemmGroupedBatchedEx) or one cublasGemmEx per expert. cuBLAS and
// the CUDA driver are loaded at run time, so this builds without either and
// reports their absence as an Error. docs/executor.md is the guide.
//
// Device memory is passed as addresses (uint64_t), row-major and
// contiguous, as the runtime takes it; the executor allocates only its
// workspace (once) and the buffers of a GroupedInput.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_EXECUTOR_H
#define GGC_EXECUTOR_H

#include "ggc/Runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ggc::executor {

using Error = runtime::Error;

enum class Algorithm { Ggc, CublasGrouped, CublasSequential, Auto };
/// FP32: FP32 accuracy (cuBLAS's FP32, or ggc's 3xTF32 on tensor cores).
/// TF32: FP32 operands, TF32 tensor cores. FP16/BF16: 16-bit operands, FP32
/// accumulation. FP8: BF16 tokens
/// quantised to e4m3 with 1x128 scales, weights with 128x128 scales.
enum class Precision { FP32, TF32, FP16, BF16, FP8 };
enum class DType { F32, F16, BF16, F8E4M3 };

const char *name(Algorithm a);
const char *name(Precision p);
const char *name(DType t);
/// Parse the names above ("ggc", "cublas_grouped", "cublas_sequential",
/// "auto"; "fp32", "tf32", "fp16", "bf16", "fp8"); throws
/// std::invalid_argument naming `argument`.
Algorithm parseAlgorithm(const std::string &text, const char *argument);
Precision parsePrecision(const std::string &text, const char *argument);
int64_t dtypeBytes(DType t);
/// The element type of tokens and weights a precision takes, and of its output.
DType inputType(Precision p);
DType outputType(Precision p);

struct ExecutorConfig {
  int64_t groupCount = 0;            ///< experts (G); >= 1
  Algorithm algorithm = Algorithm::Auto;
  bool useTensorCores = true;        ///< false: FP16/BF16 through cuBLAS's pedantic FP32 math
  int64_t workspaceBytes = 32 << 20; ///< all the executor's own device memory
  Precision precision = Precision::BF16;
  int maxConcurrentCalls = 4;        ///< cuBLAS handles, each with its share of the workspace
  int device = 0;
  /// Throws std::invalid_argument naming the first bad field.
  void validate() const;
};

struct DeviceCapabilities {
  int ordinal = 0, major = 0, minor = 0, multiprocessors = 0;
  /// Shared memory one CTA may opt in to (its kernels' plans keep to it).
  int sharedMemoryPerBlock = 0;
  /// Peak DRAM bandwidth, GB/s (0: unknown), which the kernels' plans read.
  int64_t memoryGBps = 0;
  std::string name;
  /// The target ggc compiles this device's kernels for (sm_90a; sm_80,
  /// sm_86, sm_89 by cp.async and mma.sync), or null: the compiler's list
  /// of targets (ggc_target_for_capability).
  const char *ggcTarget() const;
  bool ggcKernels() const { return ggcTarget() != nullptr; }
  /// FP8 tensor cores (the target's fp8_mma): Hopper's and Ada's.
  bool ggcFp8() const;
  /// Where `auto` picks ggc's kernels: Hopper (the sm_80 lowering has run
  /// only on Hopper cards, at 55-74% of mma.sync's peak: docs/performance.md).
  bool ggcPreferred() const { return major == 9 && minor == 0; }
};

/// What a router decided: `topK` experts per token, token-major
/// ([numTokens * topK]); the same expert twice for a token is allowed.
struct RoutingDecision {
  int64_t numTokens = 0;
  int topK = 1;
  int64_t numExperts = 0;
  std::vector<int32_t> expertIds;
};

/// The token-to-expert mapping, materialised on the host: each
/// (token, slot) assignment becomes one row, rows sorted by expert and,
/// within an expert, by assignment (stable, so every run is the same).
struct ExpertMapping {
  std::vector<int32_t> tokensPerExpert; ///< [G]
  std::vector<int32_t> expertOffsets;   ///< [G+1], CSR over the rows
  std::vector<int32_t> assignmentOfRow; ///< row -> token * topK + slot
  std::vector<int32_t> tokenOfRow;      ///< row -> token
  std::vector<int32_t> expertOfRow;     ///< row -> expert
  int64_t activeExperts() const;
};
/// Throws std::invalid_argument naming a bad field of `routing`.
ExpertMapping mapTokens(const RoutingDecision &routing);

/// Device memory, freed in stream order on the stream it was made for.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, size_t bytes, uint64_t stream);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  uint64_t address() const { return address_; }
  size_t bytes() const { return bytes_; }

private:
  void release();
  int device_ = 0;
  uint64_t address_ = 0, stream_ = 0;
  size_t bytes_ = 0;
};

/// Copies host memory to `device` (synchronously), for inputs and tests.
void copyToDevice(int device, uint64_t address, const void *source, size_t bytes);

/// Tokens gathered by expert on the GPU (prepareInput), with the mapping.
/// Its buffers live in stream order on `stream`, where the executor runs
/// everything that reads them.
struct GroupedInput {
  ExpertMapping mapping;
  int64_t numTokens = 0, topK = 1, hidden = 0;
  Precision precision = Precision::BF16;
  uint64_t stream = 0;
  DeviceBuffer rows;       ///< [rows, hidden] of inputType(precision)
  DeviceBuffer rowsFp8;    ///< FP8 only: [rows, hidden] e4m3
  DeviceBuffer rowScales;  ///< FP8 only: [hidden/128, align4(rows)] f32, M-major
  DeviceBuffer indices;    ///< i32: tokenOfRow, assignmentOfRow, expertOfRow, offsets
  int64_t numRows() const { return static_cast<int64_t>(mapping.tokenOfRow.size()); }
  uint64_t offsetsAddress() const; ///< the device copy of expertOffsets
};

/// Expert weights [G, N, K] (nn.Linear's [out, in] per expert), optional
/// biases [G, N], and their FP8 form: e4m3 [G, N, K] with f32 scales
/// [G, ceil(N/128), ceil(K/128)], one per 128x128 block.
struct GroupedExpertWeights {
  int64_t numExperts = 0, expertDim = 0 /*N*/, hiddenDim = 0 /*K*/;
  DType dtype = DType::BF16;
  int device = 0;
  DeviceBuffer weights, biases, fp8Weights, fp8Scales;
  bool hasBiases() const { return biases.address() != 0; }
  bool quantized() const { return fp8Weights.address() != 0; }
};

/// Host-side packing, separate from the upload so it is testable anywhere.
namespace packing {
/// Copies each expert's [N, K] matrix (all of the same shape) into one
/// [G, N, K] buffer; throws std::invalid_argument naming `argument`.
std::vector<uint8_t> packExperts(const std::vector<const void *> &experts,
                                 size_t bytesPerExpert, const char *argument);
/// 128x128 block quantisation of [G, N, K] floats to e4m3: scale =
/// amax/448 per block (1 for an all-zero block), value = e4m3(x / scale).
void quantizeBlocks(const float *weights, int64_t g, int64_t n, int64_t k,
                    std::vector<uint8_t> &fp8, std::vector<float> &scales);
/// e4m3 (OCP, saturating at +-448) round to nearest even, and back.
uint8_t toE4M3(float x);
float fromE4M3(uint8_t bits);
/// bf16 and f16 bits to float and back (round to nearest even).
float toFloat(const void *element, DType t);
void fromFloat(float x, DType t, void *element);
} // namespace packing

/// Loads expert weights from host memory, packs and uploads them, and
/// quantises them for FP8.
class ExpertWeightManager {
public:
  /// `experts`: G host pointers to [N, K] matrices of `dtype`; `biases`:
  /// none, or G pointers to [N] vectors of `dtype`.
  static ExpertWeightManager load(const std::vector<const void *> &experts,
                                  const std::vector<const void *> &biases,
                                  int64_t expertDim, int64_t hiddenDim,
                                  DType dtype, int device);
  /// Throws Error on a manager that load() did not make.
  const GroupedExpertWeights &weights() const { return loaded(); }
  /// Null until quantize() ran.
  const GroupedExpertWeights *quantizedWeights() const;
  void quantize();

private:
  GroupedExpertWeights &loaded() const;
  std::shared_ptr<GroupedExpertWeights> weights_;
  std::vector<uint8_t> host_; // the packed weights, kept for quantize()
};

class GroupedGemmExecutor {
public:
  /// Detects the device (CUDA driver) and loads cuBLAS when an algorithm
  /// may need it; throws Error when the configuration cannot run there.
  GroupedGemmExecutor(const ExecutorConfig &config);
  ~GroupedGemmExecutor();
  GroupedGemmExecutor(const GroupedGemmExecutor &) = delete;
  GroupedGemmExecutor &operator=(const GroupedGemmExecutor &) = delete;

  const ExecutorConfig &config() const { return config_; }
  const DeviceCapabilities &capabilities() const { return caps_; }
  /// True when a single-launch grouped algorithm serves this device and
  /// precision: ggc's kernels (sm_90) or cuBLAS's grouped GEMM.
  bool supportsGroupedGemm() const;
  /// The rules, in order, are in docs/executor.md and selectAlgorithmFor.
  Algorithm selectAlgorithm(int64_t batchSize, int64_t activeExperts) const;

  /// Gathers `tokens` ([numTokens, hidden] of inputType, on the device)
  /// into expert order on `stream`; for FP8 also quantises them.
  GroupedInput prepareInput(uint64_t tokens, int64_t numTokens, int64_t hidden,
                            const RoutingDecision &routing, uint64_t stream) const;
  /// out: [rows, N] of outputType, in expert order. Grouped: `algorithm`
  /// (Auto: selectAlgorithm) must be Ggc or CublasGrouped or Sequential.
  void executeGrouped(const GroupedInput &input, const GroupedExpertWeights &w,
                      uint64_t out, Algorithm algorithm = Algorithm::Auto) const;
  void executeSequential(const GroupedInput &input, const GroupedExpertWeights &w,
                         uint64_t out) const;
  /// Copies row r of `expertOutputs` ([rows, width] of `dtype`) to row
  /// assignmentOfRow[r] of `out` ([numTokens * topK, width]): token order.
  void scatterOutput(uint64_t expertOutputs, int64_t width, DType dtype,
                     const GroupedInput &input, uint64_t out) const;

  struct State; ///< cuBLAS handles and kernels (Executor.cpp)

private:
  void checkCall(const GroupedInput &input, const GroupedExpertWeights &w,
                 uint64_t out) const;
  void run(Algorithm algorithm, const GroupedInput &input,
           const GroupedExpertWeights &w, uint64_t out) const;
  ExecutorConfig config_;
  DeviceCapabilities caps_;
  std::unique_ptr<State> state_;
};

/// The selection rules without a device, for tests and docs: see
/// docs/executor.md ("Choosing an algorithm").
Algorithm selectAlgorithmFor(const ExecutorConfig &config,
                             const DeviceCapabilities &caps, bool cublasLoaded,
                             bool cublasGrouped, int64_t batchSize,
                             int64_t activeExperts);
/// Throws Error when `algorithm` cannot run `config` on `caps`.
void checkAlgorithm(Algorithm algorithm, const ExecutorConfig &config,
                    const DeviceCapabilities &caps, bool cublasLoaded,
                    bool cublasGrouped);

} // namespace ggc::executor

#endif // GGC_EXECUTOR_H
