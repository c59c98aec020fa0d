//===- LowerMma.cpp - ggk-lower-mma ---------------------------------------===//
//
// The consumers' MMA, stated by the generator as what it multiplies
// (ggk.mma on a stage's tiles, and the fence, commit and wait around it),
// lowered for sm_90a: wgmma.mma_async on shared-memory matrix
// descriptors, one per K step, and wgmma's fence and group ops.
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERMMA
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// Bytes of a row of the 128-byte swizzled tiles wgmma reads.
constexpr int64_t kSwizzleBytes = 128;

NVVM::WGMMATypes wgmmaType(Type t) {
  if (t.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (t.isF16())
    return NVVM::WGMMATypes::f16;
  if (t.isF32())
    return NVVM::WGMMATypes::tf32;
  if (isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  return NVVM::WGMMATypes::e5m2;
}

Value lowerMma(ggk::MmaOp op, KernelBuilder &b) {
  MLIRContext *ctx = b.getContext();
  bool aMNMajor = op.getAMnMajor(), bNMajor = op.getBMnMajor();
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, op.getN(), op.getKPerStep());
  // K-major tiles move 32 bytes along the swizzled 128-byte rows per K
  // step; MN-major tiles move 16 rows of 128 bytes, and their 64-wide MN
  // chunks lie block_k rows apart.
  int64_t chunkBytes = op.getBlockK() * kSwizzleBytes;
  int64_t aStepBytes = aMNMajor ? 16 * kSwizzleBytes : 32;
  int64_t bStepBytes = bNMajor ? 16 * kSwizzleBytes : 32;
  Value tileDescA =
      b.wgmmaDescriptor(op.getATile(), aMNMajor ? chunkBytes : 16, 1024);
  Value tileDescB =
      b.wgmmaDescriptor(op.getBTile(), bNMajor ? chunkBytes : 16, 1024);
  if (Value offset = op.getStepOffset()) {
    Value steps = b.toI64(offset);
    tileDescA = b.add(tileDescA, b.mul(steps, b.c64(aStepBytes / 16)));
    tileDescB = b.add(tileDescB, b.mul(steps, b.c64(bStepBytes / 16)));
  }
  Value acc = ggc::accumulatorRegisters(b, op.getAcc());
  Type registers = acc.getType();
  int64_t first = op.getFirstStep();
  for (int64_t s = first; s < first + op.getSteps(); ++s) {
    // A K step's descriptor is its tile's plus the step's offset in the
    // start-address field (bytes / 16, bits 0-13), which no address in
    // shared memory overflows: one descriptor computation per tile, not
    // per step (they were a third of the K loop's instructions).
    Value descA = b.add(tileDescA, b.c64(s * aStepBytes / 16));
    Value descB = b.add(tileDescB, b.c64(s * bStepBytes / 16));
    acc = b.create<NVVM::WgmmaMmaAsyncOp>(
        registers, acc, descA, descB, shape, wgmmaType(op.getAType()),
        wgmmaType(op.getBType()), NVVM::WGMMATypes::f32,
        op.getFresh() && s == first ? NVVM::WGMMAScaleOut::zero
                                    : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        aMNMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        bNMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        NVVM::MMAIntOverflowAttr());
  }
  return ggc::asAccumulator(b, acc, op.getType());
}

Value lower(Operation *op, KernelBuilder &b) {
  if (auto mma = dyn_cast<ggk::MmaOp>(op))
    return lowerMma(mma, b);
  if (isa<ggk::MmaFenceOp>(op))
    b.create<NVVM::WgmmaFenceAlignedOp>();
  else if (isa<ggk::MmaCommitOp>(op))
    b.create<NVVM::WgmmaGroupSyncAlignedOp>();
  else
    b.create<NVVM::WgmmaWaitGroupSyncOp>(cast<ggk::MmaWaitOp>(op).getPending());
  return Value();
}

struct LowerMma : public ggc::impl::LowerMmaBase<LowerMma> {
  void runOnOperation() override {
    WalkResult split = getOperation().walk([&](ggk::MmaOp op) {
      if (op.getThreeTf32()) {
        op.emitOpError() << "splits f32 operands in registers (three_tf32), "
                            "which wgmma, reading shared memory, cannot: "
                            "ggk-lower-mma-sync lowers it";
        return WalkResult::interrupt();
      }
      if (op.getAccType().getWarpColumns() == 1)
        return WalkResult::advance();
      op.emitOpError() << "splits its warps' columns, which wgmma's m64 "
                          "fragment cannot: sm_90a takes warp_columns = 1";
      return WalkResult::interrupt();
    });
    if (split.wasInterrupted())
      return signalPassFailure();
    ggc::convertEach<ggk::MmaOp, ggk::MmaFenceOp, ggk::MmaCommitOp,
                     ggk::MmaWaitOp>(getOperation(), lower);
  }
};

} // namespace
