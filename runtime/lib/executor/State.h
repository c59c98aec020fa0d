//===- State.h - the executor's shared state (cuBLAS slots) ------*- C++ -*-===//
#ifndef GGC_EXECUTOR_STATE_H
#define GGC_EXECUTOR_STATE_H

#include "Cublas.h"
#include "Cuda.h"

#include <condition_variable>
#include <mutex>

namespace ggc::executor {

/// cuBLAS handles with their workspace shares; see Executor.cpp's locking note.
struct GroupedGemmExecutor::State {
  struct Slot {
    cublas::Handle handle = nullptr;
    CUevent lastUse = nullptr;
    uint64_t pointers = 0, workspace = 0;
    size_t workspaceBytes = 0;
    bool busy = false;
  };
  const cublas::Library *cublas = nullptr; // null: not loaded
  DeviceBuffer workspace;
  std::mutex mutex;
  std::condition_variable freed;
  std::vector<Slot> slots;
};

} // namespace ggc::executor

#endif // GGC_EXECUTOR_STATE_H
