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
// maps) is recorded as JSON in the `ggc.kernel_info` attribute.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "ggc/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/JSON.h"

#include <numeric>

namespace ggc {
#define GEN_PASS_DEF_LOWERTONVVM
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;
using ggc::byteWidth;
using ggc::KernelBuilder;
using ggc::kSwizzleBytes;
using ggc::kWarpgroupThreads;

namespace {

/// Most places a B scale block boundary may take inside a warpgroup's
/// columns for which the promotion gets one copy of its FMAs per place
/// (promoteBlock); beyond, a select per element.
constexpr int64_t kMaxStraddleVariants = 7;

/// Everything the generator derives from the op before emitting code.
struct KernelPlan {
  GroupLayout layout;
  int64_t numGroups, n, k; // k is dynamic for k_grouped
  int64_t m;               // rows of A (M_max for masked); may be dynamic
  int64_t blockM, blockN, blockK, stages, numConsumers, numSMs;
  /// Consumer warpgroups per 64 rows (config split_n), each taking
  /// `warpgroupN` of the tile's columns.
  int64_t splitN = 1, warpgroupN = 0;
  /// CTAs per cluster along M (1 or 2): a pair of CTAs computes two M blocks
  /// of one N block, each loading half of the B tile and multicasting it to
  /// both, which halves the B traffic from L2.
  int64_t cluster = 1;
  Type aElem, bElem, outElem, groupsElem;
  int64_t aTileBytes, bTileBytes, sharedBytes;
  ggc::SharedMemoryLayout smem; // offsets of every buffer
  int64_t nBlocks;
  /// gg-schedule-groups: N blocks of a group before its M blocks.
  bool nFastest = false;
  /// gg-schedule-groups: the L2 cache policy of B's loads (0: none given).
  int64_t bCachePolicy = 0;
  /// gg-eliminate-padding: a consumer warpgroup whose rows of a tile are all
  /// past its group's end skips the tile's wgmma.
  bool skipIdleWarpgroups = false;
  /// gg-plan-overfetch: k_grouped blocks start at a multiple of this K.
  int64_t kAlignment = 1;
  /// gg-plan-overfetch: heights of the TMA boxes that load A: the whole
  /// tile first, then, when a tile's valid rows are loaded in multiples of
  /// a smaller granule, the powers of two from bit_floor(BM) down to it.
  SmallVector<int64_t> aLoadBoxes;
  /// Rows of A a partial tile loads are its valid rows rounded up to this.
  int64_t aLoadGranule = 0;
  bool bMNMajor; // B given as [G, K, N]: tiles are N-major for wgmma
  bool aMNMajor; // A given as [K, M] (k_grouped): tiles are M-major
  bool outNM = false; // out given as [G, N, M] (k_grouped)
  /// The A tiles wgmma reads are M-major (tf32 reads a K-major copy).
  bool aReadMNMajor() const { return aMNMajor && !smem.transposesA; }
  ScaleAttr aScale, bScale; // null when the operand has no scales
  bool f8 = false;
  bool mx = false; // UE8M0 scales per row of A and per column of B
  /// B's scales change per column and per K block (MX words or 1x128 f32
  /// blocks): staged per K block in shared memory (columnScales).
  bool columnScales = false;
  /// Factors per column and K block in those buffers (MX: one per scale
  /// block; the staging thread decodes them once for the warpgroup).
  int64_t columnEntries = 1;
  /// Scale words each consumer warp stages per K block.
  ggc::ScaleSlots scaleSlots;
  /// The stages carry the block scales (ggc::stagesBlockScales).
  bool stageScales = false;
  /// Rows of A's scale window per stage (stageScales): the tile's, from
  /// its first row rounded down to 4.
  int64_t aScaleWindowRows() const { return blockM + ggc::kAScaleWindowPad; }
  /// 128x128 block scales of B per K block of a warpgroup's columns.
  int64_t bBlocks = 0;
  /// wgmma K steps between promotions: one K block, or one MX scale block.
  int64_t stepsPerPromotion() const {
    return mx ? aScale.getBlockK() / kPerStep() : kSteps();
  }
  // MX stages B's column words, decoded, in a shared buffer per warpgroup
  // (columnScales): 32 column words per thread spilled from registers
  // (1484 against 728 us).
  /// Heights of the TMA store boxes (BM, BM/2, ..., 1); empty: per-thread
  /// stores from registers.
  SmallVector<int64_t> storePool;
  /// The staged tile is kept as column chunks of 128 bytes, [BN / chunk]
  /// x [BM rows of 128 bytes], 128B-swizzled like the operand tiles, which
  /// the pool's TMA boxes (one per chunk) read back unswizzled: each
  /// warp's fragment stores then hit 32 distinct banks. Unswizzled rows of
  /// 256 bytes put a warp's 8 rows on the same banks (8-way conflicts on
  /// every store; 87% of the masked f8 kernel's shared-store wavefronts).
  /// Rows that are no multiple of 128 bytes stay dense and unswizzled.
  bool swizzledStaging = false;
  int64_t stagingChunkColumns() const {
    return swizzledStaging ? kSwizzleBytes / byteWidth(outElem) : blockN;
  }
  /// Each K block's wgmma result is scaled and added to the main f32
  /// accumulator (DeepGEMM's two-level accumulation): for block scales,
  /// which change along K, and for every f8 kernel, whose tensor-core
  /// accumulation would otherwise lose precision over a long K.
  bool twoLevel() const {
    return f8 || (aScale && aScale.variesAlongK()) ||
           (bScale && bScale.variesAlongK());
  }
  /// Two-level accumulation with block k's promotion overlapping block
  /// k + 1's wgmma (emitPipelinedMainLoop): two partial accumulators live
  /// beside the main one.
  bool pipelinedPromotion = false;
  /// setmaxnreg's counts for the producer's and each consumer's threads.
  int64_t producerRegisters = 0, consumerRegisters = 0;

