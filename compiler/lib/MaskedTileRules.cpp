//===- MaskedTileRules.cpp - gg-select-config's masked f8 tiles -----------===//
//
// The rules of MaskedTileRules.h, each constant with the measurement
// behind it. A masked batch's counts are known by their mean alone
// (expected_m), so the rules count the tiles of counts spread evenly
// around it.
//
//===----------------------------------------------------------------------===//
#include "MaskedTileRules.h"
#include "Target.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::gg;

namespace ggc::masked {
namespace {

/// Masked f8 batches whose counts are known by their mean alone (expected_m
/// below M) take 64x256 tiles split between two consumer warpgroups, as
/// decode batches do, where M is at least kWideMaskedMinRows and either
/// the persistent grid's waves of them are fewer than of 128x128 tiles,
/// which fill at most kMaskedMaxWaves, or 128x128 tiles fill more
/// (maskedTakesSplitTiles).
/// Measured on batches of counts uniform in [1, M] with expected_m their
/// mean (H200, benchmarks/probes/masked_idle.py, docs/performance-history.md,
/// forty-fourth session calls 3-5 and forty-sixth session call 1, against
/// 128x128 tiles skipping idle warpgroups): at 4 waves and fewer a wave
/// saved gained 1.088x and 1.094x (G8 M256 N4096 K7168) and 1.56x (G4
/// M256 N4096 K7168, 2 waves to 1); beyond 4 waves a wave saved measured
/// 0.90-1.05x, the batch's real counts deciding (G8 M256 N7168 K2048
/// 1.05x and 0.904x on two draws, G32 M256 N7168 K2048 0.907x at 22.5
/// against 19.5 waves, G16 M384 N4096 K7168 0.983x, G8 M512 N4096 K7168
/// 1.018-1.026x); as many waves lost 6-14% (N 2,048; G4 M384 N7168
/// K2048). G16 M192, one wave fewer of five, lost 3.2%: its half-empty
/// 128-row tiles, which skip their idle warpgroup, are the cheaper there.
/// Beyond kMaskedMaxWaves they take 64x256 tiles too, since those keep
/// five stages with per-thread stores (gg-tma-store-pool): 1.036-1.102x
/// the paired 128x192 tiles chosen there before (G8 M512, G16 M384, G16
/// M256 at N 4,096, K 7,168) and 1.064x the 128x128 ones at K 2,048 (G32
/// M256 N7168), H200, docs/performance-history.md, fifty-first session,
/// calls 2-3. (The paired tiles had been measured against 128x128 only;
/// neither H100s nor G8 M256 N7168 K2048, at 5.1 waves, were measured
/// with the five stages: with the pool's four it ran 1.05x and 0.904x.)
constexpr int64_t kWideMaskedMinRows = 256;
/// The margin in waves by which a batch's expected waves must part: a
/// batch's real counts are not its expected ones (G4 M384 N7168 K2048 at
/// the mean of counts uniform in [1, 384] expects 2.97 against 3.39
/// waves, where one draw of real counts measured 0.91x).
constexpr double kMaskedWaveMargin = 0.05;
/// Up to there a wave saved is a quarter of the kernel or more, beyond what
/// 64x256 tiles cost over 128x128 ones at equal waves; beyond it 64x256
/// tiles are taken whatever the waves.
constexpr double kMaskedMaxWaves = 4;

/// Masked f8 batches beyond kMaskedMaxWaves of 128x128 tiles that take no
/// split tiles (N no multiple of 256, or no expected_m: M counts as the
/// mean here), with M at least kWideMaskedMinRows and K at least
/// kPairedMaskedMinK, take 128x192 tiles in pairs of CTAs sharing B by
/// multicast (cluster = [2, 1]; a group's odd last M block walked two N
/// blocks at a time, ggk-lower-tile-schedule). Measured on batches of
/// counts uniform in [1, M] (H100, benchmarks/probes/masked_idle.py,
/// docs/performance-history.md, forty-seventh session, call 3), against
/// the 128x128 tiles chosen before: K 7,168, N 4,096 at 5.1-8.2 waves
/// 1.032x (G8 M512), 1.054x (G16 M256) and 1.095x (G16 M384); with K
/// 2,048 (N 7,168) 1.013x at 21 waves but 0.973x at 5.5 (G8 M256), so
/// short K keeps 128x128. Alone, 128x192 gained less (0.98-1.07x) and
/// pairs of 128x128 lost 9-22% there.
constexpr int64_t kPairedMaskedMinK = 4096;

/// The expected row tiles of `blockM` rows in a masked group of `mean` rows
/// at most `maxRows`, its count taken spread evenly around the mean:
/// [2 mean - hi, hi] with hi = min(maxRows, 2 mean) (maxRows each where
/// the mean is maxRows).
double expectedRowTiles(int64_t mean, int64_t maxRows, int64_t blockM) {
  int64_t hi = std::min(maxRows, 2 * mean);
  int64_t lo = std::max<int64_t>(1, 2 * mean - hi);
  int64_t tiles = 0;
  for (int64_t rows = lo; rows <= hi; ++rows)
    tiles += (rows + blockM - 1) / blockM;
  return double(tiles) / double(hi - lo + 1);
}

/// The persistent grid's waves, in fractions of one, of a masked batch's
/// expected tiles of `blockM` x `blockN`.
double maskedWaves(GroupedMatmulOp op, int64_t mean, int64_t blockM,
                   int64_t blockN, int64_t numSMs) {
  GroupedMatmulOp::Dims dims = op.getDims();
  double tiles = dims.numGroups * expectedRowTiles(mean, dims.m, blockM) *
                 double((dims.n + blockN - 1) / blockN);
  return tiles / double(numSMs);
}

} // namespace

/// Whether a masked f8 batch takes 64x256 split tiles (kWideMaskedMinRows):
/// where 128x128 tiles fill more than kMaskedMaxWaves, or their whole waves
/// are fewer than 128x128 tiles' by a margin of kMaskedWaveMargin either
/// side, since a batch's real counts are not its expected ones (at equal
/// waves 64x256 tiles lost 6-13%).
bool maskedTakesSplitTiles(GroupedMatmulOp op, int64_t numSMs) {
  GroupedMatmulOp::Dims dims = op.getDims();
  std::optional<int64_t> mean = op.getExpectedM();
  if (op.getLayout() != GroupLayout::masked || !mean || *mean < 1 ||
      ShapedType::isDynamic(dims.m) || dims.m < kWideMaskedMinRows ||
      ShapedType::isDynamic(dims.n) ||
      ggc::targetOf(op).mma != ggc::MmaKind::wgmma)
    return false;
  int64_t clamped = std::min(*mean, dims.m);
  double square = maskedWaves(op, clamped, 128, 128, numSMs);
  double squareWaves = std::ceil(square - kMaskedWaveMargin);
  if (squareWaves > kMaskedMaxWaves)
    return true;
  double split = maskedWaves(op, clamped, 64, 256, numSMs);
  return std::ceil(split + kMaskedWaveMargin) < squareWaves;
}

/// Whether a masked f8 batch takes 128x192 tiles in pairs
/// (kPairedMaskedMinK).
bool maskedTakesPairedWideTiles(GroupedMatmulOp op, int64_t numSMs) {
  GroupedMatmulOp::Dims dims = op.getDims();
  std::optional<int64_t> mean = op.getExpectedM();
  const ggc::Target &target = ggc::targetOf(op);
  if (op.getLayout() != GroupLayout::masked ||
      ggc::byteWidth(op.getAType().getElementType()) != 1 ||
      ggc::usesMxScales(op) || op.getColumnHalves() || op.getARows() ||
      target.mma != ggc::MmaKind::wgmma || !target.clusters ||
      !target.registerReallocation || ShapedType::isDynamic(dims.m) ||
      dims.m < kWideMaskedMinRows || ShapedType::isDynamic(dims.n) ||
      ShapedType::isDynamic(dims.k) || dims.k < kPairedMaskedMinK ||
      dims.n < kPairedMaskedBlockN)
    return false;
  int64_t rows = mean && *mean >= 1 ? std::min(*mean, dims.m) : dims.m;
  double square = maskedWaves(op, rows, 128, 128, numSMs);
  return std::ceil(square - kMaskedWaveMargin) > kMaskedMaxWaves;
}

} // namespace ggc::masked
