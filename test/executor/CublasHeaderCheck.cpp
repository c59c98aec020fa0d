//===- CublasHeaderCheck.cpp - Cublas.h against the real cublas_api.h ------===//
//
// Built only where the toolkit has cublas_api.h (the GPU host): compiling
// is the test. Enum values must match, and every entry point must take
// parameters of the same sizes and kinds (pointer or not) in the same order.
//
//===----------------------------------------------------------------------===//
#include "Cublas.h"

#include <cublas_api.h>

#include <type_traits>

namespace cb = ggc::executor::cublas;

static_assert(CUBLAS_STATUS_SUCCESS == cb::kSuccess);
static_assert(CUBLAS_STATUS_NOT_SUPPORTED == 15 && CUBLAS_STATUS_INVALID_VALUE == 7);
static_assert(CUBLAS_OP_N == cb::OpN && CUBLAS_OP_T == cb::OpT);
static_assert(CUDA_R_32F == cb::R32F && CUDA_R_16F == cb::R16F &&
              CUDA_R_16BF == cb::R16BF && CUDA_R_8F_E4M3 == cb::R8F_E4M3);
static_assert(CUBLAS_COMPUTE_32F == cb::Compute32F &&
              CUBLAS_COMPUTE_32F_PEDANTIC == cb::Compute32FPedantic &&
              CUBLAS_COMPUTE_32F_FAST_TF32 == cb::Compute32FFastTF32);
static_assert(CUBLAS_GEMM_DEFAULT == cb::GemmDefault);
static_assert(sizeof(cublasOperation_t) == sizeof(cb::Operation) &&
              sizeof(cudaDataType_t) == sizeof(cb::DataType) &&
              sizeof(cublasComputeType_t) == sizeof(cb::ComputeType) &&
              sizeof(cublasGemmAlgo_t) == sizeof(cb::GemmAlgo) &&
              sizeof(cublasStatus_t) == sizeof(cb::Status));

template <typename A, typename B> constexpr bool sameShape() {
  return sizeof(A) == sizeof(B) && std::is_pointer_v<A> == std::is_pointer_v<B>;
}
template <typename F, typename G> struct Compatible : std::false_type {};
template <typename R1, typename... A, typename R2, typename... B>
struct Compatible<R1 (*)(A...), R2 (*)(B...)> {
  static constexpr bool value =
      sizeof...(A) == sizeof...(B) && sameShape<R1, R2>() && (sameShape<A, B>() && ...);
};

static_assert(Compatible<decltype(&cublasCreate_v2), cb::CreateFn>::value);
static_assert(Compatible<decltype(&cublasDestroy_v2), cb::DestroyFn>::value);
static_assert(Compatible<decltype(&cublasSetStream_v2), cb::SetStreamFn>::value);
static_assert(Compatible<decltype(&cublasSetWorkspace_v2), cb::SetWorkspaceFn>::value);
static_assert(Compatible<decltype(&cublasGetVersion_v2), cb::GetVersionFn>::value);
static_assert(Compatible<decltype(&cublasGemmEx), cb::GemmExFn>::value);
static_assert(Compatible<decltype(&cublasGemmGroupedBatchedEx),
                         cb::GemmGroupedBatchedExFn>::value);
