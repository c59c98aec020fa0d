//===- Kernels.h - the executor's small kernels, compiled by ggc -*- C++ -*-===//
//
// Gathering rows, scattering them back (and broadcasting biases for cuBLAS)
// and quantising activations to FP8 are memory-bound loops: kernels that
// ggc compiles in-process from gg ops (gg.copy_rows, gg.quantize_rows)
// for the device's target, like the grouped GEMMs (GgcKernels.h).
//
//===----------------------------------------------------------------------===//
#ifndef GGC_EXECUTOR_KERNELS_H
#define GGC_EXECUTOR_KERNELS_H

#include "GgcKernels.h"

#include <string>

namespace ggc::executor::kernels {

/// The gg functions, for compiling and for checking without a device.
/// gg.copy_rows over rows of `rowBytes` bytes moved `unit` bytes at a time,
/// through a source and/or a destination row list; kernel `<name>_copy`.
std::string copySource(int64_t rowBytes, int unit, bool sourceList,
                       bool destinationList, std::string &name);
/// gg.quantize_rows over bf16 rows of `k` columns (k % 128 == 0), scales
/// M-major; kernel `<name>_quantize`.
std::string quantizeSource(int64_t k, std::string &name);

/// dst[dstIndex ? dstIndex[r] : r] = src[srcIndex ? srcIndex[r] : r] for r
/// in [0, rows), rows of rowBytes; index arrays are i32 on the device, and
/// a row whose index lies outside its buffer (dstRows, srcRows) is skipped.
void copyRows(const ggckernels::CompileTarget &target, int device, uint64_t stream,
              uint64_t dst, int64_t dstRows, uint64_t src, int64_t srcRows,
              uint64_t dstIndex, uint64_t srcIndex, int64_t rows, int64_t rowBytes);
/// bf16 rows [rows, k] (k % 128 == 0) to e4m3 with one f32 scale per row
/// and 128 columns (ggc.moe.quant's: amax / 448, each value times 448 /
/// amax): fp8 [rows, k], scales M-major [k / 128, scalesLd] (scalesLd >=
/// rows, the layout the FP8 GEMM reads as block_mn).
void quantizeRows(const ggckernels::CompileTarget &target, int device, uint64_t stream,
                  uint64_t fp8, uint64_t scales, int64_t scalesLd, uint64_t src,
                  int64_t rows, int64_t k);

/// The M-major scales' row length for `rows` rows: rows rounded up to 4.
inline int64_t scalesLd(int64_t rows) { return (rows + 3) / 4 * 4; }

} // namespace ggc::executor::kernels

#endif // GGC_EXECUTOR_KERNELS_H
