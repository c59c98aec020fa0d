//===- TmaStorePool.cpp - gg-tma-store-pool --------------------------------===//
//
// Decides, per grouped matmul, whether the epilogue stores through a pool of
// TMA store boxes (BM, BM/2, ..., 1 rows) from a tile staged in shared
// memory, and makes room for that tile in the config. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "Target.h"
#include "ggc/Passes.h"

#include "llvm/ADT/bit.h"

namespace ggc {
#define GEN_PASS_DEF_TMASTOREPOOL
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;

namespace {

/// DeepGEMM's padded layout tests each tile's tags before it takes the
/// pool (ggk.store_tile's `tagged`), and the pool paid there only beside a
/// deep pipeline: FP8 128x128 tiles with five stages and the pool ran
/// 1.009-1.025x six stages with per-thread stores at K = 2,048 and
/// 0.99-1.01x at 7,168 and 8,192; BF16 128x256 tiles with three stages and
/// the pool 0.90x four with per-thread stores (H200, docs/performance.md,
/// forty-first session, benchmarks/probes/padded_pool.py). The layout keeps
/// per-thread stores where the pool would take it below this many stages
/// (a config that asks for fewer keeps its own count, pool or not).
constexpr int64_t kPaddedPoolMinStages = 4;

/// Masked f8 kernels store per thread where the staged tile would cost the
/// pipeline a stage, on the tiles measured so (random counts, N 4,096,
/// K 7,168): 128x192 tiles in pairs, five stages against four with the
/// pool, 1.011-1.021x on G16 M384, G8 M512 and G16 M256 (H100,
/// docs/performance-history.md, forty-eighth session, call 2); 64x256
/// split tiles 1.000-1.063x alone and 1.006-1.071x in pairs along M on
/// G4/G8/G16/G32 M128, G8 M512 and G16 M384 (H200, fifty-first session,
/// call 2). Other tiles (128x128 among them) were not measured so and
/// keep the pool; so does an op whose stated kernel_plan stages its tile.
bool maskedF8KeepsStages(GroupedMatmulOp op, ConfigAttr config,
                         int64_t budget) {
  bool pairs = config.getBlockM() == 128 && config.getBlockN() == 192 &&
               config.getClusterM() == 2 && config.getSplitN() == 1;
  bool split = config.getBlockM() == 64 && config.getBlockN() == 256 &&
               config.getSplitN() == 2;
  KernelPlanAttr plan = op.getKernelPlanAttr();
  bool planStages = plan && plan.getStaging() != Staging::none;
  return op.getLayout() == GroupLayout::masked &&
         op.getAType().getElementTypeBitWidth() == 8 && (pairs || split) &&
         !op.getStoreSlice() && !planStages &&
         ggc::sharedMemoryLayout(op, config, /*stagedOutput=*/true).total >
             budget;
}

struct TmaStorePoolPass
    : public ggc::impl::TmaStorePoolBase<TmaStorePoolPass> {
  using TmaStorePoolBase::TmaStorePoolBase;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](GroupedMatmulOp op) {
      if (op.getStorePool())
        return WalkResult::advance(); // the user's choice
      ConfigAttr config = ggc::requireConfig(op, getArgument());
      if (!config)
        return WalkResult::interrupt();
      Builder b(op.getContext());
      ggc::Target target = ggc::targetOf(op);
      int64_t budget = ggc::sharedMemoryBudget(target, smemBudget);
      // Targets without TMA store from registers.
      if (!target.tensorMaps) {
        op.setStorePoolAttr(b.getDenseI64ArrayAttr({}));
        return WalkResult::advance();
      }
      // An nm output (no row-major tile), an accumulating 16-bit output (a
      // reduce-add would round the sum twice) and rows like 112 bf16 (224
      // bytes, putting 1-row boxes off TMA's alignment) keep per-thread
      // stores.
      if (std::optional<std::string> obstacle = op.storePoolObstacle(config)) {
        if (op.getStoreSlice()) {
          op.emitOpError() << "has a store_slice, which stages the tile for "
                              "the TMA store pool, but the pool "
                           << *obstacle;
          return WalkResult::interrupt();
        }
        op.setStorePoolAttr(b.getDenseI64ArrayAttr({}));
        return WalkResult::advance();
      }
      if (maskedF8KeepsStages(op, config, budget)) {
        op.setStorePoolAttr(b.getDenseI64ArrayAttr({}));
        return WalkResult::advance();
      }
      int64_t fewest = op.getLayout() == GroupLayout::padded_contiguous
                           ? std::max<int64_t>(minStages, kPaddedPoolMinStages)
                           : int64_t(minStages);
      for (int64_t stages = config.getStages(); stages >= 1; --stages) {
        if (stages < fewest && stages < config.getStages())
          break;
        ConfigAttr trial = ConfigAttr::get(
            op.getContext(), config.getBlockM(), config.getBlockN(),
            config.getBlockK(), stages, config.getClusterM(),
            config.getClusterN(), config.getNumSMs(), config.getSplitN());
        if (ggc::sharedMemoryLayout(op, trial, /*stagedOutput=*/true).total >
            budget)
          continue;
        SmallVector<int64_t> pool;
        // Boxes halve from the largest power of two not above BM (128 for
        // 192), so the valid rows are the binary digits of their count.
        for (int64_t h = llvm::bit_floor(uint64_t(config.getBlockM())); h >= 1;
             h /= 2)
          pool.push_back(h);
        op.setConfigAttr(trial);
        op.setStorePoolAttr(b.getDenseI64ArrayAttr(pool));
        return WalkResult::advance();
      }
      if (op.getStoreSlice()) {
        op.emitOpError() << "has a store_slice, but even "
                         << std::min<int64_t>(config.getStages(), fewest)
                         << " stages leave no room for its ring of staged "
                            "slices beside the pipeline; lower the stages or "
                            "the tile";
        return WalkResult::interrupt();
      }
      op.setStorePoolAttr(b.getDenseI64ArrayAttr({}));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
