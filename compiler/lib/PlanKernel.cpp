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
#include "KernelPlanRules.h"
#include "Target.h"
#include "ggc/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace ggc {
#define GEN_PASS_DEF_PLANKERNEL
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;

namespace {
using namespace ggc::plan;

/// Promotion: pipelined wherever the three accumulators fit the
/// registers a 24-register producer leaves the consumers; MX stays
/// serial: beside them its promotion holds B's column factors, and
/// ptxas spills and serialises the wgmma (1x32), or gains nothing
/// (1x128). B's column scales in the stages (the FP8 weight gradient)
/// count too: its 128x128 tiles spilled pipelined, and serial measured
/// 1.03-1.07x them writing bf16 (256-1,024 tokens an expert) and
/// 0.997-1.109x adding to f32 (H200, docs/performance.md,
/// thirty-fourth and thirty-fifth sessions).
bool choosePipelinedPromotion(GroupedMatmulOp op, ConfigAttr config,
                              bool reallocate) {
  int64_t consumers = numConsumers(config);
  return canPipelinePromotion(op) && !ggc::usesMxScales(op) &&
         pipelinedPromotionFits(
             config,
             reallocate ? consumerRegisters(consumers,
                                            producerRegisters(consumers, true))
                        : initialRegisters(consumers),
             ggc::stagesColumnScalesInStages(op, config));
}

/// Scales: with the stages where gg-plan-kernel's rule puts them there
/// (ggc::stagesBlockScalesByDefault), else each warp's own slots.
ScalePlacement chooseScalePlacement(GroupedMatmulOp op, ConfigAttr config) {
  if (!hasScalesAlongK(op))
    return ScalePlacement::none;
  return ggc::stagesBlockScalesByDefault(op, config) ? ScalePlacement::stages
                                                     : ScalePlacement::slots;
}

/// Column scale reads: where B's per-column scales ride in the stages
/// of a serial kernel with an f32 output (the FP8 weight gradient, whose
/// f32 staged tile leaves room for 3-4 stages), each thread reads its
/// columns' scales right after the wgmma is issued and the stage goes
/// back before the promotion (at_issue), where the scales fit the
/// registers beside both accumulators: 128x144 tiles with 4 stages
/// measured 1.03-1.12x 128x176 with 3 read at the promotion on
/// DeepGEMM's six sm90 k-grouped shapes; 128x176 read at the issue,
/// whose scales do not fit, 0.89-0.95x. With a bf16 output (4 stages
/// and a smaller staged tile) reading at the promotion stayed faster:
/// at_issue 0.93-0.98x (H200, docs/performance.md, thirty-third
/// session). A stored (not added) f32 output follows the added one,
/// unmeasured apart. On 128-column tiles (the short groups' f32 tile)
/// reading at the promotion measured 1.00-1.03x reading at the issue
/// (H200, thirty-fifth session), so only wider tiles read at the issue.
ColumnScaleReads chooseColumnScaleReads(GroupedMatmulOp op, ConfigAttr config,
                                        bool reallocate, bool pipelined,
                                        ScalePlacement scales) {
  int64_t consumers = numConsumers(config);
  return reallocate && !pipelined && scales == ScalePlacement::stages &&
                 config.getBlockN() > 128 &&
                 ggc::stagesColumnScalesInStages(op, config) &&
                 ggc::byteWidth(op.getOutType().getElementType()) == 4 &&
                 columnScalesAtIssueFit(
                     config, consumerRegisters(
                                 consumers, producerRegisters(consumers, true)))
             ? ColumnScaleReads::at_issue
             : ColumnScaleReads::at_promotion;
}

/// Producer: with cp.async, none for one-level 16-bit kernels of two
/// or more consumer warpgroups, whose threads then copy the stages
/// themselves (CUTLASS's sm80 multistage shape) and keep more
/// registers: 2-7% faster on the four 128-row bf16 shapes of
/// bench_sm80.py (H200, docs/performance.md). One consumer warpgroup
/// keeps its producer (its 4 warps alone copy and multiply 21% slower
/// on a decode tile), and so do f32 operands (3xTF32 12-14% slower).
/// With TMA, gathered rows of A (a_rows) are copied by cp.async, a
/// 16-byte piece a thread: warpgroup 0's every thread copies them
/// (one thread would issue a whole tile's pieces alone).
Producer chooseProducer(GroupedMatmulOp op, ConfigAttr config,
                        const ggc::Target &target) {
  Type element = op.getAType().getElementType();
  bool tma = target.asyncCopy == ggc::AsyncCopyKind::tma;
  if (tma && op.getARows())
    return Producer::all_threads;
  return !tma && !ggc::twoLevelAccumulation(op) && numConsumers(config) >= 2 &&
                 (element.isBF16() || element.isF16()) &&
                 consumersCanCopy(op, config)
             ? Producer::none
             : Producer::warpgroup;
}

/// Warp columns: wgmma's fragment as it is. mma.sync's warps each
/// load the A and B fragments of every row and column they compute, so
/// the squarer a warp's tile the less shared memory it reads per
/// multiply, the bound of that lowering (docs/performance.md): warps
/// of 32 rows by half of 128 columns read a third less than warps of
/// 16 rows by all of them, and of 256 columns, warps of 64 rows by a
/// quarter. Two-level kernels keep wgmma's fragment: their promotion
/// and block scales index it. So does an out quantised in 1x128 blocks
/// (out_scale), whose amax is taken in the quads of one warp.
int64_t chooseWarpColumns(GroupedMatmulOp op, ConfigAttr config,
                          const ggc::Target &target) {
  if (target.mma != ggc::MmaKind::mmaSync || ggc::twoLevelAccumulation(op) ||
      op.getOutScale())
    return 1;
  int64_t warpGroupColumns = config.getBlockN() / config.getSplitN();
  return warpGroupColumns >= 256 && canSplitWarpColumns(config, 4) ? 4
         : canSplitWarpColumns(config, 2)                          ? 2
                                                                   : 1;
}

/// Store columns: a pair's 4-byte store fills half of each 32-byte
/// sector a warp's store touches; quads exchanging their pairs store
/// 16 bytes a thread and fill them (docs/performance.md). Measured:
/// sm_90a's per-thread stores (the layouts the store pool does not
/// take, such as padded_contiguous) 7-21% faster; before sm_90a 6-10%
/// faster for 64x64 warps (warp_columns = 4) but 0-5% slower for the
/// 32x64 warps of 128x128 tiles, which keep their pairs.
/// DeepGEMM's padded layout stores by thread only the tiles whose group's
/// rows do not lead, beside the pool; there the pipelined promotion's
/// consumers (two products in flight at 240 registers) keep their pairs:
/// the quads' exchange made them spill 4 bytes (ptxas -v, FP8 128x128).
int64_t chooseStoreColumns(GroupedMatmulOp op, ConfigAttr config,
                           const ggc::Target &target, Staging staging,
                           int64_t warpColumns, bool pipelined) {
  if (staging != Staging::none && pipelined)
    return 2;
  return (target.mma == ggc::MmaKind::wgmma || warpColumns == 4) &&
                 !storeColumnsObstacle(op, config, staging, warpColumns)
             ? 8
             : 2;
}
} // namespace

