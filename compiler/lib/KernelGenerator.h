//===- KernelGenerator.h - the kernel generator -----------------*- C++ -*-===//
//
// The plan gg-lower-to-nvvm derives from a gg.grouped_matmul, and the
// generator that writes its kernel, whose members are defined by concern in
// LowerToNVVM.cpp, KernelInfo.cpp, SharedMemory.cpp, TileSchedule.cpp,
// Producer.cpp, Consumer.cpp, BlockScales.cpp, OperandPreparation.cpp,
// Epilogue.cpp and QuantizedEpilogue.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_KERNELGENERATOR_H
#define GGC_KERNELGENERATOR_H

#include "KernelBuilder.h"
#include "ScaleAccess.h"
#include "ggk/GGKDialect.h"
#include "ggc/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ggc {

// The generator names MLIR's types and the gg dialect's unqualified.
using mlir::ArrayRef;
using mlir::FailureOr;
using mlir::function_ref;
using mlir::LogicalResult;
using mlir::ModuleOp;
using mlir::SmallVector;
using mlir::StringRef;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;
using mlir::gg::ConfigAttr;
using mlir::gg::GroupedMatmulOp;
using mlir::gg::GroupLayout;
using mlir::gg::ScaleAttr;
namespace func = mlir::func;
namespace LLVM = mlir::LLVM;

