//===- LowerTileSchedule.cpp - ggk-lower-tile-schedule ---------------------===//
//
// Turns each ggk.foreach_tile into the persistent loop that walks it: CTA c
// of a grid of g takes tiles c, c + g, ..., numbered group by group, with
// the group boundaries read on the device from the offsets or counts (no
// host synchronisation; an empty group has no tiles), M blocks in bands
// when the op has an m_band (gg-schedule-groups). A cluster of two walks
// units of two tiles, sharing B where they are M blocks of one N block
// (the shares_b field). The tile's fields
// (group, blocks, first row, valid rows, K range) are computed here and
// replace the body's arguments. With zero_ungrouped the rows before the
// first group and past the last are walked as groups -1 and G, with no K
// blocks: their tiles store the zero accumulator. Where the op has a table
// (gg's group_reads = shared), the CTA's threads copy the counts or offsets
// into it at entry (ggk.fill_group_table, lowered here) and the walk reads
// them there.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "RegionBodies.h"
#include "SimpleKernel.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERTILESCHEDULE
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;
using ggc::KernelBuilder;

namespace {

/// The tile's fields, in the order of the body's arguments.
struct Tile {
  Value group, mBlock, nBlock, rowStart, groupStart, rowsValid, kStart, kFirst,
      kEnd, numKBlocks, sharesB;
  SmallVector<Value> values() const {
    return {group,     mBlock, nBlock, rowStart, groupStart, rowsValid,
            kStart,    kFirst, kEnd,   numKBlocks, sharesB};
  }
};

/// What the cursor knows of the group it points at: its first row of A, its
/// rows and its tiles (all 0 past the last group). Carried from tile to
/// tile, so that a tile of that group loads no offsets, and a step to the
/// next group loads that group's alone.
struct GroupSpan {
  Value rowStart, rows, tiles;
};

class ScheduleLowering {
public:
  explicit ScheduleLowering(ggk::ForeachTileOp op)
      : op(op), b(op.getLoc(), op), layout(op.getLayout()),
        blockM(op.getTile()[0]), blockN(op.getTile()[1]),
        blockK(op.getTile()[2]), cluster(int64_t(op.getCluster())),
        nBlocks((int64_t(op.getN()) + blockN - 1) / blockN),
        numGroups(int64_t(op.getNumGroups())),
        zeroUngrouped(op.getZeroUngrouped()) {}

  void run();

private:
  /// Entry `index` of the group counts or offsets: from the op's table in
  /// shared memory where it has one, else from global memory.
  Value loadGroupEntry(Type type, Value index);
  Value groupRows(Value group, Value *rowStart);
  std::pair<Value, Value> groupOffsets(Value group);
  /// The units a cluster walks in a group of `rows` rows: its tiles alone;
  /// in a pair, the pairs of M blocks by N blocks, then the odd last M
  /// block's N blocks two a unit.
  Value unitsOf(Value rows);
  /// `guarded`: 0s past the last group (whose offsets are not there),
  /// where `group` may be past it.
  GroupSpan spanOf(Value group, bool guarded = true);
  /// Whether the cursor carries its group's span: where the span is read
  /// from the device (contiguous offsets, masked counts), not k_grouped's
  /// constant one, which carried would only take registers.
  bool carriesSpan() const { return layout != GroupLayout::k_grouped; }
  /// The M unit and N block of a group's `localTile`-th tile when M blocks
  /// go first, in bands of m_band units.
  std::pair<Value, Value> mFastest(Value localTile, Value mUnits);
  /// The M unit and N block of the `unit`-th of `mUnits` x N blocks, in the
  /// order gg-schedule-groups chose.
  std::pair<Value, Value> inOrder(Value unit, Value mUnits);
  /// This CTA's M block, N block and shares_b in unit `unit` of a group of
  /// `mBlocks` M blocks, walked by a pair (the shares_b of foreach_tile).
  std::tuple<Value, Value, Value> pairedTile(Value unit, Value mBlocks);
  Tile tileAt(Value group, Value localTile, const GroupSpan &span);
  Tile paddedTile(Value tile, Value mBlocks);
  /// Moves the body into the current block with its arguments replaced by
  /// `tile` and `state`; returns what it yields.
  SmallVector<Value> inlineBody(const Tile &tile, ValueRange state);
  void lowerPadded();
  void lowerGrouped();

  /// The groups the cursor walks, [firstGroup, endGroup): the real ones,
  /// and with zero_ungrouped the rows before and after them.
  int64_t firstGroup() const { return zeroUngrouped ? -1 : 0; }
  int64_t endGroup() const { return numGroups + (zeroUngrouped ? 1 : 0); }

