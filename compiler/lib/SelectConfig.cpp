//===- SelectConfig.cpp - gg-select-config ---------------------------------===//
//
// Chooses the tile configuration of every gg.grouped_matmul. All heuristics
// are in chooseConfig, in the order they apply, so that a newcomer can read
// why a kernel got the shape it did (DeepGEMM's get_best_configs is the
// model). A config written by the user is kept.
//
//===----------------------------------------------------------------------===//
#include "ggc/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace ggc {
#define GEN_PASS_DEF_SELECTCONFIG
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;

namespace {

int64_t byteWidth(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

} // namespace

int64_t ggc::stagedOutputOffset(ConfigAttr config, Type aElem, Type bElem) {
  int64_t perStage = config.getBlockM() * config.getBlockK() * byteWidth(aElem) +
                     config.getBlockN() * config.getBlockK() * byteWidth(bElem);
  // The ring of A and B tiles with a full and an empty mbarrier per stage.
  return llvm::alignTo(config.getStages() * (perStage + 16), 1024);
}

int64_t ggc::sharedMemoryBytes(ConfigAttr config, Type aElem, Type bElem,
                               Type outElem, bool stagedOutput) {
  int64_t staged = stagedOutput ? config.getBlockM() * config.getBlockN() *
                                      byteWidth(outElem)
                                : 0;
  // Plus 1024 bytes to align the base to the 128B-swizzle atom.
  return stagedOutputOffset(config, aElem, bElem) + staged + 1024;
}

namespace {

/// `config` with as many stages as fit in shared memory, capped at 8 where
/// deeper pipelines stop paying (DeepGEMM uses up to 8); at least 1.
ConfigAttr deepestPipeline(GroupedMatmulOp op, ConfigAttr config,
                           int64_t smemBudget) {
  for (int64_t s = 8; s > 1; --s) {
    ConfigAttr trial = ConfigAttr::get(
        op.getContext(), config.getBlockM(), config.getBlockN(),
        config.getBlockK(), s, config.getClusterM(), config.getClusterN(),
        config.getNumSMs());
    if (ggc::sharedMemoryBytes(trial, op.getAType().getElementType(),
                               op.getBType().getElementType(),
                               op.getOutType().getElementType()) <= smemBudget)
      return trial;
  }
  return ConfigAttr::get(op.getContext(), config.getBlockM(),
                         config.getBlockN(), config.getBlockK(), 1,
                         config.getClusterM(), config.getClusterN(),
                         config.getNumSMs());
}

ConfigAttr chooseConfig(GroupedMatmulOp op, int64_t numSMs,
                        int64_t smemBudget) {
  MLIRContext *ctx = op.getContext();
  GroupedMatmulOp::Dims dims = op.getDims();
  Type aElem = op.getAType().getElementType();

  // 1. Block K: one 128-byte swizzled row of A per K step (64 bf16, 128 f8,
  //    32 f32), the widest row TMA's 128B swizzle allows.
  int64_t blockK = 128 / byteWidth(aElem);

  // 2. Block M: small masked batches (decode) waste less with 64-row tiles;
  //    but f8 keeps 128 rows, because its two consumer warpgroups take turns
  //    on the tensor cores while the other scales its K block's product
  //    (measured: 159 us against 220 us for a decode batch of G=16, K=7168).
  int64_t blockM = 128;
  bool f8 = byteWidth(aElem) == 1;
  if (std::optional<int64_t> expected = op.getExpectedM())
    blockM = *expected <= 64 && !f8 ? 64 : 128;
  else if (op.getLayout() == GroupLayout::masked && !ShapedType::isDynamic(dims.m) &&
           dims.m <= 64 && !f8)
    blockM = 64;

  // 3. Block N: the widest tile that divides N, so no column tile is ragged;
  //    otherwise 128 with a ragged last tile.
  int64_t blockN = 128;
  for (int64_t candidate : {256, 128, 64})
    if (dims.n % candidate == 0) {
      blockN = candidate;
      break;
    }
  // A 128x256 f32 accumulator needs 256 registers per thread across two
  // consumer warpgroups; keep 256 only where the tile is full height.
  if (blockN == 256 && blockM < 128)
    blockN = 128;
  // f8 kernels keep a second accumulator for each K block's product
  // (two-level accumulation, for block scales and for precision): two 64x128
  // fragments fit the registers, two 64x256 do not.
  bool twoLevel = f8;
  if (twoLevel && blockN > 128)
    blockN = 128;
  // 128x128 scales of B cover whole 128-column blocks of the tile.
  ScaleAttr bScale = op.getBScaleKindAttr();
  if (bScale && bScale.getKind() == ScaleKind::block && blockN % 128 != 0)
    blockN = 128;

  // 4. Stages: as deep as shared memory allows (deepestPipeline).
  // 5. Cluster: no TMA multicast yet; each CTA loads its own B tile.
  // 6. Grid: persistent, one CTA per SM.
  return deepestPipeline(
      op, ConfigAttr::get(ctx, blockM, blockN, blockK, 1, 1, 1, numSMs),
      smemBudget);
}

struct SelectConfigPass
    : public ggc::impl::SelectConfigBase<SelectConfigPass> {
  using SelectConfigBase::SelectConfigBase;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](GroupedMatmulOp op) {
      ConfigAttr config = op.getConfigAttr();
      if (!config) {
        config = chooseConfig(op, numSMs, smemBudget);
        op.setConfigAttr(config);
      } else if (config.getStages() == 0) {
        config = deepestPipeline(op, config, smemBudget);
        op.setConfigAttr(config);
      }
      std::optional<ArrayRef<int64_t>> pool = op.getStorePool();
      int64_t needed = ggc::sharedMemoryBytes(
          config, op.getAType().getElementType(),
          op.getBType().getElementType(), op.getOutType().getElementType(),
          /*stagedOutput=*/pool && !pool->empty());
      if (needed > smemBudget) {
        op.emitOpError() << "config " << config << " needs " << needed
                         << " bytes of shared memory, more than the "
                         << smemBudget.getValue()
                         << " one CTA may use; lower the stages or the tile";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
