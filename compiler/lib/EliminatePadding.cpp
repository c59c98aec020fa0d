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
/// ops skip without being asked: over so short a main loop a tile's fixed costs are a large
/// share of it and an idle warpgroup's skip pays (f8 MoE projections with
/// K = 768 and 2,048, bf16 with K = 768: 2-5% faster on groups of about
/// 256 rows, 6-7% on about 64, level on about 1,024); over longer ones the
/// branch around the main loop cost more than it saved (bf16 K = 2,048
/// 1-2%, f8 K = 4,096 4%, K = 7,168 5%, bf16 128x256 tiles at K = 7,168
/// 9%; docs/performance-history.md, twenty-first session).
/// Contiguous groups only: their ends fall anywhere (tokens an expert),
/// while a masked batch's are often whole tiles (f8 G4 M256 N7168 K2048,
/// every group full: 2% slower with the skip) or its loads bound it.
constexpr int64_t kSkipMaxKBytes = 2048;

bool skipsByDefault(GroupedMatmulOp op) {
  int64_t kBytes = op.getDims().k * op.getAType().getElementTypeBitWidth() / 8;
  return op.getLayout() == GroupLayout::contiguous && kBytes <= kSkipMaxKBytes;
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
      bool skip = (skipIdleWarpgroups || skipsByDefault(op)) && prefixRows &&
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