  ggk::ForeachTileOp op;
  KernelBuilder b;
  GroupLayout layout;
  int64_t blockM, blockN, blockK, cluster, nBlocks, numGroups;
  bool zeroUngrouped;
};

Value ScheduleLowering::loadGroupEntry(Type type, Value index) {
  Value table = op.getTable();
  return ggc::simple::load(b, type, table ? table : op.getGroups(), index);
}

/// Rows of A that belong to `group`, clamped so that a malformed offsets or
/// count array can never make the kernel write outside `out`.
Value ScheduleLowering::groupRows(Value group, Value *rowStart) {
  switch (layout) {
  case GroupLayout::contiguous: {
    auto [begin, end] = groupOffsets(group);
    *rowStart = begin;
    return b.sub(end, begin);
  }
  case GroupLayout::masked: {
    Value m = b.toI32(op.getSize());
    Value count = loadGroupEntry(b.i32(), group);
    *rowStart = b.c32(0);
    return b.clampS(count, b.c32(0), m);
  }
  case GroupLayout::k_grouped:
    *rowStart = b.c32(0);
    return b.c32(int64_t(op.getM()));
  case GroupLayout::padded_contiguous:
    break;
  }
  llvm_unreachable("padded_contiguous has no per-group row count");
}

/// `group`'s [begin, end) from the offsets array (rows of A, or K for
/// k_grouped), clamped to [0, run-time size] as i32. i64 offsets are
/// clamped before they are narrowed: narrowing first would wrap 2^32 + 5 to
/// 5, a range inside the data that is not the caller's.
std::pair<Value, Value> ScheduleLowering::groupOffsets(Value group) {
  Type groupsType = op.getGroupsType();
  bool wide = groupsType.isInteger(64);
  Value size = wide ? op.getSize() : b.toI32(op.getSize());
  Value zero = wide ? b.c64(0) : b.c32(0);
  Value begin, end;
  if (!zeroUngrouped) {
    begin = loadGroupEntry(groupsType, group);
    end = loadGroupEntry(groupsType, b.add(group, b.c32(1)));
  } else {
    // Group -1 is [0, offsets[0]), group G [offsets[G], size): each loads
    // the one offset that is there.
    Value beginIndex = b.maxS(group, b.c32(0));
    Value endIndex = b.minS(b.add(group, b.c32(1)), b.c32(numGroups));
    begin = b.select(b.lt(group, b.c32(0)), zero,
                     loadGroupEntry(groupsType, beginIndex));
    end = b.select(b.ge(group, b.c32(numGroups)), size,
                   loadGroupEntry(groupsType, endIndex));
  }
  begin = b.clampS(begin, zero, size);
  end = b.clampS(end, begin, size);
  return {b.toI32(begin), b.toI32(end)};
}

Value ScheduleLowering::unitsOf(Value rows) {
  Value mBlocks = b.ceilDivU(rows, blockM);
  if (cluster == 1)
    return b.mul(mBlocks, b.c32(nBlocks));
  Value pairs = b.divU(mBlocks, b.c32(2));
  Value odd = b.remU(mBlocks, b.c32(2));
  return b.add(b.mul(pairs, b.c32(nBlocks)),
               b.mul(odd, b.c32((nBlocks + 1) / 2)));
}

GroupSpan ScheduleLowering::spanOf(Value group, bool guarded) {
  auto spanIn = [&]() -> GroupSpan {
    Value rowStart;
    Value rows = groupRows(group, &rowStart);
    return {rowStart, rows, unitsOf(rows)};
  };
  if (!guarded)
    return spanIn();
  // The offsets past the last group are not there to load.
  Value inRange = b.lt(group, b.c32(endGroup()));
  auto span = b.create<scf::IfOp>(
      inRange,
      [&](OpBuilder &, Location) {
        GroupSpan in = spanIn();
        b.create<scf::YieldOp>(ValueRange{in.rowStart, in.rows, in.tiles});
      },
      [&](OpBuilder &, Location) {
        Value zero = b.c32(0);
        b.create<scf::YieldOp>(ValueRange{zero, zero, zero});
      });
  return {span.getResult(0), span.getResult(1), span.getResult(2)};
}

std::pair<Value, Value> ScheduleLowering::mFastest(Value localTile,
                                                   Value mUnits) {
  int64_t band = int64_t(op.getMBand());
  if (band == 0)
    return {b.remU(localTile, mUnits), b.divU(localTile, mUnits)};
  // A band never counts more units than the group has, so its tile count
  // stays within the group's (which fits i32); a group of at most m_band
  // units is one band, walked as without bands.
  Value fullBand = b.minS(mUnits, b.c32(band));
  Value bandTiles = b.mul(fullBand, b.c32(nBlocks));
  Value bandIndex = b.divU(localTile, bandTiles);
  Value firstUnit = b.mul(bandIndex, fullBand);
  Value height = b.minS(fullBand, b.sub(mUnits, firstUnit));
  Value inBand = b.sub(localTile, b.mul(bandIndex, bandTiles));
  return {b.add(firstUnit, b.remU(inBand, height)), b.divU(inBand, height)};
}

std::pair<Value, Value> ScheduleLowering::inOrder(Value unit, Value mUnits) {
  if (op.getNFastest())
    return {b.divU(unit, b.c32(nBlocks)), b.remU(unit, b.c32(nBlocks))};
  return mFastest(unit, mUnits);
}

std::tuple<Value, Value, Value>
ScheduleLowering::pairedTile(Value unit, Value mBlocks) {
  Value rank = op.getClusterRank();
  Value pairs = b.divU(mBlocks, b.c32(2));
  Value pairedUnits = b.mul(pairs, b.c32(nBlocks));
  // Units [0, pairedUnits): M blocks 2p and 2p + 1 of one N block. (Both
  // paths are computed and one selected: the divisor is kept nonzero.)
  auto [pair, pairedN] = inOrder(unit, b.maxS(pairs, b.c32(1)));
  Value pairedM = b.add(b.mul(pair, b.c32(2)), rank);
  // Then the odd last M block, N blocks 2v and 2v + 1; where N blocks are
  // odd, the last unit's rank 1 takes M block mBlocks (past the group's
  // end: it computes nothing) of rank 0's N block, which they share.
  Value v = b.sub(unit, pairedUnits);
  Value firstN = b.mul(v, b.c32(2));
  Value loneN = b.add(firstN, rank);
  Value pastN = b.ge(loneN, b.c32(nBlocks));
  Value oneN = b.ge(b.add(firstN, b.c32(1)), b.c32(nBlocks));
  Value loneM = b.select(pastN, mBlocks, b.sub(mBlocks, b.c32(1)));
  loneN = b.select(pastN, firstN, loneN);
  Value paired = b.lt(unit, pairedUnits);
  Value one = b.c32(1), zero = b.c32(0);
  return {b.select(paired, pairedM, loneM), b.select(paired, pairedN, loneN),
          b.select(paired, one, b.select(oneN, one, zero))};
}

Tile ScheduleLowering::tileAt(Value group, Value localTile,
                              const GroupSpan &span) {
  Tile t;
  t.group = group;
  Value rowStart = span.rowStart, rows = span.rows;
  Value mBlocks = b.ceilDivU(rows, blockM);
  // In the order gg-schedule-groups chose; a pair walks its units
  // (pairedTile).
  if (cluster == 1) {
    std::tie(t.mBlock, t.nBlock) = inOrder(localTile, mBlocks);
    t.sharesB = b.c32(1);
  } else {
    std::tie(t.mBlock, t.nBlock, t.sharesB) = pairedTile(localTile, mBlocks);
  }
  Value tileRow = b.mul(t.mBlock, b.c32(blockM));
  t.rowStart = b.add(rowStart, tileRow);
  t.groupStart = rowStart;
  t.rowsValid = b.minS(b.sub(rows, tileRow), b.c32(blockM));
  if (layout == GroupLayout::k_grouped) {
    // The group's K range, clamped to K like the rows of other layouts.
    std::tie(t.kFirst, t.kEnd) = groupOffsets(group);
    // A TMA box must start on a 16-byte boundary of its contiguous
    // dimension: with K-major operands, the blocks start at the aligned K
    // at or before the group's first, and the overfetched K entries of the
    // previous group are cleared like the tail.
    int64_t alignment = int64_t(op.getKAlignment());
    t.kStart = alignment == 1 ? t.kFirst
                              : b.andI(t.kFirst, b.c32(~(alignment - 1)));
    t.numKBlocks = b.ceilDivU(b.sub(t.kEnd, t.kStart), blockK);
    return t;
  }
  t.kStart = t.kFirst = b.c32(0);
  t.kEnd = b.c32(int64_t(op.getK()));
  t.numKBlocks = b.c32((int64_t(op.getK()) + blockK - 1) / blockK);
  if (zeroUngrouped) {
    // Rows outside every group: no K blocks (nothing is loaded, the
    // accumulator stays zero), and the nearest real group's index for
    // whatever the body reads per group.
    Value real = b.andI(b.ge(group, b.c32(0)), b.lt(group, b.c32(numGroups)));
    t.numKBlocks = b.select(real, t.numKBlocks, b.c32(0));
    t.group = b.clampS(group, b.c32(0), b.c32(numGroups - 1));
  }
  return t;
}

SmallVector<Value> ScheduleLowering::inlineBody(const Tile &tile,
                                                ValueRange state) {
  SmallVector<Value> arguments = tile.values();
  llvm::append_range(arguments, state);
  return ggc::moveBody(op.getBody(), arguments, b);
}

/// padded_contiguous: tiles cover A's rows directly; a tile belongs to the
/// group of its first row, and tiles that start on a padding row (-1) are
/// skipped.
Tile ScheduleLowering::paddedTile(Value tile, Value mBlocks) {
  Tile t;
  if (op.getNFastest()) {
    t.nBlock = b.remU(tile, b.c32(nBlocks));
    t.mBlock = b.divU(tile, b.c32(nBlocks));
  } else {
    std::tie(t.mBlock, t.nBlock) = mFastest(tile, mBlocks);
  }
  t.sharesB = b.c32(1); // (alone: the verifier refuses a cluster)
  t.rowStart = b.mul(t.mBlock, b.c32(blockM));
  t.groupStart = t.rowStart;
  t.rowsValid =
      b.minS(b.sub(b.toI32(op.getSize()), t.rowStart), b.c32(blockM));
  t.group = b.loadGlobal(b.i32(), op.getGroups(), t.rowStart);
  t.kStart = t.kFirst = b.c32(0);
  t.kEnd = b.c32(int64_t(op.getK()));
  t.numKBlocks = b.c32((int64_t(op.getK()) + blockK - 1) / blockK);
  return t;
}

void ScheduleLowering::lowerPadded() {
  Value gridSize = b.divU(b.gridDim(), b.c32(cluster));
  Value firstTile = b.divU(b.blockIdx(), b.c32(cluster));
  Value mBlocks = b.ceilDivU(b.toI32(op.getSize()), blockM);
  Value total = b.mul(mBlocks, b.c32(nBlocks));
  SmallVector<Type> types = {b.i32()};
  llvm::append_range(types, op.getInits().getTypes());
  SmallVector<Value> start = {firstTile};
  llvm::append_range(start, op.getInits());
  auto loop = b.create<scf::WhileOp>(
      types, start,
      [&](OpBuilder &, Location, ValueRange args) {
        b.create<scf::ConditionOp>(b.lt(args[0], total), args);
      },
      [&](OpBuilder &, Location, ValueRange args) {
        Tile t = paddedTile(args[0], mBlocks);
        Value owned = b.andI(b.ge(t.group, b.c32(0)),
                             b.lt(t.group, b.c32(int64_t(op.getNumGroups()))));
        ValueRange state = args.drop_front();
        auto ifOp = b.create<scf::IfOp>(
            owned,
            [&](OpBuilder &, Location) {
              b.create<scf::YieldOp>(inlineBody(t, state));
            },
            [&](OpBuilder &, Location) { b.create<scf::YieldOp>(state); });
        SmallVector<Value> next = {b.add(args[0], gridSize)};
        llvm::append_range(next, ifOp.getResults());
        b.create<scf::YieldOp>(next);
      });
  op.replaceAllUsesWith(loop.getResults().drop_front());
}

/// Grouped layouts: the loop carries a cursor (group, first tile of the
/// group and, where it is read from the device, the group's span) that only
/// moves forward, since each CTA's tile ids increase.
void ScheduleLowering::lowerGrouped() {
  Type i32 = b.i32();
  Value gridSize = b.divU(b.gridDim(), b.c32(cluster));
  Value firstTile = b.divU(b.blockIdx(), b.c32(cluster));
  Value pastLastGroup = b.c32(endGroup());
  // The cursor's slots: the group, its first tile, then (carried) its
  // tiles, first row and rows.
  enum Slot : unsigned { kGroup, kFirstTile, kTiles, kRowStart, kRows };
  unsigned cursorSize = carriesSpan() ? 5 : 2;
  // A tile's span: carried, or k_grouped's constant one (guarded where
  // the cursor may be past the last group).
  auto spanAt = [&](ValueRange cursor, bool guarded) -> GroupSpan {
    if (!carriesSpan())
      return spanOf(cursor[kGroup], guarded);
    return {cursor[kRowStart], cursor[kRows], cursor[kTiles]};
  };
  auto cursorAt = [&](Value group, Value groupStart) {
    SmallVector<Value> cursor = {group, groupStart};
    if (carriesSpan()) {
      GroupSpan span = spanOf(group);
      cursor.append({span.tiles, span.rowStart, span.rows});
    }
    return cursor;
  };
  // The first tile past the cursor's group.
  auto endOf = [&](ValueRange cursor) {
    Value tiles = spanAt(cursor, /*guarded=*/true).tiles;
    return b.add(cursor[kFirstTile], tiles);
  };
  SmallVector<Type> types(1 + cursorSize, i32);
  llvm::append_range(types, op.getInits().getTypes());
  SmallVector<Value> start = {firstTile};
  llvm::append_range(start, cursorAt(b.c32(firstGroup()), b.c32(0)));
  llvm::append_range(start, op.getInits());
  auto loop = b.create<scf::WhileOp>(
      types, start,
      [&](OpBuilder &, Location, ValueRange args) {
        Value tile = args[0];
        // Advance the cursor past groups that end at or before `tile`,
        // loading each new group's span once.
        auto advance = b.create<scf::WhileOp>(
            TypeRange(SmallVector<Type>(cursorSize, i32)),
            args.slice(1, cursorSize),
            [&](OpBuilder &, Location, ValueRange cursor) {
              Value past = b.ge(tile, endOf(cursor));
              Value inRange = b.lt(cursor[kGroup], pastLastGroup);
              b.create<scf::ConditionOp>(b.andI(inRange, past), cursor);
            },
            [&](OpBuilder &, Location, ValueRange cursor) {
              Value nextStart = endOf(cursor);
              Value nextGroup = b.add(cursor[kGroup], b.c32(1));
              b.create<scf::YieldOp>(cursorAt(nextGroup, nextStart));
            });
        Value more = b.lt(advance.getResult(kGroup), pastLastGroup);
        SmallVector<Value> forwarded = {tile};
        llvm::append_range(forwarded, advance.getResults());
        forwarded.append(args.begin() + 1 + cursorSize, args.end());
        b.create<scf::ConditionOp>(more, forwarded);
      },
      [&](OpBuilder &, Location, ValueRange args) {
        ValueRange cursor = args.slice(1, cursorSize);
        Value localTile = b.sub(args[0], cursor[kFirstTile]);
        GroupSpan span = spanAt(cursor, /*guarded=*/false);
        Tile t = tileAt(cursor[kGroup], localTile, span);
        SmallVector<Value> state =
            inlineBody(t, args.drop_front(1 + cursorSize));
        SmallVector<Value> next = {b.add(args[0], gridSize)};
        llvm::append_range(next, cursor);
        llvm::append_range(next, state);
        b.create<scf::YieldOp>(next);
      });
  op.replaceAllUsesWith(loop.getResults().drop_front(1 + cursorSize));
}

void ScheduleLowering::run() {
  if (layout == GroupLayout::padded_contiguous)
    lowerPadded();
  else
    lowerGrouped();
  op.erase();
}

/// Thread t copies entries t, t + threads, ... of the groups into the
/// table.
void lowerFillGroupTable(ggk::FillGroupTableOp op) {
  KernelBuilder b(op.getLoc(), op);
  Type type = op.getGroupsType();
  ggc::simple::forEach(
      b, op.getThread(), b.c32(int64_t(op.getEntries())),
      b.c32(int64_t(op.getThreads())), [&](Value entry) {
        ggc::simple::store(b, b.loadGlobal(type, op.getGroups(), entry),
                           op.getTable(), entry);
      });
  op.erase();
}

struct LowerTileSchedulePass
    : public ggc::impl::LowerTileScheduleBase<LowerTileSchedulePass> {
  void runOnOperation() override {
    SmallVector<ggk::FillGroupTableOp> fills;
    getOperation().walk(
        [&](ggk::FillGroupTableOp op) { fills.push_back(op); });
    for (ggk::FillGroupTableOp op : fills)
      lowerFillGroupTable(op);
    SmallVector<ggk::ForeachTileOp> loops;
    getOperation().walk([&](ggk::ForeachTileOp op) { loops.push_back(op); });
    for (ggk::ForeachTileOp op : loops)
      ScheduleLowering(op).run();
  }
};

} // namespace
