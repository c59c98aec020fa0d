//===- KernelBuilder.h - NVVM building blocks for Hopper kernels -*- C++ -*-===//
//
// Small, named wrappers over the ops the grouped GEMM kernel is made of, so
// that the kernel generator and the technique passes read as the algorithm
// and not as op plumbing: LLVM and arith ops, and the target's instructions
// as ggk ops (mbarriers, TMA copies, fences, barriers, the CTA's place) that
// the conversions at the end of the pass list lower to NVVM. Only the
// ring's try-wait, which its conversion makes, is NVVM here.
//
// Why NVVM ops and not MLIR 22's nvgpu ones, which lower to the same:
// - nvgpu.mbarrier.* work on an !nvgpu.mbarrier.group that
//   nvgpu.mbarrier.create places as a static shared global of its own; the
//   kernel's barriers are buffers of its one dynamic shared-memory layout
//   (ggk-allocate-shared-memory, whose footprint gg-select-config counts),
//   and nvgpu has no cp.async.mbarrier.arrive.noinc (the stages' scales).
// - nvgpu.tma.async.load takes no L2 cache hint (B's evict_first,
//   gg-schedule-groups) and a memref destination; a stage is a byte offset
//   into the dynamic buffer.
// - nvgpu.warpgroup.mma issues a whole shape between its own fence, commit
//   and wait: no wgmma group kept in flight across K blocks (a stage is
//   released a block later), no partial K range (MX's promotion per scale
//   block), and its steps always add to the accumulator, which
//   nvgpu.warpgroup.mma.init.accumulator zeroes first; two-level
//   accumulation starts each block's partial with scale-d = 0 instead.
// - nvgpu.device_async_copy copies between memrefs; the scale slots'
//   copies are per-lane addresses into the dynamic buffer.
// Nor workgroup memrefs and subviews for the buffers: every buffer is an
// offset into the one dynamic allocation that ggk-allocate-shared-memory
// lays out (`ggk.shared_address`), and the TMA, wgmma-descriptor and
// mbarrier ops all take its raw address; memref descriptors would only be
// built to be taken apart again.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_KERNELBUILDER_H
#define GGC_KERNELBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace ggc {

/// Address spaces of NVPTX.
enum AddressSpace : unsigned { kGeneric = 0, kGlobal = 1, kShared = 3 };

class KernelBuilder : public mlir::ImplicitLocOpBuilder {
public:
  using ImplicitLocOpBuilder::ImplicitLocOpBuilder;

  mlir::Type i1() { return getI1Type(); }
  mlir::Type i32() { return getI32Type(); }
  mlir::Type i64() { return getI64Type(); }
  mlir::Type f32() { return getF32Type(); }
  mlir::Type ptr(unsigned space) {
    return mlir::LLVM::LLVMPointerType::get(getContext(), space);
  }

  mlir::Value c32(int64_t v);
  mlir::Value c64(int64_t v);
  mlir::Value f32c(double v);

  // Integer arithmetic (i32 or i64, both operands of one type).
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value divU(mlir::Value a, mlir::Value b);
  mlir::Value remU(mlir::Value a, mlir::Value b);
  mlir::Value ceilDivU(mlir::Value a, int64_t b);
  mlir::Value minS(mlir::Value a, mlir::Value b);
  mlir::Value maxS(mlir::Value a, mlir::Value b);
  mlir::Value clampS(mlir::Value v, mlir::Value lo, mlir::Value hi);
  mlir::Value lt(mlir::Value a, mlir::Value b);  // signed
  mlir::Value ge(mlir::Value a, mlir::Value b);  // signed
  mlir::Value eq(mlir::Value a, mlir::Value b);
  mlir::Value ne(mlir::Value a, mlir::Value b);
  mlir::Value andI(mlir::Value a, mlir::Value b);
  mlir::Value xorI(mlir::Value a, mlir::Value b);
  mlir::Value select(mlir::Value c, mlir::Value a, mlir::Value b);
  mlir::Value toI64(mlir::Value v); // sign-extends i32, keeps i64
  mlir::Value toI32(mlir::Value v); // truncates i64, keeps i32

