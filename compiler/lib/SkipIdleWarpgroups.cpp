//===- SkipIdleWarpgroups.cpp - ggk-skip-idle-warpgroups -------------------===//
//
// Padding elimination inside a tile: a group's last tile is mostly rows of
// the next group (or past the tensor), and a consumer warpgroup whose 64
// rows are all such padding would compute them only for the epilogue to
// drop them. With gg-eliminate-padding's `idle_warpgroups = skip`, each
// ggk.warpgroup_tile becomes an scf.if on the warpgroup's first row against
// the tile's valid rows: idle warpgroups only pass the ring's buffers back.
// Otherwise the work runs unguarded.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "RegionBodies.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_SKIPIDLEWARPGROUPS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// Replaces `region`'s ggk.yield with an scf.yield of the same values.
void yieldToScf(Region &region) {
  auto yield = cast<ggk::YieldOp>(region.front().getTerminator());
  OpBuilder b(yield);
  b.create<scf::YieldOp>(yield.getLoc(), yield.getValues());
  yield.erase();
}

/// Moves the work region's ops in front of `op` and gives its results the
/// values the region yields.
void inlineWork(ggk::WarpgroupTileOp op) {
  OpBuilder b(op);
  op.replaceAllUsesWith(ggc::moveBody(op.getWork(), {}, b));
  op.erase();
}

/// The condition under which the warpgroup does the tile's work, or null
/// when it always does.
Value workCondition(ggk::WarpgroupTileOp op, KernelBuilder &b) {
  Value works = op.getWorks();
  if (op.getPadding().getIdleWarpgroups() != gg::IdleWarpgroups::skip)
    return works;
  Value hasValidRows = b.lt(op.getFirstRow(), op.getRowsValid());
  return works ? b.andI(works, hasValidRows) : hasValidRows;
}

void lower(ggk::WarpgroupTileOp op) {
  KernelBuilder b(op.getLoc(), op);
  Value condition = workCondition(op, b);
  if (!condition)
    return inlineWork(op);
  auto branch = b.create<scf::IfOp>(op.getResultTypes(), condition,
                                    /*withThenRegion=*/false,
                                    /*withElseRegion=*/false);
  branch.getThenRegion().takeBody(op.getWork());
  branch.getElseRegion().takeBody(op.getIdle());
  yieldToScf(branch.getThenRegion());
  yieldToScf(branch.getElseRegion());
  op.replaceAllUsesWith(branch.getResults());
  op.erase();
}

struct SkipIdleWarpgroupsPass
    : public ggc::impl::SkipIdleWarpgroupsBase<SkipIdleWarpgroupsPass> {
  void runOnOperation() override {
    SmallVector<ggk::WarpgroupTileOp> ops;
    getOperation().walk([&](ggk::WarpgroupTileOp op) { ops.push_back(op); });
    for (ggk::WarpgroupTileOp op : ops)
      lower(op);
  }
};

} // namespace
