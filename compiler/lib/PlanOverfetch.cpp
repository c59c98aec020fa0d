//===- PlanOverfetch.cpp - gg-plan-overfetch -------------------------------===//
//
// Checks that every TMA address the kernel will form is aligned, and records
// how far its whole-tile loads reach past a group's own data. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "ggc/Passes.h"

#include "llvm/ADT/bit.h"

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
  if (aMNMajor && !ShapedType::isDynamic(dims.m) &&
      dims.m * byteWidth(aElem) % 16 != 0)
    return op.emitOpError() << "M = " << dims.m
                            << " gives rows of 'a' (layout km) that are not a "
                               "multiple of 16 bytes, as TMA needs";
  int64_t kBytes = dims.k * byteWidth(aElem);
  if (!ShapedType::isDynamic(dims.k) && kBytes % 16 != 0)
    return op.emitOpError() << "K = " << dims.k << " gives rows of " << kBytes
                            << " bytes; TMA needs a multiple of 16 (K a "
                               "multiple of "
                            << 16 / byteWidth(aElem) << ")";
  if (dims.n % 8 != 0)
    return op.emitOpError() << "N = " << dims.n
                            << " must be a multiple of 8 for the kernel's "
                               "vector stores and TMA strides";
  return success();
}

/// The granule in which partial tiles load A's rows: one 8-row, 1024-byte
/// swizzle atom, so every box lands on an atom boundary of the tile.
static constexpr int64_t kRowGranule = 8;

OverfetchAttr ggc::planOverfetch(GroupedMatmulOp op, ConfigAttr config) {
  int64_t rows = 0, k = 0;
  switch (op.getLayout()) {
  case GroupLayout::contiguous:
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
      if (failed(ggc::checkTmaAddressing(op, config)))
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
