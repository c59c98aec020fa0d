//===- SharedMemory.cpp - the kernel's shared-memory ring -----------------===//
//
// Addresses in the kernel's shared memory (the ring's A and B tiles, the
// scales the stages carry, the transposed copies, the full and empty
// mbarriers), the ring slot of a K block, and a stage's release.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

Value KernelGenerator::stageA(Value stage) {
  return b.gep(smem, b.mul(b.toI64(stage), b.c64(p.aTileBytes)));
}
Value KernelGenerator::stageB(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.bStagesAt),
                           b.mul(b.toI64(stage), b.c64(p.bTileBytes))));
}
Value KernelGenerator::stageScalesA(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.stageScalesAt),
                           b.mul(b.toI64(stage), b.c64(p.smem.stageAScaleBytes))));
}
Value KernelGenerator::stageScalesB(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.stageScalesAt +
                                 p.stages * p.smem.stageAScaleBytes),
                           b.mul(b.toI64(stage), b.c64(16))));
}
Value KernelGenerator::transposedB(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.transposedBAt),
                           b.mul(b.toI64(stage), b.c64(p.bTileBytes))));
}
Value KernelGenerator::transposedA(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.transposedAAt),
                           b.mul(b.toI64(stage), b.c64(p.aTileBytes))));
}
std::pair<Value, Value> KernelGenerator::ringSlot(Value it) {
  return {b.remU(it, b.c32(p.stages)),
          b.andI(b.divU(it, b.c32(p.stages)), b.c32(1))};
}
Value KernelGenerator::fullBarrier(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.barriersAt),
                           b.mul(b.toI64(stage), b.c64(8))));
}
void KernelGenerator::releaseStage(Value stage) {
  // In a cluster, on every CTA's barrier (ggk-multicast).
  b.create<mlir::ggk::ReleaseStageOp>(emptyBarrier(stage), p.cluster);
}

Value KernelGenerator::emptyBarrier(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.barriersAt + p.stages * 8),
                           b.mul(b.toI64(stage), b.c64(8))));
}

} // namespace ggc