  // Threads and warps, as target-neutral ggk ops (ggk-lower-threads
  // lowers them).
  /// `v` as lane 0 holds it: for a value every lane of the warp already
  /// agrees on (e.g. threadIdx / 32), so that ptxas keeps it, and what is
  /// computed from it, in uniform registers (ggk.warp_broadcast).
  mlir::Value warpUniform(mlir::Value v);
  mlir::Value threadIdx(); // ggk.thread_index
  /// This thread's index counted from thread `first` (the consumers' first,
  /// Target::firstConsumerThread).
  mlir::Value threadFrom(int64_t first);
  void warpSync();         // ggk.warp_sync
  /// The `count` threads of named barrier `id` meet (ggk.sync_threads).
  void syncThreads(mlir::Value id, mlir::Value count);
  // Per-thread asynchronous copies into shared memory (ggk.copy_async*,
  // ggk-lower-async-copies lowers them).
  void copyAsync(mlir::Value dst, mlir::Value src, int64_t bytes);
  void copyAsyncCommit();
  void copyAsyncWait(int64_t pending);

  // The CTA's place (ggk.block_index, ggk.grid_size, ggk.cluster_rank;
  // ggk-lower-threads lowers them).
  mlir::Value blockIdx();
  mlir::Value gridDim();
  mlir::Value clusterRank();
  /// This thread's shared-memory writes, made visible to the async proxy
  /// (ggk.fence_async_shared).
  void fenceAsyncShared();

  // Memory.
  mlir::Value gep(mlir::Value base, mlir::Value byteOffset);
  mlir::Value loadGlobal(mlir::Type type, mlir::Value base, mlir::Value index);
  void storeGlobal(mlir::Value value, mlir::Value base, mlir::Value byteOffset);

  // mbarriers (in shared memory) and TMA copies, as ggk ops
  // (ggk-lower-tma lowers them), but the try-wait, which only the ring's
  // conversion makes.
  void mbarrierInit(mlir::Value bar, int64_t count);
  void mbarrierArriveExpectTx(mlir::Value bar, mlir::Value bytes); // i32

  void mbarrierArrive(mlir::Value bar);
  void mbarrierWait(mlir::Value bar, mlir::Value parity);

  /// The consumer warpgroups' named barrier (id 1) for `threads` threads,
  /// each warp reconverged first.
  void consumerBarrier(int64_t threads);

  /// TMA tile load from `tensorMap` at `coords` (innermost first) into
  /// shared memory, completing on `bar`.
  void tmaLoad(mlir::Value dst, mlir::Value tensorMap,
               llvm::ArrayRef<mlir::Value> coords, mlir::Value bar,
               mlir::Value l2Hint = {});
  /// TMA store of the box at `src` to `tensorMap` at `coords` (i32,
  /// innermost first), in the thread's open bulk group; `add`: added to
  /// what the tensor holds (TMA's reduce-add).
  void tmaStore(mlir::Value tensorMap, mlir::Value src,
                llvm::ArrayRef<mlir::Value> coords, bool add = false);
  void bulkCommitGroup();
  /// Until at most `pending` of the thread's bulk groups are in flight
  /// (`read`: have yet to read their shared memory).
  void bulkWaitGroup(bool read, int64_t pending = 0);

  /// A wgmma shared-memory matrix descriptor for a tile with 128-byte
  /// swizzle. K-major tiles: 8-row atoms of 1024 bytes apart (`strideBytes`
  /// 1024, `leadingBytes` unused). MN-major tiles: 8 K-rows 1024 bytes apart
  /// (`strideBytes`), 64-element MN chunks `leadingBytes` apart.
  mlir::Value wgmmaDescriptor(mlir::Value smemAddress, int64_t leadingBytes,
                              int64_t strideBytes);

  /// The buffer of a ring of `stages` that the `it`-th use takes, and the
  /// parity of its barriers' phase then: it % stages, (it / stages) % 2.
  std::pair<mlir::Value, mlir::Value> ringSlot(mlir::Value it, int64_t stages);
  /// The parity alone: (it / stages) % 2.
  mlir::Value ringPhase(mlir::Value it, int64_t stages);
};

} // namespace ggc

#endif // GGC_KERNELBUILDER_H
