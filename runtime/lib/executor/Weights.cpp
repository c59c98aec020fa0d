//===- Weights.cpp - expert weights packed, uploaded and quantised ---------===//
#include "Cuda.h"

#include <stdexcept>

namespace ggc::executor {

// Synchronous, ordered after work on the legacy stream (the allocations of
// DeviceBuffer(..., 0)): the data is ready for any stream on return.
void copyToDevice(int device, uint64_t address, const void *source, size_t bytes) {
  if (bytes == 0)
    return;
  if (address == 0 || source == nullptr)
    throw std::invalid_argument("ggc executor: copyToDevice needs a device address "
                                "and a host source, got a null pointer");
  cuda::DeviceScope scope(device);
  cuda::check(cuda::api().memcpyHtoD(address, source, bytes),
              "copying host memory to the device");
}

namespace {

DeviceBuffer upload(int device, const void *data, size_t bytes) {
  DeviceBuffer buffer(device, bytes, 0);
  copyToDevice(device, buffer.address(), data, bytes);
  return buffer;
}

} // namespace

ExpertWeightManager ExpertWeightManager::load(
    const std::vector<const void *> &experts,
    const std::vector<const void *> &biases, int64_t expertDim,
    int64_t hiddenDim, DType dtype, int device) {
  if (expertDim < 1 || hiddenDim < 1)
    throw std::invalid_argument(
        "ggc executor: expert_dim and hidden_dim must be positive, got " +
        std::to_string(expertDim) + " and " + std::to_string(hiddenDim));
  if (dtype == DType::F8E4M3)
    throw std::invalid_argument("ggc executor: weights are loaded as f32, f16 or "
                                "bf16 and quantised with quantize(), not given in FP8");
  if (!biases.empty() && biases.size() != experts.size())
    throw std::invalid_argument(
        "ggc executor: expert_biases must be empty or hold one vector per expert (" +
        std::to_string(experts.size()) + "), got " + std::to_string(biases.size()));
  size_t element = static_cast<size_t>(dtypeBytes(dtype));
  ExpertWeightManager m;
  m.host_ = packing::packExperts(experts, expertDim * hiddenDim * element,
                                 "expert_weights");
  auto w = std::make_shared<GroupedExpertWeights>();
  w->numExperts = static_cast<int64_t>(experts.size());
  w->expertDim = expertDim;
  w->hiddenDim = hiddenDim;
  w->dtype = dtype;
  w->device = device;
  w->weights = upload(device, m.host_.data(), m.host_.size());
  if (!biases.empty()) {
    std::vector<uint8_t> packed =
        packing::packExperts(biases, expertDim * element, "expert_biases");
    w->biases = upload(device, packed.data(), packed.size());
  }
  m.weights_ = std::move(w);
  return m;
}

GroupedExpertWeights &ExpertWeightManager::loaded() const {
  if (!weights_)
    throw Error("ggc executor: this ExpertWeightManager holds no weights: make it "
                "with ExpertWeightManager::load");
  return *weights_;
}

const GroupedExpertWeights *ExpertWeightManager::quantizedWeights() const {
  return weights_ && weights_->quantized() ? weights_.get() : nullptr;
}

void ExpertWeightManager::quantize() {
  GroupedExpertWeights &w = loaded();
  int64_t count = w.numExperts * w.expertDim * w.hiddenDim;
  int64_t element = dtypeBytes(w.dtype);
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = packing::toFloat(host_.data() + i * element, w.dtype);
  std::vector<uint8_t> fp8;
  std::vector<float> scales;
  packing::quantizeBlocks(values.data(), w.numExperts, w.expertDim, w.hiddenDim,
                          fp8, scales);
  w.fp8Weights = upload(w.device, fp8.data(), fp8.size());
  w.fp8Scales = upload(w.device, scales.data(), scales.size() * sizeof(float));
}

} // namespace ggc::executor
