//===- Cuda.cpp - the driver entry points the executor needs ---------------===//
#include "Cuda.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace ggc::executor::cuda {

namespace {

template <typename Fn> bool bind(void *lib, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

struct Loaded {
  Api api{};
  std::string error;
};

Loaded load() {
  Loaded l;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l.error = "the CUDA driver (libcuda.so.1) is not installed: " +
              std::string(dlerror());
    return l;
  }
  Api &a = l.api;
  // The _v2 names are the 64-bit-size ABI; the unversioned ones are older.
  bool ok = bind(lib, "cuInit", a.init) &&
            bind(lib, "cuDeviceGetCount", a.deviceGetCount) &&
            bind(lib, "cuDeviceGet", a.deviceGet) &&
            bind(lib, "cuDeviceGetAttribute", a.deviceGetAttribute) &&
            bind(lib, "cuDeviceGetName", a.deviceGetName) &&
            bind(lib, "cuDevicePrimaryCtxRetain", a.primaryCtxRetain) &&
            bind(lib, "cuCtxGetCurrent", a.ctxGetCurrent) &&
            bind(lib, "cuCtxSetCurrent", a.ctxSetCurrent) &&
            bind(lib, "cuMemAllocAsync", a.memAllocAsync) &&
            bind(lib, "cuMemFreeAsync", a.memFreeAsync) &&
            bind(lib, "cuMemAlloc_v2", a.memAlloc) &&
            bind(lib, "cuMemFree_v2", a.memFree) &&
            bind(lib, "cuMemcpyHtoDAsync_v2", a.memcpyHtoDAsync) &&
            bind(lib, "cuMemcpyHtoD_v2", a.memcpyHtoD) &&
            bind(lib, "cuEventCreate", a.eventCreate) &&
            bind(lib, "cuEventRecord", a.eventRecord) &&
            bind(lib, "cuEventDestroy_v2", a.eventDestroy) &&
            bind(lib, "cuStreamWaitEvent", a.streamWaitEvent) &&
            bind(lib, "cuGetErrorString", a.getErrorString);
  if (!ok) {
    l.error = "the CUDA driver is too old: it lacks stream-ordered allocation "
              "(cuMemAllocAsync; CUDA 11.2 or newer is needed)";
    return l;
  }
  int count = 0;
  CUresult rc = a.init(0);
  if (rc == CUDA_SUCCESS)
    rc = a.deviceGetCount(&count);
  if (rc != CUDA_SUCCESS || count == 0)
    l.error = "no CUDA device is available (cuInit/cuDeviceGetCount returned " +
              std::to_string(static_cast<int>(rc)) + ")";
  return l;
}

CUcontext primaryContext(int device) {
  static std::mutex mutex;
  static std::map<int, CUcontext> contexts;
  const Api &a = api();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = contexts.find(device);
  if (it != contexts.end())
    return it->second;
  int count = 0;
  check(a.deviceGetCount(&count), "cuDeviceGetCount");
  if (device < 0 || device >= count)
    throw Error("ggc executor: device " + std::to_string(device) +
                " does not exist (this machine has " + std::to_string(count) +
                ")");
  CUdevice dev;
  check(a.deviceGet(&dev, device), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(a.primaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  return contexts.emplace(device, ctx).first->second;
}

} // namespace

const Api &api() {
  static const Loaded loaded = load();
  if (!loaded.error.empty())
    throw Error("ggc executor: " + loaded.error);
  return loaded.api;
}

void check(CUresult rc, const char *what) {
  if (rc == CUDA_SUCCESS)
    return;
  const char *message = nullptr;
  api().getErrorString(rc, &message);
  throw Error(std::string("ggc executor: ") + what + " failed: " +
              (message ? message : "unknown error") + " (CUresult " +
              std::to_string(static_cast<int>(rc)) + ")");
}

DeviceScope::DeviceScope(int device) {
  CUcontext context = primaryContext(device);
  check(api().ctxGetCurrent(&previous_), "cuCtxGetCurrent");
  if (previous_ != context) {
    check(api().ctxSetCurrent(context), "cuCtxSetCurrent");
    changed_ = true;
  }
}

DeviceScope::~DeviceScope() {
  if (changed_)
    api().ctxSetCurrent(previous_);
}

DeviceCapabilities queryDevice(int device) {
  DeviceScope scope(device);
  const Api &a = api();
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