/// Everything the generator derives from the op before emitting code.
struct KernelPlan {
  /// The module's target has TMA (sm_90a): the operands' loads go through
  /// tensor maps; elsewhere through their addresses.
  bool tensorMaps = true;
  GroupLayout layout;
  int64_t numGroups, n, k; // k is dynamic for k_grouped
  int64_t m;               // rows of A (M_max for masked); may be dynamic
  int64_t blockM, blockN, blockK, stages, numConsumers, numSMs;
  /// Consumer warpgroups per 64 rows (config split_n), each taking
  /// `warpgroupN` of the tile's columns.
  int64_t splitN = 1, warpgroupN = 0;
  /// gg-plan-kernel: warps side by side along N in a warpgroup, the
  /// accumulator type's `warp_columns` (!ggk.acc says where each thread's
  /// values lie).
  int64_t warpColumns = 1;
  /// gg-plan-kernel: K blocks between a stage's MMA and its release (1 for
  /// wgmma, which reads the stage after it is issued; 0 for mma.sync).
  int64_t releaseLag = 1;
  /// gg-plan-kernel: output columns of a row a thread writes with one
  /// per-thread store (2, or 8 by quads exchanging their pairs).
  int64_t storeColumns = 2;
  /// gg-plan-kernel: no producer warpgroup (before sm_90a): the consumers
  /// copy each stage stages - 1 K blocks ahead.
  bool consumersCopy = false;
  /// gg's a_rows: A's rows come through a list of row indices, copied by
  /// address (cp.async) even where B takes a tensor map.
  bool gatherA = false;
  /// gg's out_scale: the epilogue quantises out to FP8 e4m3 in 1x128
  /// blocks and stores their scales.
  bool quantizeOut = false;
  /// gg-plan-kernel's producer = all_threads (sm_90a with gatherA): every
  /// thread of warpgroup 0 runs the producer; its leader alone arms the
  /// stages and issues the TMA loads.
  bool producerAllThreads = false;
  /// gg-plan-kernel's ring_stages = constant: every tile starts at stage 0,
  /// its K blocks rounded up to whole turns of the ring (ringBlocks).
  bool constantStages = false;
  /// With constant stages, whether a tile's K blocks may leave its last
  /// turn partial, ended on stages passed on empty: where a static K's
  /// blocks are no multiple of the stages, and for k_grouped, whose
  /// groups' K blocks come at run time.
  bool passesEmptyStages() const {
    if (!constantStages)
      return false;
    if (layout == GroupLayout::k_grouped)
      return true;
    return ((k + blockK - 1) / blockK) % stages != 0;
  }
  /// A's tiles are copied from its address (no TMA, or gathered rows).
  bool aByAddress() const { return !tensorMaps || gatherA; }
  /// CTAs per cluster along M (1 or 2): a pair of CTAs computes two M blocks
  /// of one N block, each loading half of the B tile and multicasting it to
  /// both, which halves the B traffic from L2.
  int64_t cluster = 1;
  Type aElem, bElem, outElem, groupsElem;
  int64_t aTileBytes, bTileBytes;
  ggc::SharedMemoryLayout smem; // offsets of every buffer
  int64_t nBlocks;
  /// gg-schedule-groups: N blocks of a group before its M blocks.
  bool nFastest = false;
  /// gg's zero_ungrouped: the schedule walks the rows outside every group.
  bool zeroUngrouped = false;
  /// gg-schedule-groups: M blocks walked in bands of this many (0: one band).
  int64_t mBand = 0;
  /// gg-schedule-groups: the L2 cache policy of B's loads (0: none given).
  int64_t bCachePolicy = 0;
  /// The schedule's odd_block_a = multicast: where a pair computes one M
  /// block (shares_b 0), rank 0 loads its A rows into both CTAs.
  bool oddBlockAMulticast = false;
  /// gg-schedule-groups' group_reads = shared: the counts or offsets the
  /// CTA copies into shared memory at entry (0: the walk loads them).
  int64_t groupTableEntries = 0;
  /// gg-eliminate-padding: whether a consumer warpgroup whose rows of a
  /// tile are all past its group's end skips the tile's wgmma
  /// (ggk.warpgroup_tile, lowered by ggk-skip-idle-warpgroups).
  mlir::gg::PaddingAttr padding;
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
  /// The stages carry the block scales (the kernel plan's `scales`): the
  /// launch contract takes A's scales' tensor map. The rest is
  /// ggk-place-scales'.
  bool stageScales = false;
  /// The op's block scales can ride the stages (ggc::canStageBlockScales):
  /// the producer states them (ggk.stage_block_scales) for the plan to
  /// decide.
  bool scalesCanRideStages = false;
  /// The stages carry B's per-column scales too (k_grouped's 1x128 ones):
  /// one TMA box of the tile's columns a stage, read by the promotion.
  bool columnScalesInStages = false;
  /// The plan's column_scale_reads = at_issue (with columnScalesInStages):
  /// each K block's column scales read into registers after its wgmma is
  /// issued, the stage given back before the promotion.
  bool columnScalesAtIssue = false;
  /// Rows of A's scale window per stage (stageScales): the tile's, from
  /// its first row rounded down to 4.
  int64_t aScaleWindowRows() const { return blockM + ggc::kAScaleWindowPad; }
  /// A's scales ride the stages K-major, four K blocks a row of the window
  /// (ggc::stagesKMajorAScales).
  bool aScaleKMajor = false;
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
  /// The staged tile is kept as column chunks of 128 (or 64) bytes, [BN /
  /// chunk] x [BM rows of 128 bytes], swizzled like the operand tiles,
  /// which the pool's TMA boxes (one per chunk) read back unswizzled: each
  /// warp's fragment stores then hit 32 distinct banks. Unswizzled rows of
  /// 256 bytes put a warp's 8 rows on the same banks (8-way conflicts on
  /// every store; 87% of the masked f8 kernel's shared-store wavefronts).
  /// The plan's staging says which: the bytes its column chunks are
  /// swizzled by (128 or 64; 0: dense rows).
  int64_t stagingSwizzle = 0;
  /// The rows each consumer warpgroup stores of it itself (the plan's
  /// store_issuers = warpgroup: 64), or 0 (one issuer for the tile).
  int64_t warpgroupStoreRows = 0;
  /// gg's store_slice: the columns staged and stored at a time through a
  /// ring of two buffers, or 0 (the whole tile at once).
  int64_t storeSlice = 0;
  /// gg's column_pairs: the epilogue combines product columns 2j, 2j+1
  /// into output column j, so a tile's outputs are BN/2 columns wide.
  bool columnPairs = false;
  /// gg's column_halves: output column j combines product columns j and
  /// j + N/2; B's tile is two boxes of BN/2 rows, one from each half.
  bool columnHalves = false;
  /// gg's accumulate: out += the epilogue's value, summed in f32.
  bool accumulate = false;
  bool combinesColumns() const { return columnPairs || columnHalves; }
  int64_t outBlockN() const { return combinesColumns() ? blockN / 2 : blockN; }
  int64_t outN() const { return combinesColumns() ? n / 2 : n; }
  int64_t stagingChunkColumns() const {
    return stagingSwizzle ? stagingSwizzle / byteWidth(outElem)
           : storeSlice   ? storeSlice
                          : outBlockN();
  }
  /// Each K block's wgmma result is scaled and added to the main f32
  /// accumulator (DeepGEMM's two-level accumulation): for block scales,
  /// which change along K, and for every f8 kernel, whose tensor-core
  /// accumulation would otherwise lose precision over a long K.
  bool twoLevel() const {
    return f8 || (aScale && aScale.variesAlongK()) ||
           (bScale && bScale.variesAlongK());
  }

