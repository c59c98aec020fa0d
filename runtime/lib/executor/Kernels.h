//===- Kernels.h - the executor's small kernels (PTX) -----------*- C++ -*-===//
//
// Gathering rows, scattering them back (and broadcasting biases for cuBLAS)
// and quantising activations to FP8 are memory-bound loops; they are
// written as PTX text here and JIT-compiled by the driver, so the build
// needs no CUDA compiler.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_EXECUTOR_KERNELS_H
#define GGC_EXECUTOR_KERNELS_H

#include "ggc/Executor.h"

#include <string>

namespace ggc::executor::kernels {

/// The PTX modules, for launching and for checking with ptxas.
const std::string &copyModule();  ///< ggc_copy_rows_{1,2,4,16}
const std::string &fp8Module();   ///< ggc_quantize_rows_1x128 (sm_89)

/// dst[dstIndex ? dstIndex[r] : r] = src[srcIndex ? srcIndex[r] : r] for r
/// in [0, rows), rows of rowBytes; index arrays are i32 on the device.
void copyRows(int device, uint64_t stream, uint64_t dst, uint64_t src,
              uint64_t dstIndex, uint64_t srcIndex, int64_t rows,
              int64_t rowBytes);
/// bf16 rows [rows, k] (k % 128 == 0) to e4m3 with one f32 scale per row
/// and 128 columns (amax / 448): fp8 [rows, k], scales [rows, k / 128].
void quantizeRows(int device, uint64_t stream, uint64_t fp8, uint64_t scales,
                  uint64_t src, int64_t rows, int64_t k);

} // namespace ggc::executor::kernels

#endif // GGC_EXECUTOR_KERNELS_H
