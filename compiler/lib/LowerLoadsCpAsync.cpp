//===- LowerLoadsCpAsync.cpp - ggk-lower-loads-cp-async -------------------===//
//
// The producer's tile loads for targets without TMA (sm_80, sm_86, sm_89),
// and on sm_90a the loads of A's rows gathered by index, which TMA's boxes
// cannot take (the kernel plan's producer = all_threads). Every thread of
// the producer (the op's `copy_threads`) copies its share of the tile's
// 16-byte pieces with cp.async into the stage, in the
// 128-byte swizzled layout TMA writes on sm_90a (piece c of a 128-byte row
// r at r * 128 + (c ^ r % 8) * 16), so that the consumers read the same stage
// on every target. Pieces past the operand's extents or the group's rows
// are zero-filled, never read. Each thread then arrives on the stage's
// full barrier once its copies have landed, which ggk-place-scales counts.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "Target.h"
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

/// The tile as consecutive 128-byte rows (an N-major B's chunks too, each
/// block_k rows), copied in rounds by the op's `copy_threads` threads
/// (whole warpgroups: sm_90a's warpgroup 0, the producer warpgroup after
/// the consumers, or the consumers themselves): in round `i` thread `t`
/// copies piece `t % 8` of row `i * rowsPerRound + t / 8`, whose place in
/// the swizzled tile is the thread's own offset plus `i * rowsPerRound *
/// 128` (a round's rows, a multiple of 8, keep each row's swizzle). What
/// is per thread is computed once; each round adds constants.
struct ThreadPieces {
  Value row;    // i32: t / 8, the thread's row in each round
  Value piece;  // i32: t % 8
  Value offset; // i32: bytes of its piece of that row in the tile
  int64_t rowsPerRound;
};

ThreadPieces threadPieces(KernelBuilder &b, int64_t copyThreads) {
  Value thread = b.remU(b.threadIdx(), b.c32(copyThreads));
  ThreadPieces t;
  t.rowsPerRound = copyThreads / kPiecesPerRow;
  t.row = b.divU(thread, b.c32(kPiecesPerRow));
  t.piece = b.remU(thread, b.c32(kPiecesPerRow));
  Value swizzled = b.xorI(t.piece, b.andI(t.row, b.c32(7)));
  t.offset = b.add(b.mul(t.row, b.c32(kRowBytes)),
                   b.mul(swizzled, b.c32(kPieceBytes)));
  return t;
}

