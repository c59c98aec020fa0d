//===- Cuda.h - the driver entry points the executor needs ------*- C++ -*-===//
//
// The runtime keeps its driver table private, so the executor loads the few
// more it needs (memory, events, device attributes) the same way: dlopen at
// first use, an Error naming what is missing.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_EXECUTOR_CUDA_H
#define GGC_EXECUTOR_CUDA_H

#include "ggc/Executor.h"

#include <cuda.h>

namespace ggc::executor::cuda {

struct Api {
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxGetCurrent)(CUcontext *);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*memAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*memFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*streamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*getErrorString)(CUresult, const char **);
};

/// The loaded driver; throws Error when there is none (or no device).
const Api &api();
/// Throws Error "ggc executor: <what> failed: <CUDA's message>".
void check(CUresult rc, const char *what);

/// The device's primary context (retained once per process), made current
/// for a scope; the caller's context is restored after.
class DeviceScope {
public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

private:
  CUcontext previous_ = nullptr;
  bool changed_ = false;
};

DeviceCapabilities queryDevice(int device);

} // namespace ggc::executor::cuda

#endif // GGC_EXECUTOR_CUDA_H
