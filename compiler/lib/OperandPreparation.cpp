//===- OperandPreparation.cpp - the consumers' work on a stage ------------===//
//
// In-place work on a full stage before wgmma reads it: tf32 tiles
// transposed to K-major, and k_grouped's K entries of neighbouring groups
// zeroed.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

/// tf32 with B given N-major or A given M-major: wgmma reads tf32 only
/// K-major, so the consumers copy each such tile transposed into its own
/// 128B-swizzled K-major buffer (16-byte loads along N or M, 4-byte stores
/// along K), fence the copy for the async proxy and meet at a barrier
/// before the wgmma reads it.
void KernelGenerator::transposeTile(Value src, Value dst, int64_t mnExtent) {
  int64_t consumerThreads = kWarpgroupThreads * p.numConsumers;
  int64_t perRow = kSwizzleBytes / 4; // f32 per 128-byte row
  Value thread = b.sub(b.threadIdx(), b.c32(kWarpgroupThreads));
  // The byte of element (row, byteInRow) of a 128B-swizzled tile.
  auto swizzled = [&](Value row, Value byteInRow) {
    Value chunk = b.xorI(b.divU(byteInRow, b.c32(16)), b.remU(row, b.c32(8)));
    return b.toI64(b.add(b.mul(row, b.c32(kSwizzleBytes)),
                         b.add(b.mul(chunk, b.c32(16)),
                               b.remU(byteInRow, b.c32(16)))));
  };
  VectorType quad = VectorType::get({4}, b.f32());
  b.create<scf::ForOp>(
      thread, b.c32(p.blockK * mnExtent / 4), b.c32(consumerThreads),
      ValueRange{}, [&](OpBuilder &, Location, Value i, ValueRange) {
        Value k = b.remU(i, b.c32(p.blockK));
        Value n0 = b.mul(b.divU(i, b.c32(p.blockK)), b.c32(4));
        Value chunk = b.divU(n0, b.c32(perRow));
        Value from = b.add(b.mul(b.toI64(chunk), b.c64(p.blockK * kSwizzleBytes)),
                           swizzled(k, b.mul(b.remU(n0, b.c32(perRow)), b.c32(4))));
        Value values = b.create<LLVM::LoadOp>(quad, b.gep(src, from));
        for (int e = 0; e < 4; ++e) {
          Value n = b.add(n0, b.c32(e));
          Value v = b.create<LLVM::ExtractElementOp>(values, b.c32(e));
          b.create<LLVM::StoreOp>(v, b.gep(dst, swizzled(n, b.mul(k, b.c32(4)))));
        }
        b.create<scf::YieldOp>();
      });
  b.create<NVVM::FenceProxyOp>(
      NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
  consumerBarrier();
}

/// k_grouped: a K block may hold K entries of the neighbouring groups: past
/// the group's end in its last block, and, for K-major operands whose TMA
/// boxes start on an aligned K, before its first in its first block. The
/// consumers zero those entries in shared memory before the wgmma reads
/// them, fence the zeros for the async proxy and meet at a barrier. An
/// MN-major tile ([BK rows of 128 bytes] per 64 MN columns) loses whole
/// rows; a K-major tile (MN rows of 128 bytes) loses 16-byte chunks of every
/// row, found through the 128B swizzle (physical chunk = logical chunk ^
/// (row % 8)), and single bytes where a boundary falls inside a chunk.
void KernelGenerator::zeroRowsPastGroup(const Tile &t, Value kBlock,
                                        Value stage) {
  Value blockStart = b.add(t.kStart, b.mul(kBlock, b.c32(p.blockK)));
  Value lo = b.maxS(b.sub(t.kFirst, blockStart), b.c32(0));
  Value hi = b.minS(b.sub(t.kEnd, blockStart), b.c32(p.blockK));
  Value partial = b.create<arith::OrIOp>(b.lt(b.c32(0), lo),
                                         b.lt(hi, b.c32(p.blockK)));
  b.create<scf::IfOp>(partial, [&](OpBuilder &, Location) {
    zeroKOutside(stageA(stage), p.blockM, p.aMNMajor, lo, hi);
    zeroKOutside(stageB(stage), p.blockN, p.bMNMajor, lo, hi);
    b.create<NVVM::FenceProxyOp>(NVVM::ProxyKind::async_shared,
                                 NVVM::SharedSpaceAttr::get(
                                     b.getContext(), NVVM::SharedSpace::shared_cta));
    // The condition is the same for every consumer thread (same tile, same
    // K block), so all of them reach this barrier.
    consumerBarrier();
    b.create<scf::YieldOp>();
  });
}

void KernelGenerator::zeroKOutside(Value tile, int64_t mnExtent, bool mnMajor,
                                   Value lo, Value hi) {
  int64_t consumerThreads = kWarpgroupThreads * p.numConsumers;
  Value thread = b.sub(b.threadIdx(), b.c32(kWarpgroupThreads));
  Value zero16 = b.create<LLVM::ZeroOp>(VectorType::get({4}, b.i32()));
  Value zeroByte = b.create<LLVM::ZeroOp>(b.getI8Type());
  int64_t elemBytes = byteWidth(p.aElem);
  auto outside = [&](Value k) {
    return b.create<arith::OrIOp>(b.lt(k, lo), b.ge(k, hi));
  };
  if (mnMajor) {
    // Each K row of each 128-byte column chunk (64 bf16/f16, 32 f32
    // columns): eight 16-byte stores when outside.
    int64_t chunks = mnExtent * elemBytes / kSwizzleBytes;
    int64_t stores = p.blockK * chunks * 8;
    b.create<scf::ForOp>(
        thread, b.c32(stores), b.c32(consumerThreads), ValueRange{},
        [&](OpBuilder &, Location, Value i, ValueRange) {
          Value piece = b.remU(i, b.c32(8));
          Value rowOfAll = b.divU(i, b.c32(8));
          Value chunk = b.divU(rowOfAll, b.c32(p.blockK));
          Value k = b.remU(rowOfAll, b.c32(p.blockK));
          b.create<scf::IfOp>(outside(k), [&](OpBuilder &, Location) {
            Value offset = b.add(
                b.mul(b.toI64(chunk), b.c64(p.blockK * kSwizzleBytes)),
                b.add(b.mul(b.toI64(k), b.c64(kSwizzleBytes)),
                      b.mul(b.toI64(piece), b.c64(16))));
            b.create<LLVM::StoreOp>(zero16, b.gep(tile, offset));
            b.create<scf::YieldOp>();
          });
          b.create<scf::YieldOp>();
        });
    return;
  }
  // K-major: every (row, logical chunk) pair; chunks wholly outside
  // [lo, hi) are cleared at once, chunks a boundary cuts byte by byte.
  int64_t perChunk = 16 / elemBytes;
  b.create<scf::ForOp>(
      thread, b.c32(mnExtent * 8), b.c32(consumerThreads), ValueRange{},
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
                b.create<scf::ForOp>(
                    b.c32(0), b.c32(16), b.c32(1), ValueRange{},
                    [&](OpBuilder &, Location, Value byte, ValueRange) {
                      Value k = b.add(first, b.divU(byte, b.c32(elemBytes)));
                      b.create<scf::IfOp>(outside(k), [&](OpBuilder &,
                                                          Location) {
                        b.create<LLVM::StoreOp>(zeroByte,
                                                b.gep(chunkAddress, byte));
                        b.create<scf::YieldOp>();
                      });
                      b.create<scf::YieldOp>();
                    });
                b.create<scf::YieldOp>();
              });
              b.create<scf::YieldOp>();
            });
        b.create<scf::YieldOp>();
      });
}

} // namespace ggc