  int64_t threads() const { return kWarpgroupThreads * (1 + numConsumers); }
  int64_t kSteps() const { return blockK * byteWidth(aElem) / 32; }
  int64_t kPerStep() const { return 32 / byteWidth(aElem); }
};

NVVM::WGMMATypes wgmmaType(Type t) {
  if (t.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (t.isF16())
    return NVVM::WGMMATypes::f16;
  if (t.isF32())
    return NVVM::WGMMATypes::tf32;
  if (isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  return NVVM::WGMMATypes::e5m2;
}

/// CUtensorMapDataType names, as the runtime expects them.
const char *tensorMapType(Type t) {
  if (t.isBF16())
    return "bfloat16";
  if (t.isF16())
    return "float16";
  if (t.isF32())
    return "float32";
  return "uint8"; // f8 is moved as bytes
}

const char *elementName(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(64))
    return "i64";
  if (isa<Float8E4M3FNType>(t))
    return "f8e4m3fn";
  return "f8e5m2";
}

class KernelGenerator {
public:
  KernelGenerator(GroupedMatmulOp op, func::FuncOp func, ModuleOp module)
      : op(op), func(func), module(module),
        b(op.getLoc(), module.getContext()) {}

  LogicalResult run();

private:
  LogicalResult plan();
  LLVM::LLVMFuncOp createFunction();
  void emitBody();
  void emitProducer();
  void emitConsumer(Value consumerIndex);

  /// The per-tile facts both roles need.
  struct Tile {
    Value group;      // i32
    Value mBlock;     // i32
    Value nBlock;     // i32
    Value rowStart;   // i32: first row of the tile in A's row space
    Value groupStart; // i32: first row of the group in A's row space
    Value rowsValid;  // i32: rows of the tile that belong to the group
    Value kStart;     // i32: K where the tile's K blocks start, else 0
    Value kFirst;     // i32: the group's first K (k_grouped; <= 16 bytes
                      // after kStart, which is aligned for TMA)
    Value kEnd;       // i32: end of the group's K range (k_grouped)
    Value numKBlocks; // i32
  };
  /// Walks the persistent tile schedule, calling `body` for each tile this
  /// CTA owns with the pipeline counter; `body` returns the new counter.
  void forEachTile(function_ref<Value(const Tile &, Value counter)> body);
  /// The same walk carrying `initial` from tile to tile (the counter
  /// first): `body` returns the new state; the result is the last one.
  SmallVector<Value>
  forEachTile(ValueRange initial,
              function_ref<SmallVector<Value>(const Tile &, ValueRange)> body);
  /// A tile's fields as values a loop can carry, and back.
  SmallVector<Value> tileValues(const Tile &t);
  Tile tileFromValues(ValueRange values);
  Value groupRows(Value group, Value *rowStart);
  std::pair<Value, Value> groupOffsets(Value group);
  Value tilesInGroup(Value group);
  Tile tileAt(Value group, Value localTile);

  // Shared memory.
  Value stageA(Value stage);
  Value stageB(Value stage);
  Value transposedB(Value stage);
  Value transposedA(Value stage);
  /// Copies an MN-major f32 tile of `mnExtent` columns into a K-major one.
  void transposeTile(Value src, Value dst, int64_t mnExtent);
  /// The ring buffer the `it`-th K block uses, and the parity of its
  /// barriers' current phase.
  std::pair<Value, Value> ringSlot(Value it);
  Value fullBarrier(Value stage);
  Value emptyBarrier(Value stage);
  /// The consumers are done reading `stage`: its producer (and, in a
  /// cluster, the peer's, which multicasts into it) may refill it.
  void releaseStage(Value stage);
  /// `localAddress` in this CTA's shared memory, as an address in the
  /// shared memory of cluster CTA `rank`.
  Value clusterAddress(Value localAddress, Value rank);

  /// Where a consumer thread's accumulator fragment lies in the tile.
  struct Fragment {
    Value row; // i32: first of the thread's two rows (the other is +8)
    Value col; // i32: first column of the thread's pairs (+8c for pair c)
    Value colBase; // i32: the warpgroup's first column in the tile
    Value lane;    // i32: the thread's lane in its warp
    Value warpRow; // i32: the first of the warp's 16 rows in the tile
  };
  std::pair<Value, Value> emitMainLoop(const Tile &t, Value counter, Value acc,
                                       Value consumerIndex, const Fragment &f,
                                       Value rowOffset);
  std::pair<Value, Value>
  emitPipelinedMainLoop(const Tile &t, Value counter, Value consumerIndex,
                        const Fragment &f, Value rowOffset,
                        function_ref<void()> whileFirstBlockRuns);
  void emitPipelinedConsumer(Value consumerIndex, const Fragment &f,
                             Value rowOffset);
  Value emitIdleLoop(const Tile &t, Value counter);
  std::pair<Value, Value> stageTiles(const Tile &t, Value kBlock, Value stage,
                                     const Fragment &f, Value rowOffset);
  Fragment fragment(Value consumerIndex);
  /// A wgmma accumulator fragment of zeros (accType).
  Value zeroAccumulator();
  struct BlockScales {
    Value a[2];             // per row of the thread (f32, or MX words)
    SmallVector<Value> b;   // per 128-column block of the tile
    /// The scales as one list (a[0], a[1], then b), for loop-carried
    /// values, and back.
    SmallVector<Value> values() const {
      SmallVector<Value> v = {a[0], a[1]};
      v.append(b.begin(), b.end());
      return v;
    }
    static BlockScales fromValues(ValueRange v) {
      BlockScales s;
      s.a[0] = v[0];
      s.a[1] = v[1];
      s.b.assign(v.begin() + 2, v.end());
      return s;
    }
  };
  /// Per-column scales come from `columnFactors`, or else from the
  /// warpgroup's buffer for kBlock.
  Value promoteBlock(Value acc, Value partial, const BlockScales &scales,
                     const Tile &t, const Fragment &f, Value consumerIndex,
                     Value kBlock, Value columnFactors = Value());
  /// A K block's scales reach the consumers through per-warp shared-memory
  /// slots (ScaleSlots), filled by cp.async one K block ahead, so no load
  /// waits in a register the loop carries: ptxas copied such a carried
  /// register before the block's last wgmma and stalled there on the load
  /// (a fifth of the masked f8 kernel's warp samples).
  ///
  /// cp.async of K block `kBlock`'s words into slot buffer kBlock % 2, when
  /// the tile has that block, then a commit (an empty group past the
  /// tile's end keeps the wait counts uniform).
  void issueScaleCopies(const Tile &t, Value kBlock, const Fragment &f,
                        Value ownColumn);
  /// The thread's scales of K block `kBlock` from the slots, once their
  /// copies have landed: every group but the newest (block kBlock + 1's).
  BlockScales readScales(Value kBlock, const Fragment &f);
  /// Where stage `stage` keeps A's scales for the tile's rows, and B's.
  Value stageScalesA(Value stage);
  Value stageScalesB(Value stage);
  /// The producer's loads of K block `kBlock`'s block scales into `stage`
  /// (stageScales), completing on its full barrier `full`: B's by cp.async,
  /// issued before the barrier's expect_tx (they count as an arrival, not
  /// as bytes), and A's by TMA, after it.
  void copyStageBScales(const Tile &t, Value kBlock, Value stage, Value full);
  void loadStageAScales(const Tile &t, Value kBlock, Value stage, Value full);
  /// The thread's scales of the K block in `stage` (stageScales), read
  /// once the stage is full and before it is released.
  BlockScales readStageScales(const Tile &t, Value stage, const Fragment &f);
  /// B's word for the thread's column in K block `kBlock` (per-column
  /// scales), once every copy has landed.
  Value readColumnWord(Value kBlock, const Fragment &f);
  /// Slot `word` of this warp in slot buffer `buffer`.
  Value scaleSlot(Value buffer, Value word, int64_t wordOffset = 0);
  /// Index in A's scales of row `rowInTile`'s word for K block `kBlock`:
  /// an f32 1x128 block scale, or the MX word holding its exponents.
  Value aScaleIndex(const Tile &t, Value kBlock, Value rowInTile);
  /// Index of B's 128x128 block scale for the `j`th 128 of the warpgroup's
  /// columns.
  Value bBlockScaleIndex(const Tile &t, Value kBlock, Value colBase,
                         int64_t j);
  Value issueWgmmas(Value acc, Value aTile, Value bTile, bool fresh,
                    int64_t firstStep = 0, int64_t numSteps = -1);
  /// Index in B's scales of column `colInTile`'s word for K block `kBlock`:
  /// its UE8M0 word (MX) or its f32 1x128 block scale.
  Value columnScaleIndex(const Tile &t, Value kBlock, Value colInTile);
  /// This warpgroup's shared-memory buffer `buffer` (0 or 1) of B's
  /// column scales: 4 bytes per column of the tile.
  Value columnScales(Value consumerIndex, Value buffer);
  /// Stores this thread's column scale into `buffer` and waits until the
  /// whole warpgroup has (one per thread, column = thread).
  /// `scaleBlock`: the word's 128-wide block of the scales' K (which bytes
  /// MX decodes; for k_grouped, of the concatenated K).
  void publishColumnScale(Value word, Value consumerIndex, Value buffer,
                          const Fragment &f, Value scaleBlock);
  /// Index of K block `kBlock` of tile `t` among the scale blocks: the
  /// tile's own for most layouts; k_grouped blocks start on a multiple of
  /// 128 of the concatenated K (gg-plan-overfetch), whose blocks the
  /// scales follow.
  Value scaleBlock(const Tile &t, Value kBlock);
  /// K blocks of 128 in the scales' K extent.
  Value scaleBlockCount();
  /// MX words (four exponents each, `perWord` K apiece) per row of scales.
  Value mxWordsPerRow(int64_t perWord);
  Value decodeUE8M0(Value word, Value byteIndex);
  void zeroRowsPastGroup(const Tile &t, Value kBlock, Value stage);
  void zeroKOutside(Value tile, int64_t mnExtent, bool mnMajor, Value lo,
                    Value hi);
  void emitEpilogue(const Tile &tile, const Fragment &f, Value acc);
  void storeStagedTile(const Tile &t, Value staging);
  void awaitStagedTileFree();
  void consumerBarrier();
  FailureOr<Value> emitEpilogueRegion(Value acc, ArrayRef<Value> rowValues,
                                      ArrayRef<Value> colValues,
                                      ArrayRef<Value> scalarValues,
                                      Value group);
  std::string kernelInfo(StringRef name);

  GroupedMatmulOp op;
  func::FuncOp func;
  ModuleOp module;
  KernelBuilder b;
  KernelPlan p;

  // Kernel parameters.
  Value tensorMapB, outPtr, groupsPtr, dynamicSize;
  /// A's tensor maps, one per height of p.aLoadBoxes (the whole tile first).
  SmallVector<Value> aMaps;
  Value aScalePtr, bScalePtr; // null without scales
  Value tensorMapAScale;       // A's block scales by TMA (stageScales)
  SmallVector<Value> poolMaps; // one store tensor map per pool height
  SmallVector<Value> rowPtrs, colPtrs, scalarPtrs;
  Value smem; // 1024-byte aligned base of dynamic shared memory
  Value clusterRank; // this CTA's rank in its cluster (i32)
  LLVM::LLVMStructType accType;
  bool failedEpilogue = false;
};

LogicalResult KernelGenerator::plan() {
  ConfigAttr config = ggc::requireConfig(op, "gg-lower-to-nvvm");
  if (!config)
    return failure();
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
  p.warpgroupN = p.blockN / p.splitN;
  p.numConsumers = p.blockM / 64 * p.splitN;
  p.aElem = op.getAType().getElementType();
  p.bElem = op.getBType().getElementType();
  p.outElem = op.getOutType().getElementType();
  p.groupsElem = cast<MemRefType>(op.getGroups().getType()).getElementType();

  // What this lowering does not cover yet is an error, never a wrong kernel.
  auto unsupported = [&](const Twine &what) {
    return op.emitOpError() << "is not supported by gg-lower-to-nvvm yet: "
                            << what;
  };
  p.aScale = op.getAScaleKindAttr();
  p.bScale = op.getBScaleKindAttr();
  p.f8 = isa<Float8E4M3FNType, Float8E5M2Type>(p.aElem);
  p.mx = ggc::usesMxScales(op);
  p.columnScales = ggc::stagesColumnScales(op);
  p.columnEntries = ggc::columnScaleEntries(op, config);
  p.scaleSlots = ggc::scaleSlotsPerWarp(op, config);
  if (p.bScale && p.bScale.getKind() == ScaleKind::block &&
      p.bScale.getBlockMN() == 128)
    p.bBlocks = ggc::bBlockScalesPerWarpgroup(config);
  // One thread of each consumer warpgroup stages one column's scale.
  if (p.columnScales && p.warpgroupN > kWarpgroupThreads)
    return unsupported(Twine(p.mx ? "mx" : "1x128 block") +
                       " scales of 'b' with block N over " +
                       Twine(kWarpgroupThreads));
  p.bMNMajor = op.getBLayout() == OperandLayout::kn;
  p.aMNMajor = op.getALayout() == OperandLayout::km;
  // out in nm ([G, N, M], k_grouped): element (m, n) of group g is at
  // (g N + n) M + m, written by per-thread stores.
  p.outNM = op.getOutLayout() == OperandLayout::nm;

  // A padded_contiguous tile takes the group of its first row. DeepGEMM's
  // layout aligns every group to 128 rows, so a tile of 64 or 128 rows
  // never straddles two groups; a taller one could.
  if (p.layout == GroupLayout::padded_contiguous && 128 % p.blockM != 0)
    return op.emitOpError() << "padded_contiguous needs block M to divide the "
                               "128-row group alignment (64 or 128), got "
                            << p.blockM;
  p.cluster = config.getClusterM();
  if (config.getClusterN() != 1 || p.cluster > 2)
    return unsupported("clusters other than [1, 1] and [2, 1]");
  if (p.cluster == 2 && p.layout == GroupLayout::padded_contiguous)
    return unsupported("clusters with padded_contiguous (the two M blocks of "
                       "a pair may belong to different groups)");
  if (p.aElem.isF32() && !op.getTf32())
    return unsupported("f32 operands without 'tf32' (wgmma has no f32 math)");
  if (failed(ggc::checkTmaAddressing(op, config)) ||
      failed(ggc::checkTileIndices(op, config)))
    return failure();

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
  p.skipIdleWarpgroups = padding.getIdleWarpgroups() == IdleWarpgroups::skip;
  if (p.skipIdleWarpgroups && ggc::transposesB(op))
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
  p.pipelinedPromotion = kernelPlan.getPromotion() == Promotion::pipelined;
  p.stageScales = kernelPlan.getScales() == ScalePlacement::stages;
  p.producerRegisters = kernelPlan.getProducerRegisters();
  p.consumerRegisters = kernelPlan.getConsumerRegisters();
  p.swizzledStaging = kernelPlan.getStaging() == Staging::swizzled;
  p.kAlignment = overfetch.getK() + 1;
  p.aLoadGranule = overfetch.getRows() + 1;
  p.aLoadBoxes = {p.blockM};
  bool prefixRows = p.layout == GroupLayout::contiguous ||
                    p.layout == GroupLayout::masked;
  if (prefixRows && p.aLoadGranule < p.blockM)
    for (int64_t h = llvm::bit_floor(uint64_t(p.blockM)); h >= p.aLoadGranule;
         h /= 2)
      if (h != p.blockM)
        p.aLoadBoxes.push_back(h);

  p.aTileBytes = p.blockM * p.blockK * byteWidth(p.aElem);
  p.bTileBytes = p.blockN * p.blockK * byteWidth(p.bElem);
  if (std::optional<ArrayRef<int64_t>> pool = op.getStorePool())
    p.storePool.assign(pool->begin(), pool->end());
  // Ring of A tiles, ring of B tiles, the mbarriers, the staged output.
  p.smem = ggc::sharedMemoryLayout(op, config, !p.storePool.empty());
  p.sharedBytes = p.smem.total;
  p.nBlocks = (p.n + p.blockN - 1) / p.blockN;
  if (p.twoLevel() && p.blockK != 128)
    return op.emitOpError() << "block scales are applied per 128-wide K "
                               "block, so block K must be 128, got "
                            << p.blockK;
  // A warpgroup's columns cover whole 128-column scale blocks, or fewer
  // than 128 columns, which touch at most two.
  if (p.bScale && p.bScale.getKind() == ScaleKind::block &&
      p.blockN % 128 != 0 && p.warpgroupN > 128)
    return op.emitOpError() << "block N must be a multiple of 128, or its "
                               "warpgroups' columns at most 128, with "
                               "128x128 scales of 'b', got "
                            << p.blockN;
  accType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(p.warpgroupN / 2, b.f32()));
  return success();
}

LLVM::LLVMFuncOp KernelGenerator::createFunction() {
  MLIRContext *ctx = b.getContext();
  b.setInsertionPointToEnd(module.getBody());
  Type tensorMapPtr = b.ptr(ggc::kGeneric);
  Type globalPtr = b.ptr(ggc::kGlobal);
  // A's tensor maps, B's, A's scales' (stageScales), the store pool's, then
  // the pointers.
  int64_t tensorMaps =
      p.aLoadBoxes.size() + 1 + (p.stageScales ? 1 : 0) + p.storePool.size();
  SmallVector<Type> params(tensorMaps, tensorMapPtr);
  params.append({globalPtr, globalPtr, b.i64()});
  for (size_t i = 0; i < (op.getAScale() ? 1 : 0) + (op.getBScale() ? 1 : 0) +
                             op.getRowVectors().size() +
                             op.getColVectors().size() +
                             op.getGroupScalars().size();
       ++i)
    params.push_back(globalPtr);
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params);
  std::string name = (func.getSymName() + "_kernel").str();
  auto fn = b.create<LLVM::LLVMFuncOp>(name, fnType);
  // Tensor maps are passed by value as __grid_constant__ parameters, so the
  // TMA unit reads them from parameter space with no copy to device memory.
  for (unsigned i = 0; i < tensorMaps; ++i) {
    fn.setArgAttr(i, "llvm.byval",
                  TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
    fn.setArgAttr(i, "llvm.align", b.getI64IntegerAttr(64));
    fn.setArgAttr(i, "nvvm.grid_constant", UnitAttr::get(ctx));
  }
  fn->setAttr("nvvm.kernel", UnitAttr::get(ctx));
  fn->setAttr("nvvm.maxntid",
              b.getDenseI32ArrayAttr({static_cast<int32_t>(p.threads()), 1, 1}));
  // One CTA per SM: lets ptxas honour setmaxnreg's register rebalancing.
  fn->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  fn->setAttr("ggc.kernel_info", b.getStringAttr(kernelInfo(name)));
  return fn;
}

std::string KernelGenerator::kernelInfo(StringRef name) {
  // Positions refer to the arguments of the source func.func, so a caller can
  // match the kernel's parameters to the tensors it passes.
  auto argIndex = [&](Value v) -> int64_t {
    for (BlockArgument arg : func.getArguments())
      if (arg == v)
        return arg.getArgNumber();
    return -1;
  };
  llvm::json::Array params;
  auto tensorMap = [&](StringRef operand, Value v, ArrayRef<int64_t> box,
                       StringRef swizzle = "128B") {
    llvm::json::Array boxJson;
    for (int64_t d : box)
      boxJson.push_back(d);
    params.push_back(llvm::json::Object{
        {"kind", "tensor_map"},
        {"operand", operand},
        {"arg", argIndex(v)},
        {"dtype", tensorMapType(cast<MemRefType>(v.getType()).getElementType())},
        {"box", std::move(boxJson)},
        {"swizzle", swizzle}});
  };
  auto pointer = [&](StringRef operand, Value v) {
    params.push_back(
        llvm::json::Object{{"kind", "pointer"}, {"operand", operand},
                           {"arg", argIndex(v)}});
  };
  bool masked = p.layout == GroupLayout::masked;
  bool kGrouped = p.layout == GroupLayout::k_grouped;
  // Boxes are innermost first and span the operand's full rank. MN-major
  // operands are loaded 64 columns (one 128-byte swizzled row) at a time.
  int64_t chunk = kSwizzleBytes / byteWidth(p.aElem);
  for (int64_t h : p.aLoadBoxes) {
    if (p.aMNMajor)
      tensorMap("a", op.getA(), {chunk, p.blockK});
    else if (masked)
      tensorMap("a", op.getA(), {p.blockK, h, 1});
    else
      tensorMap("a", op.getA(), {p.blockK, h});
  }
  if (p.bMNMajor && kGrouped)
    tensorMap("b", op.getB(), {chunk, p.blockK});
  else if (p.bMNMajor)
    tensorMap("b", op.getB(), {chunk, p.blockK, 1});
  else if (kGrouped)
    tensorMap("b", op.getB(), {p.blockK, p.blockN / p.cluster});
  else
    tensorMap("b", op.getB(), {p.blockK, p.blockN / p.cluster, 1});
  // A's 1x128 block scales for a tile's rows and one K block (stageScales):
  // a window of BM + 4 consecutive f32 of the M-major scale tensor,
  // unswizzled.
  if (p.stageScales) {
    if (masked)
      tensorMap("a_scale", op.getAScale(), {p.aScaleWindowRows(), 1, 1}, "none");
    else
      tensorMap("a_scale", op.getAScale(), {p.aScaleWindowRows(), 1}, "none");
  }
  // The store pool: boxes of h rows and a column chunk of the staged tile
  // (128 swizzled bytes, or all BN columns unswizzled).
  StringRef poolSwizzle = p.swizzledStaging ? "128B" : "none";
  for (int64_t h : p.storePool) {
    if (masked || kGrouped)
      tensorMap("out", op.getOut(), {p.stagingChunkColumns(), h, 1},
                poolSwizzle);
    else
      tensorMap("out", op.getOut(), {p.stagingChunkColumns(), h}, poolSwizzle);
  }
  pointer("out", op.getOut());
  pointer("groups", op.getGroups());
  // The one run-time size: rows of A (M_max for masked, K for k_grouped).
  int64_t sizeDim = masked ? 1 : (kGrouped && !p.aMNMajor) ? 1 : 0;
  params.push_back(llvm::json::Object{{"kind", "size"},
                                      {"operand", "a"},
                                      {"arg", argIndex(op.getA())},
                                      {"dim", sizeDim}});
  if (op.getAScale())
    pointer("a_scale", op.getAScale());
  if (op.getBScale())
    pointer("b_scale", op.getBScale());
  for (Value v : op.getRowVectors())
    pointer("rows", v);
  for (Value v : op.getColVectors())
    pointer("cols", v);
  for (Value v : op.getGroupScalars())
    pointer("group_scalars", v);

  llvm::json::Array args;
  for (BlockArgument arg : func.getArguments()) {
    auto type = cast<MemRefType>(arg.getType());
    llvm::json::Array shape;
    // Dynamic sizes are named by what they follow: the row count M (the
    // concatenated K for k_grouped), the 4-aligned M of M-major block
    // scales, or, for k_grouped, K's count of 128-wide scale blocks (MX:
    // of 4 x 32 or 4 x 128 K, a word's four exponents).
    bool isScale = arg == op.getAScale() || arg == op.getBScale();
    bool alignedRows = arg == op.getAScale() && p.aScale &&
                       p.aScale.getKind() == ScaleKind::block &&
                       p.aScale.getMajor() == ScaleMajor::mn_major;
    bool mxRows = arg == op.getAScale() && p.mx &&
                  p.layout == GroupLayout::contiguous;
    StringRef kScaleBlocks =
        p.mx && p.aScale.getBlockK() == 128 ? "ceil(K/512)" : "ceil(K/128)";
    for (auto [i, d] : llvm::enumerate(type.getShape()))
      shape.push_back(!ShapedType::isDynamic(d) ? llvm::json::Value(d)
                      : kGrouped && isScale ? llvm::json::Value(kScaleBlocks)
                      : kGrouped            ? llvm::json::Value("K")
                      : alignedRows && i + 1 == type.getShape().size()
                          ? llvm::json::Value("align4(M)")
                      : mxRows ? llvm::json::Value("(M+3G)/4*4")
                               : llvm::json::Value("M"));
    args.push_back(llvm::json::Object{
        {"dtype", elementName(type.getElementType())},
        {"shape", std::move(shape)},
        {"written", arg == op.getOut()}});
  }

  llvm::json::Object info{
      {"name", name},
      {"layout", stringifyGroupLayout(p.layout)},
      {"block", p.threads()},
      {"shared_bytes", p.sharedBytes},
      {"cluster", p.cluster},
      {"max_grid", p.numSMs},
      {"block_m", p.blockM},
      {"block_n", p.blockN},
      {"block_k", p.blockK},
      {"num_groups", p.numGroups},
      {"n", p.n},
      {"k", ShapedType::isDynamic(p.k) ? llvm::json::Value(nullptr)
                                       : llvm::json::Value(p.k)},
      {"params", std::move(params)},
      {"args", std::move(args)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(info));
  return text;
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

Value KernelGenerator::stageA(Value stage) {
  return b.gep(smem, b.mul(b.toI64(stage), b.c64(p.aTileBytes)));
}
Value KernelGenerator::stageB(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.bStagesAt),
                           b.mul(b.toI64(stage), b.c64(p.bTileBytes))));
}
Value KernelGenerator::stageScalesA(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.stageScalesAt),
                           b.mul(b.toI64(stage), b.c64(p.smem.stageAScaleBytes))));
}
Value KernelGenerator::stageScalesB(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.stageScalesAt +
                                 p.stages * p.smem.stageAScaleBytes),
                           b.mul(b.toI64(stage), b.c64(16))));
}
Value KernelGenerator::transposedB(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.transposedBAt),
                           b.mul(b.toI64(stage), b.c64(p.bTileBytes))));
}
Value KernelGenerator::transposedA(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.transposedAAt),
                           b.mul(b.toI64(stage), b.c64(p.aTileBytes))));
}
std::pair<Value, Value> KernelGenerator::ringSlot(Value it) {
  return {b.remU(it, b.c32(p.stages)),
          b.andI(b.divU(it, b.c32(p.stages)), b.c32(1))};
}
Value KernelGenerator::fullBarrier(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.barriersAt),
                           b.mul(b.toI64(stage), b.c64(8))));
}
void KernelGenerator::releaseStage(Value stage) {
  if (p.cluster == 1) {
    b.mbarrierArrive(emptyBarrier(stage));
    return;
  }
  // One arrival per warp, on this CTA's barrier and on the peer's. CTA
  // scope is enough (the warp's reads of the stage are done) and avoids the
  // cluster-wide fence a .release.cluster arrive implies (measured with ncu:
  // MEMBAR stalls doubled the kernel's time).
  Value lane = b.remU(b.threadIdx(), b.c32(32));
  b.create<scf::IfOp>(b.eq(lane, b.c32(0)), [&](OpBuilder &, Location) {
    Value bar = emptyBarrier(stage);
    for (int64_t r = 0; r < p.cluster; ++r)
      b.create<NVVM::MBarrierArriveOp>(Type(), clusterAddress(bar, b.c32(r)),
                                       Value(), NVVM::MemScopeKind::CTA,
                                       false);
    b.create<scf::YieldOp>();
  });
}

