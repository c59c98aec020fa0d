//===- LowerMNMajorLoads.cpp - ggk-lower-mn-major-loads -------------------===//
//
// The producer's loads of MN-major tiles (token-major A of a k-grouped
// weight gradient), lowered for sm_90a: one TMA box per 128-byte chunk of
// MN, completing on the stage's full mbarrier (ggk.commit_stage armed it).
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERMNMAJORLOADS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

Value lower(Operation *raw, KernelBuilder &b) {
  auto op = cast<ggk::LoadMNMajorTileOp>(raw);
  int64_t rows = static_cast<int64_t>(op.getChunkRows());
  int64_t stride = static_cast<int64_t>(op.getChunkBytes());
  for (int64_t j = 0; j < static_cast<int64_t>(op.getChunks()); ++j)
    b.tmaLoad(b.gep(op.getDst(), b.c64(j * stride)), op.getMap(),
              {b.add(op.getRow(), b.c32(j * rows)), op.getK()},
              op.getBarrier());
  return Value();
}

struct LowerMNMajorLoads
    : public ggc::impl::LowerMNMajorLoadsBase<LowerMNMajorLoads> {
  void runOnOperation() override {
    ggc::convertEach<ggk::LoadMNMajorTileOp>(getOperation(), lower);
  }
};

} // namespace
