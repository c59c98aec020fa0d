//===- LibFuzzerEntry.cpp - a libFuzzer target over libggc's C API ---------===//
//
// Built only where the compiler has libFuzzer (clang): coverage-guided
// fuzzing of the same path ggc-fuzz mutates blindly. libggc.so itself is
// not instrumented for coverage unless it is built with
// -fsanitize=fuzzer-no-link too (CMAKE_CXX_FLAGS), so that is the useful
// setup; see docs/testing.md.
//
//===----------------------------------------------------------------------===//
#include "ggc-c/Compiler.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ggc_options options = {"ptx", nullptr, 0, 0};
  ggc_result *result = ggc_compile(reinterpret_cast<const char *>(data), size,
                                   "fuzz.mlir", &options);
  ggc_result_destroy(result);
  return 0;
}
