//===- KernelPlanRules.cpp - what gg-plan-kernel decides by ---------------===//
//
// The shared register arithmetic and predicates of KernelPlanRules.h.
//
//===----------------------------------------------------------------------===//
#include "KernelPlanRules.h"
#include "Target.h"
#include "ggc/Passes.h"

using namespace mlir;
using namespace mlir::gg;

namespace ggc::plan {

int64_t numConsumers(ConfigAttr config) {
  return config.getBlockM() / 64 * config.getSplitN();
}
int64_t accumulatorRegisters(ConfigAttr config) {
  return config.getBlockN() / config.getSplitN() / 2;
}

/// Registers per thread when the CTA starts: the register file split evenly
/// over its threads, a multiple of 8, at most 256. setmaxnreg only
/// redistributes these.
int64_t initialRegisters(int64_t consumers, Producer producer) {
  return std::min<int64_t>(
      256, kRegisterFile / ggc::ctaThreads(consumers, producer) / 8 * 8);
}

/// The producer keeps 40 registers, as DeepGEMM, unless the consumers need
/// every register: 24 (the least setmaxnreg allows) with three or more
/// consumer warpgroups (a 192-row f8 tile spills 36 bytes at 152 registers
/// per consumer, 4 at 160), with pipelined promotion (three 64-register
/// accumulators: 4 bytes spilled at 232, none at 240), and where B's
/// column scales are read at the wgmma's issue (a thread holds its
/// columns' scales across the K block: the FP8 weight gradient's 128x144
/// tiles measured 0.3-5.8% faster at 240 than at 232, H200,
/// docs/performance.md, thirty-third session).
int64_t producerRegisters(int64_t consumers, bool consumersNeedAll) {
  return consumers >= 3 || consumersNeedAll ? 24 : 40;
}

/// What the producer's spare registers give each consumer thread: 232 with
/// 2 consumer warpgroups (240 with a 24-register producer), 160 with 3,
/// 112 with 4. ptxas allocates the code setmaxnreg.inc dominates within
/// that count.
int64_t consumerRegisters(int64_t consumers, int64_t producer) {
  int64_t pool = initialRegisters(consumers) * (1 + consumers) - producer;
  return std::min(kMaxConsumerRegisters, pool / consumers / 8 * 8);
}


/// Without a producer every consumer thread copies a 16-byte piece a round:
/// rounds of 16 rows per consumer warpgroup, which must divide A's and B's
/// tiles (and the K block, where an operand's tile is MN-major chunks of it).
int64_t consumerCopyRows(ConfigAttr config) {
  return 16 * numConsumers(config);
}
bool consumersCanCopy(GroupedMatmulOp op, ConfigAttr config) {
  int64_t rows = consumerCopyRows(config);
  bool mnMajor = op.getALayout() == OperandLayout::km ||
                 op.getBLayout() == OperandLayout::kn;
  return config.getBlockM() % rows == 0 && config.getBlockN() % rows == 0 &&
         (!mnMajor || config.getBlockK() % rows == 0);
}

/// Pipelined promotion keeps two partial accumulators beside the main one:
/// it needs a two-level kernel without MX scales (MX promotes once per
/// scale block inside a K block, which only its serial loop does).
bool canPipelinePromotion(GroupedMatmulOp op) {
  return ggc::twoLevelAccumulation(op);
}

/// Every tile starts at stage 0 (ggk-pipeline-promotion), so each turn of
/// the ring is whole: K blocks a multiple of the stages.
bool canTakeConstantStages(GroupedMatmulOp op, ConfigAttr config) {
  if (!canPipelinePromotion(op))
    return false;
  // Every producer thread arrives on a stage of gathered rows: none can
  // be passed on empty, so the turns must be whole.
  if (op.getARows())
    return op.getLayout() != GroupLayout::k_grouped &&
           wholeRingTurns(op, config);
  return true;
}
bool takesConstantStages(GroupedMatmulOp op) {
  return op.getLayout() == GroupLayout::contiguous && !op.getARows() &&
         !op.getZeroUngrouped() && !ggc::usesMxScales(op) &&
         canPipelinePromotion(op) &&
         ggc::targetOf(op).mma == ggc::MmaKind::wgmma;
}
bool wholeRingTurns(GroupedMatmulOp op, ConfigAttr config) {
  int64_t kBlocks = llvm::divideCeil(op.getDims().k, config.getBlockK());
  return kBlocks % config.getStages() == 0;
}
/// A consumer thread's registers for pipelined promotion: three
/// accumulators, and where B's column scales ride in the stages (the FP8
/// weight gradient), its columns' scales beside them, two per 8 of the
/// warpgroup's columns. Without room for those ptxas spills (128x128 tiles
/// at 240 registers: 28 bytes a thread with a bf16 output, 36 adding to
/// f32).
int64_t pipelinedPromotionRegisters(ConfigAttr config, bool holdsColumnScales) {
  int64_t accumulator = accumulatorRegisters(config);
  return 3 * accumulator + (holdsColumnScales ? accumulator / 2 : 0) +
         kPipelinedOverhead;
}
bool pipelinedPromotionFits(ConfigAttr config, int64_t consumerRegs,
                            bool holdsColumnScales) {
  return pipelinedPromotionRegisters(config, holdsColumnScales) <= consumerRegs;
}

/// Deferred, a one-level tile's epilogue reads its finished accumulator
/// while the next tile's first wgmma writes another: two live, as in a
/// serial two-level K block.
int64_t deferredOneLevelEpilogueRegisters(ConfigAttr config, bool kGrouped) {
  return 2 * accumulatorRegisters(config) + kAccumulatorOverhead +
         (kGrouped ? kKGroupedDeferredOverhead : 0);
}
bool deferredOneLevelEpilogueFits(ConfigAttr config, int64_t consumerRegs,
                                  bool kGrouped) {
  return deferredOneLevelEpilogueRegisters(config, kGrouped) <= consumerRegs;
}

/// Column scales read at the wgmma's issue stay in each consumer thread's
/// registers through the K block beside the serial kernel's two
/// accumulators: two per 8 of the warpgroup's columns, half an
/// accumulator's count.
bool columnScalesAtIssueFit(ConfigAttr config, int64_t consumerRegs) {
  int64_t accumulator = accumulatorRegisters(config);
  return 2 * accumulator + accumulator / 2 + kAccumulatorOverhead <=
         consumerRegs;
}

bool hasScalesAlongK(GroupedMatmulOp op) {
  auto variesAlongK = [](ScaleAttr s) { return s && s.variesAlongK(); };
  return variesAlongK(op.getAScaleKindAttr()) ||
         variesAlongK(op.getBScaleKindAttr());
}

/// Whether the staged output tile's rows (of a slice, with store_slice)
/// are whole column chunks of `swizzleBytes`, so that `staging` can swizzle
/// them.
bool canSwizzleStaging(GroupedMatmulOp op, ConfigAttr config,
                       int64_t swizzleBytes) {
  Type out = op.getOutType().getElementType();
  return op.stagedColumns(config) * ggc::byteWidth(out) % swizzleBytes == 0;
}

/// A staged output tile is kept as swizzled column chunks, which spread a
/// warp's fragment stores over all 32 banks: 128-byte chunks where its rows
/// are whole ones (dense 256-byte rows put a warp's 8 rows on the same
/// banks), else 64-byte chunks where they are whole ones and TMA stores
/// them rather than adds them (dense 320-byte rows, 160 bf16 columns, put
/// them on half the banks). Measured on the FP8 weight gradient (H200,
/// docs/performance.md, twenty-ninth session): 128x160 bf16 tiles 7.1%
/// faster with 64-byte chunks; 128x176 f32 tiles added to `out` 6-12%
/// slower (TMA's reduce-add of eleven 64-byte boxes a row instead of one),
/// so those stay dense.
Staging chooseStaging(GroupedMatmulOp op, ConfigAttr config) {
  if (canSwizzleStaging(op, config, ggc::kSwizzleBytes))
    return Staging::swizzled;
  if (!op.getAccumulate() &&
      canSwizzleStaging(op, config,
                        ggc::stagingSwizzleBytes(Staging::swizzled_64)))
    return Staging::swizzled_64;
  return Staging::dense;
}

bool hasStorePool(GroupedMatmulOp op) {
  std::optional<ArrayRef<int64_t>> pool = op.getStorePool();
  return pool && !pool->empty();
}

/// Consumer warpgroups can each store their own rows of the staged tile
/// where they split it by rows, 64 each.
bool canIssueStoresByWarpgroup(GroupedMatmulOp op, ConfigAttr config) {
  return hasStorePool(op) && config.getSplitN() == 1 &&
         config.getBlockM() % 64 == 0;
}

/// `warpColumns` warps per row block each take their share of the
/// warpgroup's columns in whole 8-column blocks, 16 at a time.
bool canSplitWarpColumns(ConfigAttr config, int64_t warpColumns) {
  return config.getBlockN() / config.getSplitN() % (16 * warpColumns) == 0;
}

/// Why the threads of a quad cannot store 8 columns of a row each
/// (`store_columns = 8`), or nothing when they can: the exchange gathers
/// four 8-column blocks of one row, 16-bit outputs make each block 16
/// bytes (e4m3 ones of out_scale 8), and N a multiple of 8 keeps every
/// block's address aligned to its size (the launch checks `out`'s) and a
/// block wholly in or past N.
std::optional<std::string>
storeColumnsObstacle(GroupedMatmulOp op, ConfigAttr config, Staging staging,
                     int64_t warpColumns) {
  // DeepGEMM's padded layout keeps per-thread stores beside the pool, for
  // the tiles whose group's rows are not their leading ones
  // (ggk.store_tile's `tagged`).
  if (staging != Staging::none &&
      op.getLayout() != GroupLayout::padded_contiguous)
    return std::string("the store pool stores the tile");
  if (op.getOutLayout() == OperandLayout::nm)
    return std::string(
        "'out' in layout nm stores a pair's two columns in two rows");
  if (op.getColumnPairs())
    return std::string("column_pairs makes one output per pair");
  if (op.getAccumulate())
    return std::string("accumulate reads each pair where it stores it");
  if (ggc::byteWidth(op.getOutType().getElementType()) != 2 &&
      !op.getOutScale())
    return std::string("'out' does not have 16-bit or quantised e4m3 "
                       "elements");
  int64_t n = op.getOutType().getShape().back();
  if (ShapedType::isDynamic(n) || n % 8 != 0)
    return std::string("N is not a multiple of 8");
  if (op.outputTileColumns(config) / config.getSplitN() / warpColumns % 32 != 0)
    return std::string("a warp's columns are not a multiple of 32");
  return std::nullopt;
}

} // namespace ggc::plan