Value KernelGenerator::clusterAddress(Value localAddress, Value rank) {
  return b.create<NVVM::MapaOp>(LLVM::LLVMPointerType::get(b.getContext(), 7),
                                localAddress, rank);
}

Value KernelGenerator::emptyBarrier(Value stage) {
  return b.gep(smem, b.add(b.c64(p.smem.barriersAt + p.stages * 8),
                           b.mul(b.toI64(stage), b.c64(8))));
}

//===----------------------------------------------------------------------===//
// Tile schedule
//===----------------------------------------------------------------------===//

/// Rows of A that belong to `group`, clamped so that a malformed offsets or
/// count array can never make the kernel write outside `out`.
Value KernelGenerator::groupRows(Value group, Value *rowStart) {
  switch (p.layout) {
  case GroupLayout::contiguous: {
    auto [begin, end] = groupOffsets(group);
    *rowStart = begin;
    return b.sub(end, begin);
  }
  case GroupLayout::masked: {
    Value m = b.toI32(dynamicSize);
    Value count = b.loadGlobal(b.i32(), groupsPtr, group);
    *rowStart = b.c32(0);
    return b.clampS(count, b.c32(0), m);
  }
  case GroupLayout::k_grouped:
    *rowStart = b.c32(0);
    return b.c32(p.m);
  case GroupLayout::padded_contiguous:
    break;
  }
  llvm_unreachable("padded_contiguous has no per-group row count");
}

/// `group`'s [begin, end) from the offsets array (rows of A, or K for
/// k_grouped), clamped to [0, run-time size] as i32. i64 offsets are
/// clamped before they are narrowed: narrowing first would wrap 2^32 + 5 to
/// 5, a range inside the data that is not the caller's.
std::pair<Value, Value> KernelGenerator::groupOffsets(Value group) {
  bool wide = p.groupsElem.isInteger(64);
  Value size = wide ? dynamicSize : b.toI32(dynamicSize);
  Value begin = b.loadGlobal(p.groupsElem, groupsPtr, group);
  Value end = b.loadGlobal(p.groupsElem, groupsPtr, b.add(group, b.c32(1)));
  begin = b.clampS(begin, wide ? b.c64(0) : b.c32(0), size);
  end = b.clampS(end, begin, size);
  return {b.toI32(begin), b.toI32(end)};
}

Value KernelGenerator::tilesInGroup(Value group) {
  Value rowStart;
  Value rows = groupRows(group, &rowStart);
  // A cluster works on a pair of M blocks at a time.
  Value mUnits = b.ceilDivU(b.ceilDivU(rows, p.blockM), p.cluster);
  return b.mul(mUnits, b.c32(p.nBlocks));
}

KernelGenerator::Tile KernelGenerator::tileAt(Value group, Value localTile) {
  Tile t;
  t.group = group;
  Value rowStart;
  Value rows = groupRows(group, &rowStart);
  Value mUnits = b.ceilDivU(b.ceilDivU(rows, p.blockM), p.cluster);
  // In the order gg-schedule-groups chose. In a cluster, the CTA of rank r
  // takes M block 2u + r of unit u (past the group's end for an odd count:
  // it then loads and stores nothing useful).
  Value mUnit;
  if (p.nFastest) {
    t.nBlock = b.remU(localTile, b.c32(p.nBlocks));
    mUnit = b.divU(localTile, b.c32(p.nBlocks));
  } else {
    mUnit = b.remU(localTile, mUnits);
    t.nBlock = b.divU(localTile, mUnits);
  }
  t.mBlock = p.cluster == 1 ? mUnit
                            : b.add(b.mul(mUnit, b.c32(p.cluster)), clusterRank);
  Value tileRow = b.mul(t.mBlock, b.c32(p.blockM));
  t.rowStart = b.add(rowStart, tileRow);
  t.groupStart = rowStart;
  t.rowsValid = b.minS(b.sub(rows, tileRow), b.c32(p.blockM));
  if (p.layout == GroupLayout::k_grouped) {
    // The group's K range, clamped to K like the rows of other layouts.
    std::tie(t.kFirst, t.kEnd) = groupOffsets(group);
    // A TMA box must start on a 16-byte boundary of its contiguous
    // dimension: with K-major operands, the blocks start at the aligned K
    // at or before the group's first, and the overfetched K entries of the
    // previous group are cleared like the tail.
    t.kStart = p.kAlignment == 1
                   ? t.kFirst
                   : b.andI(t.kFirst, b.c32(~(p.kAlignment - 1)));
    t.numKBlocks = b.ceilDivU(b.sub(t.kEnd, t.kStart), p.blockK);
    return t;
  }
  t.kStart = t.kFirst = b.c32(0);
  t.kEnd = b.c32(p.k);
  t.numKBlocks = b.c32((p.k + p.blockK - 1) / p.blockK);
  return t;
}

void KernelGenerator::forEachTile(
    function_ref<Value(const Tile &, Value counter)> body) {
  forEachTile(ValueRange{b.c32(0)},
              [&](const Tile &t, ValueRange state) -> SmallVector<Value> {
                return {body(t, state[0])};
              });
}

SmallVector<Value> KernelGenerator::tileValues(const Tile &t) {
  return {t.group,   t.mBlock, t.nBlock, t.rowStart, t.groupStart,
          t.rowsValid, t.kStart, t.kFirst, t.kEnd,     t.numKBlocks};
}

KernelGenerator::Tile KernelGenerator::tileFromValues(ValueRange v) {
  Tile t;
  t.group = v[0];
  t.mBlock = v[1];
  t.nBlock = v[2];
  t.rowStart = v[3];
  t.groupStart = v[4];
  t.rowsValid = v[5];
  t.kStart = v[6];
  t.kFirst = v[7];
  t.kEnd = v[8];
  t.numKBlocks = v[9];
  return t;
}

SmallVector<Value> KernelGenerator::forEachTile(
    ValueRange initial,
    function_ref<SmallVector<Value>(const Tile &, ValueRange)> body) {
  Type i32 = b.i32();
  SmallVector<Type> stateTypes(initial.getTypes());
  // Clusters walk the schedule together, one unit (a pair of M blocks) each.
  Value gridSize = b.divU(b.gridDim(), b.c32(p.cluster));
  Value firstTile = b.divU(b.blockIdx(), b.c32(p.cluster));

  if (p.layout == GroupLayout::padded_contiguous) {
    // Tiles cover A's rows directly; a tile belongs to the group of its first
    // row, and tiles that start on a padding row (-1) are skipped.
    Value mBlocks = b.ceilDivU(b.toI32(dynamicSize), p.blockM);
    Value total = b.mul(mBlocks, b.c32(p.nBlocks));
    SmallVector<Type> types = {i32};
    types.append(stateTypes);
    SmallVector<Value> start = {firstTile};
    start.append(initial.begin(), initial.end());
    auto loop = b.create<scf::WhileOp>(
        types, start,
        [&](OpBuilder &, Location, ValueRange args) {
          b.create<scf::ConditionOp>(b.lt(args[0], total), args);
        },
        [&](OpBuilder &, Location, ValueRange args) {
          Tile t;
          if (p.nFastest) {
            t.nBlock = b.remU(args[0], b.c32(p.nBlocks));
            t.mBlock = b.divU(args[0], b.c32(p.nBlocks));
          } else {
            t.mBlock = b.remU(args[0], mBlocks);
            t.nBlock = b.divU(args[0], mBlocks);
          }
          t.rowStart = b.mul(t.mBlock, b.c32(p.blockM));
          t.groupStart = t.rowStart;
          t.rowsValid = b.minS(b.sub(b.toI32(dynamicSize), t.rowStart),
                               b.c32(p.blockM));
          t.group = b.loadGlobal(i32, groupsPtr, t.rowStart);
          t.kStart = t.kFirst = b.c32(0);
          t.kEnd = b.c32(p.k);
          t.numKBlocks = b.c32((p.k + p.blockK - 1) / p.blockK);
          Value owned = b.andI(b.ge(t.group, b.c32(0)),
                               b.lt(t.group, b.c32(p.numGroups)));
          ValueRange state = args.drop_front();
          auto ifOp = b.create<scf::IfOp>(
              owned,
              [&](OpBuilder &, Location) {
                b.create<scf::YieldOp>(body(t, state));
              },
              [&](OpBuilder &, Location) {
                b.create<scf::YieldOp>(state);
              });
          SmallVector<Value> next = {b.add(args[0], gridSize)};
          next.append(ifOp.getResults().begin(), ifOp.getResults().end());
          b.create<scf::YieldOp>(next);
        });
    return SmallVector<Value>(loop.getResults().drop_front());
  }

  // Grouped layouts: carry a cursor (group, first tile of the group) that
  // only moves forward, since each CTA's tile ids increase.
  Value numGroups = b.c32(p.numGroups);
  SmallVector<Type> types = {i32, i32, i32};
  types.append(stateTypes);
  SmallVector<Value> start = {firstTile, b.c32(0), b.c32(0)};
  start.append(initial.begin(), initial.end());
  auto loop = b.create<scf::WhileOp>(
      types, start,
      [&](OpBuilder &, Location, ValueRange args) {
        Value tile = args[0];
        // Advance the cursor past groups that end at or before `tile`. The
        // condition forwards (group, its first tile, the next group's first
        // tile); when it stops, the first two are the tile's group.
        auto advance = b.create<scf::WhileOp>(
            TypeRange{i32, i32, i32}, ValueRange{args[1], args[2]},
            [&](OpBuilder &, Location, ValueRange cursor) {
              Value inRange = b.lt(cursor[0], numGroups);
              auto tiles = b.create<scf::IfOp>(
                  inRange,
                  [&](OpBuilder &, Location) {
                    b.create<scf::YieldOp>(tilesInGroup(cursor[0]));
                  },
                  [&](OpBuilder &, Location) {
                    b.create<scf::YieldOp>(b.c32(0));
                  });
              Value nextStart = b.add(cursor[1], tiles.getResult(0));
              b.create<scf::ConditionOp>(
                  b.andI(inRange, b.ge(tile, nextStart)),
                  ValueRange{cursor[0], cursor[1], nextStart});
            },
            [&](OpBuilder &, Location, ValueRange cursor) {
              b.create<scf::YieldOp>(
                  ValueRange{b.add(cursor[0], b.c32(1)), cursor[2]});
            });
        Value group = advance.getResult(0);
        Value start = advance.getResult(1);
        Value more = b.lt(group, numGroups);
        SmallVector<Value> forwarded = {tile, group, start};
        forwarded.append(args.begin() + 3, args.end());
        b.create<scf::ConditionOp>(more, forwarded);
      },
      [&](OpBuilder &, Location, ValueRange args) {
        Tile t = tileAt(args[1], b.sub(args[0], args[2]));
        SmallVector<Value> state = body(t, args.drop_front(3));
        SmallVector<Value> next = {b.add(args[0], gridSize), args[1], args[2]};
        llvm::append_range(next, state);
        b.create<scf::YieldOp>(next);
      });
  return SmallVector<Value>(loop.getResults().drop_front(3));
}

//===----------------------------------------------------------------------===//
// Producer and consumers
//===----------------------------------------------------------------------===//

