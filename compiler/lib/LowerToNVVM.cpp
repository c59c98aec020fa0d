//===- LowerToNVVM.cpp - gg-lower-to-nvvm ----------------------------------===//
//
// Turns each `gg.grouped_matmul` (with its #gg.config) into one persistent,
// warp-specialised Hopper kernel, written in the LLVM and NVVM dialects with
// scf/arith control flow:
//
//   warpgroup 0 (producer): one thread walks the tile schedule and issues TMA
//     loads of A and B tiles into a ring of `stages` shared-memory buffers,
//     each completing on its own mbarrier ("full");
//   warpgroups 1..BM/64 (consumers): each waits for a full buffer, runs wgmma
//     on 64 rows of the tile, releases the buffer ("empty"), and at the end of
//     the tile applies the epilogue and stores the valid rows.
//
// The tile schedule is computed on the device from the group offsets or
// counts, identically by producer and consumers, so nothing about the routing
// crosses to the host and empty groups cost nothing:
//   - contiguous: a tile starts at its group's own first row (no padding);
//     its TMA load may fetch rows of the next group (overfetch), which are
//     computed and never stored;
//   - masked: rows past masked_m[g] are never stored;
//   - padded_contiguous: rows whose group index differs from the tile's are
//     never stored;
//   - k_grouped: each group reduces over its own K range.
//
// The kernel's launch contract (parameters, block, shared memory, tensor
// maps) is recorded as the structured attribute `ggk.launch`.
//
// This file holds the pass, the plan and the kernel's frame; the rest of
// the generator is defined by concern in the files KernelGenerator.h names.
//
//===----------------------------------------------------------------------===//
#include "KernelGenerator.h"
#include "Target.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERTONVVM
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;

