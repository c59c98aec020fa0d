//===- SharedMemory.cpp - the kernel's shared-memory ring -----------------===//
//
// The kernel's shared-memory buffers and addresses in them (the ring's A
// and B tiles, the transposed copies, the full and empty mbarriers),
// stated as ggk ops that ggk-allocate-shared-memory places; the ring slot
// of a K block, and a stage's release.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

void KernelGenerator::declareSharedBuffers() {
  for (const SharedBuffer &buffer : p.smem.buffers)
    b.create<mlir::ggk::SharedBufferOp>(buffer.name, buffer.bytes,
                                        buffer.align);
}
Value KernelGenerator::sharedAddress(SharedBufferId id, Value index,
                                     int64_t stride, int64_t offset) {
  return b.create<mlir::ggk::SharedAddressOp>(
      b.ptr(kShared), smem, p.smem.buffers[id].name, index, stride, offset);
}

Value KernelGenerator::stageA(Value stage) {
  return sharedAddress(kATiles, stage, p.aTileBytes);
}
Value KernelGenerator::stageB(Value stage) {
  return sharedAddress(kBTiles, stage, p.bTileBytes);
}
Value KernelGenerator::transposedB(Value stage) {
  return sharedAddress(kTransposedB, stage, p.bTileBytes);
}
Value KernelGenerator::transposedA(Value stage) {
  return sharedAddress(kTransposedA, stage, p.aTileBytes);
}
std::pair<Value, Value> KernelGenerator::ringSlot(Value it) {
  return b.ringSlot(it, p.stages);
}
Value KernelGenerator::fullBarrier(Value stage) {
  return sharedAddress(kFullBarriers, stage, 8);
}
void KernelGenerator::acquireStage(Value stage, Value parity) {
  b.create<mlir::ggk::AcquireStageOp>(emptyBarrier(stage), parity);
}
void KernelGenerator::waitStage(Value stage, Value parity) {
  b.create<mlir::ggk::WaitStageOp>(fullBarrier(stage), parity);
  // Rows copied by cp.async are the generic proxy's writes; wgmma reads the
  // stage through the async proxy.
  if (p.producerAllThreads)
    b.create<mlir::ggk::FenceAsyncSharedOp>();
}
void KernelGenerator::releaseStage(Value stage) {
  // In a cluster, on every CTA's barrier (ggk-multicast).
  b.create<mlir::ggk::ReleaseStageOp>(emptyBarrier(stage), p.cluster);
}

Value KernelGenerator::emptyBarrier(Value stage) {
  return sharedAddress(kEmptyBarriers, stage, 8);
}

} // namespace ggc
