//===- Executor.cpp - the grouped-GEMM executor -----------------------------===//
//
// Locking: the executor's methods are const and may be called from many
// threads at once, on any streams. What they share:
//  - cuBLAS handles: a pool of config.maxConcurrentCalls slots, each with a
//    handle, its share of the one workspace allocation and an event. A call
//    takes a free slot under the pool's mutex (waiting when all are busy),
//    makes its stream wait for the slot's previous use on the GPU (so the
//    workspace is never used by two GEMMs at once, with no host wait), and
//    records the event after its GEMMs.
//  - ggc's compiled kernels and the small PTX kernels: caches guarded by
//    their own mutexes (a kernel compiles once; std::call_once).
//
//===----------------------------------------------------------------------===//
#include "State.h"
#include "Kernels.h"

#include <stdexcept>

namespace ggc::executor {

namespace {

[[noreturn]] void bad(const std::string &message) {
  throw std::invalid_argument("ggc executor: " + message);
}

} // namespace

GroupedGemmExecutor::GroupedGemmExecutor(const ExecutorConfig &config)
    : config_(config), state_(std::make_unique<State>()) {
  config_.validate();
  caps_ = cuda::queryDevice(config_.device);
  const cublas::Library &lib = cublas::library();
  bool needsCublas = config_.algorithm != Algorithm::Ggc &&
                     config_.precision != Precision::FP8;
  if (lib.error.empty() && needsCublas)
    state_->cublas = &lib;
  checkAlgorithm(config_.algorithm, config_, caps_, state_->cublas != nullptr,
                 state_->cublas && lib.gemmGroupedBatchedEx);
  if (!state_->cublas) {
    if (needsCublas && !(caps_.ggcKernels() && config_.useTensorCores))
      throw Error("ggc executor: ggc compiles no kernels for device " +
                  caps_.name + ", so only cuBLAS can run here, and " + lib.error);
    return;
  }
  cuda::DeviceScope scope(config_.device);
  state_->workspace = DeviceBuffer(config_.device, config_.workspaceBytes, 0);
  size_t share = config_.workspaceBytes / config_.maxConcurrentCalls / 256 * 256;
  size_t pointerBytes = (3 * 8 * config_.groupCount + 255) / 256 * 256;
  for (int i = 0; i < config_.maxConcurrentCalls; ++i) {
    State::Slot slot;
    slot.pointers = state_->workspace.address() + i * share;
    slot.workspace = slot.pointers + pointerBytes;
    slot.workspaceBytes = share - pointerBytes;
    cublas::check(lib.create(&slot.handle), "cublasCreate");
    // 16-bit outputs must be rounded once, from the f32 sum: without this
    // flag cuBLAS may split K and reduce the partial sums in the output
    // type (seen on the H200 for a one-row expert with a bias in C).
    cublas::check(lib.setMathMode(slot.handle,
                                  cublas::MathDisallowReducedPrecisionReduction),
                  "cublasSetMathMode");
    cuda::check(cuda::api().eventCreate(&slot.lastUse, CU_EVENT_DISABLE_TIMING),
                "cuEventCreate");
    state_->slots.push_back(slot);
  }
}

GroupedGemmExecutor::~GroupedGemmExecutor() {
  if (!state_->cublas)
    return;
  try {
    cuda::DeviceScope scope(config_.device);
    for (State::Slot &slot : state_->slots) {
      state_->cublas->destroy(slot.handle);
      cuda::api().eventDestroy(slot.lastUse);
    }
  } catch (const Error &) { // the driver is gone at exit: nothing to free
  }
}

bool GroupedGemmExecutor::supportsGroupedGemm() const {
  bool ggc = caps_.ggcKernels() && config_.useTensorCores &&
             (config_.precision != Precision::FP8 || caps_.ggcFp8());
  bool cublasGrouped = state_->cublas && state_->cublas->gemmGroupedBatchedEx &&
                       config_.precision != Precision::FP8;
  return ggc || cublasGrouped;
}

Algorithm GroupedGemmExecutor::selectAlgorithm(int64_t batchSize,
                                               int64_t activeExperts) const {
  return selectAlgorithmFor(config_, caps_, state_->cublas != nullptr,
                            state_->cublas && state_->cublas->gemmGroupedBatchedEx,
                            batchSize, activeExperts);
}

uint64_t GroupedInput::offsetsAddress() const {
  return indices.address() + 3 * sizeof(int32_t) * mapping.tokenOfRow.size();
}

GroupedInput GroupedGemmExecutor::prepareInput(uint64_t tokens, int64_t numTokens,
                                               int64_t hidden,
                                               const RoutingDecision &routing,
                                               uint64_t stream) const {
  if (numTokens != routing.numTokens)
    bad("tokens has " + std::to_string(numTokens) + " rows but routing.num_tokens is " +
        std::to_string(routing.numTokens));
  if (routing.numExperts != config_.groupCount)
    bad("routing.num_experts (" + std::to_string(routing.numExperts) +
        ") must equal config.group_count (" + std::to_string(config_.groupCount) + ")");
  if (hidden < 1)
    bad("hidden must be positive, got " + std::to_string(hidden));
  if (numTokens > 0 && tokens == 0)
    bad("tokens is a null pointer");
  if (config_.precision == Precision::FP8 && hidden % 128 != 0)
    bad("precision fp8 quantises tokens in blocks of 128 columns: hidden must be "
        "a multiple of 128, got " + std::to_string(hidden));
  GroupedInput in;
  in.mapping = mapTokens(routing);
  in.numTokens = numTokens;
  in.topK = routing.topK;
  in.hidden = hidden;
  in.precision = config_.precision;
  in.stream = stream;
  const ExpertMapping &m = in.mapping;
  std::vector<int32_t> host(m.tokenOfRow);
  host.insert(host.end(), m.assignmentOfRow.begin(), m.assignmentOfRow.end());
  host.insert(host.end(), m.expertOfRow.begin(), m.expertOfRow.end());
  host.insert(host.end(), m.expertOffsets.begin(), m.expertOffsets.end());
  int device = config_.device;
  cuda::DeviceScope scope(device);
  auto s = reinterpret_cast<CUstream>(stream);
  in.indices = DeviceBuffer(device, host.size() * sizeof(int32_t), stream);
  // From pageable memory: the driver stages the copy before returning.
  cuda::check(cuda::api().memcpyHtoDAsync(in.indices.address(), host.data(),
                                          host.size() * sizeof(int32_t), s),
              "copying the token-to-expert mapping to the device");
  int64_t rows = in.numRows();
  int64_t rowBytes = hidden * dtypeBytes(inputType(config_.precision));
  in.rows = DeviceBuffer(device, rows * rowBytes, stream);
  ggckernels::CompileTarget target = ggckernels::targetOf(caps_);
  kernels::copyRows(target, device, stream, in.rows.address(), rows, tokens, numTokens, 0,
                    in.indices.address(), rows, rowBytes);
  if (config_.precision == Precision::FP8) {
    in.rowsFp8 = DeviceBuffer(device, rows * hidden, stream);
    int64_t ld = kernels::scalesLd(rows);
    in.rowScales = DeviceBuffer(device, (hidden / 128) * ld * sizeof(float), stream);
    kernels::quantizeRows(target, device, stream, in.rowsFp8.address(),
                          in.rowScales.address(), ld, in.rows.address(), rows, hidden);
  }
  return in;
}

void GroupedGemmExecutor::checkCall(const GroupedInput &in,
                                    const GroupedExpertWeights &w,
                                    uint64_t out) const {
  if (in.precision != config_.precision)
    bad(std::string("input was prepared for precision ") + name(in.precision) +
        ", but this executor runs " + name(config_.precision));
  if (w.numExperts != config_.groupCount)
    bad("weights hold " + std::to_string(w.numExperts) +
        " experts, but config.group_count is " + std::to_string(config_.groupCount));
  if (w.hiddenDim != in.hidden)
    bad("weights.hidden_dim (" + std::to_string(w.hiddenDim) +
        ") must equal the input's hidden size (" + std::to_string(in.hidden) + ")");
  if (w.weights.address() == 0 || w.expertDim < 1)
    bad("weights hold no expert weights (a null address or expert_dim " +
        std::to_string(w.expertDim) + "): make them with ExpertWeightManager::load");
  if (w.dtype != inputType(config_.precision))
    bad(std::string("weights.dtype is ") + name(w.dtype) + ", but precision " +
        name(config_.precision) + " takes " + name(inputType(config_.precision)));
  if (w.device != config_.device)
    bad("weights are on device " + std::to_string(w.device) +
        ", the executor on device " + std::to_string(config_.device));
  if (config_.precision == Precision::FP8 && !w.quantized())
    bad("precision fp8 needs quantised weights: call ExpertWeightManager::quantize()");
  if (in.numRows() > 0 && out == 0)
    bad("out is a null pointer");
}

void GroupedGemmExecutor::executeGrouped(const GroupedInput &input,
                                         const GroupedExpertWeights &w,
                                         uint64_t out, Algorithm algorithm) const {
  checkCall(input, w, out);
  if (algorithm == Algorithm::Auto)
    algorithm = selectAlgorithm(input.numRows(), input.mapping.activeExperts());
  else
    checkAlgorithm(algorithm, config_, caps_, state_->cublas != nullptr,
                   state_->cublas && state_->cublas->gemmGroupedBatchedEx);
  run(algorithm, input, w, out);
}

void GroupedGemmExecutor::executeSequential(const GroupedInput &input,
                                            const GroupedExpertWeights &w,
                                            uint64_t out) const {
  checkCall(input, w, out);
  checkAlgorithm(Algorithm::CublasSequential, config_, caps_,
                 state_->cublas != nullptr, false);
  run(Algorithm::CublasSequential, input, w, out);
}

void GroupedGemmExecutor::scatterOutput(uint64_t expertOutputs, int64_t width,
                                        DType dtype, const GroupedInput &input,
                                        uint64_t out) const {
  if (width < 1)
    bad("width must be positive, got " + std::to_string(width));
  if (input.numRows() > 0 && (expertOutputs == 0 || out == 0))
    bad(std::string(expertOutputs == 0 ? "expert_outputs" : "out") +
        " is a null pointer");
  kernels::copyRows(ggckernels::targetOf(caps_), config_.device, input.stream, out,
                    input.numTokens * input.topK, expertOutputs, input.numRows(),
                    input.indices.address() + sizeof(int32_t) * input.numRows(), 0,
                    input.numRows(), width * dtypeBytes(dtype));
}

} // namespace ggc::executor
