//===- LowerMNMajorLoads.cpp - ggk-lower-mn-major-loads -------------------===//
//
// The producer's loads of MN-major tiles (token-major A of a k-grouped
// weight gradient), lowered for sm_90a: one TMA box per 128-byte chunk of
// MN, completing on the stage's full mbarrier (ggk.commit_stage armed it).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERMNMAJORLOADS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

void lower(ggk::LoadMNMajorTileOp op) {
  KernelBuilder b(op.getLoc(), op);
  Value full = op.getBarrier();
  int64_t rows = static_cast<int64_t>(op.getChunkRows());
  int64_t stride = static_cast<int64_t>(op.getChunkBytes());
  for (int64_t j = 0; j < static_cast<int64_t>(op.getChunks()); ++j)
    b.tmaLoad(b.gep(op.getDst(), b.c64(j * stride)), op.getMap(),
              {b.add(op.getRow(), b.c32(j * rows)), op.getK()}, full);
  op.erase();
}

struct LowerMNMajorLoads
    : public ggc::impl::LowerMNMajorLoadsBase<LowerMNMajorLoads> {
  void runOnOperation() override {
    SmallVector<ggk::LoadMNMajorTileOp> loads;
    getOperation().walk(
        [&](ggk::LoadMNMajorTileOp op) { loads.push_back(op); });
    for (ggk::LoadMNMajorTileOp op : loads)
      lower(op);
  }
};

} // namespace
