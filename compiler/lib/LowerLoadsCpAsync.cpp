//===- LowerLoadsCpAsync.cpp - ggk-lower-loads-cp-async -------------------===//
//
// The producer's tile loads for targets without TMA (sm_80, sm_86, sm_89).
// Every thread of the producer warpgroup copies its share of the tile's
// 16-byte pieces with cp.async into the stage, in the 128-byte swizzled
// layout TMA writes on sm_90a (piece c of a 128-byte row r at
// r * 128 + (c ^ r % 8) * 16), so that the consumers read the same stage
// on every target. Pieces past the operand's extents or the group's rows
// are zero-filled, never read. Each thread then arrives on the stage's
// full barrier once its copies have landed, which ggk-place-scales counts.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERLOADSCPASYNC
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

constexpr int64_t kPieceBytes = 16;
constexpr int64_t kRowBytes = ggc::kSwizzleBytes;
constexpr int64_t kPiecesPerRow = kRowBytes / kPieceBytes;

/// One 16-byte piece's copy: from element `element` of the operand at
/// `source` (elements of `elementBytes`), to byte `row * 128 + piece * 16`
/// of the swizzled tile at `tile`; zero-filled unless `valid`.
void copyPiece(KernelBuilder &b, Value tile, Value row, Value piece,
               Value source, Value element, int64_t elementBytes,
               Value valid) {
  Value swizzled = b.xorI(piece, b.andI(row, b.c32(7)));
  Value offset = b.add(b.mul(row, b.c32(kRowBytes)),
                       b.mul(swizzled, b.c32(kPieceBytes)));
  Value dst = b.gep(tile, b.toI64(offset));
  // A piece not read may lie past the tensor: it points at the start.
  Value bytes = b.mul(element, b.c64(elementBytes));
  Value src = b.gep(source, b.select(valid, bytes, b.c64(0)));
  b.create<ggk::CopyAsyncOp>(dst, src,
                             b.select(valid, b.c32(kPieceBytes), b.c32(0)),
                             kPieceBytes);
}

/// The operand's address as a global pointer.
Value globalSource(KernelBuilder &b, Value address) {
  return b.create<LLVM::AddrSpaceCastOp>(b.ptr(ggc::kGlobal), address);
}

/// Calls `body(piece)` for each of the `pieces` this thread copies: piece
/// i * 128 + thread of the producer warpgroup.
void forEachPiece(KernelBuilder &b, int64_t pieces,
                  function_ref<void(Value)> body) {
  Value thread = b.remU(b.threadIdx(), b.c32(ggc::kWarpgroupThreads));
  for (int64_t i = 0; i < pieces / ggc::kWarpgroupThreads; ++i)
    body(b.add(b.c32(i * ggc::kWarpgroupThreads), thread));
}

LogicalResult lowerARows(ggk::LoadTileRowsOp op) {
  ValueRange extents = op.getExtents();
  int64_t tileRows = op.getTileRows();
  std::optional<uint64_t> elementBytes = op.getElementBytes();
  if (extents.empty() || !elementBytes || op.getMaps().size() != 1 ||
      (*elementBytes != 1 && *elementBytes != 2 && *elementBytes != 4))
    return op.emitOpError() << "needs the operand's address as its one "
                               "source, its extents and element_bytes (1, 2 "
                               "or 4) to be loaded without TMA";
  if (op.getRowBytes() != kRowBytes ||
      tileRows * kPiecesPerRow % ggc::kWarpgroupThreads != 0)
    return op.emitOpError() << "loads rows of " << kRowBytes
                            << " bytes, a multiple of 16 rows, without TMA";
  KernelBuilder b(op.getLoc(), op);
  Value k = op.getK(), firstRow = op.getRow();
  Value kSize = extents[0], rows = extents[1];
  // The group's rows of the tile that lie in the tensor.
  Value rowsLeft = b.minS(op.getRowsValid(), b.sub(rows, firstRow));
  Value groupRow = op.getGroup() ? b.mul(b.toI64(op.getGroup()), b.toI64(rows))
                                 : b.c64(0);
  Value source = globalSource(b, op.getMaps()[0]);
  int64_t perPiece = kPieceBytes / int64_t(*elementBytes);
  forEachPiece(b, tileRows * kPiecesPerRow, [&](Value q) {
    Value row = b.divU(q, b.c32(kPiecesPerRow));
    Value piece = b.remU(q, b.c32(kPiecesPerRow));
    Value kElement = b.add(k, b.mul(piece, b.c32(perPiece)));
    Value valid = b.create<arith::AndIOp>(b.lt(row, rowsLeft),
                                          b.lt(kElement, kSize));
    Value globalRow = b.add(groupRow, b.toI64(b.add(firstRow, row)));
    Value element = b.add(b.mul(globalRow, b.toI64(kSize)), b.toI64(kElement));
    copyPiece(b, op.getDst(), row, piece, source, element, *elementBytes,
              valid);
  });
  b.create<ggk::CopyAsyncArriveOp>(op.getBarrier());
  op.erase();
  return success();
}

