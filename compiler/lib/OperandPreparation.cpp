//===- OperandPreparation.cpp - the consumers' work on a stage ------------===//
//
// In-place work on a full stage before wgmma reads it, stated as ggk ops
// that ggk-prepare-operands lowers: k_grouped's K entries of neighbouring
// groups zeroed (ggk.clear_k_outside), and tf32 tiles transposed to K-major
// (ggk.transpose_to_k_major).
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

/// tf32 with B given N-major or A given M-major: wgmma reads tf32 only
/// K-major, so the consumers copy each such tile into its own K-major
/// buffer before the wgmma reads it.
void KernelGenerator::transposeTile(Value src, Value dst, int64_t mnExtent) {
  b.create<ggk::TransposeToKMajorOp>(src, dst, p.blockK, mnExtent,
                                     kWarpgroupThreads * p.numConsumers);
}

/// k_grouped: a K block may hold K entries of the neighbouring groups: past
/// the group's end in its last block, and, for K-major operands whose TMA
/// boxes start on an aligned K, before its first in its first block. The
/// K range of the block that is the group's is kept, the rest zeroed.
void KernelGenerator::clearKOutsideGroup(const Tile &t, Value kBlock,
                                         Value stage) {
  Value blockStart = b.add(t.kStart, b.mul(kBlock, b.c32(p.blockK)));
  Value lo = b.maxS(b.sub(t.kFirst, blockStart), b.c32(0));
  Value hi = b.minS(b.sub(t.kEnd, blockStart), b.c32(p.blockK));
  // A and B have elements of one width (gg: one type, or two f8 types).
  b.create<ggk::ClearKOutsideOp>(
      stageA(stage), stageB(stage), lo, hi, p.blockK, p.blockM, p.blockN,
      p.aMNMajor, p.bMNMajor, byteWidth(p.aElem),
      kWarpgroupThreads * p.numConsumers);
}

} // namespace ggc
