//===- CublasHeaderCheck.cpp - Cublas.h against the real cublas_api.h ------===//
//
// Built only where the toolkit has cublas_api.h (the GPU host): compiling
// is the test. Enum values must match, and each entry point's pointer type
// in Cublas.h, with its types renamed to the header's (Real below), must
// name one of the header's declarations exactly. The overload is picked by
// that type, as cublasGemmEx has a C++ overload taking the legacy
// cudaDataType compute type, which decltype(&cublasGemmEx) cannot resolve.
//
//===----------------------------------------------------------------------===//
#include "Cublas.h"

#include <cublas_api.h>

#include <type_traits>

namespace cb = ggc::executor::cublas;

// Compared as int: the enums are distinct types (and -Wenum-compare warns).
constexpr bool same(int real, int ours) { return real == ours; }

static_assert(same(CUBLAS_STATUS_SUCCESS, cb::kSuccess));
static_assert(same(CUBLAS_OP_N, cb::OpN) && same(CUBLAS_OP_T, cb::OpT));
static_assert(same(CUDA_R_32F, cb::R32F) && same(CUDA_R_16F, cb::R16F) &&
              same(CUDA_R_16BF, cb::R16BF) && same(CUDA_R_8F_E4M3, cb::R8F_E4M3));
static_assert(same(CUBLAS_COMPUTE_32F, cb::Compute32F) &&
              same(CUBLAS_COMPUTE_32F_PEDANTIC, cb::Compute32FPedantic) &&
              same(CUBLAS_COMPUTE_32F_FAST_TF32, cb::Compute32FFastTF32));
static_assert(same(CUBLAS_GEMM_DEFAULT, cb::GemmDefault));
static_assert(same(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
                   cb::MathDisallowReducedPrecisionReduction));
// statusName() names these two.
static_assert(same(CUBLAS_STATUS_NOT_SUPPORTED, 15) && same(CUBLAS_STATUS_INVALID_VALUE, 7));
static_assert(sizeof(cublasOperation_t) == sizeof(cb::Operation) &&
              sizeof(cudaDataType_t) == sizeof(cb::DataType) &&
              sizeof(cublasComputeType_t) == sizeof(cb::ComputeType) &&
              sizeof(cublasGemmAlgo_t) == sizeof(cb::GemmAlgo) &&
              sizeof(cublasStatus_t) == sizeof(cb::Status));

// Cublas.h's types as the header names them; every other type (int,
// size_t, void pointers) must be spelled the same in both.
template <typename T> struct Real { using type = T; };
template <> struct Real<cb::Handle> { using type = cublasHandle_t; };
template <> struct Real<cb::Handle *> { using type = cublasHandle_t *; };
template <> struct Real<cb::Stream> { using type = cudaStream_t; };
template <> struct Real<cb::Operation> { using type = cublasOperation_t; };
template <> struct Real<const cb::Operation *> { using type = const cublasOperation_t *; };
template <> struct Real<cb::DataType> { using type = cudaDataType_t; };
template <> struct Real<cb::ComputeType> { using type = cublasComputeType_t; };
template <> struct Real<cb::GemmAlgo> { using type = cublasGemmAlgo_t; };
template <> struct Real<cb::Math> { using type = cublasMath_t; };
template <typename R, typename... A> struct Real<R (*)(A...)> {
  static_assert(std::is_same_v<R, cb::Status>, "entry points return cublasStatus_t");
  using type = cublasStatus_t (*)(typename Real<A>::type...);
};
template <typename Ours> using RealFn = typename Real<Ours>::type;

// Passing the entry point to a parameter of the renamed pointer type picks
// the overload of exactly that type, and fails to compile when none has it.
template <typename Ours> constexpr bool declared(RealFn<Ours> entry) {
  return entry != nullptr;
}

static_assert(declared<cb::CreateFn>(&cublasCreate_v2));
static_assert(declared<cb::DestroyFn>(&cublasDestroy_v2));
static_assert(declared<cb::SetStreamFn>(&cublasSetStream_v2));
static_assert(declared<cb::SetWorkspaceFn>(&cublasSetWorkspace_v2));
static_assert(declared<cb::GetVersionFn>(&cublasGetVersion_v2));
static_assert(declared<cb::SetMathModeFn>(&cublasSetMathMode));
static_assert(declared<cb::GemmExFn>(&cublasGemmEx));
static_assert(declared<cb::GemmGroupedBatchedExFn>(&cublasGemmGroupedBatchedEx));
