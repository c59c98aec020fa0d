//===- PlanKernel.cpp - gg-plan-kernel -------------------------------------===//
//
// Decides how the kernel's warpgroups share the work of each
// gg.grouped_matmul and records it as #gg.kernel_plan: how each K block's
// product is promoted, where the scales that change along K are read from,
// how setmaxnreg splits the register file, and how the store pool's output
// tile is laid out. The lowering reads these and decides none of them
// again; a plan written by the user is checked and kept.
//
//===----------------------------------------------------------------------===//
#include "Target.h"
#include "ggc/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace ggc {
#define GEN_PASS_DEF_PLANKERNEL
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;

bool ggc::twoLevelAccumulation(GroupedMatmulOp op) {
  auto variesAlongK = [](ScaleAttr s) { return s && s.variesAlongK(); };
  Type a = op.getAType().getElementType();
  return isa<Float8E4M3FNType, Float8E5M2Type>(a) ||
         variesAlongK(op.getAScaleKindAttr()) ||
         variesAlongK(op.getBScaleKindAttr());
}

namespace {
constexpr int64_t kRegisterFile = 65536; // 32-bit registers per SM
constexpr int64_t kMaxConsumerRegisters = 240;
/// Registers ptxas needs around a wgmma accumulator fragment (measured: 154
/// for a 256-column warpgroup's 128) and, with pipelined promotion, around
/// its three (addresses, scales, counters).
constexpr int64_t kAccumulatorOverhead = 26;
constexpr int64_t kPipelinedOverhead = 40;
/// A wgmma's operands beside its accumulator (two descriptors and their
/// addresses): one instruction's registers must fit the cap ptxas puts on
/// every thread of the CTA at launch, which setmaxnreg does not lift for
/// it (a 192x256 tile, 128 accumulator registers under a cap of 128,
/// failed in ptxas).
constexpr int64_t kWgmmaOperandRegisters = 8;

int64_t numConsumers(ConfigAttr config) {
  return config.getBlockM() / 64 * config.getSplitN();
}
int64_t accumulatorRegisters(ConfigAttr config) {
  return config.getBlockN() / config.getSplitN() / 2;
}

/// Registers per thread when the CTA starts: the register file split evenly
/// over its threads, a multiple of 8, at most 256. setmaxnreg only
/// redistributes these.
int64_t initialRegisters(int64_t consumers,
                         Producer producer = Producer::warpgroup) {
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
bool pipelinedPromotionFits(ConfigAttr config, int64_t consumerRegs) {
  return 3 * accumulatorRegisters(config) + kPipelinedOverhead <= consumerRegs;
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
} // namespace

bool ggc::canStageBlockScales(GroupedMatmulOp op, ConfigAttr config) {
  ScaleAttr aScale = op.getAScaleKindAttr(), bScale = op.getBScaleKindAttr();
  // A's scales are one TMA box per stage: a window of BM + 4 consecutive
  // f32 of an M-major [.., ceil(K/128), align4(M)] tensor. B's are whole
  // 128x128 blocks shared by every consumer of the tile (no split columns).
  // The window is a TMA box. Gathered rows of A (a_rows) arm each stage
  // on every producer thread's arrival, not on one load the window could
  // be counted in: their consumers copy the scales into slots.
  bool aWindow = ggc::targetOf(op).tensorMaps && !op.getARows() && aScale &&
                 aScale.getKind() == ScaleKind::block &&
                 aScale.getMajor() == ScaleMajor::mn_major &&
                 config.getSplitN() == 1;
  if (!aWindow || !bScale || bScale.getKind() != ScaleKind::block)
    return false;
  if (op.getLayout() != GroupLayout::k_grouped)
    return bScale.getBlockMN() == 128;
  // k_grouped: A's [ceil(K/128), M] and B's 1x128 [ceil(K/128), N] scales
  // are TMA boxes of a tile's rows and columns where each row of them is a
  // whole number of 16 bytes (M and N multiples of 4), and the tile's
  // columns fit one box; A K-major, whose tile load the stage's bytes are
  // counted in (f8 wgmma reads K-major tiles only).
  GroupedMatmulOp::Dims dims = op.getDims();
  return bScale.getBlockMN() == 1 && op.getALayout() != OperandLayout::km &&
         bScale.getMajor() == ScaleMajor::mn_major && dims.m > 0 &&
         dims.m % 4 == 0 &&
         dims.n % 4 == 0 && config.getBlockN() <= 256;
}

bool ggc::stagesColumnScalesInStages(GroupedMatmulOp op, ConfigAttr config) {
  return op.getLayout() == GroupLayout::k_grouped &&
         stagesColumnScales(op) && stagesBlockScales(op, config);
}

bool ggc::stagesBlockScales(GroupedMatmulOp op, ConfigAttr config) {
  if (KernelPlanAttr plan = op.getKernelPlanAttr())
    return plan.getScales() == ScalePlacement::stages;
  return canStageBlockScales(op, config);
}

LogicalResult ggc::checkRegisterFit(GroupedMatmulOp op, ConfigAttr config) {
  int64_t consumers = numConsumers(config);
  int64_t regs = consumerRegisters(consumers, producerRegisters(consumers, false));
  int64_t columns = config.getBlockN() / config.getSplitN();
  if (accumulatorRegisters(config) + kAccumulatorOverhead > regs)
    return op.emitOpError()
           << "config " << config << ": the " << accumulatorRegisters(config)
           << "-register accumulator of a warpgroup's " << columns
           << " columns does not fit the " << regs
           << " registers per consumer thread of a CTA of "
           << ggc::ctaThreads(consumers)
           << " threads; use a smaller block N or M";
  int64_t launchCap = initialRegisters(consumers);
  if (ggc::targetOf(op).mma == ggc::MmaKind::wgmma &&
      accumulatorRegisters(config) + kWgmmaOperandRegisters > launchCap)
    return op.emitOpError()
           << "config " << config << ": one wgmma over a warpgroup's "
           << columns << " columns holds " << accumulatorRegisters(config)
           << " accumulator registers, which with its operands exceed the "
           << launchCap << " registers ptxas allows each of the CTA's "
           << ggc::ctaThreads(consumers)
           << " threads; use fewer consumer warpgroups (a smaller block M) "
              "or a smaller block N";
  return success();
}

/// `warpColumns` warps per row block each take their share of the
/// warpgroup's columns in whole 8-column blocks, 16 at a time.
static bool canSplitWarpColumns(ConfigAttr config, int64_t warpColumns) {
  return config.getBlockN() / config.getSplitN() % (16 * warpColumns) == 0;
}

/// Why the threads of a quad cannot store 16 bytes of a row each
/// (`store_columns = 8`), or nothing when they can: the exchange gathers
/// four 8-column blocks of one row, 16-bit outputs make each block 16
/// bytes, and N a multiple of 8 keeps every block's address 16-byte
/// aligned (the launch checks `out`'s) and a block wholly in or past N.
static std::optional<std::string>
storeColumnsObstacle(GroupedMatmulOp op, ConfigAttr config, Staging staging,
                     int64_t warpColumns) {
  if (staging != Staging::none)
    return std::string("the store pool stores the tile");
  if (op.getOutLayout() == OperandLayout::nm)
    return std::string(
        "'out' in layout nm stores a pair's two columns in two rows");
  if (op.getColumnPairs())
    return std::string("column_pairs makes one output per pair");
  if (op.getAccumulate())
    return std::string("accumulate reads each pair where it stores it");
  if (ggc::byteWidth(op.getOutType().getElementType()) != 2)
    return std::string("'out' does not have 16-bit elements");
  int64_t n = op.getOutType().getShape().back();
  if (ShapedType::isDynamic(n) || n % 8 != 0)
    return std::string("N is not a multiple of 8");
  if (op.outputTileColumns(config) / config.getSplitN() / warpColumns % 32 != 0)
    return std::string("a warp's columns are not a multiple of 32");
  return std::nullopt;
}

KernelPlanAttr ggc::chooseKernelPlan(GroupedMatmulOp op, ConfigAttr config) {
  int64_t consumers = numConsumers(config);
  ggc::Target target = ggc::targetOf(op);
  // Without setmaxnreg every thread keeps what the CTA starts with.
  bool reallocate = target.registerReallocation;
  // 1. Promotion: pipelined wherever the three accumulators fit the
  //    registers a 24-register producer leaves the consumers; MX stays
  //    serial: beside them its promotion holds B's column factors, and
  //    ptxas spills and serialises the wgmma (1x32), or gains nothing
  //    (1x128).
  bool pipelined =
      canPipelinePromotion(op) && !ggc::usesMxScales(op) &&
      pipelinedPromotionFits(
          config, reallocate
                      ? consumerRegisters(consumers,
                                          producerRegisters(consumers, true))
                      : initialRegisters(consumers));
  // 2. Scales: with the stages where they can ride there (one TMA box and a
  //    cp.async per stage), else each warp's own slots.
  ScalePlacement scales = !hasScalesAlongK(op) ? ScalePlacement::none
                          : canStageBlockScales(op, config)
                              ? ScalePlacement::stages
                              : ScalePlacement::slots;
  // 3. Column scale reads: where B's per-column scales ride in the stages
  //    of a serial kernel with an f32 output (the FP8 weight gradient, whose
  //    f32 staged tile leaves room for 3-4 stages), each thread reads its
  //    columns' scales right after the wgmma is issued and the stage goes
  //    back before the promotion (at_issue), where the scales fit the
  //    registers beside both accumulators: 128x144 tiles with 4 stages
  //    measured 1.03-1.12x 128x176 with 3 read at the promotion on
  //    DeepGEMM's six sm90 k-grouped shapes; 128x176 read at the issue,
  //    whose scales do not fit, 0.89-0.95x. With a bf16 output (4 stages
  //    and a smaller staged tile) reading at the promotion stayed faster:
  //    at_issue 0.93-0.98x (H200, docs/performance.md, thirty-third
  //    session). A stored (not added) f32 output follows the added one,
  //    unmeasured apart.
  ColumnScaleReads columnScaleReads =
      reallocate && !pipelined && scales == ScalePlacement::stages &&
              ggc::stagesColumnScalesInStages(op, config) &&
              ggc::byteWidth(op.getOutType().getElementType()) == 4 &&
              columnScalesAtIssueFit(
                  config, consumerRegisters(
                              consumers, producerRegisters(consumers, true)))
          ? ColumnScaleReads::at_issue
          : ColumnScaleReads::at_promotion;
  // 4. Producer: with cp.async, none for one-level 16-bit kernels of two
  //    or more consumer warpgroups, whose threads then copy the stages
  //    themselves (CUTLASS's sm80 multistage shape) and keep more
  //    registers: 2-7% faster on the four 128-row bf16 shapes of
  //    bench_sm80.py (H200, docs/performance.md). One consumer warpgroup
  //    keeps its producer (its 4 warps alone copy and multiply 21% slower
  //    on a decode tile), and so do f32 operands (3xTF32 12-14% slower).
  //    With TMA, gathered rows of A (a_rows) are copied by cp.async, a
  //    16-byte piece a thread: warpgroup 0's every thread copies them
  //    (one thread would issue a whole tile's pieces alone).
  Type element = op.getAType().getElementType();
  bool tma = target.asyncCopy == ggc::AsyncCopyKind::tma;
  Producer roles = tma && op.getARows() ? Producer::all_threads
                   : !tma && !ggc::twoLevelAccumulation(op) &&
                           consumers >= 2 &&
                           (element.isBF16() || element.isF16()) &&
                           consumersCanCopy(op, config)
                       ? Producer::none
                       : Producer::warpgroup;
  // 5. Registers: what the producer keeps, the rest to the consumers
  //    (without setmaxnreg, what every thread has).
  int64_t producer =
      reallocate ? producerRegisters(consumers,
                                     pipelined || columnScaleReads ==
                                                      ColumnScaleReads::at_issue)
                 : initialRegisters(consumers, roles);
  int64_t consumer =
      reallocate ? consumerRegisters(consumers, producer) : producer;
  // 6. Staging: swizzled wherever the tile's rows are whole chunks.
  Staging staging =
      hasStorePool(op) ? chooseStaging(op, config) : Staging::none;
  // 7. Warp columns: wgmma's fragment as it is. mma.sync's warps each
  //    load the A and B fragments of every row and column they compute, so
  //    the squarer a warp's tile the less shared memory it reads per
  //    multiply, the bound of that lowering (docs/performance.md): warps
  //    of 32 rows by half of 128 columns read a third less than warps of
  //    16 rows by all of them, and of 256 columns, warps of 64 rows by a
  //    quarter. Two-level kernels keep wgmma's fragment: their promotion
  //    and block scales index it.
  int64_t warpGroupColumns = config.getBlockN() / config.getSplitN();
  int64_t warpColumns = 1;
  if (target.mma == ggc::MmaKind::mmaSync && !ggc::twoLevelAccumulation(op))
    warpColumns = warpGroupColumns >= 256 && canSplitWarpColumns(config, 4) ? 4
                  : canSplitWarpColumns(config, 2)                          ? 2
                                                                            : 1;
  // 8. Release lag: wgmma reads a stage after it is issued, so a consumer
  //    hands stage k back once block k+1's is issued; mma.sync's operands
  //    are in registers when it is issued, and handing the stage back then
  //    gives the producer's copies a whole K block longer to land (the
  //    sm_80 kernels wait on them: docs/performance.md).
  int64_t releaseLag = target.mma == ggc::MmaKind::wgmma ? 1 : 0;
  // 9. Store columns: a pair's 4-byte store fills half of each 32-byte
  //    sector a warp's store touches; quads exchanging their pairs store
  //    16 bytes a thread and fill them (docs/performance.md). Measured:
  //    sm_90a's per-thread stores (the layouts the store pool does not
  //    take, such as padded_contiguous) 7-21% faster; before sm_90a 6-10%
  //    faster for 64x64 warps (warp_columns = 4) but 0-5% slower for the
  //    32x64 warps of 128x128 tiles, which keep their pairs.
  int64_t storeColumns =
      (target.mma == ggc::MmaKind::wgmma || warpColumns == 4) &&
              !storeColumnsObstacle(op, config, staging, warpColumns)
          ? 8
          : 2;
  // 10. Epilogue blocks: the pipelined promotion runs each tile's epilogue
  //     beside the next tile's first K block. The serial one runs it at the
  //     tile's end: beside the next tile's first wgmma (epilogue_blocks = 1)
  //     it measured 0.86-0.88x on the f32 FP8 weight gradient, 1.03x with a
  //     bf16 output and 0.99-1.03x on 128x192 forward tiles (H200,
  //     docs/performance.md, twenty-ninth session).
  int64_t epilogueBlocks = pipelined ? 1 : 0;
  // 11. Store issuers: one for the tile. Each consumer warpgroup storing
  //     its own rows, none waiting at a barrier for another's epilogue
  //     (store_issuers = warpgroup), measured 0.95-1.02x: FP8 weight
  //     gradient 0.945-1.005x, FP8 forward 0.98-1.02x, BF16 0.99-1.01x
  //     (H200, docs/performance.md, twenty-ninth session).
  StoreIssuers storeIssuers = StoreIssuers::tile;
  return KernelPlanAttr::get(
      op.getContext(), pipelined ? Promotion::pipelined : Promotion::serial,
      scales, producer, consumer, staging, warpColumns, releaseLag, roles,
      storeColumns, epilogueBlocks, storeIssuers, columnScaleReads);
}

/// The plan's warp layout, release lag, producer and registers against the
/// target and the config (checkKernelPlan's second half).
static LogicalResult
checkWarpsAndRegisters(GroupedMatmulOp op, ConfigAttr config,
                       KernelPlanAttr plan,
                       function_ref<InFlightDiagnostic()> error) {
  ggc::Target target = ggc::targetOf(op);
  if (plan.getWarpColumns() != 1 && target.mma == ggc::MmaKind::wgmma)
    return error() << " splits the warps' columns, which wgmma's fragment "
                      "does not: sm_90a takes warp_columns = 1";
  if (plan.getWarpColumns() != 1 && ggc::twoLevelAccumulation(op))
    return error() << " splits the warps' columns, which two-level kernels "
                      "(f8, scales along K) do not: their promotion reads "
                      "wgmma's fragment; use warp_columns = 1";
  if (plan.getWarpColumns() != 1 &&
      !canSplitWarpColumns(config, plan.getWarpColumns()))
    return error() << " splits the warps' columns, which takes a multiple "
                      "of "
                   << 16 * plan.getWarpColumns()
                   << " columns per warpgroup, got "
                   << config.getBlockN() / config.getSplitN();
  if (plan.getReleaseLag() == 0 && target.mma == ggc::MmaKind::wgmma)
    return error() << " hands a stage back as its MMA is issued, which "
                      "wgmma does not allow (it reads the stage after): "
                      "sm_90a takes release_lag = 1";
  if (plan.getProducer() == Producer::none &&
      target.asyncCopy == ggc::AsyncCopyKind::tma)
    return error() << " has no producer, which sm_90a does not take: its "
                      "loads are one TMA thread's beside setmaxnreg's "
                      "register split; use producer = warpgroup";
  bool allThreads = plan.getProducer() == Producer::all_threads;
  bool tma = target.asyncCopy == ggc::AsyncCopyKind::tma;
  if (allThreads && (!tma || !op.getARows()))
    return error() << " runs the producer on all of warpgroup 0's threads, "
                      "which only sm_90a kernels with gathered rows of A "
                      "(a_rows) take; use producer = warpgroup";
  if (tma && op.getARows() && !allThreads)
    return error() << " gathers rows of A (a_rows), which sm_90a copies by "
                      "cp.async on all of the producer warpgroup's threads; "
                      "use producer = all_threads";
  if (plan.getProducer() == Producer::none && ggc::twoLevelAccumulation(op))
    return error() << " has no producer, which only one-level kernels "
                      "take: the consumers copy each stage in their K "
                      "loop, and two-level kernels (f8, scales along K) "
                      "run another; use producer = warpgroup";
  if (plan.getProducer() == Producer::none && !consumersCanCopy(op, config))
    return error() << " has no producer: its " << numConsumers(config)
                   << " consumer warpgroups would copy rounds of "
                   << consumerCopyRows(config)
                   << " rows, which must divide block M, block N and, for "
                      "an MN-major operand, block K; use producer = "
                      "warpgroup";
  int64_t consumers = numConsumers(config);
  int64_t threads = ggc::ctaThreads(consumers, plan.getProducer());
  int64_t each = initialRegisters(consumers, plan.getProducer());
  // Only setmaxnreg moves registers between warpgroups.
  if (!target.registerReallocation && (plan.getProducerRegisters() != each ||
                                       plan.getConsumerRegisters() != each))
    return error() << " splits the registers, which takes setmaxnreg "
                      "(sm_90a): on "
                   << target.name << " every thread of a CTA of "
                   << threads << " keeps " << each << "; use registers = ["
                   << each << ", " << each << "]";
  if (plan.getProducerRegisters() + consumers * plan.getConsumerRegisters() >
          each * (1 + consumers) ||
      plan.getProducerRegisters() > each)
    return error() << " does not split the register file: a CTA of "
                   << threads << " threads starts with " << each
                   << " per thread; setmaxnreg may lower the producer's and "
                      "move the rest to the consumers, never more than the total";
  if (accumulatorRegisters(config) + kAccumulatorOverhead >
      plan.getConsumerRegisters())
    return error() << " gives each consumer " << plan.getConsumerRegisters()
                   << " registers, too few for its "
                   << accumulatorRegisters(config) << "-register accumulator";
  return success();
}

LogicalResult ggc::checkKernelPlan(GroupedMatmulOp op, ConfigAttr config,
                                   KernelPlanAttr plan) {
  auto error = [&]() { return op.emitOpError() << "kernel_plan " << plan; };
  // What only TMA does, refused as the target's (gg-select-config words it
  // alike).
  ggc::Target target = ggc::targetOf(op);
  if (!target.tensorMaps && plan.getScales() == ScalePlacement::stages)
    return op.emitOpError() << "cannot be lowered for " << target.name
                            << ": kernel_plan scales = stages loads A's "
                               "scales by TMA; use slots (sm_90a lowers it)";
  if (!target.tensorMaps && plan.getStaging() != Staging::none)
    return op.emitOpError() << "cannot be lowered for " << target.name
                            << ": kernel_plan staging = "
                            << stringifyStaging(plan.getStaging())
                            << " stages the tile for TMA stores; use none "
                               "(sm_90a lowers it)";
  if (plan.getPromotion() == Promotion::pipelined) {
    if (!canPipelinePromotion(op))
      return error() << " cannot pipeline the promotion: only two-level "
                        "kernels (f8, scales that change along K) promote";
    if (!pipelinedPromotionFits(config, plan.getConsumerRegisters()))
      return error() << " gives each consumer " << plan.getConsumerRegisters()
                     << " registers, fewer than the "
                     << 3 * accumulatorRegisters(config) + kPipelinedOverhead
                     << " pipelined promotion needs; use promotion = serial";
  }
  if (plan.getStoreIssuers() == StoreIssuers::warpgroup &&
      op.getStoreSlice())
    return error() << " cannot have each consumer warpgroup store its own "
                      "rows (store_issuers = warpgroup) of a tile staged a "
                      "slice at a time (store_slice); use store_issuers = "
                      "tile";
  if (plan.getStoreIssuers() == StoreIssuers::warpgroup &&
      !canIssueStoresByWarpgroup(op, config))
    return error() << " cannot have each consumer warpgroup store its own "
                      "rows (store_issuers = warpgroup): that takes a "
                      "store_pool and warpgroups that split the tile by rows "
                      "(no split_n); use store_issuers = tile";
  if (plan.getPromotion() == Promotion::serial &&
      plan.getEpilogueBlocks() == 1 && !canPipelinePromotion(op))
    return error() << " cannot defer the epilogue beside the next tile's "
                      "first wgmma: only two-level kernels (f8, scales that "
                      "change along K) have a promotion loop to overlap; "
                      "use epilogue_blocks = 0";
  // MX promotes by scale blocks (pipelinedScaleBlocks), which issues one
  // before the deferred epilogue; two would be a plan it does not keep.
  if (plan.getEpilogueBlocks() == 2 && ggc::usesMxScales(op))
    return error() << " cannot issue two K blocks before the deferred "
                      "epilogue with MX scales (their promotion goes by "
                      "scale blocks); use epilogue_blocks = 1";
  if ((plan.getScales() == ScalePlacement::none) == hasScalesAlongK(op))
    return error() << " must place scales "
                   << (hasScalesAlongK(op) ? "in 'slots' or 'stages': the op "
                                             "has scales that change along K"
                                           : "'none': the op has no scales "
                                             "that change along K");
  if (plan.getScales() == ScalePlacement::stages &&
      !canStageBlockScales(op, config))
    return error() << " cannot carry scales in the stages: that takes "
                      "1x128 M-major block scales of 'a', 128x128 of 'b' "
                      "(k_grouped: 1x128 N-major, 'a' K-major, M and N "
                      "multiples of 4, block N at most 256), no split_n and "
                      "no a_rows";
  if ((plan.getStaging() == Staging::none) == hasStorePool(op))
    return error() << " must have staging "
                   << (hasStorePool(op) ? "'dense', 'swizzled' or "
                                          "'swizzled_64' with a store_pool"
                                        : "'none' without a store_pool");
  if (plan.getStoreColumns() == 8)
    if (std::optional<std::string> obstacle = storeColumnsObstacle(
            op, config, plan.getStaging(), plan.getWarpColumns()))
      return error() << " stores 8 columns a thread, which it cannot: "
                     << *obstacle << "; use store_columns = 2";
  if (int64_t swizzle = ggc::stagingSwizzleBytes(plan.getStaging());
      swizzle && !canSwizzleStaging(op, config, swizzle))
    return error() << " cannot swizzle the staged tile by " << swizzle
                   << " bytes: its rows of " << op.stagedColumns(config)
                   << " outputs are not whole " << swizzle
                   << "-byte chunks; use staging = "
                   << stringifyStaging(chooseStaging(op, config));
  // The lowering reads the plan the same way (stagesColumnScalesInStages).
  if (plan.getColumnScaleReads() == ColumnScaleReads::at_issue &&
      !(plan.getScales() == ScalePlacement::stages &&
        ggc::stagesColumnScalesInStages(op, config)))
    return error() << " reads B's per-column scales at the wgmma's issue "
                      "(column_scale_reads = at_issue), which takes them in "
                      "the stages: k_grouped with 1x128 scales of 'b' and "
                      "scales = stages";
  return checkWarpsAndRegisters(op, config, plan, error);

}

namespace {
struct PlanKernelPass : public ggc::impl::PlanKernelBase<PlanKernelPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](GroupedMatmulOp op) {
      ConfigAttr config = ggc::requireConfig(op, "gg-plan-kernel");
      if (!config)
        return WalkResult::interrupt();
      KernelPlanAttr plan = op.getKernelPlanAttr();
      if (!plan) {
        if (failed(ggc::checkRegisterFit(op, config)))
          return WalkResult::interrupt();
        op.setKernelPlanAttr(ggc::chooseKernelPlan(op, config));
        return WalkResult::advance();
      }
      return failed(ggc::checkKernelPlan(op, config, plan))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

int64_t ggc::stagingSwizzleBytes(Staging staging) {
  switch (staging) {
  case Staging::swizzled:
    return kSwizzleBytes;
  case Staging::swizzled_64:
    return 64;
  case Staging::none:
  case Staging::dense:
    return 0;
  }
  llvm_unreachable("unknown staging");
}
