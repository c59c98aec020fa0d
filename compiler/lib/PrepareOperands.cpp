//===- PrepareOperands.cpp - ggk-prepare-operands -------------------------===//
//
// Lowers the consumers' in-place work on a full stage (ggk.clear_k_outside,
// ggk.transpose_to_k_major) to the loops over shared memory that do it:
// every consumer thread takes every consumer_threads-th store, then the
// writes are fenced for the async proxy (wgmma reads through it) and the
// consumers meet at their named barrier, so no wgmma starts on a tile
// another thread is still writing.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "Target.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_PREPAREOPERANDS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using ggc::kSwizzleBytes;
using ggc::kWarpgroupThreads;

namespace {

/// This thread's index among the consumer threads.
Value consumerThread(KernelBuilder &b, Operation *op) {
  return b.threadFrom(ggc::targetOf(op).firstConsumerThread());
}

/// Shared-memory writes of the generic proxy, made visible to wgmma (which
/// reads through the async proxy; ldmatrix reads what the consumers'
/// barrier orders).
void fenceForAsyncProxy(KernelBuilder &b, Operation *op) {
  if (ggc::targetOf(op).mma != ggc::MmaKind::wgmma)
    return;
  b.fenceAsyncShared();
}

/// ggk.clear_k_outside: an MN-major tile ([BK rows of 128 bytes] per
/// 128-byte MN chunk) loses whole rows; a K-major tile (MN rows of 128
/// bytes) loses 16-byte chunks of every row, found through the 128B swizzle
/// (physical chunk = logical chunk ^ (row % 8)), and single bytes where a
/// boundary falls inside a chunk.
class ClearLowering {
public:
  explicit ClearLowering(ggk::ClearKOutsideOp op)
      : op(op), b(op.getLoc(), op), lo(op.getLo()), hi(op.getHi()),
        blockK(int64_t(op.getBlockK())),
        elemBytes(int64_t(op.getElementBytes())),
        threads(int64_t(op.getConsumerThreads())) {}

  void run();

private:
  Value outside(Value k) {
    return b.create<arith::OrIOp>(b.lt(k, lo), b.ge(k, hi));
  }
  void clearTile(Value tile, int64_t mnExtent, bool mnMajor);
  void clearRows(Value tile, int64_t mnExtent, Value thread, Value zero16);
  void clearChunks(Value tile, int64_t mnExtent, Value thread, Value zero16,
                   Value zeroByte);
  void clearBytes(Value chunkAddress, Value first, Value zeroByte);