namespace ggc {

LogicalResult KernelGenerator::plan() {
  ConfigAttr config = ggc::requireConfig(op, "gg-lower-to-nvvm");
  if (!config || failed(readShape(config)) || failed(readScales(config)) ||
      failed(checkCoverage(config)) || failed(readDecisions(config)) ||
      failed(checkQuantizedOutput()))
    return failure();

  p.aTileBytes = p.blockM * p.blockK * byteWidth(p.aElem);
  p.bTileBytes = p.blockN * p.blockK * byteWidth(p.bElem);
  if (std::optional<ArrayRef<int64_t>> pool = op.getStorePool())
    p.storePool.assign(pool->begin(), pool->end());
  // Ring of A tiles, ring of B tiles, the mbarriers, the staged output.
  p.smem = ggc::sharedMemoryLayout(op, config, !p.storePool.empty());
  p.oddBlockAMulticast =
      op.getScheduleAttr().getOddBlockA() == OddBlockA::multicast;
  if (p.oddBlockAMulticast &&
      (p.cluster != 2 || !p.tensorMaps || p.gatherA || p.aMNMajor))
    return op.emitOpError()
           << "schedule odd_block_a = multicast shares A's rows between the "
              "CTAs of a pair by TMA: it needs cluster [2, 1], tensor maps "
              "(sm_90a) and K-major rows of A that are not gathered, got "
              "cluster "
           << p.cluster << (p.tensorMaps ? "" : ", no tensor maps")
           << (p.gatherA ? ", gathered rows" : "")
           << (p.aMNMajor ? ", M-major A" : "");
  p.groupTableEntries = ggc::groupTableEntries(op);
  // gg-select-config sized the stages with a stated table counted, against
  // the device's budget where the caller gave one (an sm_80 kernel built
  // for an H100 may pass A100's limit). Only a table that itself takes a
  // kernel that fit the target past it is refused here.
  int64_t sharedLimit = ggc::targetOf(op).sharedMemoryBytes;
  int64_t tableBytes =
      p.groupTableEntries ? p.smem.buffers[ggc::kGroupTable].bytes : 0;
  if (p.smem.total > sharedLimit && p.smem.total - tableBytes <= sharedLimit)
    return op.emitOpError()
           << "schedule group_reads = shared adds a table of "
           << tableBytes
           << " bytes, which takes the kernel's shared memory to "
           << p.smem.total << " bytes, more than the target's "
           << sharedLimit
           << "; lower the stages, or read the groups from global memory "
              "(group_reads = global)";
  p.nBlocks = (p.n + p.blockN - 1) / p.blockN;
  if (p.twoLevel() && p.blockK != 128)
    return op.emitOpError() << "block scales are applied per 128-wide K "
                               "block, so block K must be 128, got "
                            << p.blockK;
  // A warpgroup's columns cover whole 128-column scale blocks, or touch at
  // most two (the promotion's boundary between them).
  if (p.bScale && p.bScale.getKind() == ScaleKind::block &&
      p.warpgroupN % 128 != 0 && p.bBlocks > 2)
    return op.emitOpError() << "block N must be a multiple of 128, or its "
                               "warpgroups' columns touch at most two "
                               "128-column scale blocks (e.g. 112 or 192), "
                               "with 128x128 scales of 'b', got "
                            << p.blockN;
  accType = ggk::AccType::get(b.getContext(), 64, p.warpgroupN, b.f32(),
                              p.warpColumns);
  return success();
}

LogicalResult KernelGenerator::readShape(ConfigAttr config) {
  GroupedMatmulOp::Dims dims = op.getDims();
  p.layout = op.getLayout();
  p.numGroups = dims.numGroups;
  p.n = dims.n;
  p.k = dims.k;
  p.m = dims.m;
  p.blockM = config.getBlockM();
  p.blockN = config.getBlockN();
  p.blockK = config.getBlockK();
  p.stages = config.getStages();
  if (p.stages < 1)
    return op.emitOpError() << "has stages = 0 in its #gg.config; run "
                               "gg-select-config to choose them";
  p.numSMs = config.getNumSMs();
  p.splitN = config.getSplitN();
  p.cluster = config.getClusterM();
  p.warpgroupN = p.blockN / p.splitN;
  p.numConsumers = p.blockM / 64 * p.splitN;
  p.aElem = op.getAType().getElementType();
  p.bElem = op.getBType().getElementType();
  p.outElem = op.getOutType().getElementType();
  p.groupsElem = cast<MemRefType>(op.getGroups().getType()).getElementType();
  p.bMNMajor = op.getBLayout() == OperandLayout::kn;
  p.aMNMajor = op.getALayout() == OperandLayout::km;
  // out in nm ([G, N, M], k_grouped): element (m, n) of group g is at
  // (g N + n) M + m, written by per-thread stores.
  p.outNM = op.getOutLayout() == OperandLayout::nm;
  return success();
}

/// What this lowering does not cover yet is an error, never a wrong kernel.
static InFlightDiagnostic unsupported(GroupedMatmulOp op, const Twine &what) {
  return op.emitOpError() << "is not supported by gg-lower-to-nvvm yet: "
                          << what;
}

LogicalResult KernelGenerator::readScales(ConfigAttr config) {
  p.aScale = op.getAScaleKindAttr();
  p.bScale = op.getBScaleKindAttr();
  p.f8 = isa<Float8E4M3FNType, Float8E5M2Type>(p.aElem);
  p.mx = ggc::usesMxScales(op);
  p.columnScales = ggc::stagesColumnScales(op);
  p.columnEntries = ggc::columnScaleEntries(op, config);
  p.scaleSlots = ggc::scaleSlotsPerWarp(op, config);
  if (p.bScale && p.bScale.getKind() == ScaleKind::block &&
      p.bScale.getBlockMN() == 128)
    p.bBlocks = ggc::bBlockScalesPerWarpgroup(op, config);
  p.columnScalesInStages = ggc::stagesColumnScalesInStages(op, config);
  // One thread of each consumer warpgroup stages one column's scale (the
  // stages' box of them takes up to 256 columns).
  if (p.columnScales && !p.columnScalesInStages &&
      p.warpgroupN > kWarpgroupThreads)
    return unsupported(op, Twine(p.mx ? "mx" : "1x128 block") +
                               " scales of 'b' with block N over " +
                               Twine(kWarpgroupThreads));
  return success();
}

LogicalResult KernelGenerator::checkCoverage(ConfigAttr config) {
  // A padded_contiguous tile takes the group of its first row. DeepGEMM's
  // layout aligns every group to 128 rows, so a tile of 64 or 128 rows
  // never straddles two groups; a taller one could.
  if (p.layout == GroupLayout::padded_contiguous && 128 % p.blockM != 0)
    return op.emitOpError() << "padded_contiguous needs block M to divide the "
                               "128-row group alignment (64 or 128), got "
                            << p.blockM;
  if (config.getClusterN() != 1 || p.cluster > 2)
    return unsupported(op, "clusters other than [1, 1] and [2, 1]");
  if (p.cluster == 2 && p.layout == GroupLayout::padded_contiguous)
    return unsupported(op, "clusters with padded_contiguous (the two M "
                           "blocks of a pair may belong to different "
                           "groups)");
  // column_halves pairs a column with one half a tile away: the CTA loads
  // both halves itself (with split_n, each warpgroup's share of both).
  if (op.getColumnHalves() && p.cluster != 1)
    return unsupported(op, "column_halves with a cluster (each CTA loads "
                           "its own B)");
  // Each CTA copies its own gathered rows; a cluster's pair shares B.
  if (op.getARows() && p.cluster != 1)
    return unsupported(op, "a_rows with a cluster (each CTA gathers its "
                           "own rows of A)");
  if (failed(ggc::checkTmaAddressing(op, config)) ||
      failed(ggc::checkTileIndices(op, config)))
    return failure();
  return success();
}

LogicalResult KernelGenerator::checkQuantizedOutput() {
  if (!p.quantizeOut)
    return success();
  // A row's amax over a 128-column block is taken in the quad of threads
  // that holds the row: the block's columns must all lie in one
  // warpgroup's fragment, and in one warp's, or (split_n = 2) half of
  // them in each of the two warpgroups that share the rows, which
  // exchange their halves' amax in shared memory.
  int64_t warpgroupOutputs = p.outBlockN() / p.splitN;
  if (!(warpgroupOutputs % 128 == 0 ||
        (p.splitN == 2 && p.outBlockN() == 128)) ||
      p.warpColumns != 1)
    return op.emitOpError()
           << "quantises out in 1x128 blocks (out_scale), which needs each "
              "consumer warp to hold whole 128-column blocks of a row, or "
              "two warpgroups one block: config block N / split_n a "
              "multiple of 128 (of 256 with column_pairs or column_halves) "
              "or split_n = 2 over 128 output columns, and warp_columns = "
              "1; got "
           << warpgroupOutputs
           << " output columns a warpgroup and warp_columns = "
           << p.warpColumns;
  if (!ggc::targetOf(op).fp8Mma)
    return op.emitOpError() << "quantises out to FP8 (out_scale), which "
                               "takes a target that converts to FP8 "
                               "(sm_89, sm_90a)";
  return success();
}

LogicalResult KernelGenerator::readDecisions(ConfigAttr config) {
  // The decisions of gg-schedule-groups, gg-eliminate-padding and
  // gg-plan-overfetch.
  ScheduleAttr schedule = op.getScheduleAttr();
  PaddingAttr padding = op.getPaddingAttr();
  OverfetchAttr overfetch = op.getOverfetchAttr();
  if (!schedule || !padding || !overfetch)
    return op.emitOpError()
           << "needs 'schedule', 'padding' and 'overfetch'; run "
              "gg-schedule-groups, gg-eliminate-padding and gg-plan-overfetch "
              "before gg-lower-to-nvvm";
  if (failed(ggc::checkOverfetch(op, config, overfetch)))
    return failure();
  p.nFastest = schedule.getOrder() == TileOrder::n_fastest;
  p.mBand = schedule.getMBand();
  // TMA's L2 cache-policy operands (CUTLASS's CacheHintSm90 values).
  switch (schedule.getBCache()) {
  case CachePolicy::normal:
    p.bCachePolicy = 0;
    break;
  case CachePolicy::evict_first:
    p.bCachePolicy = 0x12F0000000000000LL;
    break;
  case CachePolicy::evict_last:
    p.bCachePolicy = 0x14F0000000000000LL;
    break;
  }
  p.padding = padding;
  if (padding.getIdleWarpgroups() == IdleWarpgroups::skip &&
      ggc::transposesB(op))
    return op.emitOpError() << "'padding' with idle_warpgroups = skip cannot "
                               "lower tf32 with 'b' in layout kn: every "
                               "consumer warpgroup takes part in transposing "
                               "B's tile";
  KernelPlanAttr kernelPlan = op.getKernelPlanAttr();
  if (!kernelPlan)
    return op.emitOpError() << "needs 'kernel_plan'; run gg-plan-kernel "
                               "before gg-lower-to-nvvm";
  if (failed(ggc::checkKernelPlan(op, config, kernelPlan)))
    return failure();
  p.stageScales = kernelPlan.getScales() == ScalePlacement::stages;
  p.scalesCanRideStages = ggc::canStageBlockScales(op, config);
  p.aScaleKMajor = p.scalesCanRideStages && ggc::stagesKMajorAScales(op);
  p.stagingSwizzle = ggc::stagingSwizzleBytes(kernelPlan.getStaging());
  p.columnScalesAtIssue =
      p.columnScalesInStages &&
      kernelPlan.getColumnScaleReads() == ColumnScaleReads::at_issue;
  p.warpgroupStoreRows =
      kernelPlan.getStoreIssuers() == StoreIssuers::warpgroup ? 64 : 0;
  p.storeSlice = op.getStoreSlice().value_or(0);
  p.columnPairs = op.getColumnPairs();
  p.columnHalves = op.getColumnHalves();
  p.accumulate = op.getAccumulate();
  p.zeroUngrouped = op.getZeroUngrouped();
  p.warpColumns = kernelPlan.getWarpColumns();
  p.releaseLag = kernelPlan.getReleaseLag();
  p.storeColumns = kernelPlan.getStoreColumns();
  p.consumersCopy = kernelPlan.getProducer() == Producer::none;
  p.producerAllThreads = kernelPlan.getProducer() == Producer::all_threads;
  p.constantStages = kernelPlan.getRingStages() == RingStages::constant;
  p.gatherA = bool(op.getARows());
  p.quantizeOut = bool(op.getOutScale());
  p.kAlignment = overfetch.getK() + 1;
  p.aLoadGranule = overfetch.getRows() + 1;
  p.aLoadBoxes = {p.blockM};
  // Copies by address load a partial tile's valid rows whatever its
  // granule: one source, no boxes.
  p.tensorMaps = ggc::targetOf(op).tensorMaps;
  bool prefixRows = !p.aByAddress() && (p.layout == GroupLayout::contiguous ||
                                     p.layout == GroupLayout::masked);
  if (prefixRows && p.aLoadGranule < p.blockM)
    for (int64_t h = llvm::bit_floor(uint64_t(p.blockM)); h >= p.aLoadGranule;
         h /= 2)
      if (h != p.blockM)
        p.aLoadBoxes.push_back(h);
  return success();
}

LLVM::LLVMFuncOp KernelGenerator::createFunction() {
  MLIRContext *ctx = b.getContext();
  b.setInsertionPointToEnd(module.getBody());
  // No parameters yet: declareParams states them as ggk.kernel_param ops,
  // which ggk-collect-launch makes the function's arguments.
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {});
  std::string name = (func.getSymName() + "_kernel").str();
  auto fn = b.create<LLVM::LLVMFuncOp>(name, fnType);
  fn->setAttr("nvvm.kernel", UnitAttr::get(ctx));
  // One CTA per SM: lets ptxas honour setmaxnreg's register rebalancing
  // (and, without it, gives the one CTA all of the registers).
  fn->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  fn->setAttr("ggk.launch", launchContract(name));
  return fn;
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

void KernelGenerator::emitBody() {
  MLIRContext *ctx = b.getContext();
  // Dynamic shared memory, aligned by hand to the 1024-byte swizzle atom.
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    if (!module.lookupSymbol("ggc_smem"))
      b.create<LLVM::GlobalOp>(
          LLVM::LLVMArrayType::get(b.getI8Type(), 0), /*isConstant=*/false,
          LLVM::Linkage::External, "ggc_smem", Attribute(), /*alignment=*/1024,
          /*addrSpace=*/ggc::kShared);
  }
  Value raw = b.create<LLVM::AddressOfOp>(b.ptr(ggc::kShared), "ggc_smem");
  Value rawInt = b.create<LLVM::PtrToIntOp>(b.i64(), raw);
  Value aligned = b.andI(b.add(rawInt, b.c64(1023)), b.c64(~int64_t(1023)));
  smem = b.gep(raw, b.sub(aligned, rawInt));
  declareSharedBuffers();

