//===- MaskedTileRules.h - gg-select-config's masked f8 tiles ---*- C++ -*-===//
//
// Which tiles gg-select-config gives masked f8 batches known by their mean
// rows (expected_m): 64x256 split tiles by the persistent grid's expected
// waves, or 128x192 tiles in pairs. The rules' measurements are in
// MaskedTileRules.cpp beside their constants.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_MASKEDTILERULES_H
#define GGC_MASKEDTILERULES_H

#include "ggc/Passes.h"

#include <cstdint>

namespace ggc::masked {

/// The paired tiles' columns (maskedTakesPairedWideTiles).
inline constexpr int64_t kPairedMaskedBlockN = 192;

/// Whether a masked f8 batch takes 64x256 tiles split between two
/// consumer warpgroups (the caller checks that N allows them).
bool maskedTakesSplitTiles(mlir::gg::GroupedMatmulOp op, int64_t numSMs);

/// Whether a masked f8 batch takes 128x192 tiles in pairs of CTAs sharing
/// B by multicast.
bool maskedTakesPairedWideTiles(mlir::gg::GroupedMatmulOp op, int64_t numSMs);

} // namespace ggc::masked

#endif // GGC_MASKEDTILERULES_H