void KernelGenerator::emitProducer() {
  // A's block scales come with the tiles when the stages carry them.
  int64_t aScaleBytes = p.stageScales ? p.aScaleWindowRows() * 4 : 0;
  int64_t txBytes = p.aTileBytes + p.bTileBytes + aScaleBytes;
  forEachTile([&](const Tile &t, Value counter) -> Value {
    auto kLoop = b.create<scf::ForOp>(
        b.c32(0), t.numKBlocks, b.c32(1), ValueRange{counter},
        [&](OpBuilder &, Location, Value kBlock, ValueRange iter) {
          Value it = iter[0];
          auto [stage, phase] = ringSlot(it);
          // Wait until the consumers have released this buffer (the first
          // pass through the ring waits on the "previous" phase, which is
          // complete for a fresh barrier).
          b.mbarrierWait(emptyBarrier(stage), b.xorI(phase, b.c32(1)));
          Value full = fullBarrier(stage);
          Value k = b.add(t.kStart, b.mul(kBlock, b.c32(p.blockK)));
          int64_t chunk = kSwizzleBytes / byteWidth(p.aElem);
          // K-major A at (row offset r in the tile, box i).
          auto loadA = [&](Value r, int64_t box) {
            Value dst = b.gep(stageA(stage),
                              b.mul(b.toI64(r), b.c64(kSwizzleBytes)));
            Value row = b.add(t.rowStart, r);
            if (p.layout == GroupLayout::masked)
              b.tmaLoad(dst, aMaps[box], {k, row, t.group}, full);
            else
              b.tmaLoad(dst, aMaps[box], {k, row}, full);
          };
          if (p.stageScales)
            copyStageBScales(t, kBlock, stage, full);
          if (p.aLoadBoxes.size() == 1) {
            b.mbarrierArriveExpectTx(full, b.c32(txBytes));
            if (p.aMNMajor) {
              // M-major A: one [BK, 64] box per 64 rows of the tile.
              for (int64_t j = 0; j < p.blockM / chunk; ++j)
                b.tmaLoad(
                    b.gep(stageA(stage), b.c64(j * p.blockK * kSwizzleBytes)),
                    aMaps[0], {b.add(t.rowStart, b.c32(j * chunk)), k}, full);
            } else {
              loadA(b.c32(0), 0);
            }
          } else {
            // gg-plan-overfetch's granule: a partial tile loads its valid
            // rows rounded up to it, as a sum of the pool's boxes (rows
            // past them hold stale data, computed and never stored).
            Value rows = b.minS(
                b.andI(b.add(b.maxS(t.rowsValid, b.c32(0)),
                             b.c32(p.aLoadGranule - 1)),
                       b.c32(~(p.aLoadGranule - 1))),
                b.c32(p.blockM));
            int64_t rowBytes = p.blockK * byteWidth(p.aElem);
            b.mbarrierArriveExpectTx(
                full, b.add(b.mul(rows, b.c32(rowBytes)),
                            b.c32(p.bTileBytes + aScaleBytes)));
            Value whole = b.eq(rows, b.c32(p.blockM));
            b.create<scf::IfOp>(
                whole,
                [&](OpBuilder &, Location) {
                  loadA(b.c32(0), 0);
                  b.create<scf::YieldOp>();
                },
                [&](OpBuilder &, Location) {
                  Value offset = b.c32(0);
                  for (size_t i = 1; i < p.aLoadBoxes.size(); ++i) {
                    int64_t h = p.aLoadBoxes[i];
                    Value take = b.ne(b.andI(rows, b.c32(h)), b.c32(0));
                    b.create<scf::IfOp>(take, [&](OpBuilder &, Location) {
                      loadA(offset, i);
                      b.create<scf::YieldOp>();
                    });
                    offset = b.add(offset, b.andI(rows, b.c32(h)));
                  }
                  b.create<scf::YieldOp>();
                });
          }
          if (p.stageScales)
            loadStageAScales(t, kBlock, stage, full);
          Value n0 = b.mul(t.nBlock, b.c32(p.blockN));
          // In a cluster, each CTA loads its share of the B tile and
          // multicasts it to the same place in every CTA of the cluster.
          auto loadB = [&](Value dst, ArrayRef<Value> coords) {
            // gg-schedule-groups' L2 policy for B.
            Value bHint = p.bCachePolicy ? b.c64(p.bCachePolicy) : Value();
            if (p.cluster == 1) {
              b.tmaLoad(dst, tensorMapB, coords, full, bHint);
              return;
            }
            SmallVector<Value> coords32;
            for (Value c : coords)
              coords32.push_back(b.toI32(c));
            b.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
                clusterAddress(dst, clusterRank), tensorMapB, coords32, full,
                ValueRange{}, b.create<arith::ConstantIntOp>(b.getI16Type(),
                                                             (1 << p.cluster) - 1),
                bHint, NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
                NVVM::CTAGroupKindAttr(), Value());
          };
          if (p.bMNMajor) {
            // N-major B: one [BK, 64] box per 64 columns, each its own
            // 128B-swizzled block of BK rows; a cluster CTA loads its half.
            int64_t chunks = p.blockN / chunk / p.cluster;
            for (int64_t jj = 0; jj < chunks; ++jj) {
              Value j = b.add(b.mul(clusterRank, b.c32(chunks)), b.c32(jj));
              Value n = b.add(n0, b.mul(j, b.c32(chunk)));
              Value dst = b.gep(stageB(stage),
                                b.mul(b.toI64(j), b.c64(p.blockK * kSwizzleBytes)));
              if (p.layout == GroupLayout::k_grouped)
                loadB(dst, {n, k});
              else
                loadB(dst, {n, k, t.group});
            }
          } else {
            // K-major B: rows of N; a cluster CTA loads its half of them.
            Value half = b.mul(clusterRank, b.c32(p.blockN / p.cluster));
            Value dst = b.gep(stageB(stage),
                              b.mul(b.toI64(half), b.c64(kSwizzleBytes)));
            if (p.layout == GroupLayout::k_grouped)
              loadB(dst, {k, b.add(n0, half)});
            else
              loadB(dst, {k, b.add(n0, half), t.group});
          }
          b.create<scf::YieldOp>(ValueRange{b.add(it, b.c32(1))});
        });
    return kLoop.getResult(0);
  });
}

/// Issues the wgmma instructions of one K block on the stage's tiles. With
/// `fresh`, the first K step overwrites the accumulator instead of adding.
Value KernelGenerator::issueWgmmas(Value acc, Value aTile, Value bTile,
                                   bool fresh, int64_t firstStep,
                                   int64_t numSteps) {
  MLIRContext *ctx = b.getContext();
  NVVM::WGMMATypes typeA = wgmmaType(p.aElem), typeB = wgmmaType(p.bElem);
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, p.warpgroupN, p.kPerStep());
  if (numSteps < 0)
    numSteps = p.kSteps();
  // K-major tiles move 32 bytes along the swizzled 128-byte rows per K
  // step; MN-major tiles move 16 rows of 128 bytes, and their 64-wide MN
  // chunks lie BK rows apart.
  bool bNMajor = p.bMNMajor && !p.smem.transposesB;
  int64_t aStepBytes = p.aReadMNMajor() ? 16 * kSwizzleBytes : 32;
  int64_t bStepBytes = bNMajor ? 16 * kSwizzleBytes : 32;
  Value tileDescA =
      b.wgmmaDescriptor(aTile, p.aReadMNMajor() ? p.blockK * kSwizzleBytes : 16,
                        1024);
  Value tileDescB =
      b.wgmmaDescriptor(bTile, bNMajor ? p.blockK * kSwizzleBytes : 16, 1024);
  for (int64_t s = firstStep; s < firstStep + numSteps; ++s) {
    // A K step's descriptor is its tile's plus the step's offset in the
    // start-address field (bytes / 16, bits 0-13), which no address in
    // shared memory overflows: one descriptor computation per tile, not
    // per step (they were a third of the K loop's instructions).
    Value descA = b.add(tileDescA, b.c64(s * aStepBytes / 16));
    Value descB = b.add(tileDescB, b.c64(s * bStepBytes / 16));
    acc = b.create<NVVM::WgmmaMmaAsyncOp>(
        accType, acc, descA, descB, shape, typeA, typeB, NVVM::WGMMATypes::f32,
        fresh && s == firstStep ? NVVM::WGMMAScaleOut::zero
                                : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        p.aReadMNMajor() ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        bNMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        NVVM::MMAIntOverflowAttr());
  }
  return acc;
}

Value KernelGenerator::zeroAccumulator() {
  Value acc = b.create<LLVM::UndefOp>(accType);
  Value zero = b.f32c(0.0);
  for (int64_t i = 0; i < p.warpgroupN / 2; ++i)
    acc = b.create<LLVM::InsertValueOp>(acc, zero, i);
  return acc;
}

KernelGenerator::Fragment KernelGenerator::fragment(Value consumerIndex) {
  // wgmma m64nNk16 accumulator fragment: thread `lane` of warp `w` holds rows
  // w*16 + lane/4 (+8) and column pairs 8*c + 2*(lane%4), at register index
  // 4*c + 2*half + j.
  Value tid = b.remU(b.threadIdx(), b.c32(kWarpgroupThreads));
  Value warp = b.warpUniform(b.divU(tid, b.c32(32)));
  Value lane = b.remU(tid, b.c32(32));
  Fragment f;
  Value rowBlock = b.divU(consumerIndex, b.c32(p.splitN));
  f.colBase = b.mul(b.remU(consumerIndex, b.c32(p.splitN)), b.c32(p.warpgroupN));
  f.lane = lane;
  f.warpRow = b.add(b.mul(rowBlock, b.c32(64)), b.mul(warp, b.c32(16)));
  f.row = b.add(f.warpRow, b.divU(lane, b.c32(4)));
  f.col = b.add(f.colBase, b.mul(b.remU(lane, b.c32(4)), b.c32(2)));
  return f;
}

Value KernelGenerator::scaleBlock(const Tile &t, Value kBlock) {
  if (p.layout != GroupLayout::k_grouped)
    return kBlock;
  return b.add(b.divU(t.kStart, b.c32(128)), kBlock);
}

Value KernelGenerator::scaleBlockCount() {
  if (p.layout != GroupLayout::k_grouped)
    return b.c32((p.k + 127) / 128);
  return b.ceilDivU(b.toI32(dynamicSize), 128);
}

Value KernelGenerator::aScaleIndex(const Tile &t, Value kBlock,
                                   Value rowInTile) {
  Value rows = p.layout == GroupLayout::k_grouped ? b.c32(p.m)
                                                  : b.toI32(dynamicSize);
  Value row = b.add(t.rowStart, rowInTile);
  if (p.mx) {
    // Four exponents share a word, so a 128-wide K block reads one word
    // per row whether the scale blocks are 32 (its four bytes) or 128 (one
    // byte of it) wide.
    int64_t perWord = 4 * p.aScale.getBlockK();
    Value rowWords = mxWordsPerRow(perWord);
    Value word = b.toI64(
        b.divU(b.mul(scaleBlock(t, kBlock), b.c32(128)), b.c32(perWord)));
    Value scaleRow;
    switch (p.layout) {
    case GroupLayout::contiguous: {
      // FlashInfer's layout: each group's scale rows start on a multiple of
      // 4, at (first row + 3g) / 4 * 4; (M + 3G) / 4 * 4 rows in all.
      Value base = b.andI(b.add(t.groupStart, b.mul(t.group, b.c32(3))),
                          b.c32(~3));
      Value total = b.andI(b.add(rows, b.c32(3 * p.numGroups)), b.c32(~3));
      scaleRow = b.minS(b.add(base, b.sub(row, t.groupStart)),
                        b.sub(total, b.c32(1)));
      break;
    }
    case GroupLayout::masked:
      scaleRow = b.add(b.mul(t.group, rows),
                       b.minS(row, b.sub(rows, b.c32(1))));
      break;
    default:
      scaleRow = b.minS(row, b.sub(rows, b.c32(1)));
      break;
    }
    return b.add(b.mul(b.toI64(scaleRow), rowWords), word);
  }
  // 1x128 blocks. M-major: [ceil(K/128), align4(M)]; K-major:
  // [M, ceil(K/128)]; each with a leading G for masked (M = M_max).
  // k_grouped: M is static and M-major rows are not padded.
  bool kGrouped = p.layout == GroupLayout::k_grouped;
  Value kBlocks = b.toI64(scaleBlockCount());
  Value block = b.toI64(scaleBlock(t, kBlock));
  bool mMajor = p.aScale.getMajor() == ScaleMajor::mn_major;
  Value rowStride = kGrouped ? rows : b.andI(b.add(rows, b.c32(3)), b.c32(~3));
  Value groupBase = b.c64(0);
  if (p.layout == GroupLayout::masked)
    groupBase = b.mul(b.toI64(t.group),
                      b.mul(kBlocks, b.toI64(mMajor ? rowStride : rows)));
  Value clamped = b.toI64(b.minS(row, b.sub(rows, b.c32(1))));
  Value index = mMajor ? b.add(b.mul(block, b.toI64(rowStride)), clamped)
                       : b.add(b.mul(clamped, kBlocks), block);
  return b.add(groupBase, index);
}

Value KernelGenerator::bBlockScaleIndex(const Tile &t, Value kBlock,
                                        Value colBase, int64_t j) {
  int64_t nScaleBlocks = (p.n + 127) / 128;
  Value kBlocks = b.toI64(scaleBlockCount());
  Value block = b.toI64(scaleBlock(t, kBlock));
  Value nBlock128 =
      b.minS(b.add(b.divU(b.add(b.mul(t.nBlock, b.c32(p.blockN)), colBase),
                          b.c32(128)),
                   b.c32(j)),
             b.c32(nScaleBlocks - 1));
  // k_grouped B has no group dimension: [ceil(N/128), ceil(K/128)].
  Value g = p.layout == GroupLayout::k_grouped ? b.c64(0) : b.toI64(t.group);
  Value nb = b.toI64(nBlock128);
  return p.bScale.getMajor() == ScaleMajor::k_major
             ? b.add(b.mul(b.add(b.mul(g, b.c64(nScaleBlocks)), nb), kBlocks),
                     block)
             : b.add(b.mul(b.add(b.mul(g, kBlocks), block),
                           b.c64(nScaleBlocks)),
                     nb);
}

/// 2^(e - 127) for the UE8M0 exponent in byte `byteIndex` of `word` (as
/// an f32 bit pattern; e = 0 is the subnormal 2^-127).
Value KernelGenerator::decodeUE8M0(Value word, Value byteIndex) {
  Value e = b.andI(b.create<arith::ShRUIOp>(word, b.mul(byteIndex, b.c32(8))),
                   b.c32(0xFF));
  Value bits = b.select(b.eq(e, b.c32(0)), b.c32(0x00400000),
                        b.create<arith::ShLIOp>(e, b.c32(23)));
  return b.create<arith::BitcastOp>(b.f32(), bits);
}

/// The UE8M0 words K block `kBlock` needs: one per row of the thread (A)

Value KernelGenerator::columnScaleIndex(const Tile &t, Value kBlock,
                                       Value colInTile) {
  Value colBase = b.mul(t.nBlock, b.c32(p.blockN));
  Value col = b.toI64(b.minS(b.add(colBase, colInTile), b.c32(p.n - 1)));
  // k_grouped B has no group dimension.
  Value g = p.layout == GroupLayout::k_grouped ? b.c64(0) : b.toI64(t.group);
  if (!p.mx) {
    // 1x128 f32 blocks: K-major [G, N, ceil(K/128)] or M-major
    // [G, ceil(K/128), N].
    Value kBlocks = b.toI64(scaleBlockCount());
    Value block = b.toI64(scaleBlock(t, kBlock));
    return p.bScale.getMajor() == ScaleMajor::k_major
               ? b.add(b.mul(b.add(b.mul(g, b.c64(p.n)), col), kBlocks), block)
               : b.add(b.mul(b.add(b.mul(g, kBlocks), block), b.c64(p.n)),
                       col);
  }
  int64_t perWord = 4 * p.bScale.getBlockK();
  Value word = b.toI64(
      b.divU(b.mul(scaleBlock(t, kBlock), b.c32(128)), b.c32(perWord)));
  return b.add(b.mul(b.add(b.mul(g, b.c64(p.n)), col), mxWordsPerRow(perWord)),
               word);
}

