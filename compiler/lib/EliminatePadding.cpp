//===- EliminatePadding.cpp - gg-eliminate-padding -------------------------===//
//
// Decides, per grouped matmul, whether consumer warpgroups whose rows of a
// tile are all past the group's end skip their wgmma. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "ggc/Passes.h"

namespace ggc {
#define GEN_PASS_DEF_ELIMINATEPADDING
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;

namespace {

/// The bytes of a row of A's K up to which idle warpgroups of contiguous
/// ops skip without being asked: over so short a main loop a tile's fixed
/// costs are a large share of it and an idle warpgroup's skip pays; over
/// longer ones skipping lost, though not through the branch (level where
/// no warpgroup is idle): the ring's waits grow in every tile once some
/// warpgroups skip. Measured on MoE layers' GEMMs and the FP8 suite
/// (GGPasses.td; docs/performance-history.md, twenty-first and sixtieth
/// sessions).
constexpr int64_t kSkipMaxKBytes = 2048;

bool contiguousSkips(GroupedMatmulOp op) {
  int64_t k = op.getDims().k;
  return op.getLayout() == GroupLayout::contiguous &&
         !ShapedType::isDynamic(k) &&
         k * ggc::byteWidth(op.getAType().getElementType()) <= kSkipMaxKBytes;
}

/// An f8 masked batch skips where its expected_m is not a whole number of
/// tiles, so that a typical group's last tile is partial: on random
/// counts (uniform in [1, M]; e4m3 with 1x128 / 128x128 scales) the skip
/// was 0.6-11% faster at K = 2,048 and 7,168 in seven batches of eight,
/// 1% slower in one; batches without a hint, or whose hint fills whole
/// tiles (the full groups of a prefill batch, where the skip lost 2%),
/// compute. The hint is a mean: full groups of, say, 200 rows also skip,
/// and pay the branch for no idle warpgroup (H200; docs/performance-history.md,
/// twenty-first and forty-fourth sessions).
bool maskedSkips(GroupedMatmulOp op, ConfigAttr config) {
  std::optional<int64_t> expected = op.getExpectedM();
  return op.getLayout() == GroupLayout::masked &&
         ggc::byteWidth(op.getAType().getElementType()) == 1 && expected &&
         *expected % config.getBlockM() != 0;
}

struct EliminatePaddingPass
    : public ggc::impl::EliminatePaddingBase<EliminatePaddingPass> {
  using EliminatePaddingBase::EliminatePaddingBase;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](GroupedMatmulOp op) {
      if (op.getPaddingAttr())
        return WalkResult::advance(); // the user's choice
      ConfigAttr config = ggc::requireConfig(op, getArgument());
      if (!config)
        return WalkResult::interrupt();
      // A tile's valid rows are a prefix only in these layouts; with one
      // consumer warpgroup a scheduled tile always has valid rows; the tf32
      // transpose of B is shared work of all consumers.
      bool prefixRows = op.getLayout() == GroupLayout::contiguous ||
                        op.getLayout() == GroupLayout::masked;
      bool byDefault = contiguousSkips(op) || maskedSkips(op, config);
      bool skip = (skipIdleWarpgroups || byDefault) && prefixRows &&
                  config.getBlockM() > 64 && !ggc::transposesB(op) &&
                  !ggc::transposesA(op);
      op.setPaddingAttr(PaddingAttr::get(
          op.getContext(),
          skip ? IdleWarpgroups::skip : IdleWarpgroups::compute));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
