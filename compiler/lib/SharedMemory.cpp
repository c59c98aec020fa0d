//===- SharedMemory.cpp - the kernel's shared-memory ring -----------------===//
//
// Addresses in the kernel's shared memory (the ring's A and B tiles, the
// scales the stages carry, the transposed copies, the full and empty
// mbarriers), the ring slot of a K block, and a stage's release, across
// the cluster when there is one.
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
  if (p.cluster == 1) {
    b.mbarrierArrive(emptyBarrier(stage));
    return;
  }
  // One arrival per warp, on this CTA's barrier and on the peer's. CTA
  // scope is enough (the warp's reads of the stage are done) and avoids the
  // cluster-wide fence a .release.cluster arrive implies (measured with ncu:
  // MEMBAR stalls doubled the kernel's time).
  Value lane = b.remU(b.threadIdx(), b.c32(32));
  b.create<scf::IfOp>(b.eq(lane, b.c32(0)), [&](OpBuilder &, Location) {
    Value bar = emptyBarrier(stage);
    for (int64_t r = 0; r < p.cluster; ++r)
      b.create<NVVM::MBarrierArriveOp>(Type(), clusterAddress(bar, b.c32(r)),
                                       Value(), NVVM::MemScopeKind::CTA,
                                       false);
    b.create<scf::YieldOp>();
  });
}

Value KernelGenerator::clusterAddress(Value localAddress, Value rank) {
  return b.create<NVVM::MapaOp>(LLVM::LLVMPointerType::get(b.getContext(), 7),
                                localAddress, rank);
}

Value KernelGenerator::emptyBarrier(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.barriersAt + p.stages * 8),
                           b.mul(b.toI64(stage), b.c64(8))));
}

} // namespace ggc