Value KernelGenerator::mxWordsPerRow(int64_t perWord) {
  // k_grouped: over the concatenated K, the run-time size.
  if (p.layout == GroupLayout::k_grouped)
    return b.toI64(b.ceilDivU(b.toI32(dynamicSize), perWord));
  return b.c64((p.k + perWord - 1) / perWord);
}

Value KernelGenerator::scaleSlot(Value buffer, Value word,
                                 int64_t wordOffset) {
  // In 64 bits from the start, so that LLVM folds the constant parts into
  // the address's immediate offset instead of keeping one register per
  // slot address alive across the K loop.
  int64_t consumerWarps = p.numConsumers * 4;
  int64_t words = p.scaleSlots.words();
  Value warp = b.toI64(b.divU(b.sub(b.threadIdx(), b.c32(kWarpgroupThreads)),
                              b.c32(32)));
  Value index = b.add(b.add(b.mul(b.toI64(buffer), b.c64(consumerWarps * words)),
                            b.mul(warp, b.c64(words))),
                      b.toI64(word));
  return b.gep(smem, b.add(b.c64(p.smem.scaleSlotsAt + 4 * wordOffset),
                           b.mul(index, b.c64(4))));
}

void KernelGenerator::issueScaleCopies(const Tile &t, Value kBlock,
                                       const Fragment &f, Value ownColumn) {
  const ggc::ScaleSlots &slots = p.scaleSlots;
  Value buffer = b.remU(kBlock, b.c32(ggc::kScaleSlotBuffers));
  // Lanes may still be reading this buffer's previous block.
  b.create<NVVM::SyncWarpOp>(b.c32(-1));
  b.create<scf::IfOp>(b.lt(kBlock, t.numKBlocks), [&](OpBuilder &, Location) {
    // Each lane copies into its own word of the slots, past `skip` words.
    auto copy = [&](int64_t skip, Value base, Value index) {
      Value source = b.create<LLVM::GEPOp>(base.getType(), b.i32(), base,
                                           ArrayRef<LLVM::GEPArg>{index});
      b.create<NVVM::CpAsyncOp>(scaleSlot(buffer, f.lane, skip), source, 4,
                                NVVM::LoadCacheModifierKind::CA, Value());
    };
    // Lane i < 16 copies the word of the warp's row i; the next lanes
    // copy B's block scales.
    if (slots.aRows)
      b.create<scf::IfOp>(b.lt(f.lane, b.c32(slots.aRows)),
                          [&](OpBuilder &, Location) {
                            copy(0, aScalePtr,
                                 aScaleIndex(t, kBlock,
                                             b.add(f.warpRow, f.lane)));
                            b.create<scf::YieldOp>();
                          });
    for (int64_t j = 0; j < slots.bBlocks; ++j)
      b.create<scf::IfOp>(b.eq(f.lane, b.c32(slots.aRows + j)),
                          [&](OpBuilder &, Location) {
                            copy(0, bScalePtr,
                                 bBlockScaleIndex(t, kBlock, f.colBase, j));
                            b.create<scf::YieldOp>();
                          });
    if (slots.columns)
      copy(slots.aRows + slots.bBlocks, bScalePtr,
           columnScaleIndex(t, kBlock, ownColumn));
    b.create<scf::YieldOp>();
  });
  b.create<NVVM::CpAsyncCommitGroupOp>();
}

KernelGenerator::BlockScales
KernelGenerator::readScales(Value kBlock, const Fragment &f) {
  const ggc::ScaleSlots &slots = p.scaleSlots;
  BlockScales scales;
  Value one = b.f32c(1.0);
  scales.a[0] = scales.a[1] = one;
  scales.b.assign(std::max<int64_t>(1, slots.bBlocks), one);
  if (!slots.aRows && !slots.bBlocks)
    return scales;
  b.create<NVVM::CpAsyncWaitGroupOp>(ggc::kScaleSlotBuffers - 1);
  // The warp's lanes copied each other's words.
  b.create<NVVM::SyncWarpOp>(b.c32(-1));
  Value buffer = b.remU(kBlock, b.c32(ggc::kScaleSlotBuffers));
  Type aType = p.mx ? b.i32() : b.f32();
  Value rowInWarp = b.divU(f.lane, b.c32(4));
  if (slots.aRows)
    for (int half = 0; half < 2; ++half)
      scales.a[half] = b.create<LLVM::LoadOp>(
          aType, scaleSlot(buffer, rowInWarp, 8 * half));
  for (int64_t j = 0; j < slots.bBlocks; ++j)
    scales.b[j] = b.create<LLVM::LoadOp>(
        b.f32(), scaleSlot(buffer, b.c32(0), slots.aRows + j));
  return scales;
}

KernelGenerator::BlockScales
KernelGenerator::readStageScales(const Tile &t, Value stage,
                                 const Fragment &f) {
  BlockScales scales;
  // The window starts at the tile's first row rounded down to 4.
  Value first = b.add(b.andI(t.rowStart, b.c32(3)), f.row);
  Value aScales = stageScalesA(stage);
  for (int half = 0; half < 2; ++half)
    scales.a[half] = b.create<LLVM::LoadOp>(
        b.f32(), b.gep(aScales, b.toI64(b.mul(b.add(first, b.c32(8 * half)),
                                              b.c32(4)))));
  Value bScales = stageScalesB(stage);
  for (int64_t j = 0; j < p.bBlocks; ++j)
    scales.b.push_back(
        b.create<LLVM::LoadOp>(b.f32(), b.gep(bScales, b.c64(4 * j))));
  return scales;
}

void KernelGenerator::copyStageBScales(const Tile &t, Value kBlock,
                                       Value stage, Value full) {
  // B's block scales, 4 bytes each: cp.async, which the full barrier
  // tracks from here on (cp.async.mbarrier.arrive.noinc is one of the two
  // arrivals the barrier expects, so the phase cannot complete without
  // them; the counting variant, which raises the pending count, is
  // reported by compute-sanitizer synccheck as a missing wait).
  Value bScales = stageScalesB(stage);
  for (int64_t j = 0; j < p.bBlocks; ++j) {
    Value source = b.create<LLVM::GEPOp>(
        bScalePtr.getType(), b.f32(), bScalePtr,
        ArrayRef<LLVM::GEPArg>{bBlockScaleIndex(t, kBlock, b.c32(0), j)});
    b.create<NVVM::CpAsyncOp>(b.gep(bScales, b.c64(4 * j)), source, 4,
                              NVVM::LoadCacheModifierKind::CA, Value());
  }
  b.create<NVVM::CpAsyncMBarrierArriveOp>(full, /*noinc=*/true);
}

void KernelGenerator::loadStageAScales(const Tile &t, Value kBlock,
                                       Value stage, Value full) {
  // A's for the tile's rows: one box of BM + 4 f32 at (row rounded down
  // to 4, K block[, group]), as TMA's innermost coordinate must be 16-byte
  // aligned; rows past the tensor (a group's tail) read as zeros and are
  // never stored.
  SmallVector<Value> coords = {b.andI(t.rowStart, b.c32(~3)),
                               scaleBlock(t, kBlock)};
  if (p.layout == GroupLayout::masked)
    coords.push_back(t.group);
  b.tmaLoad(stageScalesA(stage), tensorMapAScale, coords, full);
}

Value KernelGenerator::readColumnWord(Value kBlock, const Fragment &f) {
  b.create<NVVM::CpAsyncWaitGroupOp>(0);
  Value buffer = b.remU(kBlock, b.c32(ggc::kScaleSlotBuffers));
  return b.create<LLVM::LoadOp>(
      b.i32(), scaleSlot(buffer, f.lane,
                         p.scaleSlots.aRows + p.scaleSlots.bBlocks));
}

Value KernelGenerator::columnScales(Value consumerIndex, Value buffer) {
  Value index = b.add(b.mul(consumerIndex, b.c32(2)), buffer);
  return b.gep(smem, b.add(b.c64(p.smem.columnScalesAt),
                           b.mul(b.toI64(index),
                                 b.c64(p.blockN * 4 * p.columnEntries))));
}

void KernelGenerator::publishColumnScale(Value word, Value consumerIndex,
                                          Value buffer, const Fragment &f,
                                          Value scaleBlock) {
  // The thread's column of the warpgroup's share of the tile.
  Value own = b.remU(b.threadIdx(), b.c32(kWarpgroupThreads));
  Value column = b.add(f.colBase, own);
  Value factors = columnScales(consumerIndex, buffer);
  b.create<scf::IfOp>(b.lt(own, b.c32(p.warpgroupN)), [&](OpBuilder &,
                                                          Location) {
    if (!p.mx) {
      b.create<LLVM::StoreOp>(
          word, b.gep(factors, b.mul(b.toI64(column), b.c64(4))));
    } else {
      // Decoded here once, not by each of the 32 threads reading the
      // column: block k's scale blocks take bytes (k * entries + j) % 4.
      for (int64_t j = 0; j < p.columnEntries; ++j) {
        Value byte = b.remU(
            b.add(b.mul(scaleBlock, b.c32(p.columnEntries)), b.c32(j)),
            b.c32(4));
        Value entry = b.add(b.mul(b.c32(j), b.c32(p.blockN)), column);
        b.create<LLVM::StoreOp>(decodeUE8M0(word, byte),
                                b.gep(factors, b.mul(b.toI64(entry), b.c64(4))));
      }
    }
    b.create<scf::YieldOp>();
  });
  // Named barrier 2 + i for consumer warpgroup i (1 is all consumers).
  b.create<NVVM::SyncWarpOp>(b.c32(-1));
  b.create<NVVM::BarrierOp>(Type(), b.add(consumerIndex, b.c32(2)),
                            b.c32(kWarpgroupThreads),
                            NVVM::BarrierReductionAttr(), Value());
}

void KernelGenerator::emitConsumer(Value consumerIndex) {
  // This warpgroup's 64 rows of the A tile: 64 swizzled rows when A is
  // K-major, one [BK, 64] chunk when it is M-major.
  Value rowBlock = b.divU(consumerIndex, b.c32(p.splitN));
  Value rowOffset = b.mul(b.toI64(rowBlock),
                          b.c64(p.aReadMNMajor() ? p.blockK * kSwizzleBytes
                                                 : 64 * kSwizzleBytes));
  Fragment f = fragment(consumerIndex);
  if (p.pipelinedPromotion)
    return emitPipelinedConsumer(consumerIndex, f, rowOffset);

  forEachTile([&](const Tile &t, Value counter) -> Value {
    Value acc = zeroAccumulator();
    if (!p.skipIdleWarpgroups) {
      auto [result, end] = emitMainLoop(t, counter, acc, consumerIndex, f,
                                        rowOffset);
      emitEpilogue(t, f, result);
      return end;
    }
    // Consumer i works on rows [64 r, 64 r + 64), r = i / split_n: when
    // they are all past the group's end, it only passes the buffers back.
    Value active = b.lt(
        b.mul(b.divU(consumerIndex, b.c32(p.splitN)), b.c32(64)), t.rowsValid);
    auto work = b.create<scf::IfOp>(
        active,
        [&](OpBuilder &, Location) {
          auto [result, end] = emitMainLoop(t, counter, acc, consumerIndex, f,
                                            rowOffset);
          b.create<scf::YieldOp>(ValueRange{result, end});
        },
        [&](OpBuilder &, Location) {
          b.create<scf::YieldOp>(ValueRange{acc, emitIdleLoop(t, counter)});
        });
    // The epilogue keeps every consumer at the staged store's barriers; an
    // idle one's rows are never stored.
    emitEpilogue(t, f, work.getResult(0));
    return work.getResult(1);
  });
}

/// The consumer of a pipelined-promotion kernel: each tile's epilogue is
/// deferred into the next tile, where it runs while that tile's first K
/// block computes; the tensor core would otherwise idle through every
/// epilogue (two consumer warpgroups finish a tile together). The loop
/// over tiles carries the finished tile (its fields and accumulator), never
/// a wgmma in flight.
void KernelGenerator::emitPipelinedConsumer(Value consumerIndex,
                                            const Fragment &f,
                                            Value rowOffset) {
  Value zeroAcc = zeroAccumulator();
  // State: counter, whether a tile is pending, its fields, its accumulator.
  Tile none;
  none.group = none.mBlock = none.nBlock = none.rowStart = none.groupStart =
      none.rowsValid = none.kStart = none.kFirst = none.kEnd =
          none.numKBlocks = b.c32(0);
  SmallVector<Value> initial = {b.c32(0), b.create<arith::ConstantIntOp>(
                                              b.getI1Type(), 0)};
  SmallVector<Value> noFields = tileValues(none);
  llvm::append_range(initial, noFields);
  initial.push_back(zeroAcc);
  auto pendingTile = [&, fields = noFields.size()](ValueRange state) {
    return tileFromValues(state.slice(2, fields));
  };
  auto finishPending = [&](ValueRange state) {
    b.create<scf::IfOp>(state[1], [&](OpBuilder &, Location) {
      emitEpilogue(pendingTile(state), f, state.back());
      b.create<scf::YieldOp>();
    });
  };
  SmallVector<Value> last = forEachTile(
      initial, [&](const Tile &t, ValueRange state) -> SmallVector<Value> {
        Value counter = state[0];
        Value works = b.lt(b.c32(0), t.numKBlocks);
        // Consumer i works on rows [64 r, 64 r + 64), r = i / split_n:
        // when they are all past the group's end, it only passes the
        // buffers back (and still meets the others at the epilogue's
        // barriers; its rows are never stored).
        if (p.skipIdleWarpgroups)
          works = b.andI(works, b.lt(b.mul(b.divU(consumerIndex,
                                                  b.c32(p.splitN)),
                                           b.c32(64)),
                                     t.rowsValid));
        auto tile = b.create<scf::IfOp>(
            works,
            [&](OpBuilder &, Location) {
              auto [acc, end] = emitPipelinedMainLoop(
                  t, counter, consumerIndex, f, rowOffset,
                  [&] { finishPending(state); });
              b.create<scf::YieldOp>(ValueRange{acc, end});
            },
            [&](OpBuilder &, Location) {
              finishPending(state);
              b.create<scf::YieldOp>(
                  ValueRange{zeroAcc, emitIdleLoop(t, counter)});
            });
        SmallVector<Value> next = {tile.getResult(1),
                                   b.create<arith::ConstantIntOp>(
                                       b.getI1Type(), 1)};
        llvm::append_range(next, tileValues(t));
        next.push_back(tile.getResult(0));
        return next;
      });
  finishPending(last);
}

/// Waits for each of the tile's K blocks and releases it unread: the
/// consumer's rows of the tile are all padding.
Value KernelGenerator::emitIdleLoop(const Tile &t, Value counter) {
  auto loop = b.create<scf::ForOp>(
      b.c32(0), t.numKBlocks, b.c32(1), ValueRange{counter},
      [&](OpBuilder &, Location, Value, ValueRange iter) {
        Value it = iter[0];
        auto [stage, phase] = ringSlot(it);
        b.mbarrierWait(fullBarrier(stage), phase);
        releaseStage(stage);
        b.create<scf::YieldOp>(ValueRange{b.add(it, b.c32(1))});
      });
  return loop.getResult(0);
}

