//===- Cuda.cpp - the executor's use of the runtime's driver ---------------===//
#include "Cuda.h"
#include "ggc/Runtime.h"

namespace ggc::executor::cuda {

DeviceScope::DeviceScope(int device)
    : context_(runtime::driver::primaryContext(device)) {}

DeviceCapabilities queryDevice(int device) {
  DeviceScope scope(device);
  const auto &a = api();
  CUdevice dev;
  check(a.deviceGet(&dev, device), "cuDeviceGet");
  DeviceCapabilities caps;
  caps.ordinal = device;
  check(a.deviceGetAttribute(&caps.major,
                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute");
  check(a.deviceGetAttribute(&caps.minor,
                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
        "cuDeviceGetAttribute");
  check(a.deviceGetAttribute(&caps.multiprocessors,
                             CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
        "cuDeviceGetAttribute");
  check(a.deviceGetAttribute(
            &caps.sharedMemoryPerBlock,
            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
        "cuDeviceGetAttribute");
  caps.memoryGBps = runtime::deviceMemoryGBps(device);
  char name[256] = {};
  check(a.deviceGetName(name, sizeof(name) - 1, dev), "cuDeviceGetName");
  caps.name = name;
  return caps;
}

} // namespace ggc::executor::cuda

namespace ggc::executor {

DeviceBuffer::DeviceBuffer(int device, size_t bytes, uint64_t stream)
    : device_(device), stream_(stream), bytes_(bytes) {
  if (bytes == 0)
    return;
  cuda::DeviceScope scope(device);
  CUdeviceptr p = 0;
  cuda::check(cuda::api().memAllocAsync(&p, bytes,
                                        reinterpret_cast<CUstream>(stream)),
              ("allocating " + std::to_string(bytes) + " bytes").c_str());
  address_ = static_cast<uint64_t>(p);
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    address_ = other.address_;
    stream_ = other.stream_;
    bytes_ = other.bytes_;
    other.address_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

// A destructor must not throw: a failure here (the driver shutting down at
// exit) leaves the memory to the driver, which frees it with the context.
void DeviceBuffer::release() {
  if (!address_)
    return;
  try {
    cuda::DeviceScope scope(device_);
    cuda::api().memFreeAsync(static_cast<CUdeviceptr>(address_),
                             reinterpret_cast<CUstream>(stream_));
  } catch (const Error &) {
  }
  address_ = 0;
}

} // namespace ggc::executor
