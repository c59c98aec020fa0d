//===- ScheduleGroups.cpp - gg-schedule-groups -----------------------------===//
//
// Chooses, per grouped matmul, which block index of a group's tiles the
// persistent schedule advances first. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "Target.h"
#include "ggc/Passes.h"

#include "gg/CheckedMath.h"

namespace ggc {
#define GEN_PASS_DEF_SCHEDULEGROUPS
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;

namespace {

// (a + b - 1) / b overflows for a wave near INT64_MAX (sms is any positive
// int64_t); counts of blocks and SMs are never negative.
int64_t ceilDiv(int64_t a, int64_t b) {
  return checkedCeilDiv(a, b).value_or(0);
}

/// Whether every group's row count is known at compile time (masked,
/// k_grouped); a contiguous group's arrives with the offsets at run time.
bool staticRows(GroupedMatmulOp op) {
  return (op.getLayout() == GroupLayout::masked ||
          op.getLayout() == GroupLayout::k_grouped) &&
         !ShapedType::isDynamic(op.getDims().m);
}

/// The tiles one wave of CTAs computes at once, and the bytes (per K
/// element) of one M unit's A tile and of one B tile it loads.
struct Wave {
  int64_t tiles, aBytes, bBytes;
  explicit Wave(GroupedMatmulOp op, ConfigAttr config)
      : tiles(config.getNumSMs() / config.getClusterM()),
        aBytes(config.getBlockM() * config.getClusterM() *
               op.getAType().getElementTypeBitWidth() / 8),
        bBytes(config.getBlockN() * op.getBType().getElementTypeBitWidth() /
               8) {}
  /// Bytes a wave loads covering `m` M units by `n` B tiles.
  int64_t bytes(int64_t m, int64_t n) const { return m * aBytes + n * bBytes; }
};

/// Contiguous groups expected (`expected_m`) to hold at least
/// kSmallExpertGroupRows rows, whose B takes at most kSmallExpertBBytes
/// (N x K: a fine-grained expert's weights, which stay in L2 whichever way
/// its tiles are walked), walk N blocks first. Measured on the Qwen3-like
/// layer (N x K of 3 MiB and 1.5 MiB in FP8), H200
/// (docs/performance-history.md, twenty-second session, calls 2-4): FP8
/// up and down projections 0.5-1.7% faster at 256 rows an expert and
/// 2.2-3.4% at 1,024, bf16 down (3 MiB) level; at 64 rows an expert bf16
/// lost 1-6%, and larger weights lost up to 42% (Mixtral-like, whose
/// wave then reads 132 B tiles once each) or 4-12% (DeepSeek-V3- and
/// gpt-oss-like up projections). Measured on sm_90a's wgmma kernels only
/// and up to kSmallExpertMaxRows (taller groups keep the bands, which
/// groups of 4,096 rows measured faster with). The wave model below sees
/// only static row counts.
constexpr int64_t kSmallExpertGroupRows = 256;
constexpr int64_t kSmallExpertMaxRows = 1024;
constexpr int64_t kSmallExpertBBytes = 4 << 20;

/// FP8 weights of up to kMidExpertBBytes walk N blocks first too where the
/// groups are expected to hold kMidExpertGroupRows rows (a hint of 1,024:
/// means of 1,024 to 2,047): DeepSeek-V3-like down projections (N 7,168 x
/// K 2,048, 14 MiB) measured 2.7-3.2% faster than the unbanded M-first walk
/// that hint took before, and 4.0-6.9% than bands of 12, at T8192 G8 and
/// T32768 G32 (ragged groups of 1,024 rows on average). Larger weights at
/// those rows: 28 MiB (N 4,096 x K 7,168) was level; at 512 rows, 24 MiB
/// (N 3,072 x K 8,192) lost 2.1% (H200, 128x128 tiles against bands of
/// 12: docs/performance-history.md, twenty-fourth session, calls 5-7).
/// The 16 MiB cut lies between the 14 measured to gain and the 28
/// measured level; measured in FP8 alone and at means of 1,024.
constexpr int64_t kMidExpertBBytes = 16 << 20;
constexpr int64_t kMidExpertGroupRows = 1024;

/// DeepGEMM's padded layout (each group's rows contiguous, padded to whole
/// tiles) walks as contiguous groups do where a hint says their rows, for
/// the mid FP8 weights below: N blocks first measured 1.026x and 1.071x
/// the padded kernel's banded M-first walk with B under L2's default
/// policy (0.966x and 1.060x with evict-first), on N 7,168 x K 2,048 FP8
/// weights at 1,024 rows a group (T8192 G8, T32768 G32; H200, fortieth
/// session, benchmarks/probes/padded_walk.py).
bool groupsOfContiguousRows(GroupedMatmulOp op) {
  return op.getLayout() == GroupLayout::contiguous ||
         op.getLayout() == GroupLayout::padded_contiguous;
}

bool smallExperts(GroupedMatmulOp op) {
  GroupedMatmulOp::Dims dims = op.getDims();
  std::optional<int64_t> expected = op.getExpectedM();
  if (!groupsOfContiguousRows(op) || !expected ||
      *expected < kSmallExpertGroupRows || *expected > kSmallExpertMaxRows ||
      ggc::targetOf(op).mma != ggc::MmaKind::wgmma ||
      ShapedType::isDynamic(dims.n) || ShapedType::isDynamic(dims.k))
    return false;
  Type bElement = op.getBType().getElementType();
  std::optional<int64_t> bBytes = gg::checkedMul(
      gg::checkedMul(dims.n, dims.k), ggc::byteWidth(bElement));
  if (!bBytes)
    return false;
  bool midFp8 = bElement.getIntOrFloatBitWidth() == 8 &&
                *expected == kMidExpertGroupRows && *bBytes <= kMidExpertBBytes;
  // The padded layout was measured at the mid FP8 weights only.
  if (op.getLayout() == GroupLayout::padded_contiguous)
    return midFp8;
  return *bBytes <= kSmallExpertBBytes || midFp8;
}

TileOrder chooseOrder(GroupedMatmulOp op, ConfigAttr config) {
  if (smallExperts(op))
    return TileOrder::n_fastest;
  if (!staticRows(op))
    return TileOrder::m_fastest;
  GroupedMatmulOp::Dims dims = op.getDims();
  int64_t mBlocks = ceilDiv(dims.m, config.getBlockM() * config.getClusterM());
  int64_t nBlocks = ceilDiv(dims.n, config.getBlockN());
  Wave wave(op, config);
  // A group whose tiles all run at once loads the same tiles either way.
  if (mBlocks * nBlocks <= wave.tiles)
    return TileOrder::m_fastest;
  // The fast index takes min(count, wave) values, the slow one the rest.
  int64_t mFirst = wave.bytes(std::min(mBlocks, wave.tiles),
                              std::min(nBlocks, ceilDiv(wave.tiles, mBlocks)));
  int64_t nFirst = wave.bytes(std::min(mBlocks, ceilDiv(wave.tiles, nBlocks)),
                              std::min(nBlocks, wave.tiles));
  return nFirst < mFirst ? TileOrder::n_fastest : TileOrder::m_fastest;
}

/// The tile width whose wave model bands mma.sync kernels' M blocks.
constexpr int64_t kMmaSyncBandColumns = 128;

/// On a card of narrow memory (ggc::narrowMemory), contiguous f8 groups
/// hinted at kMidExpertGroupRows (means of 1,024 to 2,047 rows) and walked
/// M blocks first take bands of kNarrowMidGroupBand, where chooseMBand's wave
/// model would take none: more of a wave's tiles then share each B tile, and
/// fewer of B's bytes come from DRAM. Against no band (ragged groups,
/// 128x128 tiles, N 4,096 x K 7,168; H100, sixty-third session,
/// benchmarks/probes/ragged_schedule.py): T8192 G8 seeds 0-3 1.038x,
/// 0.997x, 1.011x, 0.996x; T16384 G16 1.066x; T32768 G32 seeds 0 and 3
/// 1.024x and 1.024x; bands of 16 0.98-1.02x. On an H200 such groups
/// measured 1-2.5% faster without bands (of 12, twenty-first session), so
/// other cards keep the wave model's choice.
constexpr int64_t kNarrowMidGroupBand = 8;

bool narrowMidF8Groups(GroupedMatmulOp op, int64_t memoryGBps) {
  std::optional<int64_t> expected = op.getExpectedM();
  return ggc::narrowMemory(memoryGBps) &&
         op.getLayout() == GroupLayout::contiguous &&
         op.getAType().getElementTypeBitWidth() == 8 &&
         ggc::targetOf(op).mma == ggc::MmaKind::wgmma && expected &&
         *expected == kMidExpertGroupRows;
}

/// Groups whose rows arrive at run time (contiguous layouts) may be tall:
/// walked M first whole, the CTAs running at once would cover all of a
/// tall group's M blocks by a few N blocks, so each K slice of B they load
/// is shared by many of them but each of A's by few. A band of M blocks
/// whose wave loads the fewest bytes of A and B tiles per K element (the
/// model of chooseOrder) shares both: 12 for 128x128 bf16 tiles on 132
/// SMs, against 32 by 4 for a group of 4,096 rows. Groups no taller than
/// the band walk as before. Static row counts keep chooseOrder's choice.
/// Where the host expects groups no taller than the band (`expected_m`),
/// the walk would be the one without bands, at the cost of the band's
/// index arithmetic in every CTA's tile loop: no band (f8 MoE layers'
/// groups of 256 and 1,024 rows measured 1-5% faster without, groups of
/// 4,096 rows 13.7% slower: docs/performance-history.md, twenty-first
/// session). Hints are means rounded down to a power of two
/// (ggc.ops.mean_hint), so a hint h stands for means in [h, 2h): groups
/// count as 1.5 h rows, the middle of that range.
int64_t chooseMBand(GroupedMatmulOp op, ConfigAttr config, TileOrder order,
                    int64_t memoryGBps) {
  if (order != TileOrder::m_fastest || staticRows(op))
    return 0;
  if (narrowMidF8Groups(op, memoryGBps))
    return kNarrowMidGroupBand;
  Wave wave(op, config);
  // mma.sync kernels of tiles wider than 128 columns take
  // the band of 128-column tiles (12 rather than 19 for bf16 128x256):
  // measured 2-3% faster on three contiguous bf16 shapes (H200), where
  // 128x128 tiles' own band of 12 beat 4 and 8 (docs/performance.md).
  if (ggc::targetOf(op).mma == ggc::MmaKind::mmaSync)
    wave.bBytes = std::min(
        wave.bBytes, kMmaSyncBandColumns *
                         op.getBType().getElementTypeBitWidth() / 8);
  int64_t best = 1;
  for (int64_t band = 1; band <= std::min(wave.tiles, kMaxMBand); ++band)
    if (wave.bytes(band, ceilDiv(wave.tiles, band)) <=
        wave.bytes(best, ceilDiv(wave.tiles, best)))
      best = band;
  std::optional<int64_t> expected = op.getExpectedM();
  int64_t unitRows = config.getBlockM() * config.getClusterM();
  // 1.5 h rows in at most `best` units, without forming 3 h (any int64_t).
  // The padded layout keeps its bands: unbanded, its M-first walk measured
  // 0.65-0.84x the banded one at 512 and 1,024 rows a group (H200,
  // fortieth session, benchmarks/probes/padded_walk.py).
  if (expected && op.getLayout() == GroupLayout::contiguous &&
      *expected <= 2 * unitRows * best / 3)
    return 0;
  return best;
}

/// f8 B tiles evict first in the padded layout, so that A's rows, which
/// every N block reads again, stay in L2. Masked f8 keeps the default: it
/// once measured 10-12% faster with evict-first (twentieth session), but
/// today's masked kernels measured 1.014-1.079x faster with the default on
/// eight masked batches (single CTAs on 64x256 and 128x128 tiles, and pairs
/// of CTAs, whose odd last M block reads each B tile again soon after the
/// pair's multicast; H100, forty-eighth session, masked_idle.py).
/// Contiguous f8 keeps the default: a group's M blocks read each B tile in
/// turn, and evicting it first made MoE-sized groups (a few hundred rows)
/// read it again from DRAM, while groups of a thousand rows and more
/// measured level (docs/performance-history.md, twentieth session).
/// k_grouped f8 (the weight gradient) keeps it too: its B is a group's
/// tokens, which all of the group's M blocks read, and the default policy
/// measured 0.4-5.5% faster on DeepGEMM's six sm90 shapes (thirty-second
/// session). bf16 measured no gain and keeps the default. The padded
/// layout's groups walked N first (smallExperts) keep the default, as
/// contiguous groups do.
CachePolicy chooseBCache(GroupedMatmulOp op, TileOrder order) {
  bool f8 = op.getBType().getElementTypeBitWidth() == 8;
  bool evictsB = op.getLayout() == GroupLayout::padded_contiguous &&
                 !(order == TileOrder::n_fastest && smallExperts(op));
  return f8 && evictsB ? CachePolicy::evict_first : CachePolicy::normal;
}

/// Pairs load A's rows of a group's odd last M block on each CTA
/// (`odd_block_a = own`, passed below): `multicast`, one load for both,
/// is a user's choice until a GPU run measures it.
///
/// Every walk loads its groups from global memory. The table in shared
/// memory (group_reads = shared) takes the dependent loads out of a walk
/// that steps over several groups between two tiles of a CTA (a profile of
/// paired masked f8 tiles found 5.5% of its warps' stalls at a tile's
/// start, waiting on them: H100, forty-eighth session); it is a choice a
/// user states until a GPU run measures it against this default. A rule
/// that chooses it must leave room for the table: this pass runs after
/// gg-select-config and gg-tma-store-pool have sized the stages to the
/// device's budget without it.
GroupReads chooseGroupReads(GroupedMatmulOp) { return GroupReads::global; }

struct ScheduleGroupsPass
    : public ggc::impl::ScheduleGroupsBase<ScheduleGroupsPass> {
  using ScheduleGroupsBase::ScheduleGroupsBase;

  void runOnOperation() override {
    if (memoryGBps < 0) {
      getOperation()->emitError() << "gg-schedule-groups: memory-gbps must be "
                                     "0 (unknown) or positive, got "
                                  << memoryGBps.getValue();
      return signalPassFailure();
    }
    WalkResult result = getOperation().walk([&](GroupedMatmulOp op) {
      if (op.getScheduleAttr())
        return WalkResult::advance(); // the user's choice
      ConfigAttr config = ggc::requireConfig(op, getArgument());
      if (!config)
        return WalkResult::interrupt();
      TileOrder order = chooseOrder(op, config);
      int64_t band = chooseMBand(op, config, order, memoryGBps);
      op.setScheduleAttr(ScheduleAttr::get(op.getContext(), order, band,
                                           chooseBCache(op, order),
                                           chooseGroupReads(op),
                                           OddBlockA::own));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
