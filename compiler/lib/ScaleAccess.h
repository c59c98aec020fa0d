//===- ScaleAccess.h - addresses of block scales ----------------*- C++ -*-===//
//
// Where a K block's block scales are, in global memory and in the scale
// slots: shared by the generator (which copies them into the slots, and
// reads MX's words) and ggk-place-scales (which lowers the
// ggk.stage_block_scales and ggk.read_block_scales ops), so that both
// compute an address with the same instructions.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_SCALEACCESS_H
#define GGC_SCALEACCESS_H

#include "KernelBuilder.h"

namespace ggc {

/// B's 128x128 block scales: `n` columns in blocks of `blockN` per tile;
/// K-major [G, ceil(N/128), K blocks] or else [G, K blocks, ceil(N/128)].
/// `halves` (gg's column_halves): a tile's columns are two halves of
/// blockN / 2 rows of B, the second n / 2 rows after the first.
struct BBlockScaleShape {
  int64_t n, blockN;
  bool kMajor;
  bool halves = false;
};

/// Index of B's block scale for the `j`th 128 of the columns from `colBase`
/// (i32) of N block `nBlock` (i32) (with `halves`, of half `j`'s rows), at
/// scale block `block` (i64) of
/// `kBlocks` (i64), in group `group` (i32; null where B has no group
/// dimension).
mlir::Value bBlockScaleIndex(KernelBuilder &b, const BBlockScaleShape &shape,
                             mlir::Value kBlocks, mlir::Value block,
                             mlir::Value group, mlir::Value nBlock,
                             mlir::Value colBase, int64_t j);

/// Each consumer warp's scale slots (ScaleSlots): kScaleSlotBuffers
/// buffers of `warps` x `words` 4-byte words, A's `aRows` first, then
/// B's `bBlocks`; the consumers' warps count from thread
/// `firstConsumerThread` (Target::firstConsumerThread).
struct SlotShape {
  int64_t aRows, bBlocks, words, warps, firstConsumerThread;
};

/// Word `word` + `wordOffset` of this warp's slots in buffer `buffer`
/// (i32), in the kernel's shared memory `smem`.
mlir::Value scaleSlotAddress(KernelBuilder &b, mlir::Value smem,
                             const SlotShape &shape, mlir::Value buffer,
                             mlir::Value word, int64_t wordOffset);

/// The thread's scales of K block `kBlock` from the slots, once their
/// copies have landed (every cp.async group but the newest, block
/// kBlock + 1's): A's for its two rows as `aType` (f32 scales or MX
/// words), then B's, max(1, bBlocks) of them; 1.0 where the slots hold
/// none.
llvm::SmallVector<mlir::Value> readSlotScales(KernelBuilder &b,
                                              mlir::Value smem,
                                              const SlotShape &shape,
                                              mlir::Value kBlock,
                                              mlir::Value lane,
                                              mlir::Type aType);

} // namespace ggc

#endif // GGC_SCALEACCESS_H