/// Round `round`'s copy: element `element` (i64) of the operand at
/// `source` into the thread's place in the tile; a zero fill, reading
/// nothing (so `element` may lie past the tensor), unless `valid`.
void copyRound(KernelBuilder &b, const ThreadPieces &t, Value tile,
               int64_t round, Value source, Value element,
               int64_t elementBytes, Value valid) {
  Value dst = b.gep(tile, b.toI64(b.add(
                              t.offset,
                              b.c32(round * t.rowsPerRound * kRowBytes))));
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

Value both(KernelBuilder &b, Value x, Value y) {
  return b.create<arith::AndIOp>(x, y);
}

/// An MN-major tile: chunks of `chunk` MN columns (one 128-byte row), each
/// `blockK` rows of K, consecutive: row r of chunk c holds (K `k + r`, MN
/// `firstMN + c * chunk ..`) of an operand [groups.., K, MN] whose sizes
/// are `mnSize` and `kSize`, from the group's first element `groupBase`
/// (in rows of K).
void copyMNMajorChunks(KernelBuilder &b, const ThreadPieces &t, Value tile,
                       Value source, Value k, Value firstMN, Value groupBase,
                       Value mnSize, Value kSize, int64_t tileRows,
                       int64_t blockK, int64_t chunk, int64_t elementBytes) {
  int64_t perPiece = kPieceBytes / elementBytes;
  Value kElement = b.add(k, t.row);
  Value mn = b.add(firstMN, b.mul(t.piece, b.c32(perPiece)));
  Value first = b.add(b.mul(b.add(groupBase, b.toI64(kElement)),
                            b.toI64(mnSize)),
                      b.toI64(mn));
  for (int64_t i = 0; i < tileRows / t.rowsPerRound; ++i) {
    int64_t row = i * t.rowsPerRound % blockK;
    int64_t column = i * t.rowsPerRound / blockK * chunk;
    Value element = b.add(first, b.add(b.mul(b.c64(row), b.toI64(mnSize)),
                                       b.c64(column)));
    Value valid = both(b, b.lt(b.add(kElement, b.c32(row)), kSize),
                       b.lt(b.add(mn, b.c32(column)), mnSize));
    copyRound(b, t, tile, i, source, element, elementBytes, valid);
  }
}

/// Entry `entry` of the row-index list where `listed`, else -1 (which no
/// row has): an entry past the group's rows may lie past the list.
Value listedIndex(KernelBuilder &b, Value indices, Value entry, Value listed) {
  auto read = b.create<scf::IfOp>(
      listed,
      [&](OpBuilder &, Location) {
        b.create<scf::YieldOp>(
            ValueRange{b.loadGlobal(b.i32(), indices, entry)});
      },
      [&](OpBuilder &, Location) {
        b.create<scf::YieldOp>(ValueRange{b.c32(-1)});
      });
  return read.getResult(0);
}

/// The gathered rows a thread copies, one per round: list entry
/// `firstRow + t / 8 + round * rowsPerRound`'s index, or -1 past the
/// `rowsLeft` rows the tile takes.
SmallVector<Value> listedRows(KernelBuilder &b, const ThreadPieces &t,
                              Value indices, Value firstRow, Value rowsLeft,
                              int64_t tileRows) {
  Value mine = b.sub(rowsLeft, t.row); // counted from the thread's row
  SmallVector<Value> listed;
  for (int64_t i = 0; i < tileRows / t.rowsPerRound; ++i) {
    int64_t rows = i * t.rowsPerRound;
    listed.push_back(listedIndex(b, indices,
                                 b.add(firstRow, b.add(t.row, b.c32(rows))),
                                 b.lt(b.c32(rows), mine)));
  }
  return listed;
}

/// A K-major tile: row r (of `tileRows`) holds K `k ..` of the operand's
/// row `firstRow + r` or, gathered, the row `listed` names for it
/// (listedRows), after `groupRow` rows of earlier groups, each row `kSize`
/// elements; rows from `rowsLeft` on (counted from the tile's first row),
/// gathered rows whose index is negative or not below `rowsSize`, and K
/// past `kSize` are zero-filled.
void copyKMajorRows(KernelBuilder &b, const ThreadPieces &t, Value tile,
                    Value source, Value k, Value firstRow, Value groupRow,
                    Value kSize, Value rowsLeft, int64_t tileRows,
                    int64_t elementBytes, ArrayRef<Value> listed = {},
                    Value rowsSize = Value()) {
  // Counted from the thread's row.
  Value mine = listed.empty() ? b.sub(rowsLeft, t.row) : Value();
  Value kElement =
      b.add(k, b.mul(t.piece, b.c32(kPieceBytes / elementBytes)));
  Value kValid = b.lt(kElement, kSize);
  // Consecutive rows: the thread's first element, then kSize per row on.
  Value first;
  if (listed.empty()) {
    Value row = b.add(groupRow, b.toI64(b.add(firstRow, t.row)));
    first = b.add(b.mul(row, b.toI64(kSize)), b.toI64(kElement));
  }
  for (int64_t i = 0; i < tileRows / t.rowsPerRound; ++i) {
    int64_t rows = i * t.rowsPerRound;
    Value element, valid;
    if (listed.empty()) {
      element = b.add(first, b.mul(b.c64(rows), b.toI64(kSize)));
      valid = both(b, b.lt(b.c32(rows), mine), kValid);
    } else {
      Value index = listed[i];
      Value row = b.add(groupRow, b.toI64(index));
      element = b.add(b.mul(row, b.toI64(kSize)), b.toI64(kElement));
      valid = both(b, both(b, b.ge(index, b.c32(0)), b.lt(index, rowsSize)),
                   kValid);
    }
    copyRound(b, t, tile, i, source, element, elementBytes, valid);
  }
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
  int64_t rowsPerRound = op.getCopyThreads() / kPiecesPerRow;
  if (op.getRowBytes() != kRowBytes || tileRows % rowsPerRound != 0)
    return op.emitOpError() << "loads rows of " << kRowBytes
                            << " bytes, a multiple of " << rowsPerRound
                            << " rows (copy_threads / 8), without TMA";
  Value rows = extents[1];
  // A gathered tile's list entries are the same for each of its K blocks:
  // read once, before the K loop, where the tile's fields come from outside
  // it (the producer's loop; not the consumers' loads ahead).
  Operation *tileStart = op;
  if (auto kLoop = op->getParentOfType<scf::ForOp>())
    if (op.getIndices() &&
        llvm::all_of(ValueRange{op.getIndices(), op.getRow(),
                                op.getRowsValid()},
                     [&](Value v) { return kLoop.isDefinedOutsideOfLoop(v); }))
      tileStart = kLoop;
  KernelBuilder pre(op.getLoc(), tileStart);
  ThreadPieces t = threadPieces(pre, op.getCopyThreads());
  SmallVector<Value> listed;
  if (op.getIndices())
    listed = listedRows(pre, t, op.getIndices(), op.getRow(),
                        op.getRowsValid(), tileRows);
  KernelBuilder b(op.getLoc(), op);
  // The group's rows of the tile that lie in the tensor (gathered rows are
  // checked one by one).
  Value rowsLeft = op.getIndices()
                       ? op.getRowsValid()
                       : b.minS(op.getRowsValid(), b.sub(rows, op.getRow()));
  Value groupRow = op.getGroup() ? b.mul(b.toI64(op.getGroup()), b.toI64(rows))
                                 : b.c64(0);
  Value source = globalSource(b, op.getMaps()[0]);
  copyKMajorRows(b, t, op.getDst(), source, op.getK(), op.getRow(), groupRow,
                 extents[0], rowsLeft, tileRows, *elementBytes, listed, rows);
  b.create<ggk::CopyAsyncArriveOp>(op.getBarrier());
  op.erase();
  return success();
}

LogicalResult lowerBTile(ggk::LoadBTileOp op) {
  ValueRange extents = op.getExtents();
  if (extents.empty() || op.getCluster() != 1 || op.getSecondHalfRow())
    return op.emitOpError() << "needs B's extents, no cluster and one half "
                               "(no second_half_row) to be loaded without "
                               "TMA";
  int64_t blockN = op.getBlockN(), blockK = op.getBlockK();
  int64_t chunk = op.getChunkColumns();
  // chunk_columns is one 128-byte row of elements of 1, 2 or 4 bytes; a
  // K-major row holds block_k of them; an N-major chunk is block_k rows,
  // a whole number of rounds.
  int64_t elementBytes = kRowBytes / chunk;
  int64_t tileRows = op.getNMajor() ? blockN / chunk * blockK : blockN;
  int64_t rowsPerRound = op.getCopyThreads() / kPiecesPerRow;
  if ((chunk != 32 && chunk != 64 && chunk != 128) ||
      (!op.getNMajor() && blockK * elementBytes != kRowBytes) ||
      (op.getNMajor() && (blockN % chunk != 0 || blockK % rowsPerRound)) ||
      tileRows % rowsPerRound != 0)
    return op.emitOpError() << "loads tiles of 128-byte rows (chunk_columns "
                               "32, 64 or 128; block_k of them along K when "
                               "K-major) in a multiple of copy_threads pieces "
                               "of 16 bytes without TMA";
  KernelBuilder b(op.getLoc(), op);
  ThreadPieces t = threadPieces(b, op.getCopyThreads());
  Value source = globalSource(b, op.getMap());
  Value firstN = b.mul(op.getNBlock(), b.c32(blockN));
  Value group = op.getGroup() ? b.toI64(op.getGroup()) : b.c64(0);
  Value inner = extents[0], outer = extents[1];
  Value groupBase = b.mul(group, b.toI64(outer));
  if (!op.getNMajor())
    // Rows of N, 128 bytes of K each: the tile's rows below N.
    copyKMajorRows(b, t, op.getDst(), source, op.getK(), firstN, groupBase,
                   inner, b.sub(outer, firstN), tileRows, elementBytes);
  else
    copyMNMajorChunks(b, t, op.getDst(), source, op.getK(), firstN, groupBase,
                      inner, outer, tileRows, blockK, chunk, elementBytes);
  b.create<ggk::CopyAsyncArriveOp>(op.getBarrier());
  op.erase();
  return success();
}

LogicalResult lowerMNMajorTile(ggk::LoadMNMajorTileOp op) {
  ValueRange extents = op.getExtents();
  int64_t chunk = op.getChunkRows(), chunkBytes = op.getChunkBytes();
  int64_t blockK = chunkBytes / kRowBytes;
  int64_t tileRows = int64_t(op.getChunks()) * blockK;
  int64_t rowsPerRound = op.getCopyThreads() / kPiecesPerRow;
  if (extents.empty() || (chunk != 32 && chunk != 64 && chunk != 128) ||
      blockK % rowsPerRound != 0)
    return op.emitOpError() << "needs the operand's extents and chunks of "
                               "128-byte rows, a multiple of copy_threads / "
                               "8 of them, to be loaded without TMA";
  KernelBuilder b(op.getLoc(), op);
  ThreadPieces t = threadPieces(b, op.getCopyThreads());
  copyMNMajorChunks(b, t, op.getDst(), globalSource(b, op.getMap()), op.getK(),
                    op.getRow(), b.c64(0), extents[0], extents[1], tileRows,
                    blockK, chunk, kRowBytes / chunk);
  b.create<ggk::CopyAsyncArriveOp>(op.getBarrier());
  op.erase();
  return success();
}

struct LowerLoadsCpAsync
    : public ggc::impl::LowerLoadsCpAsyncBase<LowerLoadsCpAsync> {
  void runOnOperation() override {
    // With TMA only the gathered rows are left to copy: TMA's boxes take
    // consecutive rows (ggk-split-partial-loads and ggk-multicast lower
    // the rest).
    bool tma = ggc::targetOf(getOperation()).asyncCopy ==
               ggc::AsyncCopyKind::tma;
    SmallVector<Operation *> loads;
    getOperation().walk([&](Operation *op) {
      auto rows = dyn_cast<ggk::LoadTileRowsOp>(op);
      if (tma ? rows && rows.getIndices()
              : isa<ggk::LoadTileRowsOp, ggk::LoadBTileOp,
                    ggk::LoadMNMajorTileOp>(op))
        loads.push_back(op);
    });
    for (Operation *op : loads) {
      LogicalResult lowered =
          isa<ggk::LoadTileRowsOp>(op)
              ? lowerARows(cast<ggk::LoadTileRowsOp>(op))
          : isa<ggk::LoadBTileOp>(op)
              ? lowerBTile(cast<ggk::LoadBTileOp>(op))
              : lowerMNMajorTile(cast<ggk::LoadMNMajorTileOp>(op));
      if (failed(lowered))
        return signalPassFailure();
    }
  }
};

} // namespace
