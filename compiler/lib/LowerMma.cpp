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

/// An integer as a part the peeling cannot see into (null where there is
/// none) plus a constant.
struct Split {
  Value rest;
  int64_t constant;
  /// False where a part of `rest` may be negative (a multiplication by a
  /// negative constant): the rest could then lie below shared memory's
  /// first address, and its descriptor field wrap.
  bool restNonNegative = true;
};

/// `value` split through adds, multiplications by a constant and sign
/// extensions (KernelBuilder::toI64's): shared-memory offsets, far from
/// overflowing, so that extending a sum is summing the extensions. The
/// parts it cannot see into are the generator's: thread and stage indices,
/// their unsigned quotients and remainders, shared-memory addresses, all
/// non-negative; a multiplication by a negative constant makes the split
/// say so (restNonNegative).
Split splitOffset(KernelBuilder &b, Value value) {
  APInt bits;
  if (matchPattern(value, m_ConstantInt(&bits)))
    return {Value(), bits.getSExtValue()};
  Operation *op = value.getDefiningOp();
  if (isa_and_nonnull<arith::ExtSIOp>(op)) {
    Split inner = splitOffset(b, op->getOperand(0));
    if (!inner.rest || inner.rest == op->getOperand(0))
      return {inner.rest ? value : Value(), inner.constant,
              inner.restNonNegative};
    return {b.create<arith::ExtSIOp>(value.getType(), inner.rest),
            inner.constant, inner.restNonNegative};
  }
  if (isa_and_nonnull<arith::AddIOp>(op)) {
    Split l = splitOffset(b, op->getOperand(0));
    Split r = splitOffset(b, op->getOperand(1));
    Value rest = !l.rest ? r.rest : !r.rest ? l.rest : b.add(l.rest, r.rest);
    return {rest, l.constant + r.constant,
            l.restNonNegative && r.restNonNegative};
  }
  if (isa_and_nonnull<arith::MulIOp>(op)) {
    for (int side = 0; side < 2; ++side) {
      if (!matchPattern(op->getOperand(1 - side), m_ConstantInt(&bits)))
        continue;
      int64_t factor = bits.getSExtValue();
      Split inner = splitOffset(b, op->getOperand(side));
      Value rest = inner.rest ? b.mul(inner.rest, op->getOperand(1 - side))
                              : Value();
      return {rest, inner.constant * factor,
              inner.restNonNegative && (!rest || factor >= 0)};
    }
  }
  return {value, 0};
}

/// A shared-memory address made of byte offsets (i8 geps) as the address
/// without their constant parts, and those parts' sum.
std::pair<Value, int64_t> splitAddress(KernelBuilder &b, Value address) {
  auto gep = address.getDefiningOp<LLVM::GEPOp>();
  if (!gep || !gep.getElemType().isInteger(8) || gep.getIndices().size() != 1)
    return {address, 0};
  auto [root, constant] = splitAddress(b, gep.getBase());
  auto index = gep.getIndices()[0];
  if (auto fixed = dyn_cast<IntegerAttr>(index))
    return {root, constant + fixed.getInt()};
  Split offset = splitOffset(b, cast<Value>(index));
  // Nothing peeled here or below, or a rest that may lie below this
  // address's base: the address as it is.
  if ((constant == 0 && offset.constant == 0) || !offset.restNonNegative)
    return {address, 0};
  if (offset.rest)
    root = b.gep(root, offset.rest);
  return {root, constant + offset.constant};
}

/// The descriptor of the tile at `address`: its address's variable part's,
/// plus the constant part in the start-address field. Where the stages'
/// offsets are constants (ring_stages = constant), the stages of a turn share
/// one descriptor computation. Whole 16-byte units only, never below the
/// variable part (which is then itself an address in shared memory).
Value tileDescriptor(KernelBuilder &b, Value address, int64_t leadingBytes) {
  auto [root, constant] = splitAddress(b, address);
  if (constant <= 0 || constant % 16 != 0)
    return b.wgmmaDescriptor(address, leadingBytes, 1024);
  return b.add(b.wgmmaDescriptor(root, leadingBytes, 1024),
               b.c64(constant / 16));
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
      tileDescriptor(b, op.getATile(), aMNMajor ? chunkBytes : 16);
  Value tileDescB =
      tileDescriptor(b, op.getBTile(), bNMajor ? chunkBytes : 16);
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