  ggk::ClearKOutsideOp op;
  KernelBuilder b;
  Value lo, hi;
  int64_t blockK, elemBytes, threads;
};

void ClearLowering::run() {
  // Most K blocks are the group's whole: they skip the clears, the fence
  // and the barrier.
  Value partial = b.create<arith::OrIOp>(b.lt(b.c32(0), lo),
                                         b.lt(hi, b.c32(blockK)));
  b.create<scf::IfOp>(partial, [&](OpBuilder &, Location) {
    clearTile(op.getA(), int64_t(op.getARows()), op.getAMnMajor());
    clearTile(op.getB(), int64_t(op.getBColumns()), op.getBMnMajor());
    fenceForAsyncProxy(b, op);
    // The condition is the same for every consumer thread (the op's
    // contract: same tile, same K block), so all of them reach this barrier.
    b.consumerBarrier(threads);
    b.create<scf::YieldOp>();
  });
  op.erase();
}

void ClearLowering::clearTile(Value tile, int64_t mnExtent, bool mnMajor) {
  Value thread = consumerThread(b, op);
  Value zero16 = b.create<LLVM::ZeroOp>(VectorType::get({4}, b.i32()));
  if (mnMajor)
    return clearRows(tile, mnExtent, thread, zero16);
  Value zeroByte = b.create<LLVM::ZeroOp>(b.getI8Type());
  clearChunks(tile, mnExtent, thread, zero16, zeroByte);
}

/// MN-major: each K row of each 128-byte column chunk (64 bf16/f16, 32 f32
/// columns): eight 16-byte stores when outside.
void ClearLowering::clearRows(Value tile, int64_t mnExtent, Value thread,
                              Value zero16) {
  int64_t chunks = mnExtent * elemBytes / kSwizzleBytes;
  int64_t stores = blockK * chunks * 8;
  b.create<scf::ForOp>(
      thread, b.c32(stores), b.c32(threads), ValueRange{},
      [&](OpBuilder &, Location, Value i, ValueRange) {
        Value piece = b.remU(i, b.c32(8));
        Value rowOfAll = b.divU(i, b.c32(8));
        Value chunk = b.divU(rowOfAll, b.c32(blockK));
        Value k = b.remU(rowOfAll, b.c32(blockK));
        b.create<scf::IfOp>(outside(k), [&](OpBuilder &, Location) {
          Value offset = b.add(
              b.mul(b.toI64(chunk), b.c64(blockK * kSwizzleBytes)),
              b.add(b.mul(b.toI64(k), b.c64(kSwizzleBytes)),
                    b.mul(b.toI64(piece), b.c64(16))));
          b.create<LLVM::StoreOp>(zero16, b.gep(tile, offset));
          b.create<scf::YieldOp>();
        });
        b.create<scf::YieldOp>();
      });
}

/// K-major: every (row, logical chunk) pair; chunks wholly outside
/// [lo, hi) are cleared at once, chunks a boundary cuts byte by byte.
void ClearLowering::clearChunks(Value tile, int64_t mnExtent, Value thread,
                                Value zero16, Value zeroByte) {
  int64_t perChunk = 16 / elemBytes;
  b.create<scf::ForOp>(
      thread, b.c32(mnExtent * 8), b.c32(threads), ValueRange{},
      [&](OpBuilder &, Location, Value i, ValueRange) {
        Value row = b.divU(i, b.c32(8));
        Value logical = b.remU(i, b.c32(8));
        Value first = b.mul(logical, b.c32(perChunk));
        Value last = b.add(first, b.c32(perChunk - 1));
        Value physical = b.xorI(logical, b.remU(row, b.c32(8)));
        Value chunkAddress = b.gep(
            tile, b.add(b.mul(b.toI64(row), b.c64(kSwizzleBytes)),
                        b.mul(b.toI64(physical), b.c64(16))));
        Value whole = b.create<arith::OrIOp>(b.lt(last, lo), b.ge(first, hi));
        Value cut = b.create<arith::OrIOp>(outside(first), outside(last));
        b.create<scf::IfOp>(
            whole,
            [&](OpBuilder &, Location) {
              b.create<LLVM::StoreOp>(zero16, chunkAddress);
              b.create<scf::YieldOp>();
            },
            [&](OpBuilder &, Location) {
              b.create<scf::IfOp>(cut, [&](OpBuilder &, Location) {
                clearBytes(chunkAddress, first, zeroByte);
                b.create<scf::YieldOp>();
              });
              b.create<scf::YieldOp>();
            });
        b.create<scf::YieldOp>();
      });
}

/// The bytes of a 16-byte chunk, from K `first` on, whose K is outside.
void ClearLowering::clearBytes(Value chunkAddress, Value first,
                               Value zeroByte) {
  b.create<scf::ForOp>(
      b.c32(0), b.c32(16), b.c32(1), ValueRange{},
      [&](OpBuilder &, Location, Value byte, ValueRange) {
        Value k = b.add(first, b.divU(byte, b.c32(elemBytes)));
        b.create<scf::IfOp>(outside(k), [&](OpBuilder &, Location) {
          b.create<LLVM::StoreOp>(zeroByte, b.gep(chunkAddress, byte));
          b.create<scf::YieldOp>();
        });
        b.create<scf::YieldOp>();
      });
}

/// ggk.transpose_to_k_major: 16-byte loads along MN (four columns of one K
/// row of the source), 4-byte stores along K (one per column of the copy).
void lowerTranspose(ggk::TransposeToKMajorOp op) {
  KernelBuilder b(op.getLoc(), op);
  int64_t blockK = int64_t(op.getBlockK());
  int64_t mnExtent = int64_t(op.getMnExtent());
  int64_t threads = int64_t(op.getConsumerThreads());
  int64_t perRow = kSwizzleBytes / 4; // f32 per 128-byte row
  Value src = op.getSrc(), dst = op.getDst();
  Value thread = consumerThread(b, op);
  // The byte of element (row, byteInRow) of a 128B-swizzled tile.
  auto swizzled = [&](Value row, Value byteInRow) {
    Value chunk = b.xorI(b.divU(byteInRow, b.c32(16)), b.remU(row, b.c32(8)));
    return b.toI64(b.add(b.mul(row, b.c32(kSwizzleBytes)),
                         b.add(b.mul(chunk, b.c32(16)),
                               b.remU(byteInRow, b.c32(16)))));
  };
  VectorType quad = VectorType::get({4}, b.f32());
  b.create<scf::ForOp>(
      thread, b.c32(blockK * mnExtent / 4), b.c32(threads), ValueRange{},
      [&](OpBuilder &, Location, Value i, ValueRange) {
        Value k = b.remU(i, b.c32(blockK));
        Value n0 = b.mul(b.divU(i, b.c32(blockK)), b.c32(4));
        Value chunk = b.divU(n0, b.c32(perRow));
        Value from =
            b.add(b.mul(b.toI64(chunk), b.c64(blockK * kSwizzleBytes)),
                  swizzled(k, b.mul(b.remU(n0, b.c32(perRow)), b.c32(4))));
        Value values = b.create<LLVM::LoadOp>(quad, b.gep(src, from));
        for (int e = 0; e < 4; ++e) {
          Value n = b.add(n0, b.c32(e));
          Value v = b.create<LLVM::ExtractElementOp>(values, b.c32(e));
          b.create<LLVM::StoreOp>(
              v, b.gep(dst, swizzled(n, b.mul(k, b.c32(4)))));
        }
        b.create<scf::YieldOp>();
      });
  fenceForAsyncProxy(b, op);
  b.consumerBarrier(threads);
  op.erase();
}

struct PrepareOperandsPass
    : public ggc::impl::PrepareOperandsBase<PrepareOperandsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<ggk::ClearKOutsideOp, ggk::TransposeToKMajorOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto clear = dyn_cast<ggk::ClearKOutsideOp>(op))
        ClearLowering(clear).run();
      else
        lowerTranspose(cast<ggk::TransposeToKMajorOp>(op));
    }
  }
};

} // namespace
