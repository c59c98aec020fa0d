//===- Multicast.cpp - ggk-multicast ---------------------------------------===//
//
// Cluster multicast of B: the CTAs of a cluster compute M blocks of the
// same N block, so they need the same B tile. Each loads its share and the
// TMA unit writes it into every CTA's stage, completing on every CTA's
// full barrier; B's traffic from L2 falls by the cluster's size. Where the
// schedule gives the pair different N blocks (`shared` false), each CTA
// loads its whole tile itself. Since a
// peer writes into this CTA's stages, a stage is free only when the
// consumers of every CTA are done with it: the release arrives on each
// CTA's empty barrier, whose count (ggk.init_empty_barrier) says so, and
// the CTAs meet after initialising their barriers and before leaving.
// Alone (cluster 1) all of it is plain.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "Rematerialize.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_MULTICAST
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;
using ggc::kSwizzleBytes;

namespace {

class BLoads {
public:
  explicit BLoads(ggk::LoadBTileOp op)
      : op(op), b(op.getLoc(), op), cluster(int64_t(op.getCluster())),
        destination(op.getDst(), op) {}

  void run();

private:
  /// One box of B at `coords` into `dst`: this CTA's own, or multicast to
  /// the cluster's.
  void load(Value dst, ArrayRef<Value> coords, bool multicast);
  /// Share `share` (of `cluster`) of the tile whose first column is `n0`,
  /// multicast or this CTA's own.
  void loadShare(Value n0, Value share, bool multicast);
  Value firstColumn() { return b.mul(op.getNBlock(), b.c32(op.getBlockN())); }
  /// `coords` with the group appended, for a 3-D B.
  SmallVector<Value> withGroup(SmallVector<Value> coords) {
    if (op.getGroup())
      coords.push_back(op.getGroup());
    return coords;
  }

