//===- GGKScales.cpp - verifiers of the block scales' ops ----------------===//
//
// ggk.stage_block_scales and ggk.read_block_scales: what a K block's
// scales are, checked against where `#gg.kernel_plan` puts them.
//
//===----------------------------------------------------------------------===//
#include "ggk/GGKDialect.h"

using namespace mlir;
using namespace mlir::ggk;

namespace {

/// B's block scales a stage keeps: 16 bytes of f32.
constexpr int64_t kMaxStageBBlocks = 4;

/// A stage's window of A's scales is one TMA box into 128-byte aligned
/// shared memory.
LogicalResult verifyWindow(Operation *op, int64_t bytes, int64_t stride) {
  if (bytes <= 0 || bytes % 16 != 0)
    return op->emitOpError() << "window_bytes must be a positive multiple "
                                "of 16 (one TMA box of f32), got "
                             << bytes;
  if (stride < bytes || stride % 128 != 0)
    return op->emitOpError() << "window_stride must be a multiple of 128 "
                                "of at least window_bytes ("
                             << bytes << "), got " << stride;
  return success();
}

} // namespace

LogicalResult StageBlockScalesOp::verify() {
  bool stages = getPlan().getScales() == gg::ScalePlacement::stages;
  if (stages != bool(getAMap()))
    return emitOpError() << "takes 'map' (A's scales' tensor map) exactly "
                            "when its plan places the scales in the stages";
  bool columns = getBColumns() != 0;
  if (columns) {
    if (getBColumns() < 0 || getBColumns() > 256 || getBColumns() % 4 != 0)
      return emitOpError() << "b_columns must be a multiple of 4 up to 256 "
                              "(one TMA box of f32 a stage), got "
                           << getBColumns();
    if (getBBlocks() != 0)
      return emitOpError() << "takes B's scales per column (b_columns) or "
                              "per 128x128 block (b_blocks), not both";
    if (getColumnHalves())
      return emitOpError() << "with column_halves takes B's 128x128 block "
                              "scales, not b_columns";
    if (getBColumns() != getBlockN())
      return emitOpError() << "b_columns must be the tile's block_n ("
                           << getBlockN() << ": the consumers read the "
                              "stage's columns by the tile's), got "
                           << getBColumns();
  } else if (getBBlocks() < 1 || getBBlocks() > kMaxStageBBlocks) {
    return emitOpError() << "b_blocks must be 1 to " << kMaxStageBBlocks
                         << " (a stage keeps 16 bytes of B's scales), got "
                         << getBBlocks();
  }
  if (bool(getBMap()) != (stages && columns))
    return emitOpError() << "takes 'columns_map' (B's scales' tensor map) "
                            "exactly when b_columns is set and its plan "
                            "places the scales in the stages";
  if (getBlockN() <= 0 || getN() <= 0 || getK() <= 0)
    return emitOpError() << "block_n, n and k must be positive, got "
                         << getBlockN() << ", " << getN() << " and "
                         << getK();
  if (getColumnHalves() && getBBlocks() != 2)
    return emitOpError() << "with column_halves copies B's two block scales "
                            "(one per half), but b_blocks is "
                         << getBBlocks();
  if (stages)
    return verifyWindow(*this, getWindowBytes(), getWindowStride());
  return success();
}

LogicalResult ReadBlockScalesOp::verify() {
  int64_t bBlocks = getBBlocks();
  if (bBlocks < 0 || bBlocks > kMaxStageBBlocks)
    return emitOpError() << "b_blocks must be 0 to " << kMaxStageBBlocks
                         << ", got " << bBlocks;
  size_t expected = 2 + std::max<int64_t>(1, bBlocks);
  if (getScales().size() != expected)
    return emitOpError() << "yields A's two scales and then B's "
                         << std::max<int64_t>(1, bBlocks) << ": "
                         << expected << " results, got "
                         << getScales().size();
  switch (getPlan().getScales()) {
  case gg::ScalePlacement::none:
    return success();
  case gg::ScalePlacement::stages:
    if (getWindowStride() <= 0 || getWindowStride() % 128 != 0)
      return emitOpError() << "window_stride must be a positive multiple "
                              "of 128 where the stages carry the scales, "
                              "got "
                           << getWindowStride();
    return success();
  case gg::ScalePlacement::slots:
    break;
  }
  if (getARows() != 0 && getARows() != 16)
    return emitOpError() << "a_rows must be 0 or 16 (a warp's rows), got "
                         << getARows();
  if (getSlotWords() < getARows() + bBlocks)
    return emitOpError() << "slot_words (" << getSlotWords()
                         << ") must hold a_rows + b_blocks = "
                         << getARows() + bBlocks << " words";
  if (getSlotWarps() < 1)
    return emitOpError() << "slot_warps must be at least 1, got "
                         << getSlotWarps();
  return success();
}
