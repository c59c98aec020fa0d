//===- ScaleAccess.cpp - addresses of block scales ------------------------===//
#include "ScaleAccess.h"
#include "ggc/Passes.h"

using namespace mlir;

namespace ggc {

Value bBlockScaleIndex(KernelBuilder &b, const BBlockScaleShape &shape,
                       Value kBlocks, Value block, Value group, Value nBlock,
                       Value colBase, int64_t j) {
  int64_t nScaleBlocks = (shape.n + 127) / 128;
  Value firstRow =
      shape.halves
          ? b.add(b.mul(nBlock, b.c32(shape.blockN / 2)), b.c32(j * shape.n / 2))
          : b.add(b.mul(nBlock, b.c32(shape.blockN)), colBase);
  Value nBlock128 =
      b.minS(b.add(b.divU(firstRow, b.c32(128)), b.c32(shape.halves ? 0 : j)),
             b.c32(nScaleBlocks - 1));
  Value g = group ? b.toI64(group) : b.c64(0);
  Value nb = b.toI64(nBlock128);
  return shape.kMajor
             ? b.add(b.mul(b.add(b.mul(g, b.c64(nScaleBlocks)), nb), kBlocks),
                     block)
             : b.add(b.mul(b.add(b.mul(g, kBlocks), block),
                           b.c64(nScaleBlocks)),
                     nb);
}

Value scaleSlotAddress(KernelBuilder &b, Value smem, const SlotShape &shape,
                       Value buffer, Value word, int64_t wordOffset) {
  // In 64 bits from the start, so that LLVM folds the constant parts into
  // the address's immediate offset instead of keeping one register per
  // slot address alive across the K loop.
  Value warp = b.toI64(
      b.divU(b.threadFrom(shape.firstConsumerThread), b.c32(32)));
  Value index =
      b.add(b.add(b.mul(b.toI64(buffer), b.c64(shape.warps * shape.words)),
                  b.mul(warp, b.c64(shape.words))),
            b.toI64(word));
  return b.create<ggk::SharedAddressOp>(b.ptr(kShared), smem,
                                        sharedBufferName(kScaleSlots), index,
                                        4, 4 * wordOffset);
}

SmallVector<Value> readSlotScales(KernelBuilder &b, Value smem,
                                  const SlotShape &shape, Value kBlock,
                                  Value lane, Type aType) {
  Value one = b.f32c(1.0);
  SmallVector<Value> scales(2 + std::max<int64_t>(1, shape.bBlocks), one);
  if (!shape.aRows && !shape.bBlocks)
    return scales;
  b.copyAsyncWait(kScaleSlotBuffers - 1);
  // The warp's lanes copied each other's words.
  b.warpSync();
  Value buffer = b.remU(kBlock, b.c32(kScaleSlotBuffers));
  Value rowInWarp = b.divU(lane, b.c32(4));
  if (shape.aRows)
    for (int half = 0; half < 2; ++half)
      scales[half] = b.create<LLVM::LoadOp>(
          aType, scaleSlotAddress(b, smem, shape, buffer, rowInWarp, 8 * half));
  for (int64_t j = 0; j < shape.bBlocks; ++j)
    scales[2 + j] = b.create<LLVM::LoadOp>(
        b.f32(), scaleSlotAddress(b, smem, shape, buffer, b.c32(0),
                                  shape.aRows + j));
  return scales;
}

} // namespace ggc
