//===- LowerTransposeScales.cpp - gg-lower-transpose-scales ---------------===//
//
// gg.transpose_scales as one kernel: each CTA moves tiles of 128 rows x 8
// columns through shared memory (a grid-stride loop over the tiles, row
// tiles fastest, in out's order). A thread reads four scales with the
// columns fastest, so a warp reads 4 rows' 32-byte sectors whole; after a
// barrier it writes four with the rows fastest, so a warp writes 32 rows
// of one column of out as one 128-byte line. Rows from R to A are written
// 0. (Without the tile, a warp's reads were a row apart, one
// column of eight in each sector: the copy took 1.05x to 2.4x DeepGEMM's
// on an H200, docs/performance-history.md.)
//
//===----------------------------------------------------------------------===//
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERTRANSPOSESCALES
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using namespace ggc::simple;

namespace {

constexpr int64_t kThreads = 256, kTileColumns = 8;
// Each thread moves kPasses scales a tile, its loads issued together so
// that a CTA has 1,024 reads in flight.
constexpr int64_t kPasses = 4;
constexpr int64_t kPassRows = kThreads / kTileColumns; // 32: a warp's rows
constexpr int64_t kTileRows = kPassRows * kPasses;     // 128
// The floats between two columns of the shared tile: a column's 128 rows
// and 4 of padding, so that a warp's stores in the read phase (8 columns x
// 4 rows) fall in 32 different banks.
constexpr int64_t kColumnStride = kTileRows + 4;

struct TilePlace {
  Value batch, firstRow, firstColumn;
};

/// Tile `index`'s batch, first row and first column; row tiles fastest.
/// Divided out in i32: a 64-bit division is a long subroutine (tiles
/// number fewer than 2^31: transposed_scales, the launcher, checks it).
TilePlace placeTile(KernelBuilder &b, Value index, Value rowTiles,
                    Value columnTiles) {
  Value index32 = b.toI32(index);
  Value rowTiles32 = b.toI32(rowTiles), columnTiles32 = b.toI32(columnTiles);
  Value batchColumnTile = b.divU(index32, rowTiles32);
  TilePlace place;
  place.firstRow =
      b.mul(b.toI64(b.remU(index32, rowTiles32)), b.c64(kTileRows));
  place.firstColumn = b.mul(b.toI64(b.remU(batchColumnTile, columnTiles32)),
                            b.c64(kTileColumns));
  place.batch = b.toI64(b.divU(batchColumnTile, columnTiles32));
  return place;
}

/// What every phase of the kernel reads: its operands, the shared tile
/// and this thread's index.
struct Copy {
  Value input, out, tile;
  Value rows, columns, aligned; // R, C and A
  Value tid;
};

/// The tile's scales into shared memory, with the columns fastest: scale c
/// of row r of batch b is at (b R + r) C + c in input; 0 from R on and
/// past C. All of a thread's loads are issued before its stores.
void readTile(KernelBuilder &b, const Copy &c, const TilePlace &at) {
  Value lane = b.remU(c.tid, b.c64(kTileColumns));
  Value readColumn = b.add(at.firstColumn, lane);
  SmallVector<Value> values, slots;
  for (int64_t pass = 0; pass < kPasses; ++pass) {
    Value tileRow =
        b.add(b.divU(c.tid, b.c64(kTileColumns)), b.c64(pass * kPassRows));
    Value readRow = b.add(at.firstRow, tileRow);
    Value inside = b.andI(b.lt(readRow, c.rows), b.lt(readColumn, c.columns));
    Value from = b.add(
        b.mul(b.add(b.mul(at.batch, c.rows), readRow), c.columns), readColumn);
    values.push_back(b.create<scf::IfOp>(
        inside,
        [&](OpBuilder &, Location) {
          b.create<scf::YieldOp>(ValueRange{load(b, b.f32(), c.input, from)});
        },
        [&](OpBuilder &, Location) {
          b.create<scf::YieldOp>(ValueRange{b.f32c(0.0)});
        }).getResult(0));
    slots.push_back(b.add(b.mul(lane, b.c64(kColumnStride)), tileRow));
  }
  for (auto [value, slot] : llvm::zip(values, slots))
    store(b, value, c.tile, slot);
}

/// The tile from shared memory to out, with the rows fastest: scale (r, c)
/// of batch b is at (b C + c) A + r, a warp's 32 rows one 128-byte line
/// (warp w writes column w: a CTA's 8 warps, one column each).
void writeTile(KernelBuilder &b, const Copy &c, const TilePlace &at) {
  Value tileColumn = b.divU(c.tid, b.c64(kPassRows));
  for (int64_t pass = 0; pass < kPasses; ++pass) {
    Value tileRow =
        b.add(b.remU(c.tid, b.c64(kPassRows)), b.c64(pass * kPassRows));
    Value writeRow = b.add(at.firstRow, tileRow);
    Value writeColumn = b.add(at.firstColumn, tileColumn);
    Value inside =
        b.andI(b.lt(writeRow, c.aligned), b.lt(writeColumn, c.columns));
    ifThen(b, inside, [&] {
      Value scale = load(b, b.f32(), c.tile,
                         b.add(b.mul(tileColumn, b.c64(kColumnStride)), tileRow));
      Value outColumn = b.add(b.mul(at.batch, c.columns), writeColumn);
      store(b, scale, c.out, b.add(b.mul(outColumn, c.aligned), writeRow));
    });
  }
}

/// `out`'s scales, tile by tile, each read from its row of `input` (or 0).
void buildKernel(KernelBuilder &b, ModuleOp module, StringRef name) {
  Type global = b.ptr(ggc::kGlobal);
  ValueRange args = createKernel(b, module, name, kThreads,
                                 {global, global, b.i64(), b.i64(), b.i64(), b.i64()});
  Value batches = args[2];
  Copy c{args[0], args[1],
         sharedArray(b, module, (name + "_tile").str(), b.f32(),
                     kTileColumns * kColumnStride),
         args[3], args[4], args[5], Value()};
  Value rowTiles = b.ceilDivU(c.aligned, kTileRows);
  Value columnTiles = b.ceilDivU(c.columns, kTileColumns);
  Value tiles = b.mul(b.mul(batches, columnTiles), rowTiles);
  c.tid = b.toI64(b.threadIdx());
  gridStride(b, tiles, /*perCta=*/1, b.c32(0), [&](Value index) {
    TilePlace at = placeTile(b, index, rowTiles, columnTiles);
    readTile(b, c, at);
    syncCta(b);
    writeTile(b, c, at);
    // The next tile's reads overwrite the shared tile.
    syncCta(b);
  });
}

struct LowerTransposeScalesPass
    : public ggc::impl::LowerTransposeScalesBase<LowerTransposeScalesPass> {
  void runOnOperation() override {
    if (failed(lowerEachFunction<gg::TransposeScalesOp>(
            getOperation(), "one kernel",
            [&](gg::TransposeScalesOp op, func::FuncOp func, KernelBuilder &b) {
              buildKernel(b, getOperation(),
                          (func.getSymName() + "_transpose_scales").str());
              return success();
            })))
      signalPassFailure();
  }
};

} // namespace