/// The tile's K loop on this consumer's 64 rows: wgmma on each stage, block
/// scales and two-level accumulation where the op needs them. Returns the
/// accumulator and the stage counter after the tile.
std::pair<Value, Value>
KernelGenerator::emitMainLoop(const Tile &t, Value counter, Value acc,
                              Value consumerIndex, const Fragment &f,
                              Value rowOffset) {
  // Block scales are copied to this thread's slots one K block ahead
  // (issueScaleCopies), so their latency hides behind a whole block of
  // wgmma.
  bool hasSlots = p.scaleSlots.words() > 0;
  SmallVector<Value> initial = {acc, counter};
  // Per-column scales of B go through shared memory, one K block ahead:
  // block k reads buffer k % 2 while block k + 1's are published.
  Value ownColumn =
      b.add(f.colBase, b.remU(b.threadIdx(), b.c32(kWarpgroupThreads)));
  if (hasSlots) {
    issueScaleCopies(t, b.c32(0), f, ownColumn);
    if (p.columnScales)
      publishColumnScale(readColumnWord(b.c32(0), f), consumerIndex, b.c32(0),
                         f, scaleBlock(t, b.c32(0)));
  }
  auto kLoop = b.create<scf::ForOp>(
      b.c32(0), t.numKBlocks, b.c32(1), initial,
      [&](OpBuilder &, Location, Value kBlock, ValueRange iter) {
        Value acc = iter[0], it = iter[1];
        auto [stage, phase] = ringSlot(it);
        Value nextBlock = b.add(kBlock, b.c32(1));
        if (hasSlots)
          issueScaleCopies(t, nextBlock, f, ownColumn);
        // K block kBlock's scales, read while its wgmma runs (and, from
        // the stage, before it is released).
        auto blockScales = [&]() {
          return p.stageScales ? readStageScales(t, stage, f)
                               : readScales(kBlock, f);
        };
        b.mbarrierWait(fullBarrier(stage), phase);
        auto [aTile, bTile] = stageTiles(t, kBlock, stage, f, rowOffset);
        b.create<NVVM::WgmmaFenceAlignedOp>();
        if (p.mx) {
          // MX: one promotion per scale block (32 or 128 K), each with
          // its own UE8M0 factor per row of A and per column of B.
          int64_t per = p.stepsPerPromotion();
          int64_t promotions = p.kSteps() / per;
          BlockScales scales;
          for (int64_t j = 0; j < promotions; ++j) {
            Value partial = issueWgmmas(b.create<LLVM::UndefOp>(accType),
                                        aTile, bTile, /*fresh=*/true,
                                        j * per, per);
            b.create<NVVM::WgmmaGroupSyncAlignedOp>();
            if (j == 0)
              scales = blockScales();
            b.create<NVVM::WgmmaWaitGroupSyncOp>(0);
            if (j + 1 == promotions)
              releaseStage(stage);
            // The block's four exponents share one word per row and per
            // column (1x32), or each block takes a byte of its word (1x128).
            Value byte = b.remU(
                b.add(b.mul(scaleBlock(t, kBlock), b.c32(promotions)),
                      b.c32(j)),
                b.c32(4));
            BlockScales factors;
            factors.a[0] = decodeUE8M0(scales.a[0], byte);
            factors.a[1] = decodeUE8M0(scales.a[1], byte);
            // Scale block j's factors follow the first j's in the buffer.
            Value columnFactors = b.gep(
                columnScales(consumerIndex, b.remU(kBlock, b.c32(2))),
                b.c64(j * p.blockN * 4));
            acc = promoteBlock(acc, partial, factors, t, f, consumerIndex,
                               kBlock, columnFactors);
          }
          publishColumnScale(readColumnWord(nextBlock, f), consumerIndex,
                             b.remU(nextBlock, b.c32(2)), f,
                             scaleBlock(t, nextBlock));
        } else if (p.twoLevel()) {
          // The block's product lands in a fresh accumulator, which is
          // scaled and added to the main one in f32 once it is complete,
          // so a long K never accumulates in the tensor core's f8 path.
          Value partial = issueWgmmas(b.create<LLVM::UndefOp>(accType),
                                      aTile, bTile, /*fresh=*/true);
          b.create<NVVM::WgmmaGroupSyncAlignedOp>();
          BlockScales scales = blockScales();
          b.create<NVVM::WgmmaWaitGroupSyncOp>(0);
          releaseStage(stage);
          acc = promoteBlock(acc, partial, scales, t, f, consumerIndex, kBlock);
          if (p.columnScales)
            publishColumnScale(readColumnWord(nextBlock, f), consumerIndex,
                               b.remU(nextBlock, b.c32(2)), f,
                               scaleBlock(t, nextBlock));
        } else {
          // One wgmma batch stays in flight while the next is issued:
          // after committing block k, wait until only it is pending, so
          // block k-1's buffer can go back to the producer.
          acc = issueWgmmas(acc, aTile, bTile, /*fresh=*/false);
          b.create<NVVM::WgmmaGroupSyncAlignedOp>();
          b.create<NVVM::WgmmaWaitGroupSyncOp>(1);
          b.create<scf::IfOp>(
              b.ge(kBlock, b.c32(1)), [&](OpBuilder &, Location) {
                Value previous =
                    b.remU(b.add(it, b.c32(p.stages - 1)), b.c32(p.stages));
                releaseStage(previous);
                b.create<scf::YieldOp>();
              });
        }
        b.create<scf::YieldOp>(ValueRange{acc, b.add(it, b.c32(1))});
      });
  if (!p.twoLevel()) {
    b.create<NVVM::WgmmaWaitGroupSyncOp>(0);
    Value end = kLoop.getResult(1);
    b.create<scf::IfOp>(b.lt(counter, end), [&](OpBuilder &, Location) {
      Value last = b.remU(b.add(end, b.c32(p.stages - 1)), b.c32(p.stages));
      releaseStage(last);
      b.create<scf::YieldOp>();
    });
  }
  return {kLoop.getResult(0), kLoop.getResult(1)};
}

/// Two-level accumulation in which each K block's promotion runs while the
/// next block's wgmma does: the serial loop leaves the tensor core idle
/// from a block's completion until the next block is issued (scales read,
/// 64 FMAs), so one warpgroup alone never keeps it busy.
///
/// Blocks go in pairs, each block of a pair into a fresh partial
/// accumulator of its own (X, then Y): issue X(k); promote Y(k-1); issue
/// Y(k+1); wait for X; promote X(k); wait for Y. The loop ends each pair with no wgmma in
/// flight: a wgmma pending across the loop's back edge makes ptxas
/// serialise every wgmma (C7514), it cannot tell which accumulator is
/// still being written. Block 0 goes before the loop, a last odd block
/// after it. The tile has at least one K block; `whileFirstBlockRuns`
/// emits work that overlaps block 0's wgmma (the previous tile's
/// epilogue).
///
/// Scale slots (issueScaleCopies) run two blocks ahead here: block k's
/// slots are refilled with block k + 2's words once they are read, since
/// block k + 1's are in use by then.
std::pair<Value, Value> KernelGenerator::emitPipelinedMainLoop(
    const Tile &t, Value counter, Value consumerIndex, const Fragment &f,
    Value rowOffset, function_ref<void()> whileFirstBlockRuns) {
  Value ownColumn =
      b.add(f.colBase, b.remU(b.threadIdx(), b.c32(kWarpgroupThreads)));
  Value undef = b.create<LLVM::UndefOp>(accType);
  // A K block in flight: its partial accumulator and, when the stages carry
  // them, its scales (read before the stage goes back to the producer), as
  // one list of values the pair loop can carry.
  auto issueBlock = [&](Value kBlock, Value it) {
    auto [stage, phase] = ringSlot(it);
    b.mbarrierWait(fullBarrier(stage), phase);
    SmallVector<Value> block;
    auto [aTile, bTile] = stageTiles(t, kBlock, stage, f, rowOffset);
    b.create<NVVM::WgmmaFenceAlignedOp>();
    block.push_back(issueWgmmas(undef, aTile, bTile, /*fresh=*/true));
    b.create<NVVM::WgmmaGroupSyncAlignedOp>();
    if (p.stageScales)
      block.append(readStageScales(t, stage, f).values());
    return block;
  };
  auto awaitBlocks = [&](int64_t pending, Value it) {
    b.create<NVVM::WgmmaWaitGroupSyncOp>(pending);
    releaseStage(ringSlot(it).first);
  };
  auto promote = [&](Value acc, ValueRange block, Value kBlock) {
    BlockScales scales;
    if (p.stageScales) {
      scales = BlockScales::fromValues(block.drop_front());
    } else {
      scales = readScales(kBlock, f);
      issueScaleCopies(t, b.add(kBlock, b.c32(2)), f, ownColumn);
    }
    return b.pinRegisters(
        promoteBlock(acc, block[0], scales, t, f, consumerIndex, kBlock));
  };
  Value one = b.c32(1), two = b.c32(2);
  Value n = t.numKBlocks;
  if (!p.stageScales) {
    issueScaleCopies(t, b.c32(0), f, ownColumn);
    issueScaleCopies(t, one, f, ownColumn);
  }
  SmallVector<Value> first = issueBlock(b.c32(0), counter);
  whileFirstBlockRuns();
  awaitBlocks(0, counter);
  // The main accumulator starts at zero; block 0's product is promoted
  // into it in the first pair (or after the loop when it is the only one).
  Value acc = zeroAccumulator();
  Value pairs = b.divU(b.sub(n, one), two);
  SmallVector<Value> initial = {acc, b.add(counter, one)};
  initial.append(first);
  auto pairLoop = b.create<scf::ForOp>(
      b.c32(0), pairs, one, initial,
      [&](OpBuilder &, Location, Value pair, ValueRange iter) {
        Value acc = iter[0], it = iter[1];
        ValueRange y = iter.drop_front(2);
        Value kx = b.add(b.mul(pair, two), one);
        Value ky = b.add(kx, one);
        SmallVector<Value> x = issueBlock(kx, it);
        acc = promote(acc, y, b.sub(kx, one));
        SmallVector<Value> nextY = issueBlock(ky, b.add(it, one));
        awaitBlocks(1, it);
        acc = promote(acc, x, kx);
        awaitBlocks(0, b.add(it, one));
        SmallVector<Value> next = {acc, b.add(it, two)};
        next.append(nextY);
        b.create<scf::YieldOp>(next);
      });
  acc = pairLoop.getResult(0);
  Value it = pairLoop.getResult(1);
  SmallVector<Value> y(pairLoop.getResults().drop_front(2));
  Value ky = b.mul(pairs, two); // Y's block
  auto tail = b.create<scf::IfOp>(
      b.lt(b.add(ky, one), n),
      [&](OpBuilder &, Location) {
        Value kx = b.add(ky, one);
        SmallVector<Value> x = issueBlock(kx, it);
        Value sum = promote(acc, y, ky);
        awaitBlocks(0, it);
        sum = promote(sum, x, kx);
        b.create<scf::YieldOp>(ValueRange{sum, b.add(it, one)});
      },
      [&](OpBuilder &, Location) {
        b.create<scf::YieldOp>(ValueRange{promote(acc, y, ky), it});
      });
  return {tail.getResult(0), tail.getResult(1)};
}

/// The A and B tiles wgmma reads from ring stage `stage`, once it is full:
/// this warpgroup's rows of A and columns of B, after the consumers'
/// in-place work on them (k_grouped's K tail cleared, tf32 transposes).
std::pair<Value, Value> KernelGenerator::stageTiles(const Tile &t, Value kBlock,
                                                    Value stage,
                                                    const Fragment &f,
                                                    Value rowOffset) {
  Value aTile = b.gep(stageA(stage), rowOffset);
  Value bTile = stageB(stage);
  if (p.layout == GroupLayout::k_grouped)
    zeroRowsPastGroup(t, kBlock, stage);
  if (p.smem.transposesB) {
    transposeTile(stageB(stage), transposedB(stage), p.blockN);
    bTile = transposedB(stage);
  }
  if (p.smem.transposesA) {
    transposeTile(stageA(stage), transposedA(stage), p.blockM);
    aTile = b.gep(transposedA(stage), rowOffset);
  }
  if (p.splitN > 1) {
    // The warpgroup's columns of B: rows of a K-major tile, 128-byte
    // chunks (BK rows each) of an N-major one.
    bool nMajor = p.bMNMajor && !p.smem.transposesB;
    int64_t chunk = kSwizzleBytes / byteWidth(p.bElem);
    bTile = b.gep(bTile, nMajor ? b.mul(b.toI64(b.divU(f.colBase, b.c32(chunk))),
                                        b.c64(p.blockK * kSwizzleBytes))
                                : b.mul(b.toI64(f.colBase),
                                        b.c64(kSwizzleBytes)));
  }
  return {aTile, bTile};
}