LogicalResult lowerBTile(ggk::LoadBTileOp op) {
  ValueRange extents = op.getExtents();
  if (extents.empty() || op.getCluster() != 1)
    return op.emitOpError() << "needs B's extents and no cluster to be "
                               "loaded without TMA";
  int64_t blockN = op.getBlockN(), blockK = op.getBlockK();
  int64_t chunk = op.getChunkColumns();
  // chunk_columns is one 128-byte row of elements of 1, 2 or 4 bytes; a
  // K-major row holds block_k of them, and every thread copies as many.
  int64_t elementBytes = kRowBytes / chunk;
  int64_t pieces = blockN * blockK * elementBytes / kPieceBytes;
  if ((chunk != 32 && chunk != 64 && chunk != 128) ||
      (!op.getNMajor() && blockK * elementBytes != kRowBytes) ||
      pieces % ggc::kWarpgroupThreads != 0)
    return op.emitOpError() << "loads tiles of 128-byte rows (chunk_columns "
                               "32, 64 or 128; block_k of them along K when "
                               "K-major) in a multiple of 128 pieces of 16 "
                               "bytes without TMA";
  KernelBuilder b(op.getLoc(), op);
  int64_t perPiece = kPieceBytes / elementBytes;
  Value source = globalSource(b, op.getMap());
  Value k = op.getK();
  Value firstN = b.mul(op.getNBlock(), b.c32(blockN));
  Value group = op.getGroup() ? b.toI64(op.getGroup()) : b.c64(0);
  Value inner = extents[0], outer = extents[1];
  Value groupBase = b.mul(group, b.toI64(outer));
  if (!op.getNMajor()) {
    // Rows of N, 128 bytes of K each.
    forEachPiece(b, blockN * kPiecesPerRow, [&](Value q) {
      Value row = b.divU(q, b.c32(kPiecesPerRow));
      Value piece = b.remU(q, b.c32(kPiecesPerRow));
      Value n = b.add(firstN, row);
      Value kElement = b.add(k, b.mul(piece, b.c32(perPiece)));
      Value valid = b.create<arith::AndIOp>(b.lt(n, outer),
                                            b.lt(kElement, inner));
      Value element = b.add(b.mul(b.add(groupBase, b.toI64(n)), b.toI64(inner)),
                            b.toI64(kElement));
      copyPiece(b, op.getDst(), row, piece, source, element, elementBytes,
                valid);
    });
  } else {
    // Column chunks of `chunk` N, each block_k rows of K of 128 bytes,
    // block_k * 128 bytes apart.
    int64_t chunkPieces = blockK * kPiecesPerRow;
    forEachPiece(b, blockN / chunk * chunkPieces, [&](Value q) {
      Value chunkIndex = b.divU(q, b.c32(chunkPieces));
      Value inChunk = b.remU(q, b.c32(chunkPieces));
      Value row = b.divU(inChunk, b.c32(kPiecesPerRow));
      Value piece = b.remU(inChunk, b.c32(kPiecesPerRow));
      Value n = b.add(b.add(firstN, b.mul(chunkIndex, b.c32(chunk))),
                      b.mul(piece, b.c32(perPiece)));
      Value kElement = b.add(k, row);
      Value valid = b.create<arith::AndIOp>(b.lt(n, inner),
                                            b.lt(kElement, outer));
      Value element =
          b.add(b.mul(b.add(groupBase, b.toI64(kElement)), b.toI64(inner)),
                b.toI64(n));
      Value tile = b.gep(op.getDst(), b.toI64(b.mul(chunkIndex,
                                                    b.c32(blockK * kRowBytes))));
      copyPiece(b, tile, row, piece, source, element, elementBytes, valid);
    });
  }
  b.create<ggk::CopyAsyncArriveOp>(op.getBarrier());
  op.erase();
  return success();
}

struct LowerLoadsCpAsync
    : public ggc::impl::LowerLoadsCpAsyncBase<LowerLoadsCpAsync> {
  void runOnOperation() override {
    SmallVector<Operation *> loads;
    getOperation().walk([&](Operation *op) {
      if (isa<ggk::LoadTileRowsOp, ggk::LoadBTileOp>(op))
        loads.push_back(op);
    });
    for (Operation *op : loads) {
      LogicalResult lowered =
          isa<ggk::LoadTileRowsOp>(op)
              ? lowerARows(cast<ggk::LoadTileRowsOp>(op))
              : lowerBTile(cast<ggk::LoadBTileOp>(op));
      if (failed(lowered))
        return signalPassFailure();
    }
  }
};

} // namespace
