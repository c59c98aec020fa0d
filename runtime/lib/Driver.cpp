//===- Driver.cpp - the CUDA driver, loaded at run time ----------------===//
#include "Driver.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace ggc::runtime::driver {

namespace {

template <typename Fn> bool bind(void *lib, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

} // namespace

const Driver &loaded() {
  static const Driver d = [] {
    Driver d{};
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      d.error = "the CUDA driver (libcuda.so.1) is not installed: " +
                std::string(dlerror());
      return d;
    }
    bool ok = bind(lib, "cuInit", d.init) &&
              bind(lib, "cuDeviceGetCount", d.deviceGetCount) &&
              bind(lib, "cuDeviceGet", d.deviceGet) &&
              bind(lib, "cuCtxGetCurrent", d.ctxGetCurrent) &&
              bind(lib, "cuCtxSetCurrent", d.ctxSetCurrent) &&
              bind(lib, "cuCtxGetDevice", d.ctxGetDevice) &&
              bind(lib, "cuDevicePrimaryCtxRetain", d.primaryCtxRetain) &&
              bind(lib, "cuModuleLoadData", d.moduleLoadData) &&
              bind(lib, "cuModuleUnload", d.moduleUnload) &&
              bind(lib, "cuPointerGetAttribute", d.pointerGetAttribute) &&
              // The unversioned symbol is the old 32-bit-size ABI.
              bind(lib, "cuMemcpyDtoHAsync_v2", d.memcpyDtoHAsync) &&
              bind(lib, "cuStreamSynchronize", d.streamSynchronize) &&
              bind(lib, "cuModuleGetFunction", d.moduleGetFunction) &&
              bind(lib, "cuFuncSetAttribute", d.funcSetAttribute) &&
              bind(lib, "cuLaunchKernelEx", d.launchKernelEx) &&
              bind(lib, "cuTensorMapEncodeTiled", d.tensorMapEncodeTiled) &&
              bind(lib, "cuGetErrorString", d.getErrorString) &&
              bind(lib, "cuDeviceGetAttribute", d.deviceGetAttribute) &&
              bind(lib, "cuDeviceGetName", d.deviceGetName) &&
              bind(lib, "cuMemAllocAsync", d.memAllocAsync) &&
              bind(lib, "cuMemFreeAsync", d.memFreeAsync) &&
              bind(lib, "cuMemAlloc_v2", d.memAlloc) &&
              bind(lib, "cuMemFree_v2", d.memFree) &&
              bind(lib, "cuMemcpyHtoDAsync_v2", d.memcpyHtoDAsync) &&
              bind(lib, "cuMemcpyHtoD_v2", d.memcpyHtoD) &&
              bind(lib, "cuEventCreate", d.eventCreate) &&
              bind(lib, "cuEventRecord", d.eventRecord) &&
              bind(lib, "cuEventDestroy_v2", d.eventDestroy) &&
              bind(lib, "cuStreamWaitEvent", d.streamWaitEvent);
    if (!ok) {
      d.error = "the CUDA driver is too old: it lacks cuLaunchKernelEx or "
                "cuTensorMapEncodeTiled (CUDA 12 or newer is needed)";
      return d;
    }
    CUresult rc = d.init(0);
    int count = 0;
    if (rc == CUDA_SUCCESS)
      rc = d.deviceGetCount(&count);
    if (rc != CUDA_SUCCESS || count == 0)
      d.error = "no CUDA device is available (cuInit/cuDeviceGetCount "
                "returned " +
                std::to_string(static_cast<int>(rc)) + ")";
    return d;
  }();
  return d;
}

const Driver &usable() {
  const Driver &d = loaded();
  if (!d.error.empty())
    throw Error("ggc runtime: " + d.error);
  return d;
}

void check(CUresult rc, const char *what) {
  if (rc == CUDA_SUCCESS)
    return;
  const char *message = nullptr;
  usable().getErrorString(rc, &message);
  throw Error(std::string("ggc runtime: ") + what + " failed: " +
              (message ? message : "unknown error") + " (CUresult " +
              std::to_string(static_cast<int>(rc)) + ")");
}

/// The primary context of `device`, retained once and kept for the
/// process, as the CUDA runtime does.
CUcontext primaryContext(int device) {
  static std::mutex mutex;
  static std::map<int, CUcontext> contexts;
  const Driver &d = usable();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = contexts.find(device);
  if (it != contexts.end())
    return it->second;
  int count = 0;
  check(d.deviceGetCount(&count), "cuDeviceGetCount");
  if (device < 0 || device >= count)
    throw Error("ggc runtime: device " + std::to_string(device) +
                " does not exist (this machine has " + std::to_string(count) +
                ")");
  CUdevice dev;
  check(d.deviceGet(&dev, device), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(d.primaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  return contexts.emplace(device, ctx).first->second;
}

ScopedContext::ScopedContext(CUcontext context) {
  const Driver &d = usable();
  check(d.ctxGetCurrent(&previous_), "cuCtxGetCurrent");
  if (previous_ != context)
    check(d.ctxSetCurrent(context), "cuCtxSetCurrent");
  else
    previous_ = kUnchanged;
}

ScopedContext::~ScopedContext() {
  if (previous_ != kUnchanged)
    usable().ctxSetCurrent(previous_);
}

} // namespace ggc::runtime::driver