/// Adds a K block's completed partial product to the f32 accumulator,
/// scaled by the block's scales (two-level accumulation).
Value KernelGenerator::promoteBlock(Value acc, Value partial,
                                    const BlockScales &scales, const Tile &t,
                                    const Fragment &f, Value consumerIndex,
                                    Value kBlock, Value columnFactors) {
  SmallVector<Value> factor;
  for (int half = 0; half < 2; ++half)
    for (Value bScale : scales.b)
      factor.push_back(b.create<arith::MulFOp>(scales.a[half], bScale));
  int64_t perScale = std::min<int64_t>(p.warpgroupN, 128) / 8;
  // Per-column scales of B (1x128 blocks, MX factors): one f32 per column,
  // from shared memory.
  Value columnValues = columnFactors;
  if (p.columnScales && !columnValues)
    columnValues = columnScales(consumerIndex, b.remU(kBlock, b.c32(2)));
  // The FMAs of the whole fragment, each element's scale given by
  // `scaleOf(chunk, half)` or, for per-column scales, by its column.
  auto accumulate = [&](Value into,
                        llvm::function_ref<Value(int64_t, int)> scaleOf) {
    for (int64_t c = 0; c < p.warpgroupN / 8; ++c)
      for (int j = 0; j < 2; ++j) {
        Value bColumn;
        if (p.columnScales) {
          Value column = b.add(f.col, b.c32(8 * c + j));
          bColumn = b.create<LLVM::LoadOp>(
              b.f32(),
              b.gep(columnValues, b.mul(b.toI64(column), b.c64(4))));
        }
        for (int half = 0; half < 2; ++half) {
          int64_t reg = 4 * c + 2 * half + j;
          Value x = b.create<LLVM::ExtractValueOp>(partial, reg);
          Value y = b.create<LLVM::ExtractValueOp>(into, reg);
          Value scale = p.columnScales
                            ? b.create<arith::MulFOp>(scales.a[half], bColumn)
                            : scaleOf(c, half);
          Value sum = b.create<math::FmaOp>(x, scale, y);
          into = b.create<LLVM::InsertValueOp>(into, sum, reg);
        }
      }
    return into;
  };
  // Fewer than 128 columns may straddle two scale blocks: fragment columns
  // before `boundary` take the first block's scale, the rest the second's.
  bool straddles = p.bBlocks == 2 && p.warpgroupN < 128;
  // B has one scale per 128 columns (128x128 blocks), or one for all of
  // them (none, or per-tensor or per-channel scales, applied elsewhere),
  // which a warpgroup of 256 columns must not index past.
  int64_t bScales = scales.b.size();
  if (!straddles)
    return accumulate(acc, [&](int64_t c, int half) {
      return factor[half * bScales + std::min(c / perScale, bScales - 1)];
    });
  Value firstColumn = b.add(b.mul(t.nBlock, b.c32(p.blockN)), f.colBase);
  Value boundary = b.sub(
      b.mul(b.add(b.divU(firstColumn, b.c32(128)), b.c32(1)), b.c32(128)),
      firstColumn);
  auto scaleBefore = [&](Value columns) {
    return [&, columns](int64_t c, int half) {
      return b.select(b.lt(b.c32(8 * c), columns), factor[half * 2],
                      factor[half * 2 + 1]);
    };
  };
  // A warpgroup's first column is a multiple of gcd(its columns, 128), and
  // so is the boundary. Where that leaves few places for it, each gets its
  // own copy of the FMAs with the scales fixed, chosen once per K block by
  // a switch. (LLVM merges the copies back into one run of FMAs and lets
  // the switch pick each column group's scale register, a move apiece.) A
  // select per element, with the predicates for them, measured 289
  // instructions per K block and warp against 177 unsplit (112 columns,
  // ncu); the switch, 15.2M against 19.0M instructions in all.
  int64_t step = std::gcd(p.warpgroupN, int64_t(128));
  int64_t places = p.warpgroupN / step - 1; // boundaries inside the fragment
  if (places > kMaxStraddleVariants)
    return accumulate(acc, scaleBefore(boundary));
  SmallVector<int64_t> cases;
  for (int64_t i = 1; i <= places; ++i)
    cases.push_back(i);
  Value place = b.create<arith::IndexCastOp>(b.getIndexType(),
                                             b.divU(boundary, b.c32(step)));
  auto sw = b.create<scf::IndexSwitchOp>(TypeRange{acc.getType()}, place,
                                         cases, cases.size());
  auto fill = [&](Region &region, int64_t columnsBefore) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&region.emplaceBlock());
    b.create<scf::YieldOp>(accumulate(acc, [&](int64_t c, int half) {
      return factor[half * 2 + (8 * c < columnsBefore ? 0 : 1)];
    }));
  };
  for (auto [i, region] : llvm::enumerate(sw.getCaseRegions()))
    fill(region, cases[i] * step);
  // No boundary inside the fragment: every column in the first block.
  fill(sw.getDefaultRegion(), p.warpgroupN);
  return sw.getResult(0);
}