  Value tid = b.threadIdx();
  Value isLeader = b.eq(tid, b.c32(0));
  clusterRank = p.cluster == 1 ? b.c32(0)
                               : b.clusterRank();
  b.create<scf::IfOp>(isLeader, [&](OpBuilder &, Location) {
    for (int64_t s = 0; s < p.stages; ++s) {
      // The loads' arrivals, which depend on where the scales live
      // (ggk-place-scales).
      b.create<ggk::InitFullBarrierOp>(
          fullBarrier(b.c32(s)), op.getKernelPlanAttr(), p.copyThreads());
      // The releases' arrivals, which depend on the cluster
      // (ggk-multicast).
      b.create<ggk::InitEmptyBarrierOp>(emptyBarrier(b.c32(s)),
                                        p.numConsumers * 4, p.cluster);
    }
    b.create<scf::YieldOp>();
  });
  // The group table is published by the same barrier as the mbarriers.
  if (p.groupTableEntries) {
    groupTable = sharedAddress(ggc::kGroupTable, Value(), 0);
    b.create<ggk::FillGroupTableOp>(
        groupTable, groupsPtr, tid, p.groupTableEntries,
        ggc::ctaThreads(p.numConsumers,
                        op.getKernelPlanAttr().getProducer()),
        p.groupsElem);
  }
  b.create<ggk::PublishBarrierInitOp>(isLeader, p.cluster);

