//===- CheckedMath.h - size arithmetic that cannot overflow -----*- C++ -*-===//
//
// Sizes reach the verifier and the passes straight from the IR, so any of
// them may be dynamic (ShapedType::kDynamic, INT64_MIN) or as large as
// INT64_MAX. Every expression on them goes through these helpers: a dynamic
// operand or a result that int64_t cannot hold gives std::nullopt, never
// undefined behaviour or a wrapped size.
//
//===----------------------------------------------------------------------===//
#ifndef GG_CHECKEDMATH_H
#define GG_CHECKEDMATH_H

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cstdint>
#include <optional>

namespace mlir::gg {

/// The largest static size (G, M, N or K) a kernel may be specialised for.
/// The kernel indexes rows, columns and K with 32-bit signed integers and
/// runs those indices up to a size rounded up to whole tiles (N + BN,
/// K + BK, M + BM) or, for MX scales of A, M plus three padding rows per
/// group (3G is bounded by this too): 2^30 leaves that headroom below 2^31.
/// The number of tiles is bounded per config (ggc::checkTileIndices).
inline constexpr int64_t kMaxStaticSize = int64_t(1) << 30;

/// The tallest band of M blocks a schedule may walk (#gg.schedule m_band):
/// a band taller than the CTAs that run at once walks like one band per
/// group, which m_band = 0 says.
inline constexpr int64_t kMaxMBand = 1024;

/// Sizes as std::optional: nullopt for a dynamic size.
inline std::optional<int64_t> staticSize(int64_t size) {
  if (ShapedType::isDynamic(size))
    return std::nullopt;
  return size;
}

inline std::optional<int64_t> checkedAdd(std::optional<int64_t> a,
                                         std::optional<int64_t> b) {
  if (!a || !b)
    return std::nullopt;
  return llvm::checkedAdd(*a, *b);
}

inline std::optional<int64_t> checkedMul(std::optional<int64_t> a,
                                         std::optional<int64_t> b) {
  if (!a || !b)
    return std::nullopt;
  return llvm::checkedMul(*a, *b);
}

/// ceil(a / b) for a >= 0 and b > 0 (nullopt otherwise): written as
/// a / b + (a % b != 0), which cannot overflow where a + b - 1 would.
inline std::optional<int64_t> checkedCeilDiv(std::optional<int64_t> a,
                                             int64_t b) {
  if (!a || *a < 0 || b <= 0)
    return std::nullopt;
  return *a / b + (*a % b != 0 ? 1 : 0);
}

/// a rounded up to a multiple of `align` (> 0), for a >= 0.
inline std::optional<int64_t> checkedAlignTo(std::optional<int64_t> a,
                                             int64_t align) {
  return checkedMul(checkedCeilDiv(a, align), align);
}

/// Back to a shape entry: kDynamic for nullopt.
inline int64_t orDynamic(std::optional<int64_t> size) {
  return size ? *size : ShapedType::kDynamic;
}

} // namespace mlir::gg

#endif // GG_CHECKEDMATH_H
