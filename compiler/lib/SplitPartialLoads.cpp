//===- SplitPartialLoads.cpp - ggk-split-partial-loads --------------------===//
//
// Turns each ggk.load_tile_rows into the expect_tx that arms the stage's
// full barrier and the TMA loads of the rows the tile needs. A group's last
// tile of A is mostly rows of the next group (or past the tensor); loading
// only its valid rows, rounded up to gg-plan-overfetch's granule, saves
// their bytes of L2 and TMA traffic (TMA-Adaptive FP8 Grouped GEMM). A TMA
// box has a fixed height, so the rounded count is loaded as a sum of
// power-of-two boxes, one tensor map each, picked by the count's bits.
// Rows a pair of CTAs both need (`shared`) are loaded once, by rank 0, into
// both CTAs' stages (TMA multicast).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "Rematerialize.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"


namespace ggc {
#define GEN_PASS_DEF_SPLITPARTIALLOADS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

class RowLoads {
public:
  explicit RowLoads(ggk::LoadTileRowsOp op)
      : op(op), b(op.getLoc(), op), tileRows(int64_t(op.getTileRows())),
        rowBytes(int64_t(op.getRowBytes())),
        otherBytes(int64_t(op.getOtherBytes())),
        granule(int64_t(op.getGranule())), boxes(op.getBoxRows()),
        destination(op.getDst(), op) {}

  void run();

private:
  /// Box `box` (box_rows[box] rows) at row `offset` of the tile.
  void loadBox(Value offset, size_t box);
  /// The rows a partial tile loads: its valid rows (none when negative, as
  /// for a cluster's CTA past its group's end) rounded up to the granule,
  /// at most the whole tile.
  Value roundedRows();
  /// Each smaller box whose height is a bit of `rows`, stacked from row 0.
  void loadPartial(Value rows);
  /// The op and its destination's ops, which the loads have replaced.
  void erase();

  ggk::LoadTileRowsOp op;
  KernelBuilder b;
  int64_t tileRows, rowBytes, otherBytes, granule;
  ArrayRef<int64_t> boxes;
  /// The stage's address, computed where each load needs it.
  ggc::Rematerialized destination;
};

void RowLoads::loadBox(Value offset, size_t box) {
  // The row offset's bytes, then the stage's address: the order the
  // generator's one expression made them in (GCC evaluates arguments right
  // to left), which the PTX keeps.
  Value bytes = b.mul(b.toI64(offset), b.c64(rowBytes));
  Value dst = b.gep(destination.at(b), bytes);
  Value row = b.add(op.getRow(), offset);
  SmallVector<Value> coords = {op.getK(), row};
  if (op.getGroup())
    coords.push_back(op.getGroup());
  Value map = op.getMaps()[box];
  if (!op.getShared()) {
    b.tmaLoad(dst, map, coords, op.getBarrier());
    return;
  }
  // Rows the pair shares: rank 0 loads them into both CTAs; else each CTA
  // its own.
  b.create<scf::IfOp>(
      op.getShared(),
      [&](OpBuilder &, Location) {
        Value first = b.c32(0);
        b.create<scf::IfOp>(b.eq(op.getRank(), first),
                            [&](OpBuilder &, Location) {
                              b.create<ggk::TmaLoadMulticastOp>(
                                  dst, map, coords, op.getBarrier(), first,
                                  /*l2Hint=*/Value(), 2);
                              b.create<scf::YieldOp>();
                            });
        b.create<scf::YieldOp>();
      },
      [&](OpBuilder &, Location) {
        b.tmaLoad(dst, map, coords, op.getBarrier());
        b.create<scf::YieldOp>();
      });
}

Value RowLoads::roundedRows() {
  Value valid = b.maxS(op.getRowsValid(), b.c32(0));
  Value rounded =
      b.andI(b.add(valid, b.c32(granule - 1)), b.c32(~(granule - 1)));
  return b.minS(rounded, b.c32(tileRows));
}

void RowLoads::loadPartial(Value rows) {
  Value offset = b.c32(0);
  for (size_t i = 1; i < boxes.size(); ++i) {
    int64_t h = boxes[i];
    Value take = b.ne(b.andI(rows, b.c32(h)), b.c32(0));
    b.create<scf::IfOp>(take, [&](OpBuilder &, Location) {
      loadBox(offset, i);
      b.create<scf::YieldOp>();
    });
    offset = b.add(offset, b.andI(rows, b.c32(h)));
  }
}

void RowLoads::run() {
  if (boxes.size() == 1) {
    b.mbarrierArriveExpectTx(op.getBarrier(),
                             b.c32(tileRows * rowBytes + otherBytes));
    loadBox(b.c32(0), 0);
    erase();
    return;
  }
  Value rows = roundedRows();
  b.mbarrierArriveExpectTx(
      op.getBarrier(),
      b.add(b.mul(rows, b.c32(rowBytes)), b.c32(otherBytes)));
  // A whole tile takes one box rather than the sum of all of them.
  Value whole = b.eq(rows, b.c32(tileRows));
  b.create<scf::IfOp>(
      whole,
      [&](OpBuilder &, Location) {
        loadBox(b.c32(0), 0);
        b.create<scf::YieldOp>();
      },
      [&](OpBuilder &, Location) {
        loadPartial(rows);
        b.create<scf::YieldOp>();
      });
  erase();
}

void RowLoads::erase() {
  op.erase();
  destination.eraseOriginals();
}

struct SplitPartialLoadsPass
    : public ggc::impl::SplitPartialLoadsBase<SplitPartialLoadsPass> {
  void runOnOperation() override {
    SmallVector<ggk::LoadTileRowsOp> loads;
    getOperation().walk([&](ggk::LoadTileRowsOp op) { loads.push_back(op); });
    for (ggk::LoadTileRowsOp op : loads) {
      // TMA's boxes take consecutive rows: a gather by index is
      // ggk-lower-loads-cp-async's, which runs next.
      if (!op.getIndices())
        RowLoads(op).run();
    }
  }
};

} // namespace