  ggk::LoadBTileOp op;
  KernelBuilder b;
  int64_t cluster;
  /// The stage's B tile, computed where each box needs it.
  ggc::Rematerialized destination;
};

void BLoads::load(Value dst, ArrayRef<Value> coords, bool multicast) {
  Value hint = op.getCachePolicy() ? b.c64(int64_t(op.getCachePolicy()))
                                   : Value();
  if (!multicast) {
    b.tmaLoad(dst, op.getMap(), coords, op.getBarrier(), hint);
    return;
  }
  SmallVector<Value> coords32;
  for (Value c : coords)
    coords32.push_back(b.toI32(c));
  b.create<ggk::TmaLoadMulticastOp>(dst, op.getMap(), coords32,
                                    op.getBarrier(), op.getClusterRank(), hint,
                                    cluster);
}

void BLoads::loadShare(Value n0, Value share, bool multicast) {
  int64_t blockN = op.getBlockN(), chunk = op.getChunkColumns();
  if (op.getNMajor()) {
    // One [BK, chunk] box per column chunk, each its own 128B-swizzled
    // block of BK rows; a share is a run of whole chunks.
    int64_t chunks = blockN / chunk / cluster;
    for (int64_t jj = 0; jj < chunks; ++jj) {
      Value j = b.add(b.mul(share, b.c32(chunks)), b.c32(jj));
      Value n = b.add(n0, b.mul(j, b.c32(chunk)));
      Value dst = b.gep(destination.at(b),
                        b.mul(b.toI64(j), b.c64(op.getBlockK() * kSwizzleBytes)));
      load(dst, withGroup({n, op.getK()}), multicast);
    }
    return;
  }
  // Rows of N, 128 bytes of K each.
  Value first = b.mul(share, b.c32(blockN / cluster));
  Value dst =
      b.gep(destination.at(b), b.mul(b.toI64(first), b.c64(kSwizzleBytes)));
  load(dst, withGroup({op.getK(), b.add(n0, first)}), multicast);
}

void BLoads::run() {
  int64_t blockN = op.getBlockN();
  if (int64_t secondHalf = op.getSecondHalfRow()) {
    // column_halves: block_n / 2 rows of each half of B (alone, K-major:
    // the verifier's), in half_shares shares of gate rows, then up rows.
    Value k = op.getK();
    int64_t shares = op.getHalfShares(), shareRows = blockN / 2 / shares;
    Value half0 = b.mul(op.getNBlock(), b.c32(blockN / 2));
    Value dst = destination.at(b);
    for (int64_t share = 0; share < shares; ++share) {
      Value gate = b.add(half0, b.c32(share * shareRows));
      int64_t at = 2 * share * shareRows;
      load(b.gep(dst, b.c64(at * kSwizzleBytes)), withGroup({k, gate}),
           /*multicast=*/false);
      load(b.gep(dst, b.c64((at + shareRows) * kSwizzleBytes)),
           withGroup({k, b.add(gate, b.c32(secondHalf))}), /*multicast=*/false);
    }
  } else if (cluster == 1) {
    loadShare(firstColumn(), b.c32(0), /*multicast=*/false);
  } else if (!op.getShared()) {
    loadShare(firstColumn(), op.getClusterRank(), /*multicast=*/true);
  } else {
    // Where the pair computes different N blocks, each CTA loads every
    // share of its own tile: the same bytes arrive on its barrier.
    b.create<scf::IfOp>(
        op.getShared(),
        [&](OpBuilder &, Location) {
          loadShare(firstColumn(), op.getClusterRank(), /*multicast=*/true);
          b.create<scf::YieldOp>();
        },
        [&](OpBuilder &, Location) {
          Value n0 = firstColumn();
          for (int64_t share = 0; share < cluster; ++share)
            loadShare(n0, b.c32(share), /*multicast=*/false);
          b.create<scf::YieldOp>();
        });
  }
  op.erase();
  destination.eraseOriginals();
}

void lowerRelease(ggk::ReleaseStageOp op) {
  KernelBuilder b(op.getLoc(), op);
  int64_t cluster = op.getCluster();
  ggc::Rematerialized barrier(op.getBarrier(), op);
  if (cluster == 1) {
    b.mbarrierArrive(barrier.at(b));
  } else {
    // One arrival per warp on every CTA's barrier, lane r arriving on CTA
    // r's: one predicated arrive, with no loop over the CTAs to keep a lane
    // index live through the K loop for. CTA scope is enough (the warp's
    // reads of the stage are done) and avoids the cluster-wide fence a
    // .release.cluster arrive implies (docs/performance.md, b621fa6).
    // The warp meets first: its lanes' own loads from the stage (a
    // promotion's column scales, promote_reads_stage) are then done too.
    b.warpSync();
    Value lane = b.remU(b.threadIdx(), b.c32(32));
    b.create<scf::IfOp>(b.lt(lane, b.c32(cluster)), [&](OpBuilder &, Location) {
      b.create<ggk::MbarrierArriveClusterOp>(barrier.at(b), lane);
      b.create<scf::YieldOp>();
    });
  }
  op.erase();
  barrier.eraseOriginals();
}

/// The count of the releases above: every consumer thread, or one per
/// consumer warp of each CTA of the cluster.
void lowerInitEmpty(ggk::InitEmptyBarrierOp op) {
  KernelBuilder b(op.getLoc(), op);
  int64_t cluster = op.getCluster(), warps = op.getConsumerWarps();
  b.mbarrierInit(op.getBarrier(), cluster == 1 ? warps * 32 : cluster * warps);
  op.erase();
}

/// Alone, the CTA meets; in a cluster, the leader's inits are fenced for
/// the cluster and its CTAs meet, before any multicast or remote arrival.
void lowerPublish(ggk::PublishBarrierInitOp op) {
  KernelBuilder b(op.getLoc(), op);
  if (op.getCluster() == 1) {
    b.create<ggk::SyncCtaOp>();
  } else {
    b.create<scf::IfOp>(op.getLeader(), [&](OpBuilder &, Location) {
      b.create<ggk::FenceBarrierInitOp>();
      b.create<scf::YieldOp>();
    });
    b.create<ggk::ClusterSyncOp>();
  }
  op.erase();
}

/// No CTA leaves while a peer can still multicast into it or arrive on its
/// barriers.
void lowerLeave(ggk::LeaveClusterOp op) {
  KernelBuilder b(op.getLoc(), op);
  if (op.getCluster() > 1)
    b.create<ggk::ClusterSyncOp>();
  op.erase();
}

struct MulticastPass : public ggc::impl::MulticastBase<MulticastPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<ggk::LoadBTileOp, ggk::ReleaseStageOp, ggk::InitEmptyBarrierOp,
              ggk::PublishBarrierInitOp, ggk::LeaveClusterOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto load = dyn_cast<ggk::LoadBTileOp>(op))
        BLoads(load).run();
      else if (auto release = dyn_cast<ggk::ReleaseStageOp>(op))
        lowerRelease(release);
      else if (auto init = dyn_cast<ggk::InitEmptyBarrierOp>(op))
        lowerInitEmpty(init);
      else if (auto publish = dyn_cast<ggk::PublishBarrierInitOp>(op))
        lowerPublish(publish);
      else
        lowerLeave(cast<ggk::LeaveClusterOp>(op));
    }
  }
};

} // namespace