KernelPlanAttr ggc::chooseKernelPlan(GroupedMatmulOp op, ConfigAttr config) {
  int64_t consumers = numConsumers(config);
  ggc::Target target = ggc::targetOf(op);
  // Without setmaxnreg every thread keeps what the CTA starts with.
  bool reallocate = target.registerReallocation;
  // 1-4: the functions above, each with the measurements behind it
  //     (promotion, scales, column scale reads, producer).
  bool pipelined = choosePipelinedPromotion(op, config, reallocate);
  ScalePlacement scales = chooseScalePlacement(op, config);
  ColumnScaleReads columnScaleReads =
      chooseColumnScaleReads(op, config, reallocate, pipelined, scales);
  Producer roles = chooseProducer(op, config, target);
  // 5. Registers: what the producer keeps, the rest to the consumers
  //    (without setmaxnreg, what every thread has).
  bool consumersNeedAll =
      pipelined || columnScaleReads == ColumnScaleReads::at_issue;
  int64_t producer = reallocate
                         ? producerRegisters(consumers, consumersNeedAll)
                         : initialRegisters(consumers, roles);
  int64_t consumer =
      reallocate ? consumerRegisters(consumers, producer) : producer;
  // 6. Staging: swizzled wherever the tile's rows are whole chunks.
  Staging staging =
      hasStorePool(op) ? chooseStaging(op, config) : Staging::none;
  // 7. Warp columns: chooseWarpColumns.
  int64_t warpColumns = chooseWarpColumns(op, config, target);
  // 8. Release lag: wgmma reads a stage after it is issued, so a consumer
  //    hands stage k back once block k+1's is issued; mma.sync's operands
  //    are in registers when it is issued, and handing the stage back then
  //    gives the producer's copies a whole K block longer to land (the
  //    sm_80 kernels wait on them: docs/performance.md).
  int64_t releaseLag = target.mma == ggc::MmaKind::wgmma ? 1 : 0;
  // 9. Store columns: chooseStoreColumns.
  int64_t storeColumns =
      chooseStoreColumns(op, config, target, staging, warpColumns, pipelined);
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
  // 12. Ring stages: constant (the serial K loop a turn of the ring at a
  //     time, each block's stage a constant) for the serial FP8 kernels of
  //     contiguous groups that can take them: 132 instructions a K block
  //     against 156 at 128x192, which ran 1.035-1.181x the counted loop
  //     on an H100 (T8192 G8 N7168 K2048, T8192 G8 N4096 K7168, T32768
  //     G32 N7168 K2048, T16384 G32 N3072 K8192: level with DeepGEMM,
  //     0.990-1.008x; performance-history.md, fifty-sixth session).
  //     K blocks of no whole turn too, whose last turn ends on stages the
  //     producer passes on empty: gpt-oss-like K 2,880 (23 blocks over
  //     the ring) 1.041-1.056x the counted loop at N 2,880 and
  //     1.046-1.084x at N 5,760 (T16384 G32, ragged groups, H100, three
  //     calls, fifty-eighth session).
  //     Elsewhere counted: not measured (masked pairs, gathered rows, MX
  //     scales, zero_ungrouped's tiles of no K blocks).
  RingStages ringStages =
      !pipelined && epilogueBlocks == 0 && takesConstantStages(op) &&
              canTakeConstantStages(op, config)
          ? RingStages::constant
          : RingStages::counted;
  return KernelPlanAttr::get(
      op.getContext(), pipelined ? Promotion::pipelined : Promotion::serial,
      scales, producer, consumer, staging, warpColumns, releaseLag, roles,
      storeColumns, epilogueBlocks, storeIssuers, columnScaleReads,
      ringStages);
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