/// tf32 with B given N-major or A given M-major: wgmma reads tf32 only
/// K-major, so the consumers copy each such tile transposed into its own
/// 128B-swizzled K-major buffer (16-byte loads along N or M, 4-byte stores
/// along K), fence the copy for the async proxy and meet at a barrier
/// before the wgmma reads it.
void KernelGenerator::transposeTile(Value src, Value dst, int64_t mnExtent) {
  int64_t consumerThreads = kWarpgroupThreads * p.numConsumers;
  int64_t perRow = kSwizzleBytes / 4; // f32 per 128-byte row
  Value thread = b.sub(b.threadIdx(), b.c32(kWarpgroupThreads));
  // The byte of element (row, byteInRow) of a 128B-swizzled tile.
  auto swizzled = [&](Value row, Value byteInRow) {
    Value chunk = b.xorI(b.divU(byteInRow, b.c32(16)), b.remU(row, b.c32(8)));
    return b.toI64(b.add(b.mul(row, b.c32(kSwizzleBytes)),
                         b.add(b.mul(chunk, b.c32(16)),
                               b.remU(byteInRow, b.c32(16)))));
  };
  VectorType quad = VectorType::get({4}, b.f32());
  b.create<scf::ForOp>(
      thread, b.c32(p.blockK * mnExtent / 4), b.c32(consumerThreads),
      ValueRange{}, [&](OpBuilder &, Location, Value i, ValueRange) {
        Value k = b.remU(i, b.c32(p.blockK));
        Value n0 = b.mul(b.divU(i, b.c32(p.blockK)), b.c32(4));
        Value chunk = b.divU(n0, b.c32(perRow));
        Value from = b.add(b.mul(b.toI64(chunk), b.c64(p.blockK * kSwizzleBytes)),
                           swizzled(k, b.mul(b.remU(n0, b.c32(perRow)), b.c32(4))));
        Value values = b.create<LLVM::LoadOp>(quad, b.gep(src, from));
        for (int e = 0; e < 4; ++e) {
          Value n = b.add(n0, b.c32(e));
          Value v = b.create<LLVM::ExtractElementOp>(values, b.c32(e));
          b.create<LLVM::StoreOp>(v, b.gep(dst, swizzled(n, b.mul(k, b.c32(4)))));
        }
        b.create<scf::YieldOp>();
      });
  b.create<NVVM::FenceProxyOp>(
      NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
  consumerBarrier();
}

/// k_grouped: a K block may hold K entries of the neighbouring groups: past
/// the group's end in its last block, and, for K-major operands whose TMA
/// boxes start on an aligned K, before its first in its first block. The
/// consumers zero those entries in shared memory before the wgmma reads
/// them, fence the zeros for the async proxy and meet at a barrier. An
/// MN-major tile ([BK rows of 128 bytes] per 64 MN columns) loses whole
/// rows; a K-major tile (MN rows of 128 bytes) loses 16-byte chunks of every
/// row, found through the 128B swizzle (physical chunk = logical chunk ^
/// (row % 8)), and single bytes where a boundary falls inside a chunk.
void KernelGenerator::zeroRowsPastGroup(const Tile &t, Value kBlock,
                                        Value stage) {
  Value blockStart = b.add(t.kStart, b.mul(kBlock, b.c32(p.blockK)));
  Value lo = b.maxS(b.sub(t.kFirst, blockStart), b.c32(0));
  Value hi = b.minS(b.sub(t.kEnd, blockStart), b.c32(p.blockK));
  Value partial = b.create<arith::OrIOp>(b.lt(b.c32(0), lo),
                                         b.lt(hi, b.c32(p.blockK)));
  b.create<scf::IfOp>(partial, [&](OpBuilder &, Location) {
    zeroKOutside(stageA(stage), p.blockM, p.aMNMajor, lo, hi);
    zeroKOutside(stageB(stage), p.blockN, p.bMNMajor, lo, hi);
    b.create<NVVM::FenceProxyOp>(NVVM::ProxyKind::async_shared,
                                 NVVM::SharedSpaceAttr::get(
                                     b.getContext(), NVVM::SharedSpace::shared_cta));
    // The condition is the same for every consumer thread (same tile, same
    // K block), so all of them reach this barrier.
    consumerBarrier();
    b.create<scf::YieldOp>();
  });
}

void KernelGenerator::zeroKOutside(Value tile, int64_t mnExtent, bool mnMajor,
                                   Value lo, Value hi) {
  int64_t consumerThreads = kWarpgroupThreads * p.numConsumers;
  Value thread = b.sub(b.threadIdx(), b.c32(kWarpgroupThreads));
  Value zero16 = b.create<LLVM::ZeroOp>(VectorType::get({4}, b.i32()));
  Value zeroByte = b.create<LLVM::ZeroOp>(b.getI8Type());
  int64_t elemBytes = byteWidth(p.aElem);
  auto outside = [&](Value k) {
    return b.create<arith::OrIOp>(b.lt(k, lo), b.ge(k, hi));
  };
  if (mnMajor) {
    // Each K row of each 128-byte column chunk (64 bf16/f16, 32 f32
    // columns): eight 16-byte stores when outside.
    int64_t chunks = mnExtent * elemBytes / kSwizzleBytes;
    int64_t stores = p.blockK * chunks * 8;
    b.create<scf::ForOp>(
        thread, b.c32(stores), b.c32(consumerThreads), ValueRange{},
        [&](OpBuilder &, Location, Value i, ValueRange) {
          Value piece = b.remU(i, b.c32(8));
          Value rowOfAll = b.divU(i, b.c32(8));
          Value chunk = b.divU(rowOfAll, b.c32(p.blockK));
          Value k = b.remU(rowOfAll, b.c32(p.blockK));
          b.create<scf::IfOp>(outside(k), [&](OpBuilder &, Location) {
            Value offset = b.add(
                b.mul(b.toI64(chunk), b.c64(p.blockK * kSwizzleBytes)),
                b.add(b.mul(b.toI64(k), b.c64(kSwizzleBytes)),
                      b.mul(b.toI64(piece), b.c64(16))));
            b.create<LLVM::StoreOp>(zero16, b.gep(tile, offset));
            b.create<scf::YieldOp>();
          });
          b.create<scf::YieldOp>();
        });
    return;
  }
  // K-major: every (row, logical chunk) pair; chunks wholly outside
  // [lo, hi) are cleared at once, chunks a boundary cuts byte by byte.
  int64_t perChunk = 16 / elemBytes;
  b.create<scf::ForOp>(
      thread, b.c32(mnExtent * 8), b.c32(consumerThreads), ValueRange{},
      [&](OpBuilder &, Location, Value i, ValueRange) {
        Value row = b.divU(i, b.c32(8));
        Value logical = b.remU(i, b.c32(8));
        Value first = b.mul(logical, b.c32(perChunk));
        Value last = b.add(first, b.c32(perChunk - 1));
        Value physical = b.xorI(logical, b.remU(row, b.c32(8)));
        Value chunkAddress = b.gep(
            tile, b.add(b.mul(b.toI64(row), b.c64(kSwizzleBytes)),
                        b.mul(b.toI64(physical), b.c64(16))));
        Value whole = b.create<arith::OrIOp>(b.lt(last, lo), b.ge(first, hi));
        Value cut = b.create<arith::OrIOp>(outside(first), outside(last));
        b.create<scf::IfOp>(
            whole,
            [&](OpBuilder &, Location) {
              b.create<LLVM::StoreOp>(zero16, chunkAddress);
              b.create<scf::YieldOp>();
            },
            [&](OpBuilder &, Location) {
              b.create<scf::IfOp>(cut, [&](OpBuilder &, Location) {
                b.create<scf::ForOp>(
                    b.c32(0), b.c32(16), b.c32(1), ValueRange{},
                    [&](OpBuilder &, Location, Value byte, ValueRange) {
                      Value k = b.add(first, b.divU(byte, b.c32(elemBytes)));
                      b.create<scf::IfOp>(outside(k), [&](OpBuilder &,
                                                          Location) {
                        b.create<LLVM::StoreOp>(zeroByte,
                                                b.gep(chunkAddress, byte));
                        b.create<scf::YieldOp>();
                      });
                      b.create<scf::YieldOp>();
                    });
                b.create<scf::YieldOp>();
              });
              b.create<scf::YieldOp>();
            });
        b.create<scf::YieldOp>();
      });
}

//===----------------------------------------------------------------------===//
// Epilogue
//===----------------------------------------------------------------------===//

/// Clones the user's epilogue for one accumulator element, expanding the gg
/// math ops into what NVPTX can lower.
FailureOr<Value> KernelGenerator::emitEpilogueRegion(
    Value acc, ArrayRef<Value> rowValues, ArrayRef<Value> colValues,
    ArrayRef<Value> scalarValues, Value group) {
  Block *block = op.getEpilogueBlock();
  if (!block)
    return acc;
  IRMapping map;
  unsigned arg = 0;
  map.map(block->getArgument(arg++), acc);
  for (Value v : rowValues)
    map.map(block->getArgument(arg++), v);
  for (Value v : colValues)
    map.map(block->getArgument(arg++), v);
  for (Value v : scalarValues)
    map.map(block->getArgument(arg++), v);
  map.map(block->getArgument(arg++),
          b.create<arith::IndexCastOp>(b.getIndexType(), group));
  auto exp = [&](Value x) -> Value {
    // exp(x) = exp2(x * log2(e)): NVPTX has ex2 but no exp.
    Value scaled = b.create<arith::MulFOp>(
        x, b.create<arith::ConstantOp>(b.getFloatAttr(x.getType(), 1.4426950408889634)));
    return b.create<math::Exp2Op>(scaled);
  };
  auto sigmoid = [&](Value x) -> Value {
    Value one = b.create<arith::ConstantOp>(b.getFloatAttr(x.getType(), 1.0));
    Value e = exp(b.create<arith::NegFOp>(x));
    return b.create<arith::DivFOp>(one, b.create<arith::AddFOp>(one, e));
  };
  for (Operation &inner : block->without_terminator()) {
    Value result;
    auto operand = [&](unsigned i) { return map.lookup(inner.getOperand(i)); };
    if (isa<SigmoidOp>(inner))
      result = sigmoid(operand(0));
    else if (isa<SiluOp>(inner))
      result = b.create<arith::MulFOp>(operand(0), sigmoid(operand(0)));
    else if (isa<math::ExpOp>(inner))
      result = exp(operand(0));
    else if (isa<arith::ArithDialect>(inner.getDialect()) ||
             isa<math::Exp2Op, math::AbsFOp, math::SqrtOp, math::RsqrtOp,
                 math::FmaOp, math::CopySignOp>(inner)) {
      b.clone(inner, map);
      continue;
    } else {
      inner.emitOpError() << "is not supported in epilogues by the NVPTX "
                             "lowering (arith ops, math.exp, math.exp2, "
                             "math.absf, math.sqrt, math.rsqrt, math.fma, "
                             "math.copysign, gg.sigmoid and gg.silu are)";
      return failure();
    }
    map.map(inner.getResult(0), result);
  }
  return map.lookup(cast<YieldOp>(block->getTerminator()).getValue());
}

void KernelGenerator::emitEpilogue(const Tile &t, const Fragment &f,
                                   Value acc) {
  Value rowInTile = f.row, colInBlock = f.col;
  Value staging;
  if (!p.storePool.empty()) {
    staging = b.gep(smem, b.c64(p.smem.stagedOutputAt));
    awaitStagedTileFree();
  }
  Value colBase = b.mul(t.nBlock, b.c32(p.blockN));
  int64_t outBytes = byteWidth(p.outElem);
  bool masked = p.layout == GroupLayout::masked;
  bool kGrouped = p.layout == GroupLayout::k_grouped;

  // Per row (two per thread): validity, output row index, row-vector values
  // and the scale of A that does not change along K.
  struct Row {
    Value valid, index;
    SmallVector<Value> vectorValues;
    Value scale;
  };
  auto isKind = [](ScaleAttr s, ScaleKind kind) {
    return s && s.getKind() == kind;
  };
  Row rows[2];
  for (int half = 0; half < 2; ++half) {
    Value r = b.add(rowInTile, b.c32(8 * half));
    Row &row = rows[half];
    row.valid = b.lt(r, t.rowsValid);
    Value rowInA = b.add(t.rowStart, r); // row of A's row space
    if (p.layout == GroupLayout::padded_contiguous) {
      // Only rows tagged with this tile's group are stored.
      Value safeRow = b.select(row.valid, rowInA, t.rowStart);
      Value tag = b.loadGlobal(b.i32(), groupsPtr, safeRow);
      row.valid = b.andI(row.valid, b.eq(tag, t.group));
    }
    // Output row index in the flattened [rows, N] view of `out`.
    Value outRow = b.toI64(rowInA);
    if (masked)
      outRow = b.add(b.mul(b.toI64(t.group), b.toI64(dynamicSize)), outRow);
    if (kGrouped)
      outRow = b.add(b.mul(b.toI64(t.group), b.c64(p.m)), outRow);
    row.index = outRow;
    // A row that is not valid reads the tile's first row instead, which is
    // always in bounds.
    Value firstRow = b.toI64(t.rowStart);
    if (masked)
      firstRow = b.add(b.mul(b.toI64(t.group), b.toI64(dynamicSize)), firstRow);
    Value vectorRow = kGrouped ? b.toI64(b.select(row.valid, rowInA, t.rowStart))
                               : b.select(row.valid, outRow, firstRow);
    for (Value v : op.getRowVectors()) {
      Type elem = cast<MemRefType>(v.getType()).getElementType();
      row.vectorValues.push_back(
          b.loadGlobal(elem, rowPtrs[row.vectorValues.size()], vectorRow));
    }
    // Per-row (per-token) scales follow the rows, like row vectors.
    if (isKind(p.aScale, ScaleKind::channel))
      row.scale = b.loadGlobal(b.f32(), aScalePtr, vectorRow);
    else if (isKind(p.aScale, ScaleKind::tensor))
      row.scale = b.loadGlobal(b.f32(), aScalePtr, t.group);
  }
  SmallVector<Value> scalarValues;
  for (auto [i, v] : llvm::enumerate(op.getGroupScalars()))
    scalarValues.push_back(b.loadGlobal(
        cast<MemRefType>(v.getType()).getElementType(), scalarPtrs[i], t.group));

  VectorType pairType = VectorType::get({2}, p.outElem);
  for (int64_t c = 0; c < p.warpgroupN / 8; ++c) {
    Value col = b.add(colBase, b.add(colInBlock, b.c32(8 * c)));
    Value colValid = b.lt(col, b.c32(p.n));
    Value safeCol = b.select(colValid, col, colBase);
    // Column-vector values and scales of B for the two columns of the pair.
    SmallVector<Value> colValues[2];
    Value colScale[2];
    for (int j = 0; j < 2; ++j) {
      // Per-channel scales of B: [G, N]; k_grouped's B has no group
      // dimension, so neither have its scales ([N]).
      if (isKind(p.bScale, ScaleKind::channel))
        colScale[j] = b.loadGlobal(
            b.f32(), bScalePtr,
            b.add(kGrouped ? b.c64(0) : b.mul(b.toI64(t.group), b.c64(p.n)),
                  b.toI64(b.add(safeCol, b.c32(j)))));
      else if (isKind(p.bScale, ScaleKind::tensor))
        colScale[j] = b.loadGlobal(b.f32(), bScalePtr, t.group);
    }
    for (int j = 0; j < 2; ++j)
      for (auto [i, v] : llvm::enumerate(op.getColVectors())) {
        auto type = cast<MemRefType>(v.getType());
        Value index = b.toI64(b.add(safeCol, b.c32(j)));
        if (type.getRank() == 2)
          index = b.add(b.mul(b.toI64(t.group), b.c64(p.n)), index);
        colValues[j].push_back(
            b.loadGlobal(type.getElementType(), colPtrs[i], index));
      }
    for (int half = 0; half < 2; ++half) {
      Value pair = b.create<LLVM::UndefOp>(pairType);
      for (int j = 0; j < 2; ++j) {
        Value v = b.create<LLVM::ExtractValueOp>(acc, 4 * c + 2 * half + j);
        // Scales that do not change along K apply once, to the sum.
        if (rows[half].scale)
          v = b.create<arith::MulFOp>(v, rows[half].scale);
        if (colScale[j])
          v = b.create<arith::MulFOp>(v, colScale[j]);
        FailureOr<Value> result =
            emitEpilogueRegion(v, rows[half].vectorValues, colValues[j],
                               scalarValues, t.group);
        if (failed(result)) {
          failedEpilogue = true;
          return;
        }
        Value out = *result;
        if (out.getType() != p.outElem)
          out = b.create<arith::TruncFOp>(p.outElem, out);
        pair = b.create<LLVM::InsertElementOp>(pair, out, b.c32(j));
      }
      if (!p.storePool.empty()) {
        // Into the staged tile, at the element's place in the tile.
        Value rowInTile = b.add(f.row, b.c32(8 * half));
        Value colInTile = b.add(f.col, b.c32(8 * c));
        Value offset;
        if (p.swizzledStaging) {
          // Chunk of 128 bytes, then its row; the 16-byte unit within the
          // row is XORed with row % 8 (the pair never crosses a unit).
          Value byteInRow = b.mul(colInTile, b.c32(outBytes));
          Value chunk = b.divU(byteInRow, b.c32(kSwizzleBytes));
          Value unit = b.divU(b.remU(byteInRow, b.c32(kSwizzleBytes)), b.c32(16));
          Value swizzledUnit = b.xorI(unit, b.remU(rowInTile, b.c32(8)));
          offset = b.toI64(b.add(
              b.add(b.mul(chunk, b.c32(p.blockM * kSwizzleBytes)),
                    b.mul(rowInTile, b.c32(kSwizzleBytes))),
              b.add(b.mul(swizzledUnit, b.c32(16)), b.remU(byteInRow, b.c32(16)))));
        } else {
          offset = b.mul(b.toI64(b.add(b.mul(rowInTile, b.c32(p.blockN)),
                                       colInTile)),
                         b.c64(outBytes));
        }
        b.create<LLVM::StoreOp>(pair, b.gep(staging, offset));
        continue;
      }
      Value valid = b.andI(rows[half].valid, colValid);
      b.create<scf::IfOp>(valid, [&](OpBuilder &, Location) {
        if (p.outNM) {
          // The pair's two columns are two rows of the transposed output.
          Value row = b.sub(rows[half].index, b.mul(b.toI64(t.group), b.c64(p.m)));
          for (int j = 0; j < 2; ++j) {
            Value outCol = b.add(b.mul(b.toI64(t.group), b.c64(p.n)),
                                 b.toI64(b.add(col, b.c32(j))));
            Value offset = b.mul(b.add(b.mul(outCol, b.c64(p.m)), row),
                                 b.c64(outBytes));
            b.storeGlobal(b.create<LLVM::ExtractElementOp>(pair, b.c32(j)),
                          outPtr, offset);
          }
        } else {
          Value offset = b.mul(
              b.add(b.mul(rows[half].index, b.c64(p.n)), b.toI64(col)),
              b.c64(outBytes));
          b.storeGlobal(pair, outPtr, offset);
        }
        b.create<scf::YieldOp>();
      });
    }
  }
  if (!p.storePool.empty())
    storeStagedTile(t, staging);
}

/// The TMA store pool (TMA-Adaptive FP8 Grouped GEMM): the tile's rows that
/// belong to its group, a prefix of `rowsValid` rows, go out as a sum of
/// boxes of BM, BM/2, ..., 1 rows (the binary digits of `rowsValid`), so
/// no row of the next group is ever written; columns past N are clipped by
/// TMA. One consumer thread issues the stores once every consumer has
/// written its fragment and fenced it for the async proxy.
void KernelGenerator::storeStagedTile(const Tile &t, Value staging) {
  b.create<NVVM::FenceProxyOp>(
      NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
  consumerBarrier();
  Value issuer = b.eq(b.threadIdx(), b.c32(kWarpgroupThreads));
  b.create<scf::IfOp>(issuer, [&](OpBuilder &, Location) {
    Value rows = b.maxS(t.rowsValid, b.c32(0));
    Value done = b.c32(0);
    Value col = b.mul(t.nBlock, b.c32(p.blockN));
    for (auto [i, h] : llvm::enumerate(p.storePool)) {
      Value take = b.ne(b.andI(rows, b.c32(h)), b.c32(0));
      Value first = done;
      b.create<scf::IfOp>(take, [&](OpBuilder &, Location) {
        int64_t chunkColumns = p.stagingChunkColumns();
        int64_t rowBytes = chunkColumns * byteWidth(p.outElem);
        for (int64_t chunk = 0; chunk < p.blockN / chunkColumns; ++chunk) {
          Value chunkCol = b.add(col, b.c32(chunk * chunkColumns));
          // A chunk wholly past N has nothing to store.
          b.create<scf::IfOp>(b.lt(chunkCol, b.c32(p.n)), [&](OpBuilder &,
                                                              Location) {
            Value src = b.gep(
                staging, b.add(b.c64(chunk * p.blockM * rowBytes),
                               b.mul(b.toI64(first), b.c64(rowBytes))));
            SmallVector<Value> coords = {chunkCol, b.add(t.rowStart, first)};
            if (p.layout == GroupLayout::masked ||
                p.layout == GroupLayout::k_grouped)
              coords.push_back(t.group);
            b.create<NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp>(
                poolMaps[i], src, coords, Value(), NVVM::TMAStoreMode::TILE,
                Value());
            b.create<scf::YieldOp>();
          });
        }
        b.create<scf::YieldOp>();
      });
      done = b.add(done, b.select(take, b.c32(h), b.c32(0)));
    }
    b.create<NVVM::CpAsyncBulkCommitGroupOp>();
    b.create<scf::YieldOp>();
  });
}

/// Waits, before a tile's fragments overwrite the staged tile, until the
/// previous tile's TMA stores have read it.
void KernelGenerator::awaitStagedTileFree() {
  Value issuer = b.eq(b.threadIdx(), b.c32(kWarpgroupThreads));
  b.create<scf::IfOp>(issuer, [&](OpBuilder &, Location) {
    b.create<NVVM::CpAsyncBulkWaitGroupOp>(0, UnitAttr::get(b.getContext()));
    b.create<scf::YieldOp>();
  });
  consumerBarrier();
}

void KernelGenerator::consumerBarrier() {
  // bar.sync is warp-aligned: reconverge each warp first, since the code
  // before it (clearing a K tail, issuing TMA stores) branches per thread.
  b.create<NVVM::SyncWarpOp>(b.c32(-1));
  b.create<NVVM::BarrierOp>(Type(), b.c32(1),
                            b.c32(kWarpgroupThreads * p.numConsumers),
                            NVVM::BarrierReductionAttr(), Value());
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

  Value tid = b.threadIdx();
  Value isLeader = b.eq(tid, b.c32(0));
  clusterRank = p.cluster == 1 ? b.c32(0)
                               : Value(b.create<NVVM::ClusterId>(b.i32()));
  b.create<scf::IfOp>(isLeader, [&](OpBuilder &, Location) {
    for (int64_t s = 0; s < p.stages; ++s) {
      // The producer's expect_tx arrival, and with block scales in the
      // stages the arrival of its cp.async of B's scales (.noinc).
      b.mbarrierInit(fullBarrier(b.c32(s)), p.stageScales ? 2 : 1);
      // Thread arrivals; in a cluster, one per consumer warp of each CTA.
      b.mbarrierInit(emptyBarrier(b.c32(s)),
                     p.cluster == 1 ? kWarpgroupThreads * p.numConsumers
                                    : p.cluster * p.numConsumers * 4);
    }
    b.create<scf::YieldOp>();
  });
  if (p.cluster == 1) {
    b.create<NVVM::Barrier0Op>();
  } else {
    // The peer's barriers must be initialised before anything multicasts
    // into this CTA or arrives on its barriers.
    b.create<scf::IfOp>(isLeader, [&](OpBuilder &, Location) {
      b.create<NVVM::FenceMbarrierInitOp>();
      b.create<scf::YieldOp>();
    });
    b.create<NVVM::ClusterArriveOp>(UnitAttr());
    b.create<NVVM::ClusterWaitOp>(UnitAttr());
  }

  Value warpgroup = b.divU(tid, b.c32(kWarpgroupThreads));
  b.create<scf::IfOp>(
      b.eq(warpgroup, b.c32(0)),
      [&](OpBuilder &, Location) {
        b.create<NVVM::SetMaxRegisterOp>(p.producerRegisters,
                                         NVVM::SetMaxRegisterAction::decrease);
        b.create<scf::IfOp>(isLeader, [&](OpBuilder &, Location) {
          emitProducer();
          b.create<scf::YieldOp>();
        });
        b.create<scf::YieldOp>();
      },
      [&](OpBuilder &, Location) {
        b.create<NVVM::SetMaxRegisterOp>(p.consumerRegisters,
                                         NVVM::SetMaxRegisterAction::increase);
        // Uniform: the consumer's tile addresses and wgmma descriptors then
        // stay in uniform registers, off the vector register file that the
        // promotion's FMAs and the in-flight wgmma compete for.
        emitConsumer(b.warpUniform(b.sub(warpgroup, b.c32(1))));
        if (!p.storePool.empty()) {
          // The CTA must not end while its last TMA stores are in flight.
          Value issuer = b.eq(tid, b.c32(kWarpgroupThreads));
          b.create<scf::IfOp>(issuer, [&](OpBuilder &, Location) {
            b.create<NVVM::CpAsyncBulkWaitGroupOp>(0, UnitAttr());
            b.create<scf::YieldOp>();
          });
        }
        b.create<scf::YieldOp>();
      });
  if (p.cluster > 1) {
    // No CTA may leave while its peer can still multicast into it or arrive
    // on its barriers.
    b.create<NVVM::ClusterArriveOp>(UnitAttr());
    b.create<NVVM::ClusterWaitOp>(UnitAttr());
  }
  b.create<LLVM::ReturnOp>(ValueRange{});
  (void)ctx;
}

LogicalResult KernelGenerator::run() {
  if (failed(plan()))
    return failure();
  LLVM::LLVMFuncOp fn = createFunction();
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  unsigned next = 0;
  for (size_t i = 0; i < p.aLoadBoxes.size(); ++i)
    aMaps.push_back(fn.getArgument(next++));
  tensorMapB = fn.getArgument(next++);
  if (p.stageScales)
    tensorMapAScale = fn.getArgument(next++);
  for (size_t i = 0; i < p.storePool.size(); ++i)
    poolMaps.push_back(fn.getArgument(next++));
  outPtr = fn.getArgument(next++);
  groupsPtr = fn.getArgument(next++);
  dynamicSize = fn.getArgument(next++);
  if (op.getAScale())
    aScalePtr = fn.getArgument(next++);
  if (op.getBScale())
    bScalePtr = fn.getArgument(next++);
  for (size_t i = 0; i < op.getRowVectors().size(); ++i)
    rowPtrs.push_back(fn.getArgument(next++));
  for (size_t i = 0; i < op.getColVectors().size(); ++i)
    colPtrs.push_back(fn.getArgument(next++));
  for (size_t i = 0; i < op.getGroupScalars().size(); ++i)
    scalarPtrs.push_back(fn.getArgument(next++));
  emitBody();
  if (failedEpilogue) {
    fn.erase();
    return failure();
  }
  return success();
}

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
      KernelGenerator generator(ops.front(), func, module);
      if (failed(generator.run()))
        return signalPassFailure();
      func.erase();
    }
    module->setAttr("llvm.target_triple",
                    StringAttr::get(module.getContext(), "nvptx64-nvidia-cuda"));
  }
};

} // namespace
