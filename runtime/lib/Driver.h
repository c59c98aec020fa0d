//===- Driver.h - the CUDA driver, loaded at run time -------*- C++ -*-===//
//
// One table of the driver's entry points for the runtime and the executor:
// dlopen at first use, so ggc builds and its CPU tests run without a GPU,
// and a missing driver or device is an Error naming what is missing.
// Internal to runtime/.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_RUNTIME_DRIVER_H
#define GGC_RUNTIME_DRIVER_H

#include "ggc/Runtime.h"

#include <cuda.h>

#include <string>

namespace ggc::runtime::driver {

struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*ctxGetCurrent)(CUcontext *);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxGetDevice)(CUdevice *);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*pointerGetAttribute)(void *, CUpointer_attribute, CUdeviceptr);
  CUresult (*memcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*funcSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*launchKernelEx)(const CUlaunchConfig *, CUfunction, void **,
                             void **);
  CUresult (*tensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType,
                                   cuuint32_t, void *, const cuuint64_t *,
                                   const cuuint64_t *, const cuuint32_t *,
                                   const cuuint32_t *, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion,
                                   CUtensorMapFloatOOBfill);
  CUresult (*getErrorString)(CUresult, const char **);
  // The executor's (memory, events, device attributes).
  CUresult (*deviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*deviceGetName)(char *, int, CUdevice);
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
  std::string error; // why the driver is unusable; "" when it is usable
};

/// The table, with `error` set when the driver is unusable.
const Driver &loaded();
/// The table; throws Error when the driver is unusable.
const Driver &usable();
/// Throws Error "ggc runtime: <what> failed: <CUDA's message>".
void check(CUresult rc, const char *what);
/// The primary context of `device`, retained once and kept for the
/// process, as the CUDA runtime does; Error for a device that does not
/// exist.
CUcontext primaryContext(int device);

/// Makes `context` current for a scope and restores the caller's after.
class ScopedContext {
public:
  explicit ScopedContext(CUcontext context);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

private:
  static inline const CUcontext kUnchanged = reinterpret_cast<CUcontext>(-1);
  CUcontext previous_ = nullptr;
};

} // namespace ggc::runtime::driver

#endif // GGC_RUNTIME_DRIVER_H
