//===- SelectConfig.cpp - gg-select-config ---------------------------------===//
//
// Chooses the tile configuration of every gg.grouped_matmul. All heuristics
// are in chooseConfig and the steps it calls (chooseRows, chooseBlockN and
// its steps 3a-3e; the masked f8 batches' tile rules are
// MaskedTileRules.cpp's), in the order they apply, so that a newcomer can read
// why a kernel got the shape it did (DeepGEMM's get_best_configs is the
// model). A config written by the user is kept. What a config costs in
// shared memory is ConfigFacts.cpp's.
//
//===----------------------------------------------------------------------===//
#include "KernelPlanRules.h"
#include "MaskedTileRules.h"
#include "Target.h"
#include "ggc/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"

namespace ggc {
#define GEN_PASS_DEF_SELECTCONFIG
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using namespace mlir::gg;

using ggc::byteWidth;
using ggc::narrowMemory;
using ggc::masked::kPairedMaskedBlockN;
using ggc::masked::maskedTakesPairedWideTiles;
using ggc::masked::maskedTakesSplitTiles;

namespace {

/// The rows a contiguous group is expected to hold (its op's expected_m)
/// from which 128x256 tiles are chosen: kWideNGroupRows where N is at least
/// kWideNMinN, kTallGroupRows otherwise. The Mixtral-like up projection (N
/// 28,672, K 4,096, ragged groups) measured 2.5% faster on 128x256 tiles
/// than 128x128 at 256 rows an expert, 5.8-6.9% at 512 and 3.2-4.6% at
/// 1,024; N 4,096 lost 4.1-6.1% at 1,024 rows (K 7,168 and 14,336) and
/// 3.8% at 4,096 (K 7,168) (H200, twenty-fifth session, calls 3 and 5,
/// docs/performance-history.md). Groups of 2,048 rows and more keep 128x256
/// whatever N: on an H100 (2026-11-25, older kernels) they won 20-40% at
/// N 4,096 (K 7,168 at 2,048 rows, K 14,336 at 4,096), and the H200's one
/// loss there (3.8%) does not outweigh that without a run of both cards.
/// The N cut lies between the 4,096 measured to lose and the 28,672
/// measured to gain; fewer rows than 256 were not measured.
constexpr int64_t kTallGroupRows = 2048;
constexpr int64_t kWideNGroupRows = 256;
constexpr int64_t kWideNMinN = 16384;

/// On sm_90a, a 16-bit contiguous op on 128-row tiles whose N is a
/// multiple of 64 but not of 128 takes 128-wide tiles with a ragged last
/// column tile rather than 64-wide ones, where N is at least
/// kRaggedColumnTileMinN (the last tile then wastes at most 1/16 of the
/// columns): the gpt-oss-like down projection (N = K = 2,880, G 128, T
/// 8,192) measured 1.20-1.22x faster (H200, twenty-fifth session, call 3).
/// Measured on that shape alone, at 128 rows a tile, without column_halves
/// (whose pairs lie N / 2 apart: a ragged tile there is untested).
constexpr int64_t kRaggedColumnTileMinN = 1024;

/// Contiguous groups with paired gate and up columns (column_halves: a MoE
/// layer's gated up projection) expected to hold at least this many rows
/// keep 128x256 tiles: half a tile's columns come out, so a 128-wide tile
/// stores 64 columns for each A tile it reads, and the wider tile halves
/// the A traffic and the tiles' epilogues per output column (measured on
/// the whole layer, Qwen3-, Mixtral- and DeepSeek-V3-like, 128 to 256 rows
/// an expert: docs/performance-history.md, fourteenth session).
constexpr int64_t kGatedWideGroupRows = 128;

/// Contiguous groups expected to hold at least kShortKGroupRows rows keep
/// 128x256 tiles where K is at most kShortK: a tile of so few K blocks
/// spends a larger share of its time filling its pipeline and in its
/// epilogue, which half as many tiles pay half as often (a MoE layer's
/// down projection with a small intermediate size, Qwen3-like K = 768;
/// Mixtral-like K = 14,336 measured slower: docs/performance-history.md,
/// fourteenth session).
constexpr int64_t kShortKGroupRows = 256;
constexpr int64_t kShortK = 1024;

/// An FP8 weight gradient (k_grouped, 1x128 scales in the stages) whose
/// groups are expected to hold at least kWideWeightGradientTokens tokens
/// takes kWeightGradientBlockN's first width that keeps the TMA store
/// pool, with serial promotion (two fragments of 176 columns fit the
/// registers, three do not), as DeepGEMM takes 128x152. On DeepGEMM's
/// six sm90 k-grouped shapes (2,048 to 8,192 tokens an expert) wide tiles
/// measured 1.06-1.11x the pipelined 128x128 ones accumulating in f32
/// (docs/performance-history.md, nineteenth session, calls 5-7). In f32,
/// 144 columns leave room for a fourth stage, which reading B's column
/// scales at the wgmma's issue (gg-plan-kernel) turns into 1.03-1.12x
/// 176 columns with three stages read at the promotion, and 1.01-1.12x
/// 160 with three read at the issue (H200,
/// docs/performance.md, thirty-third session). A bf16 output's 288-byte
/// rows keep no store pool, so it takes 160 (1.00-1.08x; 176 keeps none
/// either: 0.90-1.05x). Adding to an f32 gradient, at 256 and 512 tokens
/// an expert wide tiles lost (0.84-0.99x), the serial kernel's epilogue
/// hidden by no K block of the next tile. A 16-bit gradient written (the
/// FP8 training recipe's, each group's tokens in whole 128-token blocks)
/// takes them from kWideStoredWeightGradientTokens: on the training
/// projections, 256 to 1,024 tokens an expert, 128x160 with four stages
/// measured 1.025-1.093x the pipelined 128x128 (H200,
/// docs/performance-history.md, thirty-fourth session, call 6); fewer
/// tokens, and groups that straddle 128-token blocks (whose K blocks
/// are cleared in shared memory, either tile), were not measured.
constexpr int64_t kWideWeightGradientTokens = 2048;
constexpr int64_t kWideStoredWeightGradientTokens = 256;
constexpr int64_t kWeightGradientBlockN[] = {144, 160};

/// Contiguous FP8 groups expected to hold at least kWideFp8GroupRows rows
/// take 128x192 tiles (serial promotion: gg-plan-kernel's pipelined one
/// needs a third accumulator that 192 columns leave no registers for)
/// where N is a multiple of 192 and K at most kWideFp8MaxK, whatever B's
/// 128x128 scale blocks (a tile straddles two: the serial loop takes both).
/// Measured on MoE layers' FP8 projections, H200
/// (docs/performance-history.md, twenty-second session, calls 2-4): the
/// Qwen3-like up projection (N 1,536, K 2,048) 1.4-2.3% faster at 256 and
/// 1,024 rows an expert (2% slower at 64), the gpt-oss-like down projection
/// (N 2,880, K 2,880) 5-8% faster, its up projection (N 5,760) 3.8% faster
/// at 128 rows an expert and 2.3% slower at 512; with longer K or N no
/// multiple of 192 they lost (Mixtral-like up, K 4,096: 2-6%;
/// DeepSeek-V3-like up, K 7,168: 6-10%).
/// Beyond kWideFp8MaxK, N a multiple of 192 takes them where the serial
/// loop's ring stages are constant (gg-plan-kernel's rule 12,
/// plan::takesConstantStages). Against the pipelined 128x128 tiles chosen
/// before, ragged groups, one process (H100, docs/performance-history.md,
/// fifty-eighth session, call 4): N 3,072 K 4,096 at T16384 G32 0.992x
/// and 1.048x (two draws), T32768 G128 1.056x, T4096 G32 1.047x; K 8,192
/// T16384 G32 1.015x. On equal groups 1.038-1.110x DeepGEMM at K 4,096,
/// 1.004x at K 8,192. Not measured on an H200. N 4,096 K 7,168, whose
/// 192-column tiles leave a ragged last one, measured 1.009x equal but
/// 0.958x ragged, so kNarrowRaggedFp8MinN keeps kWideFp8MaxK.
constexpr int64_t kWideFp8GroupRows = 128;
constexpr int64_t kWideFp8BlockN = 192;
constexpr int64_t kWideFp8MaxK = 3072;

/// A card whose peak DRAM bandwidth (gg-select-config's memory-gbps) is
/// narrow (ggc::narrowMemory) feeds wide tiles, which read fewer bytes of A
/// and B per multiply, better than an H200 does: on an H100 SXM (3,352
/// GB/s; the H200's 4,915) the same kernels ran up to 1.23x slower than on
/// an H200 where their tiles were 128x128, and wider ones won where the
/// H200 had measured them level or slower (H100, fifty-second session,
/// docs/performance-history.md). There:
/// - 16-bit contiguous groups expected to hold kNarrowWideGroupRows rows
///   or more take 128x256 tiles: T16384 G32 N3072 K8192 (512 rows)
///   1.17-1.24x the 128x128 tiles, T8192 G8 N4096 K7168 (1,024)
///   1.05-1.06x, T4096 G8 N4096 K14336 (512) 1.005-1.08x (ragged groups,
///   three calls); fewer rows, and f32 operands, were not measured.
/// - contiguous FP8 of K at most kWideFp8MaxK takes kWideFp8BlockN where N
///   is no multiple of 192 too, from kNarrowRaggedFp8MinN (a ragged last
///   column tile): N 7,168 K 2,048 1.02-1.05x the pipelined 128x128 tiles
///   at T8192 G8 and 1.12-1.13x at T32768 G32, three calls (the H200 had
///   measured 0.986x at T8192 G8); smaller N was not measured.
/// (ggc::narrowMemory says which cards, Target.h.)
constexpr int64_t kNarrowWideGroupRows = 512;
constexpr int64_t kNarrowRaggedFp8MinN = 4096;

/// Contiguous groups expected to hold at most this many rows take 64x64
/// decode tiles (a MoE layer's decode step: chooseRows); on sm_90a only
/// up to 16 rows, since 128x128 tiles were 1.07-1.33x faster for groups
/// of 32 and 64 rows (Qwen3- and Mixtral-like layers on an H200,
/// docs/performance.md, twelfth session). mma.sync targets keep 64
/// (not measured there).
constexpr int64_t kDecodeGroupRows = 64;
constexpr int64_t kWgmmaDecodeGroupRows = 16;

/// On sm_90a, contiguous 16-bit groups expected to hold more rows than the
/// decode tiles take but fewer than this take 64x256 tiles (one consumer
/// warpgroup) where A's rows are gathered (a_rows: the producer copies
/// half the rows a tile) or K is at most kShortK (a tile of few K blocks),
/// instead of 128x128 tiles half of whose rows would be empty. Measured on
/// the Qwen3-like layer's kernels at 32 and 64 rows an expert (H200,
/// docs/performance-history.md, fifteenth session, calls 5 and 6): the
/// gathered gated up projection 1.07-1.09x, the down projection (K = 768)
/// 1.01-1.04x; with K = 4,096 or 7,168 and a gathered copy (Mixtral- and
/// DeepSeek-V3-like) they were 0.93-1.00x, so those keep 128 rows.
constexpr int64_t kHalfHeightGroupRows = 128;

/// The stages that 128x256 mma.sync tiles need before they beat 128x128
/// ones (three were not enough: docs/performance.md).
constexpr int64_t kWideMmaSyncStages = 4;

/// Contiguous groups expected to hold fewer rows keep 128x128 mma.sync
/// tiles: 64 rows a group measured 2-7% slower on 128x256, 512 rows 7%
/// faster (docs/performance.md); 256 lies between.
constexpr int64_t kWideMmaSyncGroupRows = 256;

/// `config` with as many stages as fit in shared memory, capped at 8 where
/// deeper pipelines stop paying (DeepGEMM uses up to 8); at least 1.
ConfigAttr deepestPipeline(GroupedMatmulOp op, ConfigAttr config,
                           int64_t smemBudget) {
  for (int64_t s = 8; s > 1; --s) {
    ConfigAttr trial = ConfigAttr::get(
        op.getContext(), config.getBlockM(), config.getBlockN(),
        config.getBlockK(), s, config.getClusterM(), config.getClusterN(),
        config.getNumSMs(), config.getSplitN());
    if (ggc::sharedMemoryLayout(op, trial, /*stagedOutput=*/false).total <=
        smemBudget)
      return trial;
  }
  return ConfigAttr::get(op.getContext(), config.getBlockM(),
                         config.getBlockN(), config.getBlockK(), 1,
                         config.getClusterM(), config.getClusterN(),
                         config.getNumSMs(), config.getSplitN());
}

/// What the target's hardware lacks, refused by name, never compiled into
/// a wrong kernel: FP8 operands without FP8 tensor cores (the gg verifier
/// keeps FP8 K-major, which sm_89's mma.sync takes with its scales), a
/// store pool without tensor maps, a cluster without clusters. Every
/// layout and bf16, f16 or f32 (tf32 or 3xTF32) operands lower on every
/// target.
LogicalResult checkTargetSupports(GroupedMatmulOp op, const ggc::Target &t) {
  auto refuse = [&](llvm::StringRef what) {
    return op.emitOpError() << "cannot be lowered for " << t.name << ": "
                            << what << " (sm_90a lowers it)";
  };
  Type aElem = op.getAType().getElementType();
  bool f8 = isa<Float8E4M3FNType, Float8E5M2Type>(aElem);
  if (f8 && !t.fp8Mma)
    return refuse("its operands are " + llvm::formatv("{0}", aElem).str() +
                  "; FP8 mma.sync takes sm_89");
  std::optional<ArrayRef<int64_t>> pool = op.getStorePool();
  if (pool && !pool->empty() && !t.tensorMaps)
    return refuse("its store_pool stores by TMA; give store_pool = []");
  if (op.getStoreSlice() && !t.tensorMaps)
    return refuse("its store_slice stages the tile for TMA stores; drop it");
  ConfigAttr config = op.getConfigAttr();
  if (config && config.getClusterM() * config.getClusterN() > 1 &&
      !t.clusters)
    return refuse("its config asks for a cluster; give cluster = [1, 1]");
  // mma.sync warps hold a share of a tile's columns, where column_halves
  // pairs a column with one half a tile away.
  if (op.getColumnHalves() && (!t.tensorMaps || t.mma != ggc::MmaKind::wgmma))
    return refuse("column_halves loads B's two halves by TMA for wgmma; "
                  "interleave B's gate and up rows and use column_pairs");
  return success();
}

/// Step 2 of chooseConfig: a tile's rows, and how its consumer warpgroups
/// share it.
struct TileRows {
  int64_t blockM = 128, splitN = 1;
  /// A contiguous op whose groups hold at most 64 rows (64x64 tiles).
  bool contiguousDecode = false;
  /// 64-row tiles of 256 columns on one consumer warpgroup
  /// (kHalfHeightGroupRows).
  bool halfHeight = false;
  /// A group's rows: its expected_m, else a masked op's M_max, else unknown.
  std::optional<int64_t> groupRows;
};

/// f8 operands, an out quantised in 1x128 blocks (out_scale) and
/// column_pairs or column_halves: a warpgroup's two f8 accumulators hold
/// 128 columns of the product, 64 outputs, half a block, and 256 columns
/// spill (464 bytes, ptxas -v). Two warpgroups split a 64x256 tile's
/// columns and exchange each row's amax (QuantizedEpilogue.cpp); N a
/// multiple of 256 keeps every tile's block whole. The only tile that
/// states such an op: with its block scales in the stages it measured
/// 0.953-1.032x a bf16 out and gg.quantize_rows, and ggc.moe takes it
/// where experts expect 32-512 rows (layer.FP8_SWIGLU_EPILOGUE_ROWS; H100,
/// performance-history.md, fifty-ninth session).
bool splitsQuantizedOutputBlocks(GroupedMatmulOp op) {
  int64_t n = op.getDims().n;
  return op.getOutScale() && op.combinesColumns() &&
         !ShapedType::isDynamic(n) && n % 256 == 0;
}

TileRows chooseRows(GroupedMatmulOp op, int64_t numSMs) {
  // 2. Block M: small masked batches (decode) waste less with 64-row tiles.
  //    f8 needs two consumer warpgroups, which take turns on the tensor
  //    cores while the other scales its K block's product (one alone:
  //    220 us against 159 us for 128-row tiles on a decode batch of G=16,
  //    K=7168): it takes 64 rows by 256 columns with the two splitting the
  //    columns (split_n = 2, where N allows 256; timed interleaved on that
  //    batch: 147.6 against 173.9 us for 128x128 tiles).
  //    Other f8 takes 128 rows: its promotions pipeline there (two
  //    partial accumulators per consumer, gg-lower-to-nvvm), which three
  //    consumer warpgroups of 192-row tiles have no registers for. Timed
  //    in one run on the H200 (contiguous T=8192 G=8 and T=16384 G=32):
  //    532.7 against 605.1 us, 966.9 against 1160.1 us. (192 rows had won
  //    before promotions were pipelined: 580 against 627 us.)
  //    A group's rows are its expected_m, else a masked op's M_max, else
  //    unknown (prefill-sized). Contiguous decode (below) takes 64x64.
  TileRows rows;
  GroupedMatmulOp::Dims dims = op.getDims();
  bool f8 = byteWidth(op.getAType().getElementType()) == 1;
  GroupLayout layout = op.getLayout();
  std::optional<int64_t> &groupRows = rows.groupRows;
  groupRows = op.getExpectedM();
  if (!groupRows && layout == GroupLayout::masked && !ShapedType::isDynamic(dims.m))
    groupRows = dims.m;
  bool decode =
      layout == GroupLayout::masked && groupRows && *groupRows <= 64;
  // A MoE layer's decode step: a few rows for each expert that has any, so
  // the kernel is bound by reading those experts' weights, and the more
  // CTAs read them at once the sooner it ends. 64x64 tiles give twice or
  // four times the CTAs of 128-wide ones (timed on an H100, bf16: Mixtral's
  // down projection at 2 rows 83.1 against 96.4 us, its up projection
  // 158.3 against 162.8; 8 rows over 128 experts, N=2048 K=768 20.3
  // against 24.3 and N=1536 K=2048 27.4 against 29.1); from 32 rows a
  // group on, 128x128 tiles won (kWgmmaDecodeGroupRows). f8's block scales
  // of B need whole 128-column blocks, so f8 keeps its tiles.
  int64_t decodeRows = ggc::targetOf(op).mma == ggc::MmaKind::wgmma
                           ? kWgmmaDecodeGroupRows
                           : kDecodeGroupRows;
  rows.contiguousDecode = layout == GroupLayout::contiguous && groupRows &&
                          *groupRows <= decodeRows && !f8 &&
                          dims.n % 64 == 0;
  bool wgmma = ggc::targetOf(op).mma == ggc::MmaKind::wgmma;
  bool shortK = !ShapedType::isDynamic(dims.k) && dims.k <= kShortK;
  rows.halfHeight = wgmma && layout == GroupLayout::contiguous && groupRows &&
                    *groupRows > decodeRows &&
                    *groupRows < kHalfHeightGroupRows && !f8 &&
                    (op.getARows() || shortK);
  if (rows.contiguousDecode || rows.halfHeight || (decode && !f8)) {
    rows.blockM = 64;
  } else if (f8 && splitsQuantizedOutputBlocks(op)) {
    rows.blockM = 64;
    rows.splitN = 2;
  } else if ((decode || (f8 && maskedTakesSplitTiles(op, numSMs))) &&
             !ggc::usesMxScales(op) && dims.n % 256 == 0 &&
             !op.getColumnHalves()) {
    // (column_halves pairs columns half a tile apart: one warpgroup holds
    // them all.)
    rows.blockM = 64;
    rows.splitN = 2;
  }
  return rows;
}

/// Step 3a: the widest tile that divides N, so no column tile is ragged;
/// otherwise 128 with a ragged last tile (kRaggedColumnTileMinN), 64 for
/// contiguous decode tiles, and 128 where a 128x256 f32 accumulator would
/// need 256 registers per thread across two consumer warpgroups (256 kept
/// only where the tile is full height or split between two warpgroups).
int64_t widestDividingBlockN(GroupedMatmulOp op, const TileRows &rows,
                             bool setmaxnreg) {
  GroupedMatmulOp::Dims dims = op.getDims();
  Type aElem = op.getAType().getElementType();
  int64_t blockN = 128;
  for (int64_t candidate : {256, 128, 64})
    if (dims.n % candidate == 0) {
      blockN = candidate;
      break;
    }
  bool sixteenBit = aElem.isBF16() || aElem.isF16();
  if (blockN == 64 && setmaxnreg && sixteenBit && rows.blockM == 128 &&
      op.getLayout() == GroupLayout::contiguous && !op.getColumnHalves() &&
      dims.n >= kRaggedColumnTileMinN)
    blockN = 128;
  if (rows.contiguousDecode)
    blockN = 64;
  if (blockN == 256 && rows.blockM < 128 && rows.splitN == 1 &&
      !rows.halfHeight)
    blockN = 128;
  return blockN;
}

/// Step 3b: whether a target without setmaxnreg keeps 128x256 tiles.
/// Without setmaxnreg (before sm_90a) every thread of the CTA gets the
/// same registers: 168 of 65,536 for 384 threads leave a consumer's 64x256
/// accumulator (128 of them) too few for its fragments. 16-bit operands
/// on 128-row tiles need no producer (gg-plan-kernel: the consumers copy,
/// 256 registers a thread), and their 128x256 tiles of 64x64 warps move
/// the least shared and L2 memory per multiply. Where shared memory holds
/// four of their stages (a Hopper card's 227 KiB) they measured up to 7%
/// faster than 128x128 (H200, H100), but 2-7% slower on contiguous
/// groups of 64 rows, whose tiles fill half as many waves: contiguous
/// groups expected to hold fewer than kWideMmaSyncGroupRows keep 128.
/// With the three stages that an A100's 163 KiB holds, 128x256 measured
/// from 1% slower to 8% faster, not enough to pick it
/// (docs/performance.md).
bool mmaSyncTakesWideTiles(GroupedMatmulOp op, const TileRows &rows,
                           int64_t blockN, int64_t blockK, int64_t numSMs,
                           int64_t smemBudget, bool setmaxnreg) {
  Type aElem = op.getAType().getElementType();
  bool sixteenBit = aElem.isBF16() || aElem.isF16();
  bool smallGroups = op.getLayout() == GroupLayout::contiguous &&
                     rows.groupRows &&
                     *rows.groupRows < kWideMmaSyncGroupRows;
  return !setmaxnreg && rows.blockM == 128 && rows.splitN == 1 &&
         blockN == 256 && !smallGroups && sixteenBit &&
         op.getBType().getElementType() == aElem &&
         ggc::sharedMemoryLayout(
             op,
             ConfigAttr::get(op.getContext(), rows.blockM, blockN, blockK,
                             kWideMmaSyncStages, 1, 1, numSMs, rows.splitN),
             /*stagedOutput=*/false)
                 .total <= smemBudget;
}

/// Step 3c: whether contiguous groups keep 256-wide tiles.
/// Contiguous groups are ragged and their sizes unknown until run time:
/// 128-wide tiles balance the persistent grid's waves better where groups
/// are small (timed interleaved on an H100, bf16 K=7168: T=4096 G=64 657
/// against 690 us, T=2048 G=128 2346 against 2373). Groups expected to
/// hold kTallGroupRows rows or more, or kWideNGroupRows where N is at
/// least kWideNMinN, keep 256: their A and B tiles are each read by too
/// few CTAs on 128x128 tiles (the figures at kTallGroupRows), and on a card
/// of narrow memory kNarrowWideGroupRows. The mma.sync rule above has its
/// own threshold.
bool contiguousKeepsWideTiles(GroupedMatmulOp op, const TileRows &rows,
                              int64_t memoryGBps) {
  GroupedMatmulOp::Dims dims = op.getDims();
  Type aElem = op.getAType().getElementType();
  bool sixteenBit = aElem.isBF16() || aElem.isF16();
  bool tallGroups =
      rows.groupRows &&
      (*rows.groupRows >= kTallGroupRows ||
       (*rows.groupRows >= kWideNGroupRows && dims.n >= kWideNMinN) ||
       (narrowMemory(memoryGBps) && sixteenBit &&
        *rows.groupRows >= kNarrowWideGroupRows));
  bool gatedWide = op.getColumnHalves() && rows.groupRows &&
                   *rows.groupRows >= kGatedWideGroupRows;
  bool shortK = !ShapedType::isDynamic(dims.k) && dims.k <= kShortK &&
                rows.groupRows && *rows.groupRows >= kShortKGroupRows;
  return tallGroups || gatedWide || shortK || rows.halfHeight;
}

/// Step 3d: a long-group FP8 weight gradient's width (kWeightGradientBlockN),
/// the first that keeps its scales in the stages and the TMA store pool;
/// long: kWideStoredWeightGradientTokens an expert where it writes a
/// 16-bit out, else kWideWeightGradientTokens.
std::optional<int64_t> weightGradientBlockN(GroupedMatmulOp op,
                                            const TileRows &rows,
                                            int64_t blockK, int64_t numSMs) {
  bool stores16Bit = !op.getAccumulate() &&
                     byteWidth(op.getOutType().getElementType()) == 2;
  int64_t wideFrom = stores16Bit ? kWideStoredWeightGradientTokens
                                 : kWideWeightGradientTokens;
  if (byteWidth(op.getAType().getElementType()) != 1 ||
      op.getLayout() != GroupLayout::k_grouped || op.getDims().n <= 128 ||
      !rows.groupRows || *rows.groupRows < wideFrom ||
      !ggc::stagesColumnScales(op) || ggc::usesMxScales(op))
    return std::nullopt;
  for (int64_t candidate : kWeightGradientBlockN) {
    auto config = ConfigAttr::get(op.getContext(), rows.blockM, candidate,
                                  blockK, 1, 1, 1, numSMs, rows.splitN);
    if (ggc::stagesBlockScales(op, config) && !op.storePoolObstacle(config))
      return candidate;
  }
  return std::nullopt;
}

/// Step 3e: short-K contiguous FP8 groups of N a multiple of 192 (any N on
/// a card of narrow memory; any K where N is a multiple of 192 and the
/// ring stages are constant) take kWideFp8BlockN (measured with wgmma only:
/// without setmaxnreg a warpgroup keeps 128 columns, chooseBlockN).
std::optional<int64_t> wideFp8BlockN(GroupedMatmulOp op, const TileRows &rows,
                                     int64_t blockK, int64_t numSMs,
                                     bool setmaxnreg, int64_t memoryGBps) {
  GroupedMatmulOp::Dims dims = op.getDims();
  bool wholeColumnTiles = dims.n % kWideFp8BlockN == 0;
  bool columnsTake192 =
      wholeColumnTiles ||
      (narrowMemory(memoryGBps) && dims.n >= kNarrowRaggedFp8MinN);
  bool kTakes192 = dims.k <= kWideFp8MaxK ||
                   (wholeColumnTiles && ggc::plan::takesConstantStages(op));
  if (!setmaxnreg || byteWidth(op.getAType().getElementType()) != 1 ||
      op.getLayout() != GroupLayout::contiguous ||
      rows.blockM != 128 || rows.splitN != 1 || op.getColumnHalves() ||
      !columnsTake192 || ShapedType::isDynamic(dims.k) ||
      !kTakes192 || !rows.groupRows ||
      *rows.groupRows < kWideFp8GroupRows || ggc::usesMxScales(op))
    return std::nullopt;
  auto config = ConfigAttr::get(op.getContext(), rows.blockM, kWideFp8BlockN,
                                blockK, 1, 1, 1, numSMs, rows.splitN);
  if (op.storePoolObstacle(config))
    return std::nullopt;
  return kWideFp8BlockN;
}

/// Step 3f: an out quantised in 1x128 blocks (out_scale) keeps a tile
/// whose consumer warpgroups each hold whole 128-column blocks of out: a
/// row's block then lies in one quad of threads, which take its amax
/// without shared memory (QuantizedEpilogue.cpp). Other tiles take 128
/// output columns a warpgroup (256 columns of the product where
/// column_pairs or column_halves combine them), or, split between two
/// warpgroups (splitsQuantizedOutputBlocks), 128 output columns in all.
int64_t quantizedOutputBlockN(GroupedMatmulOp op, const TileRows &rows,
                              int64_t blockN) {
  int64_t combine = op.combinesColumns() ? 2 : 1;
  if (!op.getOutScale() || blockN / combine / rows.splitN % 128 == 0)
    return blockN;
  if (rows.splitN == 2)
    return 128 * combine;
  return 128 * combine * rows.splitN;
}

/// Where quantizedOutputBlockN has no tile to give: f8 operands keep two
/// accumulators a warpgroup (two-level accumulation), which hold 128
/// columns of the product in the registers, so with column_pairs or
/// column_halves a warpgroup holds 64 outputs, half a block, and only
/// splitsQuantizedOutputBlocks' tiles have a second warpgroup beside it.
LogicalResult checkQuantizedOutputTile(GroupedMatmulOp op) {
  if (!op.getOutScale() || !op.combinesColumns() ||
      byteWidth(op.getAType().getElementType()) != 1 ||
      splitsQuantizedOutputBlocks(op))
    return success();
  return op.emitOpError()
         << "has no tile for out_scale with f8 operands and "
         << op.combiningName() << " where N (" << op.getDims().n
         << ") is not a multiple of 256: a warpgroup's two f8 accumulators "
            "hold 128 columns of the product, 64 outputs, and two "
            "warpgroups split a 256-column tile's 128-column block; write "
            "a bf16 out and quantise it with gg.quantize_rows, or give a "
            "config";
}

/// Step 3 of chooseConfig: the tile's columns, by steps 3a-3e.
int64_t chooseBlockN(GroupedMatmulOp op, const TileRows &rows, int64_t blockK,
                     int64_t numSMs, int64_t smemBudget, bool setmaxnreg,
                     int64_t memoryGBps) {
  int64_t splitN = rows.splitN;
  int64_t blockN = widestDividingBlockN(op, rows, setmaxnreg);
  bool wideMmaSync = mmaSyncTakesWideTiles(op, rows, blockN, blockK, numSMs,
                                           smemBudget, setmaxnreg);
  if (!setmaxnreg && blockN / splitN > 128 && !wideMmaSync)
    blockN = 128 * splitN;
  if (blockN == 256 && op.getLayout() == GroupLayout::contiguous &&
      !contiguousKeepsWideTiles(op, rows, memoryGBps) && !wideMmaSync)
    blockN = 128;
  // f8 kernels keep a second accumulator for each K block's product
  // (two-level accumulation, for block scales and for precision): two 64x128
  // fragments fit the registers, two 64x256 do not.
  bool twoLevel = byteWidth(op.getAType().getElementType()) == 1;
  if (twoLevel && blockN / splitN > 128)
    blockN = 128;
  if (std::optional<int64_t> wide =
          weightGradientBlockN(op, rows, blockK, numSMs))
    return *wide;
  if (std::optional<int64_t> wide =
          wideFp8BlockN(op, rows, blockK, numSMs, setmaxnreg, memoryGBps))
    return *wide;
  if (rows.blockM == 128 && rows.splitN == 1 &&
      maskedTakesPairedWideTiles(op, numSMs))
    return kPairedMaskedBlockN;
  // 128x128 scales of B: whole 128-column blocks (narrower tiles are
  // lowered, straddling two blocks, but measured slower; kWideFp8BlockN's
  // straddle measured faster).
  ScaleAttr bScale = op.getBScaleKindAttr();
  if (bScale && bScale.getKind() == ScaleKind::block && blockN % 128 != 0)
    blockN = 128;
  // Narrower tiles that would fill the persistent grid's last wave (112
  // columns for G=4 M=256 N=7168, 512 tiles in 4 full waves instead of 448
  // in 3.4) measured slower: 48.7 against 36.5 us there (their 224-byte
  // rows get no TMA store pool), and 96 columns lost 40% everywhere
  // (docs/performance.md). Block N stays 128.
  return blockN;
}

ConfigAttr chooseConfig(GroupedMatmulOp op, int64_t numSMs,
                        int64_t smemBudget, bool setmaxnreg,
                        int64_t memoryGBps) {
  MLIRContext *ctx = op.getContext();
  Type aElem = op.getAType().getElementType();

  // 1. Block K: one 128-byte swizzled row of A per K step (64 bf16, 128 f8,
  //    32 f32), the widest row TMA's 128B swizzle allows.
  int64_t blockK = 128 / byteWidth(aElem);

  // 2. Block M and split N: chooseRows.
  TileRows rows = chooseRows(op, numSMs);
  // 3. Block N: chooseBlockN, then quantizedOutputBlockN.
  int64_t blockN = quantizedOutputBlockN(
      op, rows,
      chooseBlockN(op, rows, blockK, numSMs, smemBudget, setmaxnreg,
                   memoryGBps));

  // 4. Stages: as deep as shared memory allows (deepestPipeline).
  // 5. Cluster: [1, 1], but pairs sharing B by TMA multicast ([2, 1]) for
  //    the masked f8 batches of maskedTakesPairedWideTiles
  //    (MaskedTileRules.cpp). Elsewhere pairs measured no faster on the
  //    large FP8 shapes and 1.8x slower on decode (docs/performance.md;
  //    before a group's odd last M block stopped idling one CTA of the
  //    pair).
  // 6. Grid: persistent, one CTA per SM.
  int64_t clusterM = blockN == kPairedMaskedBlockN && rows.blockM == 128 &&
                             maskedTakesPairedWideTiles(op, numSMs)
                         ? 2
                         : 1;
  return deepestPipeline(
      op,
      ConfigAttr::get(ctx, rows.blockM, blockN, blockK, 1, clusterM, 1,
                      numSMs, rows.splitN),
      smemBudget);
}

struct SelectConfigPass
    : public ggc::impl::SelectConfigBase<SelectConfigPass> {
  using SelectConfigBase::SelectConfigBase;

  void runOnOperation() override {
    // The option reaches #gg.config unverified (ConfigAttr::get).
    if (numSMs < 1) {
      getOperation()->emitError() << "gg-select-config: num-sms must be "
                                     "positive, got "
                                  << numSMs.getValue();
      return signalPassFailure();
    }
    FailureOr<ggc::Target> readTarget = ggc::readTarget(getOperation());
    if (failed(readTarget))
      return signalPassFailure();
    ggc::Target target = *readTarget;
    if (smemBudget < 0) {
      getOperation()->emitError() << "gg-select-config: shared-memory-bytes "
                                     "must be 0 (the target's) or positive, "
                                     "got "
                                  << smemBudget.getValue();
      return signalPassFailure();
    }
    if (memoryGBps < 0) {
      getOperation()->emitError() << "gg-select-config: memory-gbps must be "
                                     "0 (unknown) or positive, got "
                                  << memoryGBps.getValue();
      return signalPassFailure();
    }
    int64_t budget = ggc::sharedMemoryBudget(target, smemBudget);
    WalkResult result = getOperation().walk([&](GroupedMatmulOp op) {
      if (failed(checkTargetSupports(op, target)))
        return WalkResult::interrupt();
      ConfigAttr config = op.getConfigAttr();
      if (!config && op.getStoreSlice()) {
        // A slice width fits the tile it slices: the user's.
        op.emitOpError() << "has a store_slice but no config: give the "
                            "config whose output tile it slices";
        return WalkResult::interrupt();
      }
      if (!config && failed(checkQuantizedOutputTile(op)))
        return WalkResult::interrupt();
      if (!config) {
        config = chooseConfig(op, numSMs, budget, target.registerReallocation,
                              memoryGBps);
        op.setConfigAttr(config);
      } else if (config.getStages() == 0) {
        config = deepestPipeline(op, config, budget);
        op.setConfigAttr(config);
      }
      std::optional<ArrayRef<int64_t>> pool = op.getStorePool();
      int64_t needed =
          ggc::sharedMemoryLayout(op, config,
                                  /*stagedOutput=*/pool && !pool->empty())
              .total;
      if (needed > budget) {
        op.emitOpError() << "config " << config << " needs " << needed
                         << " bytes of shared memory, more than the "
                         << budget
                         << " one CTA may use; lower the stages or the tile";
        return WalkResult::interrupt();
      }
      if (failed(ggc::checkRegisterFit(op, config)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
