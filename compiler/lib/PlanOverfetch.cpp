//===- PlanOverfetch.cpp - gg-plan-overfetch -------------------------------===//
//
// Checks that every TMA address the kernel will form is aligned, and records
// how far its whole-tile loads reach past a group's own data. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "ggc/Passes.h"

#include "gg/CheckedMath.h"
#include "llvm/ADT/bit.h"

#include <limits>

namespace ggc {
#define GEN_PASS_DEF_PLANOVERFETCH
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;

using ggc::byteWidth;
using ggc::kSwizzleBytes;

LogicalResult ggc::checkTmaAddressing(GroupedMatmulOp op, ConfigAttr config) {
  Type aElem = op.getAType().getElementType();
  Type bElem = op.getBType().getElementType();
  GroupedMatmulOp::Dims dims = op.getDims();
  int64_t blockN = config.getBlockN(), blockK = config.getBlockK();
  bool aMNMajor = op.getALayout() == OperandLayout::km;
  bool bMNMajor = op.getBLayout() == OperandLayout::kn;
  if (blockK * byteWidth(aElem) != kSwizzleBytes)
    return op.emitOpError() << "block K of " << blockK << " gives "
                            << blockK * byteWidth(aElem)
                            << "-byte rows of A; the kernel needs exactly "
                            << kSwizzleBytes << " (one 128B-swizzled row)";
  if (blockN % 16 != 0)
    return op.emitOpError() << "block N must be a multiple of 16 for wgmma, "
                               "got "
                            << blockN;
  int64_t bChunk = kSwizzleBytes / byteWidth(bElem);
  if (config.getClusterM() == 2 &&
      (bMNMajor ? (blockN / bChunk) % 2 != 0 : (blockN / 2) % 8 != 0))
    return op.emitOpError() << "a cluster of 2 splits the B tile in halves: "
                               "block N "
                            << blockN << " does not split into halves of "
                            << (bMNMajor ? "whole 128-byte column chunks"
                                         : "8-row swizzle atoms");
  if (bMNMajor && blockN % bChunk != 0)
    return op.emitOpError() << "block N must be a multiple of " << bChunk
                            << " with 'b' in layout kn (one 128-byte swizzled "
                               "row of N per load), got "
                            << blockN;
  // TMA needs 16-byte global strides: rows of A and B (K elements), rows of
  // M-major A (M elements) and, for the paired stores of the epilogue, N.
  std::optional<int64_t> mBytes =
      checkedMul(staticSize(dims.m), byteWidth(aElem));
  if (aMNMajor && mBytes && *mBytes % 16 != 0)
    return op.emitOpError() << "M = " << dims.m
                            << " gives rows of 'a' (layout km) that are not a "
                               "multiple of 16 bytes, as TMA needs";
  // K is dynamic (kDynamic = INT64_MIN) for k_grouped: no bytes to check.
  std::optional<int64_t> kBytes =
      checkedMul(staticSize(dims.k), byteWidth(aElem));
  if (kBytes && *kBytes % 16 != 0)
    return op.emitOpError() << "K = " << dims.k << " gives rows of " << *kBytes
                            << " bytes; TMA needs a multiple of 16 (K a "
                               "multiple of "
                            << 16 / byteWidth(aElem) << ")";
  if (dims.n % 8 != 0)
    return op.emitOpError() << "N = " << dims.n
                            << " must be a multiple of 8 for the kernel's "
                               "vector stores and TMA strides";
  return success();
}

LogicalResult ggc::checkTileIndices(GroupedMatmulOp op, ConfigAttr config) {
  // The persistent schedule numbers the tiles of all groups (a pair of M
  // blocks for a cluster of 2) in i32, and a CTA's index runs up to one
  // wave past the last. A contiguous group's rows arrive at run time; each
  // of its G groups may start a partial unit, which is what can be checked
  // here.
  GroupedMatmulOp::Dims dims = op.getDims();
  int64_t unitRows = config.getBlockM() * config.getClusterM();
  std::optional<int64_t> mUnits = checkedCeilDiv(staticSize(dims.m), unitRows);
  std::optional<int64_t> units;
  switch (op.getLayout()) {
  case GroupLayout::masked:
  case GroupLayout::k_grouped:
    units = checkedMul(mUnits.value_or(0), dims.numGroups);
    break;
  case GroupLayout::contiguous:
    units = checkedAdd(mUnits.value_or(0), dims.numGroups);
    break;
  case GroupLayout::padded_contiguous:
    units = mUnits.value_or(0);
    break;
  }
  std::optional<int64_t> tiles =
      checkedMul(units, checkedCeilDiv(dims.n, config.getBlockN()));
  std::optional<int64_t> last = checkedAdd(tiles, config.getNumSMs());
  if (last && *last <= std::numeric_limits<int32_t>::max())
    return success();
  InFlightDiagnostic diag = op.emitOpError() << "has ";
  if (tiles)
    diag << *tiles;
  else
    diag << "more than 2^63";
  return diag << " tiles of " << unitRows << "x" << config.getBlockN()
              << " to schedule on " << config.getNumSMs()
              << " CTAs, more than the kernel's 32-bit tile indices hold "
                 "(tiles + CTAs must be at most 2^31 - 1 = 2147483647); use "
                 "larger tiles, fewer groups or fewer CTAs";
}

/// The granule in which partial tiles load A's rows: one 8-row, 1024-byte
/// swizzle atom, so every box lands on an atom boundary of the tile.
static constexpr int64_t kRowGranule = 8;

OverfetchAttr ggc::planOverfetch(GroupedMatmulOp op, ConfigAttr config) {
  int64_t rows = 0, k = 0;
  switch (op.getLayout()) {
  case GroupLayout::contiguous: {
    // Two-level (FP8) kernels load a group's last tile whole, reading rows
    // of the next group that no output takes: 1.00-1.10x faster on ragged
    // groups (H200; T=16384 G=32 N=3072 K=8192 928 against 842 us), where
    // bf16 kernels lose 0-22% that way (docs/performance.md, 2026-11-29).
    // MX kernels were not measured and keep the granule.
    ScaleAttr aScale = op.getAScaleKindAttr();
    bool mx = aScale && aScale.getKind() == ScaleKind::mx;
    rows = ggc::twoLevelAccumulation(op) && !mx ? config.getBlockM() - 1
                                                : kRowGranule - 1;
    break;
  }
  case GroupLayout::masked:
    // A group's last tile loads its valid rows rounded up to the granule.
    rows = kRowGranule - 1;
    break;
  case GroupLayout::padded_contiguous: // groups padded to whole tiles
    break;
  case GroupLayout::k_grouped: {
    // Scales that change along K come in 128-wide blocks of the
    // concatenated K, so each K block starts on one of them; otherwise a
    // TMA box starts 16-byte aligned along its contiguous dimension, which
    // is K for K-major operands.
    ScaleAttr aScale = op.getAScaleKindAttr(), bScale = op.getBScaleKindAttr();
    if ((aScale && aScale.variesAlongK()) || (bScale && bScale.variesAlongK()))
      k = 127;
    else if (op.getALayout() != OperandLayout::km ||
             op.getBLayout() != OperandLayout::kn)
      k = 16 / byteWidth(op.getAType().getElementType()) - 1;
    break;
  }
  }
  return OverfetchAttr::get(op.getContext(), rows, k);
}

LogicalResult ggc::checkOverfetch(GroupedMatmulOp op, ConfigAttr config,
                                  OverfetchAttr given) {
  OverfetchAttr planned = planOverfetch(op, config);
  int64_t blockM = config.getBlockM(), granule = given.getRows() + 1;
  bool prefixRows = op.getLayout() == GroupLayout::contiguous ||
                    op.getLayout() == GroupLayout::masked;
  bool rowsOk = prefixRows ? granule == blockM ||
                                 (llvm::isPowerOf2_64(granule) &&
                                  granule >= kRowGranule &&
                                  granule <= int64_t(llvm::bit_floor(
                                                 uint64_t(blockM))))
                           : given.getRows() == planned.getRows();
  if (given.getK() == planned.getK() && rowsOk)
    return success();
  InFlightDiagnostic diag = op.emitOpError()
                            << "has 'overfetch' " << given << ", but ";
  if (given.getK() != planned.getK())
    return diag << "its layouts and config make the kernel's K blocks start "
                   "up to k = "
                << planned.getK() << " entries early";
  if (!prefixRows)
    return diag << "its tiles load whole, reaching rows = "
                << planned.getRows() << " past a group";
  return diag << "rows must be block M - 1 = " << blockM - 1
              << " (whole tiles) or one less than a power of two from "
              << kRowGranule << " to "
              << llvm::bit_floor(uint64_t(blockM))
              << " (the granule of a partial tile's loads)";
}

namespace {

struct PlanOverfetchPass
    : public ggc::impl::PlanOverfetchBase<PlanOverfetchPass> {
  using PlanOverfetchBase::PlanOverfetchBase;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](GroupedMatmulOp op) {
      ConfigAttr config = ggc::requireConfig(op, getArgument());
      if (!config)
        return WalkResult::interrupt();
      if (failed(ggc::checkTmaAddressing(op, config)) ||
          failed(ggc::checkTileIndices(op, config)))
        return WalkResult::interrupt();
      if (OverfetchAttr given = op.getOverfetchAttr()) {
        // The user's choice, where the kernel can keep to it.
        if (failed(ggc::checkOverfetch(op, config, given)))
          return WalkResult::interrupt();
        return WalkResult::advance();
      }
      op.setOverfetchAttr(ggc::planOverfetch(op, config));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