  /// The threads that share each stage's copies (without TMA).
  int64_t copyThreads() const {
    return consumersCopy ? kWarpgroupThreads * numConsumers
                         : kWarpgroupThreads;
  }
  int64_t kSteps() const { return blockK * byteWidth(aElem) / 32; }
  int64_t kPerStep() const { return 32 / byteWidth(aElem); }
};

class KernelGenerator {
public:
  KernelGenerator(GroupedMatmulOp op, func::FuncOp func, ModuleOp module)
      : op(op), func(func), module(module),
        b(op.getLoc(), module.getContext()) {}

  LogicalResult run();

private:
  LogicalResult plan();
  /// The plan's shape: the config's tile and the op's types and sizes.
  LogicalResult readShape(ConfigAttr config);
  /// The plan's scales: their kinds and where the promotion reads them.
  LogicalResult readScales(ConfigAttr config);
  /// What this lowering does not cover yet, refused by name.
  LogicalResult checkCoverage(ConfigAttr config);
  /// What gg's out_scale needs of the tile and the target.
  LogicalResult checkQuantizedOutput();
  /// The plan's part that earlier passes decided and recorded on the op
  /// (gg-schedule-groups, gg-eliminate-padding, gg-plan-overfetch and
  /// gg-plan-kernel), checked.
  LogicalResult readDecisions(ConfigAttr config);
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
    Value sharesB;    // i32: 1 where the cluster's CTAs load one B tile
                      // together (multicast), 0 where each loads its own
  };
  /// The persistent tile schedule (one ggk.foreach_tile), calling `body`
  /// for each tile this CTA owns with the pipeline counter; `body` returns
  /// the new counter.
  void forEachTile(function_ref<Value(const Tile &, Value counter)> body);
  /// The same walk carrying `initial` from tile to tile (the counter
  /// first): `body` returns the new state; the result is the last one.
  SmallVector<Value>
  forEachTile(ValueRange initial,
              function_ref<SmallVector<Value>(const Tile &, ValueRange)> body);
  /// A tile's fields as values a loop can carry, and back.
  SmallVector<Value> tileValues(const Tile &t);
  Tile tileFromValues(ValueRange values);
  /// The producer's TMA loads of K `k` of tile `t` into ring stage `stage`,
  /// completing on its full barrier `full`. A's first arm the barrier for
  /// all of the stage's bytes (B's; ggk-place-scales adds those of A's
  /// scales where the stage carries them): a partial tile may load fewer
  /// of A's rows (gg-plan-overfetch's granule).
  void loadATile(const Tile &t, Value stage, Value full, Value k);
  /// K block `kBlock`'s block scales, as the stage could carry them
  /// (ggk.stage_block_scales; whether it does is the plan's `scales`).
  void stageBlockScales(const Tile &t, Value kBlock, Value stage, Value full);
  /// The sizes of `operand` (A's or B's), innermost first, for the loads
  /// of targets without tensor maps (its one dynamic size is the kernel's
  /// run-time size).
  SmallVector<Value> extentsOf(Value operand);
  /// B's, multicast to the cluster's CTAs when there is a cluster
  /// (ggk.load_b_tile).
  void loadBTile(const Tile &t, Value stage, Value full, Value k);

  // Shared memory: the buffers the kernel declares (ggk.shared_buffer, in
  // p.smem.buffers' order) and addresses into them (ggk.shared_address,
  // placed by ggk-allocate-shared-memory).
  void declareSharedBuffers();
  /// `offset + index * stride` bytes into buffer `id` (no index: `offset`).
  Value sharedAddress(SharedBufferId id, Value index, int64_t stride,
                      int64_t offset = 0);
  Value stageA(Value stage);
  Value stageB(Value stage);
  Value transposedB(Value stage);
  Value transposedA(Value stage);
  /// Copies an MN-major f32 tile of `mnExtent` columns into a K-major one
  /// (ggk.transpose_to_k_major).
  void transposeTile(Value src, Value dst, int64_t mnExtent);
  /// The ring buffer the `it`-th K block uses, and the parity of its
  /// barriers' current phase.
  std::pair<Value, Value> ringSlot(Value it);
  Value fullBarrier(Value stage);
  Value emptyBarrier(Value stage);
  /// The ring's protocol as ggk ops (ggk-lower-ring, ggk-multicast
  /// lower them): the producer waits for `stage` to be free
  /// (ggk.acquire_stage, on the parity of the empty barrier's phase); a
  /// consumer waits for its loads (ggk.wait_stage); the consumers are done
  /// reading `stage`, so its producer (and, in a cluster, the peer's,
  /// which multicasts into it) may refill it (ggk.release_stage).
  void acquireStage(Value stage, Value parity);
  void waitStage(Value stage, Value parity);
  void releaseStage(Value stage);

  /// Where a consumer thread's accumulator elements lie in the tile
  /// (ggk.acc_origin: the accumulator type's layout).
  struct Fragment {
    Value row;     // i32: the thread's first row (row group r: + 8 r)
    Value col;     // i32: its first column (column block c: + 8 c, a pair)
    Value colBase; // i32: the warpgroup's first column in the tile
    Value lane;    // i32: the thread's lane in its warp
    Value warpRow; // i32: the first of its warp's rows in the tile
  };
  std::pair<Value, Value> emitMainLoop(const Tile &t, Value counter, Value acc,
                                       Value consumerIndex, const Fragment &f,
                                       Value rowOffset);
  std::pair<Value, Value> emitPromotionLoop(const Tile &t, Value counter,
                                            Value acc, Value consumerIndex,
                                            const Fragment &f, Value rowOffset);
  /// emitPromotionLoop's steps that take more than a call: a scale block's
  /// wgmma, its scales' reads and its promotion (`columnCount`: the
  /// thread's column scales read at the wgmma's issue, else 0).
  void fillIssueStep(mlir::ggk::PromotionLoopOp loop, const Tile &t,
                     const Fragment &f, Value rowOffset, int64_t promotions);
  void fillReadScalesStep(mlir::ggk::PromotionLoopOp loop, const Tile &t,
                          const Fragment &f, int64_t promotions,
                          int64_t columnCount);
  void fillPromoteStep(mlir::ggk::PromotionLoopOp loop, const Tile &t,
                       const Fragment &f, Value consumerIndex, Value counter,
                       int64_t columnCount);
  /// One-level accumulation's K loop as a ggk.k_loop (ggk-lower-k-loop).
  std::pair<Value, Value> emitKLoop(const Tile &t, Value counter, Value acc,
                                    const Fragment &f, Value rowOffset);
  /// Fills one step region of a loop op (ggk.k_loop, ggk.promotion_loop):
  /// a block taking `arguments`, its body's values yielded.
  void fillStep(mlir::Region &region, ArrayRef<Type> arguments,
                function_ref<SmallVector<Value>(ValueRange)> body);
  /// The consumer's end of tile `t` with accumulator `acc`
  /// (ggk.tile_epilogue, placed by ggk-defer-epilogue), `rowWords` its
  /// rows' row-vector values (prefetchRowVectors), carried with the tile.
  void tileEpilogue(const Tile &t, const Fragment &f, Value acc,
                    ValueRange rowWords);
  /// The row vectors' values of the thread's rows of tile `t`, loaded
  /// when the tile starts, so that their latency passes behind its K loop
  /// rather than in its epilogue; each as an i32 word, which the tile's
  /// fields are (row group by row group, vector by vector).
  SmallVector<Value> prefetchRowVectors(const Tile &t, const Fragment &f);
  /// padded_contiguous through the store pool: the tile's rows' group tags,
  /// lane l's word j the tag of row 32 j + l (-1 past the valid rows),
  /// loaded when the tile starts like the row vectors and carried after
  /// their words to ggk.store_tile's `tagged` (tagWordCount of them).
  SmallVector<Value> prefetchRowTags(const Tile &t);
  int64_t tagWordCount() const;
  Value emitIdleLoop(const Tile &t, Value counter);
  /// How far tile `t` moves the ring counter: its K blocks, rounded up to
  /// whole turns of the ring with constant stages (the last turn ending
  /// on stages the producer passes on empty, ggk.pass_stage).
  Value ringBlocks(const Tile &t);
  /// The loads of K block `kBlock` into ring slot `it`: the producer's, or
  /// without one (consumersCopy) every consumer thread's.
  void loadStage(const Tile &t, Value kBlock, Value it);
  /// Without a producer: the first stages - 1 K blocks of the tile, before
  /// its K loop (slots `counter` ..), and, in it, block kBlock + stages - 1
  /// (slot it + stages - 1) where the tile has it. Nothing with one.
  void loadPrologue(const Tile &t, Value counter);
  void loadAhead(const Tile &t, Value kBlock, Value it);
  /// A consumer warpgroup's work on tile `t` (a ggk.warpgroup_tile): the
  /// values `work` yields, or, when gg-eliminate-padding skips the
  /// warpgroup's rows (or ggk-defer-epilogue's guard says the tile has no
  /// K block), `idle`'s. Both yield the accumulator and the pipeline
  /// counter.
  SmallVector<Value> warpgroupTile(const Tile &t, Value consumerIndex,
                                   function_ref<SmallVector<Value>()> work,
                                   function_ref<SmallVector<Value>()> idle);
  struct BlockScales;
  std::pair<Value, Value> stageTiles(const Tile &t, Value kBlock, Value stage,
                                     const Fragment &f, Value rowOffset,
                                     bool clear = true);
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
  /// A K block's promotion (ggk.promote, lowered by ggk-lower-promotion).
  /// Per-column scales come from `columnFactors`, or else from the
  /// warpgroup's buffer for kBlock.
  Value promoteBlock(Value acc, Value partial, const BlockScales &scales,
                     const Tile &t, const Fragment &f, Value consumerIndex,
                     Value kBlock, Value columnFactors = Value(),
                     ValueRange columnValues = {});
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
  /// The thread's f32 scales of K block `kBlock`, whose tiles are in ring
  /// stage `stage`, from where the plan puts them (ggk.read_block_scales).
  BlockScales readBlockScales(const Tile &t, Value kBlock, Value stage,
                              const Fragment &f);
  /// The shape of this kernel's scale slots.
  SlotShape slotShape() const;
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
  /// The MMA of K steps `firstStep ..` (-1: all) of a stage's tiles into
  /// `acc` (ggk.mma); `fresh` overwrites `acc` on the first step;
  /// `stepOffset` (i32) moves every step on by that many at run time.
  Value issueMma(Value acc, Value aTile, Value bTile, bool fresh,
                 int64_t firstStep = 0, int64_t numSteps = -1,
                 Value stepOffset = Value());
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
  /// MX: the f32 factors of scale block `j` of K block `k` for the
  /// thread's two rows of A.
  SmallVector<Value> readMxFactors(const Tile &t, Value k, Value j,
                                   const Fragment &f, int64_t promotions);
  /// k_grouped: zeroes the K entries of other groups in `stage`'s tiles
  /// (ggk.clear_k_outside).
  void clearKOutsideGroup(const Tile &t, Value kBlock, Value stage);
  // Per row (two per thread): validity, output row index, row-vector values
  // and the scale of A that does not change along K.
  struct Row {
    Value valid, index;
    /// Where the row's vectors are read: its own row, or the tile's first
    /// where the row lies past the tile's valid rows (always in bounds; a
    /// padded_contiguous row of another group reads its own, never
    /// stored).
    Value vectorRow;
    SmallVector<Value> vectorValues;
    Value scale;
  };
  /// Where one pair of the thread's adjacent outputs goes (a
  /// ggk.store_pair's operands), and with out_scale its f32 values before
  /// quantisation.
  struct PendingPair {
    Value rowInStaged, colInStaged, rowIndex, outCol, rowValid, colValid;
    SmallVector<int64_t, 2> fragment; // [row group, column block]
    SmallVector<Value, 2> values;
  };
  void storePair(const PendingPair &pair, Value values);
  /// out_scale (QuantizedEpilogue.cpp): every row's 128-column blocks of
  /// the pairs' f32 values quantised to e4m3, their scales stored and the
  /// pairs stated as ggk.store_pair of the e4m3 bytes.
  void storeQuantizedOutputs(ArrayRef<PendingPair> pairs, int64_t rowGroups,
                             int64_t columnBlocks);
  /// Each of `amaxes` (the thread's quad's amax of the half of a block
  /// whose first pair is the matching one of `leads`) made the block's
  /// amax over the split_n warpgroups that hold its parts (kRowAmax).
  void shareBlockAmax(llvm::MutableArrayRef<Value> amaxes,
                      ArrayRef<const PendingPair *> leads, Value quadLead);
  /// `values` (one or two f32) times `factor` as e4m3 bytes (vector<1xi8>
  /// or vector<2xi8>: LLVM has no f8 type).
  Value e4m3Bytes(ArrayRef<Value> values, Value factor);
  void emitEpilogue(const Tile &tile, const Fragment &f, Value acc,
                    ValueRange rowWords);
  /// The epilogue's outputs of the tile, each pair stated as a
  /// ggk.store_pair.
  void emitTileOutputs(const Tile &tile, const Fragment &f, Value acc,
                       ValueRange rowWords);
  /// The epilogue's values of one pair of the thread's adjacent outputs,
  /// `inputs(j)` making the epilogue's scaled accumulators of output j:
  /// two outputs, or with column_pairs one that combines the pair.
  FailureOr<SmallVector<Value, 2>>
  emitPairValues(function_ref<SmallVector<Value, 2>(int)> inputs,
                 const Row &row, ArrayRef<Value> colValues[2],
                 ArrayRef<Value> scalarValues, Value group);
  /// Those values as the vector a ggk.store_pair stores (f32 where the
  /// tile accumulates, else out's type).
  Value pairVector(ArrayRef<Value> values);
  /// Row `rowInTile` + 8 `half` of tile `t`: whether it lies in the
  /// group, its output row and where its vectors are read.
  Row rowPlace(const Tile &t, Value rowInTile, int half);
  /// The epilogue's facts for the thread's row `rowInTile` + 8 `half`,
  /// its row vectors' values from `words` (prefetchRowVectors' words of
  /// this row).
  Row epilogueRow(const Tile &t, Value rowInTile, int half, ValueRange words);
  /// `scale` (a per-tensor or per-channel scale the epilogue multiplies
  /// in), or 0 on a tile of zero_ungrouped's rows outside every group.
  Value scaleOfTile(const Tile &t, Value scale);
  void consumerBarrier();
  FailureOr<Value> emitEpilogueRegion(ArrayRef<Value> accs,
                                      ArrayRef<Value> rowValues,
                                      ArrayRef<Value> colValues,
                                      ArrayRef<Value> scalarValues,
                                      Value group);
  /// The kernel's launch contract (KernelInfo.cpp).
  mlir::ggk::LaunchAttr launchContract(StringRef name);
  /// Its parameters, in order, as ggk.kernel_param ops at the top of the
  /// kernel (each with its #ggk.param), into the members below.
  void declareParams();
  /// declareParams' steps: the operands' tensor maps (or their addresses
  /// where they come without TMA), the store pool's maps, then the
  /// pointers and run-time sizes.
  void declareOperandMaps();
  void declarePoolMaps();
  void declarePointersAndSizes();
  /// One parameter of each kind: `operand` names it, `v` is the source
  /// func.func's argument it comes from.
  Value declareTensorMap(StringRef operand, Value v, ArrayRef<int64_t> box,
                         StringRef swizzle = "128B");
  Value declarePointer(StringRef operand, Value v,
                       unsigned space = ggc::kGlobal);
  Value declareSize(StringRef operand, Value v, int64_t dim);
  /// `v`'s position among the source func.func's arguments (-1: none), so
  /// that a caller can match the kernel's parameters to its tensors.
  int64_t argIndex(Value v);
  /// The source function's tensors as the kernel expects them (#ggk.arg).
  SmallVector<mlir::Attribute> launchArgs();

  GroupedMatmulOp op;
  func::FuncOp func;
  ModuleOp module;
  KernelBuilder b;
  KernelPlan p;

  // Kernel parameters (declareParams).
  Value tensorMapB, outPtr, groupsPtr, dynamicSize;
  /// gg's a_rows: the row-index list and the rows of A it indexes (T).
  Value aRowsPtr, aSourceRows;
  Value outRowsPtr, outRowCount; // scattered rows of out (out_rows), or null
  /// A's tensor maps, one per height of p.aLoadBoxes (the whole tile first).
  SmallVector<Value> aMaps;
  Value aScalePtr, bScalePtr; // null without scales
  Value outScalePtr;          // out's 1x128 scales (out_scale), or null
  Value tensorMapAScale;       // A's block scales by TMA (stageScales)
  Value tensorMapBScale;       // B's per-column scales by TMA (columnScalesInStages)
  SmallVector<Value> poolMaps; // one store tensor map per pool height
  SmallVector<Value> rowPtrs, colPtrs, scalarPtrs;
  Value smem; // 1024-byte aligned base of dynamic shared memory
  Value clusterRank; // this CTA's rank in its cluster (i32)
  Value groupTable;  // the group table in shared memory, or null
  mlir::ggk::AccType accType;
  bool failedEpilogue = false;
};

} // namespace ggc

#endif // GGC_KERNELGENERATOR_H