  // The roles and their registers (ggk-warp-specialize).
  auto roles = b.create<ggk::WarpSpecializeOp>(
      tid, isLeader, op.getKernelPlanAttr(), p.numConsumers);
  {
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&roles.getProducer());
    if (!p.consumersCopy)
      emitProducer();
    b.create<ggk::YieldOp>(ValueRange{});
    Block *consumers = b.createBlock(&roles.getConsumers(), {}, {b.i32()},
                                     {b.getUnknownLoc()});
    // With the TMA store pool, ggk-stage-tile-stores ends it with a drain
    // of the stores in flight.
    emitConsumer(consumers->getArgument(0));
    b.create<ggk::YieldOp>(ValueRange{});
  }
  b.create<ggk::LeaveClusterOp>(p.cluster);
  b.create<LLVM::ReturnOp>(ValueRange{});
  (void)ctx;
}

LogicalResult KernelGenerator::run() {
  if (failed(plan()))
    return failure();
  LLVM::LLVMFuncOp fn = createFunction();
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  declareParams();
  emitBody();
  if (failedEpilogue) {
    fn.erase();
    return failure();
  }
  return success();
}

} // namespace ggc

namespace {

struct LowerToNVVMPass : public ggc::impl::LowerToNVVMBase<LowerToNVVMPass> {
  using LowerToNVVMBase::LowerToNVVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      SmallVector<GroupedMatmulOp> ops(func.getOps<GroupedMatmulOp>());
      if (ops.empty())
        continue;
      if (ops.size() > 1) {
        func.emitOpError() << "holds " << ops.size()
                           << " gg.grouped_matmul ops; gg-lower-to-nvvm makes "
                              "one kernel per function, so put each in its "
                              "own function";
        return signalPassFailure();
      }
      for (BlockArgument arg : func.getArguments())
        if (!isa<MemRefType>(arg.getType())) {
          func.emitOpError() << "argument #" << arg.getArgNumber()
                             << " is not a memref; kernel functions take "
                                "only memrefs";
          return signalPassFailure();
        }
      ggc::KernelGenerator generator(ops.front(), func, module);
      if (failed(generator.run()))
        return signalPassFailure();
      func.erase();
    }
    module->setAttr("llvm.target_triple",
                    StringAttr::get(module.getContext(), "nvptx64-nvidia-cuda"));
  }
};

} // namespace
