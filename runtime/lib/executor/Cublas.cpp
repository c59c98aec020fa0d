//===- Cublas.cpp - cuBLAS, loaded at run time ------------------------------===//
#include "Cublas.h"

#include "ggc/Executor.h"

#include <dlfcn.h>

#include <cstdlib>

namespace ggc::executor::cublas {

namespace {

template <typename Fn> bool bind(void *lib, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

/// The cuBLAS 12 names end in _v2 for the handle functions; both 12 and 13
/// export them.
bool bindAll(void *lib, Library &l) {
  bool ok = bind(lib, "cublasCreate_v2", l.create) &&
            bind(lib, "cublasDestroy_v2", l.destroy) &&
            bind(lib, "cublasSetStream_v2", l.setStream) &&
            bind(lib, "cublasSetWorkspace_v2", l.setWorkspace) &&
            bind(lib, "cublasGetVersion_v2", l.getVersion) &&
            bind(lib, "cublasSetMathMode", l.setMathMode) &&
            bind(lib, "cublasGemmEx", l.gemmEx);
  bind(lib, "cublasGemmGroupedBatchedEx", l.gemmGroupedBatchedEx);
  return ok;
}

} // namespace

Library load(const std::vector<std::string> &candidates) {
  std::vector<std::string> names = candidates;
  if (names.empty()) {
    if (const char *env = std::getenv("GGC_CUBLAS"); env && *env)
      names.push_back(env);
    names.push_back("libcublas.so.13");
    names.push_back("libcublas.so.12");
  }
  Library l;
  std::string tried;
  for (const std::string &name : names) {
    void *lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      tried += "\n  " + name + ": " + (why ? why : "not found");
      continue;
    }
    Library candidate;
    if (!bindAll(lib, candidate)) {
      tried += "\n  " + name + ": lacks cublasGemmEx or the handle functions";
      dlclose(lib);
      continue;
    }
    candidate.path = name;
    return candidate;
  }
  l.error = "cuBLAS could not be loaded (set GGC_CUBLAS to its path, or "
            "install libcublas 12 or 13); tried:" + tried;
  return l;
}

const Library &library() {
  static const Library l = load();
  return l;
}

std::string statusName(Status status) {
  const char *name = "CUBLAS_STATUS_UNKNOWN";
  switch (status) {
  case 0: name = "CUBLAS_STATUS_SUCCESS"; break;
  case 1: name = "CUBLAS_STATUS_NOT_INITIALIZED"; break;
  case 3: name = "CUBLAS_STATUS_ALLOC_FAILED"; break;
  case 7: name = "CUBLAS_STATUS_INVALID_VALUE"; break;
  case 8: name = "CUBLAS_STATUS_ARCH_MISMATCH"; break;
  case 11: name = "CUBLAS_STATUS_MAPPING_ERROR"; break;
  case 13: name = "CUBLAS_STATUS_EXECUTION_FAILED"; break;
  case 14: name = "CUBLAS_STATUS_INTERNAL_ERROR"; break;
  case 15: name = "CUBLAS_STATUS_NOT_SUPPORTED"; break;
  case 16: name = "CUBLAS_STATUS_LICENSE_ERROR"; break;
  }
  return std::string(name) + " (" + std::to_string(status) + ")";
}

void check(Status status, const char *what) {
  if (status != kSuccess)
    throw Error(std::string("ggc executor: ") + what + " failed: " +
                statusName(status));
}

} // namespace ggc::executor::cublas
