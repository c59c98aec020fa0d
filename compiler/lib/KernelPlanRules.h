//===- KernelPlanRules.h - what gg-plan-kernel decides by ------*- C++ -*-===//
//
// The register arithmetic and the predicates on an op and its config that
// gg-plan-kernel's rules (PlanKernel.cpp) and the checks of a user's plan
// (CheckKernelPlan.cpp) share, so that what the pass chooses and what it
// accepts are measured alike. Each definition's comment says why
// (KernelPlanRules.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GGC_KERNELPLANRULES_H
#define GGC_KERNELPLANRULES_H

#include "ggc/Passes.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ggc::plan {

inline constexpr int64_t kRegisterFile = 65536; // 32-bit registers per SM
inline constexpr int64_t kMaxConsumerRegisters = 240;
/// Registers ptxas needs around a wgmma accumulator fragment (measured: 154
/// for a 256-column warpgroup's 128) and, with pipelined promotion, around
/// its three (addresses, scales, counters).
inline constexpr int64_t kAccumulatorOverhead = 26;
inline constexpr int64_t kPipelinedOverhead = 40;
/// More beside a k-grouped one-level kernel's two accumulators when its
/// epilogue is deferred: ptxas spilled 128x192 weight-gradient tiles at
/// 232 and at 240 registers, the same tiles of a contiguous product none
/// at 232 (one group's K range and output rows ride beside the next's).
inline constexpr int64_t kKGroupedDeferredOverhead = 30;
/// A wgmma's operands beside its accumulator (two descriptors and their
/// addresses): one instruction's registers must fit the cap ptxas puts on
/// every thread of the CTA at launch, which setmaxnreg does not lift for
/// it (a 192x256 tile, 128 accumulator registers under a cap of 128,
/// failed in ptxas).
inline constexpr int64_t kWgmmaOperandRegisters = 8;

// Registers.
int64_t numConsumers(mlir::gg::ConfigAttr config);
int64_t accumulatorRegisters(mlir::gg::ConfigAttr config);
int64_t initialRegisters(int64_t consumers, mlir::gg::Producer producer =
                                                mlir::gg::Producer::warpgroup);
int64_t producerRegisters(int64_t consumers, bool consumersNeedAll);
int64_t consumerRegisters(int64_t consumers, int64_t producer);
bool pipelinedPromotionFits(mlir::gg::ConfigAttr config, int64_t consumerRegs,
                            bool holdsColumnScales = false);
int64_t pipelinedPromotionRegisters(mlir::gg::ConfigAttr config,
                                    bool holdsColumnScales);
/// A one-level kernel's deferred epilogue (`epilogue_blocks = 1`): the
/// finished tile's accumulator beside the next tile's.
int64_t deferredOneLevelEpilogueRegisters(mlir::gg::ConfigAttr config,
                                          bool kGrouped);
bool deferredOneLevelEpilogueFits(mlir::gg::ConfigAttr config,
                                  int64_t consumerRegs, bool kGrouped);
bool columnScalesAtIssueFit(mlir::gg::ConfigAttr config,
                            int64_t consumerRegs);

// Copies and promotion.
int64_t consumerCopyRows(mlir::gg::ConfigAttr config);
bool consumersCanCopy(mlir::gg::GroupedMatmulOp op,
                      mlir::gg::ConfigAttr config);
bool canPipelinePromotion(mlir::gg::GroupedMatmulOp op);
/// Whether op's K blocks are a whole number of turns of config's ring.
bool wholeRingTurns(mlir::gg::GroupedMatmulOp op, mlir::gg::ConfigAttr config);
/// Whether the serial K loop can take a turn of the ring at a time, each K
/// block's stage a constant (ring_stages = constant): a two-level kernel.
/// Where the K blocks are no whole number of turns (or, k_grouped, are
/// counted at run time), each tile's last turn ends on stages passed on
/// empty, which a producer of one thread does (not gathered rows).
bool canTakeConstantStages(mlir::gg::GroupedMatmulOp op,
                           mlir::gg::ConfigAttr config);
/// The operands whose serial kernels gg-plan-kernel's rule 12 gives
/// constant stages: plain contiguous groups (no a_rows, zero_ungrouped or
/// MX scales) of a two-level kernel on wgmma. gg-select-config widens
/// their long-K FP8 tiles for it.
bool takesConstantStages(mlir::gg::GroupedMatmulOp op);
bool hasScalesAlongK(mlir::gg::GroupedMatmulOp op);

// The output tile.
bool canSwizzleStaging(mlir::gg::GroupedMatmulOp op,
                       mlir::gg::ConfigAttr config, int64_t swizzleBytes);
mlir::gg::Staging chooseStaging(mlir::gg::GroupedMatmulOp op,
                                mlir::gg::ConfigAttr config);
bool hasStorePool(mlir::gg::GroupedMatmulOp op);
bool canIssueStoresByWarpgroup(mlir::gg::GroupedMatmulOp op,
                               mlir::gg::ConfigAttr config);
bool canSplitWarpColumns(mlir::gg::ConfigAttr config, int64_t warpColumns);
std::optional<std::string>
storeColumnsObstacle(mlir::gg::GroupedMatmulOp op, mlir::gg::ConfigAttr config,
                     mlir::gg::Staging staging, int64_t warpColumns);

} // namespace ggc::plan

#endif // GGC_KERNELPLANRULES_H
