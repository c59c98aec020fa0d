//===- KernelBuilder.cpp - NVVM building blocks for Hopper kernels ---------===//
#include "KernelBuilder.h"
#include "ggk/GGKDialect.h"

using namespace mlir;

namespace ggc {

Value KernelBuilder::c32(int64_t v) {
  return create<arith::ConstantIntOp>(i32(), v);
}
Value KernelBuilder::c64(int64_t v) {
  return create<arith::ConstantIntOp>(i64(), v);
}
Value KernelBuilder::f32c(double v) {
  return create<arith::ConstantFloatOp>(getF32Type(), APFloat(float(v)));
}

Value KernelBuilder::add(Value a, Value b) { return create<arith::AddIOp>(a, b); }
Value KernelBuilder::sub(Value a, Value b) { return create<arith::SubIOp>(a, b); }
Value KernelBuilder::mul(Value a, Value b) { return create<arith::MulIOp>(a, b); }
Value KernelBuilder::divU(Value a, Value b) {
  return create<arith::DivUIOp>(a, b);
}
Value KernelBuilder::remU(Value a, Value b) {
  return create<arith::RemUIOp>(a, b);
}
Value KernelBuilder::ceilDivU(Value a, int64_t b) {
  Value bv = a.getType().isInteger(64) ? c64(b) : c32(b);
  Value one = a.getType().isInteger(64) ? c64(1) : c32(1);
  return divU(add(a, sub(bv, one)), bv);
}
Value KernelBuilder::minS(Value a, Value b) {
  return create<arith::MinSIOp>(a, b);
}
Value KernelBuilder::maxS(Value a, Value b) {
  return create<arith::MaxSIOp>(a, b);
}
Value KernelBuilder::clampS(Value v, Value lo, Value hi) {
  return minS(maxS(v, lo), hi);
}
Value KernelBuilder::lt(Value a, Value b) {
  return create<arith::CmpIOp>(arith::CmpIPredicate::slt, a, b);
}
Value KernelBuilder::ge(Value a, Value b) {
  return create<arith::CmpIOp>(arith::CmpIPredicate::sge, a, b);
}
Value KernelBuilder::eq(Value a, Value b) {
  return create<arith::CmpIOp>(arith::CmpIPredicate::eq, a, b);
}
Value KernelBuilder::ne(Value a, Value b) {
  return create<arith::CmpIOp>(arith::CmpIPredicate::ne, a, b);
}
Value KernelBuilder::andI(Value a, Value b) { return create<arith::AndIOp>(a, b); }
Value KernelBuilder::xorI(Value a, Value b) { return create<arith::XOrIOp>(a, b); }
Value KernelBuilder::select(Value c, Value a, Value b) {
  return create<arith::SelectOp>(c, a, b);
}
Value KernelBuilder::toI64(Value v) {
  return v.getType().isInteger(64) ? v : create<arith::ExtSIOp>(i64(), v);
}
Value KernelBuilder::toI32(Value v) {
  return v.getType().isInteger(32) ? v : create<arith::TruncIOp>(i32(), v);
}

Value KernelBuilder::threadIdx() { return create<ggk::ThreadIndexOp>(i32()); }

Value KernelBuilder::threadFrom(int64_t first) {
  return first == 0 ? threadIdx() : sub(threadIdx(), c32(first));
}

void KernelBuilder::warpSync() { create<ggk::WarpSyncOp>(); }

void KernelBuilder::syncThreads(Value id, Value count) {
  create<ggk::SyncThreadsOp>(id, count);
}

void KernelBuilder::copyAsync(Value dst, Value src, int64_t bytes) {
  create<ggk::CopyAsyncOp>(dst, src, Value(), bytes);
}

void KernelBuilder::copyAsyncCommit() { create<ggk::CopyAsyncCommitOp>(); }

void KernelBuilder::copyAsyncWait(int64_t pending) {
  create<ggk::CopyAsyncWaitOp>(pending);
}
Value KernelBuilder::blockIdx() { return create<ggk::BlockIndexOp>(i32()); }
Value KernelBuilder::gridDim() { return create<ggk::GridSizeOp>(i32()); }
Value KernelBuilder::clusterRank() {
  return create<ggk::ClusterRankOp>(i32());
}
void KernelBuilder::fenceAsyncShared() { create<ggk::FenceAsyncSharedOp>(); }

void KernelBuilder::tmaStore(Value tensorMap, Value src,
                             ArrayRef<Value> coords, bool add) {
  create<ggk::TmaStoreOp>(tensorMap, src, coords, add);
}

void KernelBuilder::bulkCommitGroup() { create<ggk::BulkCommitGroupOp>(); }

void KernelBuilder::bulkWaitGroup(bool read, int64_t pending) {
  create<ggk::BulkWaitGroupOp>(pending, read);
}

Value KernelBuilder::gep(Value base, Value byteOffset) {
  return create<LLVM::GEPOp>(base.getType(), getI8Type(), base,
                             ArrayRef<LLVM::GEPArg>{toI64(byteOffset)});
}

Value KernelBuilder::loadGlobal(Type type, Value base, Value index) {
  Value address = create<LLVM::GEPOp>(base.getType(), type, base,
                                      ArrayRef<LLVM::GEPArg>{toI64(index)});
  return create<LLVM::LoadOp>(type, address);
}

void KernelBuilder::storeGlobal(Value value, Value base, Value byteOffset) {
  create<LLVM::StoreOp>(value, gep(base, byteOffset));
}

void KernelBuilder::mbarrierInit(Value bar, int64_t count) {
  create<ggk::MbarrierInitOp>(bar, count);
}

void KernelBuilder::mbarrierArriveExpectTx(Value bar, Value bytes) {
  create<ggk::MbarrierArriveExpectTxOp>(bar, bytes);
}

void KernelBuilder::mbarrierArrive(Value bar) {
  create<ggk::MbarrierArriveOp>(bar);
}

void KernelBuilder::mbarrierWait(Value bar, Value parity) {
  // The op loops until the phase completes; the tick count is only a hint
  // for how long each try may suspend.
  create<NVVM::MBarrierTryWaitParityOp>(bar, parity, c32(0x989680));
}

void KernelBuilder::tmaLoad(Value dst, Value tensorMap, ArrayRef<Value> coords,
                            Value bar, Value l2Hint) {
  SmallVector<Value> coords32;
  for (Value c : coords)
    coords32.push_back(toI32(c));
  create<ggk::TmaLoadOp>(dst, tensorMap, coords32, bar, l2Hint);
}

Value KernelBuilder::wgmmaDescriptor(Value smemAddress, int64_t leadingBytes,
                                     int64_t strideBytes) {
  // PTX ISA "Matrix Descriptor Format": bits 0-13 start address >> 4,
  // 16-29 leading byte offset >> 4, 32-45 stride byte offset >> 4,
  // 62-63 swizzle mode (1 = 128B).
  Value address = create<LLVM::PtrToIntOp>(i64(), smemAddress);
  Value start = create<arith::AndIOp>(
      create<arith::ShRUIOp>(address, c64(4)), c64(0x3FFF));
  uint64_t fixed = (uint64_t(leadingBytes >> 4) << 16) |
                   (uint64_t(strideBytes >> 4) << 32) | (uint64_t(1) << 62);
  return create<arith::OrIOp>(start, c64(static_cast<int64_t>(fixed)));
}

Value KernelBuilder::warpUniform(Value v) {
  return create<ggk::WarpBroadcastOp>(i32(), v);
}

void KernelBuilder::consumerBarrier(int64_t threads) {
  // bar.sync is warp-aligned: reconverge each warp first, since the code
  // before it (clearing a K tail, issuing TMA stores) branches per thread.
  warpSync();
  syncThreads(c32(1), c32(threads));
}

std::pair<Value, Value> KernelBuilder::ringSlot(Value it, int64_t stages) {
  return {remU(it, c32(stages)), ringPhase(it, stages)};
}

Value KernelBuilder::ringPhase(Value it, int64_t stages) {
  return andI(divU(it, c32(stages)), c32(1));
}

} // namespace ggc
