//===- Cublas.h - the cuBLAS entry points the executor uses -----*- C++ -*-===//
//
// cuBLAS is loaded at run time (dlopen of libcublas.so.13, then .12), so the
// build needs no cuBLAS. The declarations below mirror cublas_api.h and
// library_types.h of CUDA 12/13; test/executor/CublasHeaderCheck.cpp
// checks them against the real header where one is installed.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_EXECUTOR_CUBLAS_H
#define GGC_EXECUTOR_CUBLAS_H

#include <string>
#include <vector>

namespace ggc::executor::cublas {

using Handle = struct cublasContext *;      // cublasHandle_t
using Stream = struct CUstream_st *;        // cudaStream_t
using Status = int;                         // cublasStatus_t
enum Operation : int { OpN = 0, OpT = 1 };  // cublasOperation_t
enum DataType : int {                       // cudaDataType_t
  R32F = 0, R16F = 2, R16BF = 14, R8F_E4M3 = 28
};
enum ComputeType : int {                    // cublasComputeType_t
  Compute32F = 68, Compute32FPedantic = 69, Compute32FFastTF32 = 77
};
enum GemmAlgo : int { GemmDefault = -1 };   // cublasGemmAlgo_t
enum Math : int {                           // cublasMath_t
  MathDisallowReducedPrecisionReduction = 16
};
constexpr Status kSuccess = 0;

using CreateFn = Status (*)(Handle *);
using DestroyFn = Status (*)(Handle);
using SetStreamFn = Status (*)(Handle, Stream);
using SetWorkspaceFn = Status (*)(Handle, void *, size_t);
using GetVersionFn = Status (*)(Handle, int *);
using SetMathModeFn = Status (*)(Handle, Math);
using GemmExFn = Status (*)(Handle, Operation, Operation, int, int, int,
                            const void *, const void *, DataType, int,
                            const void *, DataType, int, const void *, void *,
                            DataType, int, ComputeType, GemmAlgo);
using GemmGroupedBatchedExFn = Status (*)(
    Handle, const Operation[], const Operation[], const int[], const int[],
    const int[], const void *, const void *const[], DataType, const int[],
    const void *const[], DataType, const int[], const void *, void *const[],
    DataType, const int[], int, const int[], ComputeType);

struct Library {
  CreateFn create = nullptr;
  DestroyFn destroy = nullptr;
  SetStreamFn setStream = nullptr;
  SetWorkspaceFn setWorkspace = nullptr;
  GetVersionFn getVersion = nullptr;
  SetMathModeFn setMathMode = nullptr;
  GemmExFn gemmEx = nullptr;
  /// Null for a cuBLAS older than 12.5, which has no grouped GEMM.
  GemmGroupedBatchedExFn gemmGroupedBatchedEx = nullptr;
  std::string path;  ///< the file loaded
  std::string error; ///< why cuBLAS is unusable; "" when it is usable
};

/// Tries `candidates` in order (the default: libcublas.so.13, .so.12, or
/// $GGC_CUBLAS when set); the first that loads with every required entry
/// point wins. Never throws: a failure is in `error`, naming each attempt.
Library load(const std::vector<std::string> &candidates = {});
/// The process's cuBLAS, loaded once.
const Library &library();

/// "CUBLAS_STATUS_NOT_SUPPORTED (15)" and the like.
std::string statusName(Status status);
/// Throws Error "ggc executor: <what> failed: <status>".
void check(Status status, const char *what);

} // namespace ggc::executor::cublas

#endif // GGC_EXECUTOR_CUBLAS_H
