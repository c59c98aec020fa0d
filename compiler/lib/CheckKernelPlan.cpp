//===- CheckKernelPlan.cpp - a #gg.kernel_plan against its op -------------===//
//
// What gg-plan-kernel refuses: a config whose accumulator does not fit the
// registers, and a user's #gg.kernel_plan that the target, the config or
// the op cannot lower, each named with what to write instead. The rules
// it checks against are the ones it chooses by (KernelPlanRules.h).
//
//===----------------------------------------------------------------------===//
#include "KernelPlanRules.h"
#include "Target.h"

using namespace mlir;
using namespace mlir::gg;
using namespace ggc::plan;

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
                     << pipelinedPromotionRegisters(config, false)
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
      plan.getEpilogueBlocks() == 1 && !canPipelinePromotion(op)) {
    // One-level kernels defer beside a wgmma they do not wait for.
    if (target.mma != ggc::MmaKind::wgmma)
      return error() << " cannot defer the epilogue beside the next tile's "
                        "first multiply on " << target.name
                     << ": mma.sync is done when issued; use "
                        "epilogue_blocks = 0";
    bool kGrouped = op.getLayout() == GroupLayout::k_grouped;
    if (!deferredOneLevelEpilogueFits(config, plan.getConsumerRegisters(),
                                      kGrouped))
      return error() << " gives each consumer "
                     << plan.getConsumerRegisters()
                     << " registers, fewer than the "
                     << deferredOneLevelEpilogueRegisters(config, kGrouped)
                     << " that the finished tile's accumulator beside the "
                        "next one's needs to defer the epilogue; use "
                        "epilogue_blocks = 0";
  }
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
                      "1x128 block scales of 'a' M-major, or K-major with "
                      "ceil(K/128) a multiple of 4, 128x128 of 'b' "
                      "(k_grouped: 1x128 N-major, 'a' K-major, M and N "
                      "multiples of 4, block N at most 256), block M at "
                      "most 252 (a TMA box of block M + 4 rows), no "
                      "split_n and no a_rows";
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
  if (plan.getRingStages() == RingStages::constant &&
      plan.getPromotion() == Promotion::pipelined &&
      op.getLayout() == GroupLayout::k_grouped)
    return error() << " cannot pipeline the promotions over constant stages "
                      "(ring_stages = constant with promotion = pipelined): "
                      "that takes a static K (not k_grouped); use "
                      "ring_stages = counted or promotion = serial";
  if (plan.getRingStages() == RingStages::constant) {
    // Every tile then starts at stage 0 (ggk-pipeline-promotion). The
    // attribute's verifier has checked the promotion's epilogue_blocks.
    int64_t kBlocks = llvm::divideCeil(op.getDims().k, config.getBlockK());
    if (!canTakeConstantStages(op, config))
      return error() << " cannot give each K block a constant stage "
                        "(ring_stages = constant): that takes a two-level "
                        "kernel (f8, scales that change along K) and K "
                        "blocks a multiple of the stages where A's rows are "
                        "gathered (a_rows, a static K) ("
                     << kBlocks << " K blocks, " << config.getStages()
                     << " stages); use ring_stages = counted";
  }
  return checkWarpsAndRegisters(op, config, plan, error);
}
