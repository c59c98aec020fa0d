//===- Gemm.cpp - the three GEMM algorithms of the executor ----------------===//
//
// Row-major out[M, N] = rows[M, K] W[N, K]^T is, column-major, out'[N, M] =
// T(W'[K, N]) rows'[K, M]: cuBLAS gets transa = T on W (ld K), transb = N on
// the rows (ld K) and C = out (ld N), with no copy or transpose.
//
// Biases join the sum before its one rounding to the output type: ggc's
// kernel adds them to the f32 accumulator in its epilogue, and cuBLAS gets
// C preloaded with each row's bias and beta = 1 (it computes alpha AB + beta
// C in f32; the bias is exact in C, as it has the output's type).
//
//===----------------------------------------------------------------------===//
#include "State.h"
#include "GgcKernels.h"
#include "Kernels.h"

namespace ggc::executor {

namespace {

using State = GroupedGemmExecutor::State;

/// A cuBLAS slot held for one call (see Executor.cpp's locking note).
class Lease {
public:
  Lease(State &state, uint64_t stream) : state_(state), stream_(stream) {
    std::unique_lock<std::mutex> lock(state.mutex);
    state.freed.wait(lock, [&] {
      for (State::Slot &s : state.slots)
        if (!s.busy)
          return true;
      return false;
    });
    for (State::Slot &s : state.slots)
      if (!s.busy) {
        slot_ = &s;
        break;
      }
    slot_->busy = true;
    lock.unlock();
    auto cs = reinterpret_cast<CUstream>(stream);
    try {
      cuda::check(cuda::api().streamWaitEvent(cs, slot_->lastUse, 0),
                  "cuStreamWaitEvent");
      const cublas::Library &lib = *state.cublas;
      cublas::check(lib.setStream(slot_->handle, reinterpret_cast<cublas::Stream>(stream)),
                    "cublasSetStream");
      cublas::check(lib.setWorkspace(slot_->handle,
                                     reinterpret_cast<void *>(slot_->workspace),
                                     slot_->workspaceBytes),
                    "cublasSetWorkspace");
    } catch (...) {
      giveBack();
      throw;
    }
  }
  ~Lease() {
    cuda::api().eventRecord(slot_->lastUse, reinterpret_cast<CUstream>(stream_));
    giveBack();
  }
  State::Slot &slot() { return *slot_; }

private:
  void giveBack() {
    std::lock_guard<std::mutex> lock(state_.mutex);
    slot_->busy = false;
    state_.freed.notify_one();
  }
  State &state_;
  State::Slot *slot_ = nullptr;
  uint64_t stream_;
};

cublas::DataType cublasType(DType t) {
  switch (t) {
  case DType::F32: return cublas::R32F;
  case DType::F16: return cublas::R16F;
  case DType::BF16: return cublas::R16BF;
  case DType::F8E4M3: return cublas::R8F_E4M3;
  }
  return cublas::R32F;
}

cublas::ComputeType computeType(const ExecutorConfig &config) {
  if (config.precision == Precision::TF32)
    return cublas::Compute32FFastTF32;
  if (config.precision != Precision::FP32 && !config.useTensorCores)
    return cublas::Compute32FPedantic;
  return cublas::Compute32F;
}

struct Problem {
  int m; // rows of the expert
  uint64_t w, rows, out;
};

std::vector<Problem> problems(const GroupedInput &in, const GroupedExpertWeights &w,
                              uint64_t out) {
  int64_t inBytes = dtypeBytes(w.dtype), outBytes = dtypeBytes(outputType(in.precision));
  std::vector<Problem> list;
  for (int64_t e = 0; e < w.numExperts; ++e) {
    int count = in.mapping.tokensPerExpert[e];
    if (count == 0)
      continue;
    int64_t first = in.mapping.expertOffsets[e];
    list.push_back({count, w.weights.address() + e * w.expertDim * w.hiddenDim * inBytes,
                    in.rows.address() + first * in.hidden * inBytes,
                    out + first * w.expertDim * outBytes});
  }
  return list;
}

/// The device copy of expertOfRow, written by prepareInput after tokenOfRow
/// and assignmentOfRow.
uint64_t expertOfRowAddress(const GroupedInput &in) {
  return in.indices.address() + 2 * sizeof(int32_t) * in.numRows();
}

/// out[r, :] = bias[expert of r, :], for cuBLAS to accumulate onto (beta 1).
/// Returns beta.
float preloadBiases(const ggckernels::CompileTarget &target, int device,
                    const GroupedInput &in, const GroupedExpertWeights &w, uint64_t out) {
  if (!w.hasBiases())
    return 0.0f;
  if (w.dtype != outputType(in.precision))
    throw Error(std::string("ggc executor: cuBLAS adds biases of the output type "
                            "only, but they are ") + name(w.dtype) + " and the output " +
                name(outputType(in.precision)));
  kernels::copyRows(target, device, in.stream, out, in.numRows(), w.biases.address(),
                    w.numExperts, 0, expertOfRowAddress(in), in.numRows(),
                    w.expertDim * dtypeBytes(w.dtype));
  return 1.0f;
}

void runCublas(State &state, const ExecutorConfig &config,
               const ggckernels::CompileTarget &target, bool grouped,
               const GroupedInput &in, const GroupedExpertWeights &w, uint64_t out) {
  std::vector<Problem> list = problems(in, w, out);
  const cublas::Library &lib = *state.cublas;
  cublas::DataType ab = cublasType(w.dtype), c = cublasType(outputType(in.precision));
  cublas::ComputeType compute = computeType(config);
  int n = static_cast<int>(w.expertDim), k = static_cast<int>(w.hiddenDim);
  float one = 1.0f, beta = preloadBiases(target, config.device, in, w, out);
  Lease lease(state, in.stream);
  cublas::Handle h = lease.slot().handle;
  if (!grouped) {
    for (const Problem &p : list)
      cublas::check(lib.gemmEx(h, cublas::OpT, cublas::OpN, n, p.m, k, &one,
                               reinterpret_cast<const void *>(p.w), ab, k,
                               reinterpret_cast<const void *>(p.rows), ab, k, &beta,
                               reinterpret_cast<void *>(p.out), c, n, compute,
                               cublas::GemmDefault),
                    "cublasGemmEx");
    return;
  }
  size_t count = list.size();
  std::vector<uint64_t> pointers(3 * count);
  std::vector<int> ms(count), ns(count, n), ks(count, k), sizes(count, 1);
  for (size_t i = 0; i < count; ++i) {
    pointers[i] = list[i].w;
    pointers[count + i] = list[i].rows;
    pointers[2 * count + i] = list[i].out;
    ms[i] = list[i].m;
  }
  std::vector<cublas::Operation> ta(count, cublas::OpT), tb(count, cublas::OpN);
  std::vector<float> alphas(count, 1.0f), betas(count, beta);
  uint64_t device = lease.slot().pointers;
  cuda::check(cuda::api().memcpyHtoDAsync(device, pointers.data(), pointers.size() * 8,
                                          reinterpret_cast<CUstream>(in.stream)),
              "copying cuBLAS's pointer arrays to the device");
  auto array = [&](size_t i) { return reinterpret_cast<void *const *>(device + i * count * 8); };
  cublas::check(lib.gemmGroupedBatchedEx(
                    h, ta.data(), tb.data(), ns.data(), ms.data(), ks.data(),
                    alphas.data(), array(0), ab, ks.data(), array(1), ab, ks.data(),
                    betas.data(), array(2), c, ns.data(), static_cast<int>(count),
                    sizes.data(), compute),
                "cublasGemmGroupedBatchedEx");
}

} // namespace

void GroupedGemmExecutor::run(Algorithm algorithm, const GroupedInput &in,
                              const GroupedExpertWeights &w, uint64_t out) const {
  if (in.numRows() == 0)
    return; // no rows: nothing to compute, nothing to write
  cuda::DeviceScope scope(config_.device);
  if (algorithm == Algorithm::Ggc) {
    bool fp8 = config_.precision == Precision::FP8;
    ggckernels::Operands o;
    o.rows = fp8 ? in.rowsFp8.address() : in.rows.address();
    o.rowScales = in.rowScales.address();
    o.weights = fp8 ? w.fp8Weights.address() : w.weights.address();
    o.weightScales = w.fp8Scales.address();
    o.offsets = in.offsetsAddress();
    o.biases = w.biases.address();
    o.out = out;
    o.numRows = in.numRows();
    ggckernels::CompileTarget target = ggckernels::targetOf(caps_);
    ggckernels::launch(config_.precision, w.numExperts, w.expertDim,
                       w.hiddenDim, target, config_.device, o, in.stream);
  } else {
    runCublas(*state_, config_, ggckernels::targetOf(caps_),
              algorithm == Algorithm::CublasGrouped, in, w, out);
  }
}

} // namespace ggc::executor
