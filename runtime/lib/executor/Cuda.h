//===- Cuda.h - the executor's use of the runtime's driver ------*- C++ -*-===//
//
// The executor calls the driver through the runtime's table (Driver.h):
// one loader, one primary-context cache, one error format.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_EXECUTOR_CUDA_H
#define GGC_EXECUTOR_CUDA_H

#include "ggc/Executor.h"

#include "../Driver.h"

namespace ggc::executor::cuda {

/// The loaded driver; throws Error when there is none (or no device).
inline const runtime::driver::Driver &api() { return runtime::driver::usable(); }
using runtime::driver::check;

/// The device's primary context (retained once per process), made current
/// for a scope; the caller's context is restored after.
class DeviceScope {
public:
  explicit DeviceScope(int device);

private:
  runtime::driver::ScopedContext context_;
};

DeviceCapabilities queryDevice(int device);

} // namespace ggc::executor::cuda

#endif // GGC_EXECUTOR_CUDA_H
