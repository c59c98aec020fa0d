//===- LowerStorePool.cpp - ggk-lower-store-pool ---------------------------===//
//
// The TMA store pool (TMA-Adaptive FP8 Grouped GEMM): the consumers stage a
// tile's outputs in shared memory, and one thread stores the rows of the
// tile that belong to its group, a prefix of `rows_valid` rows, as a sum of
// boxes of BM, BM/2, ..., 1 rows (the binary digits of `rows_valid`), so no
// row of the next group is ever written; columns past N are clipped by TMA.
// With `warpgroup_rows` each consumer warpgroup does so for its own 64
// rows, meeting only its own threads. This pass turns the pool's ggk ops
// into the NVVM ops that do it.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <map>

namespace ggc {
#define GEN_PASS_DEF_LOWERSTOREPOOL
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// The named barriers of consumer warpgroups that store their own rows:
/// kWarpgroupBarriers + w for warpgroup w (0 is the CTA's, 1 all
/// consumers', 2 + w MX's column factors).
constexpr int64_t kWarpgroupBarriers = 8;

/// The thread's consumer warpgroup, counted from the issuer's.
Value warpgroupOf(KernelBuilder &b, int64_t issuer) {
  return b.divU(b.sub(b.threadIdx(), b.c32(issuer)),
                b.c32(ggc::kWarpgroupThreads));
}

/// Runs `body` on the thread `issuer` only, or with `warpgroupRows` on the
/// first thread of each consumer warpgroup.
void onIssuer(KernelBuilder &b, int64_t issuer, int64_t warpgroupRows,
              function_ref<void()> body) {
  Value isIssuer =
      warpgroupRows
          ? b.eq(b.remU(b.sub(b.threadIdx(), b.c32(issuer)),
                        b.c32(ggc::kWarpgroupThreads)),
                 b.c32(0))
          : b.eq(b.threadIdx(), b.c32(issuer));
  b.create<scf::IfOp>(isIssuer, [&](OpBuilder &, Location) {
    body();
    b.create<scf::YieldOp>();
  });
}

/// The consumers meet, or with `warpgroupRows` each warpgroup's threads.
void meet(KernelBuilder &b, int64_t issuer, int64_t consumerThreads,
          int64_t warpgroupRows) {
  if (!warpgroupRows)
    return b.consumerBarrier(consumerThreads);
  b.warpSync();
  b.syncThreads(b.add(warpgroupOf(b, issuer), b.c32(kWarpgroupBarriers)),
                b.c32(ggc::kWarpgroupThreads));
}

/// The issuer waits until the previous tile's stores have read the staged
/// tile (.read: their global writes may still be in flight), then the
/// consumers meet so that none overwrites it earlier.
void lowerAwait(ggk::AwaitStagedTileOp op) {
  KernelBuilder b(op.getLoc(), op);
  onIssuer(b, op.getIssuer(), op.getWarpgroupRows(), [&] {
    b.bulkWaitGroup(/*read=*/true, op.getPending());
  });
  meet(b, op.getIssuer(), op.getConsumerThreads(), op.getWarpgroupRows());
  op.erase();
}

/// `value` as `base + constant`, the constant summed from the
/// `arith.addi` / `arith.subi` of constants that `value` was built with
/// (the epilogue places a thread's pairs at its fragment's row and column
/// plus 8 * half and 8 * block, less a slice's first column).
std::pair<Value, int64_t> peelConstant(Value value) {
  int64_t constant = 0;
  while (Operation *op = value.getDefiningOp()) {
    bool subtract = isa<arith::SubIOp>(op);
    if (!isa<arith::AddIOp>(op) && !subtract)
      break;
    APInt bits;
    if (matchPattern(op->getOperand(1), m_ConstantInt(&bits))) {
      constant += subtract ? -bits.getSExtValue() : bits.getSExtValue();
      value = op->getOperand(0);
    } else if (!subtract &&
               matchPattern(op->getOperand(0), m_ConstantInt(&bits))) {
      constant += bits.getSExtValue();
      value = op->getOperand(1);
    } else {
      break;
    }
  }
  return {value, constant};
}

/// The byte offset in the staged tile of the pair at `row`, `column`.
Value stagedOffset(KernelBuilder &b, ggk::StageOutputOp op, Value row,
                   Value column) {
  int64_t rows = op.getTileShape()[0], columns = op.getTileShape()[1];
  int64_t outBytes = ggc::byteWidth(op.getPair().getType().getElementType());
  int64_t chunkBytes = op.getSwizzle();
  if (!chunkBytes)
    return b.mul(b.toI64(b.add(b.mul(row, b.c32(columns)), column)),
                 b.c64(outBytes));
  // Chunk of `swizzle` bytes, then its row; the 16-byte unit within the row
  // is XORed with bits 7 and up of the row's offset in the chunk (TMA's
  // swizzle: row % 8 for 128-byte rows, row / 2 % 4 for 64-byte ones; the
  // pair never crosses a unit).
  int64_t units = chunkBytes / 16, rowsPer128 = 128 / chunkBytes;
  Value byteInRow = b.mul(column, b.c32(outBytes));
  Value chunk = b.divU(byteInRow, b.c32(chunkBytes));
  Value unit = b.divU(b.remU(byteInRow, b.c32(chunkBytes)), b.c32(16));
  Value line = rowsPer128 == 1 ? row : b.divU(row, b.c32(rowsPer128));
  Value swizzledUnit = b.xorI(unit, b.remU(line, b.c32(units)));
  return b.toI64(b.add(
      b.add(b.mul(chunk, b.c32(rows * chunkBytes)),
            b.mul(row, b.c32(chunkBytes))),
      b.add(b.mul(swizzledUnit, b.c32(16)), b.remU(byteInRow, b.c32(16)))));
}

/// Rows this far apart have the same swizzle (8 lines of 128 bytes, for
/// 128- and 64-byte chunks alike).
constexpr int64_t kSwizzleRows = 8;

/// The address in the staged tile of the place at `row`, `column`. With
/// `constantOffsets`: the place less the whole swizzle periods of rows and
/// whole chunks of columns in the constant parts of `row` and `column`
/// (peelConstant), plus those as a constant: the same byte, since each
/// such step moves a place by a fixed amount, but a thread's places then
/// share a few variable addresses.
Value placeAddress(KernelBuilder &b, ggk::StageOutputOp op, Value row,
                   Value column, bool constantOffsets) {
  if (!constantOffsets)
    return b.gep(op.getTile(), stagedOffset(b, op, row, column));
  auto [rowBase, rowConstant] = peelConstant(row);
  auto [columnBase, columnConstant] = peelConstant(column);
  int64_t rows = op.getTileShape()[0], columns = op.getTileShape()[1];
  int64_t outBytes = ggc::byteWidth(op.getPair().getType().getElementType());
  int64_t chunkBytes = op.getSwizzle();
  int64_t rowStep = chunkBytes ? kSwizzleRows : 1;
  int64_t columnStep = chunkBytes ? chunkBytes / outBytes : 1;
  int64_t rowSteps = llvm::divideFloorSigned(rowConstant, rowStep);
  int64_t columnSteps = llvm::divideFloorSigned(columnConstant, columnStep);
  int64_t fixedBytes =
      chunkBytes ? rowSteps * rowStep * chunkBytes +
                       columnSteps * rows * chunkBytes
                 : (rowSteps * columns + columnSteps) * outBytes;
  Value place = b.gep(
      op.getTile(),
      stagedOffset(b, op,
                   b.add(rowBase, b.c32(rowConstant - rowSteps * rowStep)),
                   b.add(columnBase,
                         b.c32(columnConstant - columnSteps * columnStep))));
  return b.gep(place, b.c64(fixedBytes));
}

void lowerStage(ggk::StageOutputOp op, bool constantOffsets) {
  KernelBuilder b(op.getLoc(), op);
  b.create<LLVM::StoreOp>(op.getPair(), placeAddress(b, op, op.getRow(),
                                                     op.getColumn(),
                                                     constantOffsets));
  op.erase();
}

/// Where matrixStores may join a staged pair into a `stmatrix.x4`: the
/// group's key (its block, tile, base row and column, and the constant
/// parts of its first pair's row and column, the even column block's row
/// group 0) and the pair's matrix in it, 0..3 for fragments [0, 2k],
/// [1, 2k], [0, 2k + 1], [1, 2k + 1]. Only 16-bit pairs of a fragment
/// (their rows of 8 columns whole 16-byte units of the tile).
using MatrixKey = std::tuple<Block *, void *, void *, void *, int64_t,
                             int64_t, int64_t>;

std::optional<std::pair<MatrixKey, int>> matrixSlot(ggk::StageOutputOp op) {
  std::optional<ArrayRef<int64_t>> fragment = op.getFragment();
  VectorType pairType = op.getPair().getType();
  if (!fragment || pairType.getNumElements() != 2 ||
      ggc::byteWidth(pairType.getElementType()) != 2 ||
      (!op.getSwizzle() && op.getTileShape()[1] % 8 != 0))
    return std::nullopt;
  int64_t half = (*fragment)[0], block = (*fragment)[1];
  auto [rowBase, rowConstant] = peelConstant(op.getRow());
  auto [columnBase, columnConstant] = peelConstant(op.getColumn());
  MatrixKey key{op->getBlock(),
                op.getTile().getAsOpaquePointer(),
                rowBase.getAsOpaquePointer(),
                columnBase.getAsOpaquePointer(),
                rowConstant - 8 * half,
                columnConstant - 8 * (block % 2),
                block / 2};
  return std::make_pair(key, int(half + 2 * (block % 2)));
}

/// One `stmatrix.x4` for the four pairs, where the last of them was. Thread
/// t holds row t / 4, columns 2 (t % 4) of each 8x8 matrix (the
/// accumulator fragment's layout); lane l gives the address of row l % 8
/// of matrix l / 8: the fragment's row less lane / 4, plus l % 8 and 8 for
/// the odd matrices; its column less 2 (lane % 4), plus 8 for matrices 2
/// and 3.
void storeMatrices(std::array<ggk::StageOutputOp, 4> pairs,
                   bool constantOffsets) {
  ggk::StageOutputOp last = pairs[0];
  for (ggk::StageOutputOp op : pairs)
    if (last->isBeforeInBlock(op))
      last = op;
  KernelBuilder b(last.getLoc(), last);
  MLIRContext *ctx = b.getContext();
  auto [rowBase, rowConstant] = peelConstant(pairs[0].getRow());
  auto [columnBase, columnConstant] = peelConstant(pairs[0].getColumn());
  Value lane = b.remU(b.threadIdx(), b.c32(32));
  Value matrix = b.divU(lane, b.c32(8));
  Value laneRow = b.add(
      b.sub(rowBase, b.divU(lane, b.c32(4))),
      b.add(b.remU(lane, b.c32(8)), b.mul(b.remU(matrix, b.c32(2)), b.c32(8))));
  Value laneColumn =
      b.add(b.sub(columnBase, b.mul(b.remU(lane, b.c32(4)), b.c32(2))),
            b.mul(b.divU(matrix, b.c32(2)), b.c32(8)));
  // The constants outermost, where placeAddress peels them.
  Value address = placeAddress(b, pairs[0], b.add(laneRow, b.c32(rowConstant)),
                               b.add(laneColumn, b.c32(columnConstant)),
                               constantOffsets);
  SmallVector<Value, 4> words;
  for (ggk::StageOutputOp op : pairs)
    words.push_back(b.create<LLVM::BitcastOp>(b.i32(), op.getPair()));
  b.create<NVVM::StMatrixOp>(address, words, NVVM::MMALayout::row,
                             NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
                             NVVM::LdStMatrixEltType::B16);
  for (ggk::StageOutputOp op : pairs)
    op.erase();
}

/// matrixStores: every complete group of four staged fragment pairs
/// becomes one stmatrix; the others are left for lowerStage.
void lowerMatrixGroups(ModuleOp module, bool constantOffsets) {
  std::map<MatrixKey, std::array<ggk::StageOutputOp, 4>> groups;
  SmallVector<MatrixKey> order;
  module.walk([&](ggk::StageOutputOp op) {
    std::optional<std::pair<MatrixKey, int>> slot = matrixSlot(op);
    if (!slot)
      return;
    auto [it, added] = groups.try_emplace(slot->first);
    if (added)
      order.push_back(slot->first);
    if (!it->second[slot->second])
      it->second[slot->second] = op;
  });
  for (const MatrixKey &key : order) {
    std::array<ggk::StageOutputOp, 4> &pairs = groups[key];
    if (llvm::all_of(pairs, [](ggk::StageOutputOp op) { return bool(op); }))
      storeMatrices(pairs, constantOffsets);
  }
}

/// The stores of one box height, `first` rows into the tile and at column
/// `col` of the output: one per column chunk that starts before N.
void storeBoxes(KernelBuilder &b, ggk::StoreStagedTileOp op, Value map,
                Value first, Value col) {
  int64_t rows = op.getTileShape()[0], columns = op.getTileShape()[1];
  int64_t chunkColumns = op.getChunkColumns();
  int64_t rowBytes = chunkColumns * ggc::byteWidth(op.getElementType());
  for (int64_t chunk = 0; chunk < columns / chunkColumns; ++chunk) {
    Value chunkCol = b.add(col, b.c32(chunk * chunkColumns));
    // A chunk wholly past N has nothing to store.
    b.create<scf::IfOp>(
        b.lt(chunkCol, b.c32(int64_t(op.getN()))), [&](OpBuilder &, Location) {
          Value src = b.gep(op.getTile(),
                            b.add(b.c64(chunk * rows * rowBytes),
                                  b.mul(b.toI64(first), b.c64(rowBytes))));
          SmallVector<Value> coords = {chunkCol,
                                       b.add(op.getRowStart(), first)};
          if (op.getGroup())
            coords.push_back(op.getGroup());
          b.tmaStore(map, src, coords, op.getAdd());
          b.create<scf::YieldOp>();
        });
  }
}

/// Once every consumer has written its outputs and fenced them for the
/// async proxy, the issuer stores a box of each height whose bit is set in
/// the valid rows, the boxes stacked from the tile's first row, and
/// commits them as one group; with `warpgroup_rows`, each warpgroup's
/// issuer its rows' boxes, stacked from its first row.
void lowerStore(ggk::StoreStagedTileOp op) {
  KernelBuilder b(op.getLoc(), op);
  int64_t warpgroupRows = op.getWarpgroupRows();
  b.fenceAsyncShared();
  meet(b, op.getIssuer(), op.getConsumerThreads(), warpgroupRows);
  onIssuer(b, op.getIssuer(), warpgroupRows, [&] {
    Value rows = b.maxS(op.getRowsValid(), b.c32(0));
    Value done = b.c32(0);
    if (warpgroupRows) {
      done = b.mul(warpgroupOf(b, op.getIssuer()), b.c32(warpgroupRows));
      rows = b.minS(b.maxS(b.sub(op.getRowsValid(), done), b.c32(0)),
                    b.c32(warpgroupRows));
    }
    int64_t blockColumns =
        op.getBlockColumns() ? op.getBlockColumns() : op.getTileShape()[1];
    Value col = b.mul(op.getNBlock(), b.c32(blockColumns));
    if (op.getFirstColumn())
      col = b.add(col, b.c32(op.getFirstColumn()));
    for (auto [h, map] : llvm::zip(op.getHeights(), op.getMaps())) {
      if (warpgroupRows && h > warpgroupRows)
        continue; // a warpgroup's rows take boxes of at most its 64
      Value take = b.ne(b.andI(rows, b.c32(h)), b.c32(0));
      Value first = done;
      b.create<scf::IfOp>(take, [&](OpBuilder &, Location) {
        storeBoxes(b, op, map, first, col);
        b.create<scf::YieldOp>();
      });
      done = b.add(done, b.select(take, b.c32(h), b.c32(0)));
    }
    b.bulkCommitGroup();
  });
  op.erase();
}

/// The CTA must not end while its last TMA stores are in flight.
void lowerDrain(ggk::DrainTileStoresOp op) {
  KernelBuilder b(op.getLoc(), op);
  onIssuer(b, op.getIssuer(), op.getWarpgroupRows(), [&] {
    b.bulkWaitGroup(/*read=*/false);
  });
  op.erase();
}

struct LowerStorePoolPass
    : public ggc::impl::LowerStorePoolBase<LowerStorePoolPass> {
  using LowerStorePoolBase::LowerStorePoolBase;
  void runOnOperation() override {
    if (matrixStores)
      lowerMatrixGroups(getOperation(), constantOffsets);
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<ggk::AwaitStagedTileOp, ggk::StageOutputOp,
              ggk::StoreStagedTileOp, ggk::DrainTileStoresOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto await = dyn_cast<ggk::AwaitStagedTileOp>(op))
        lowerAwait(await);
      else if (auto stage = dyn_cast<ggk::StageOutputOp>(op))
        lowerStage(stage, constantOffsets);
      else if (auto store = dyn_cast<ggk::StoreStagedTileOp>(op))
        lowerStore(store);
      else
        lowerDrain(cast<ggk::DrainTileStoresOp>(op));
    }
  }
};

} // namespace
