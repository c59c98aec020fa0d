//===- GGAttrs.cpp - #gg.scale and #gg.config ------------------------------===//
#include "gg/GGDialect.h"
#include "gg/CheckedMath.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::gg;

//===----------------------------------------------------------------------===//
// ScaleAttr: `<kind [BMxBK] [, major]>`
//===----------------------------------------------------------------------===//

Attribute ScaleAttr::parse(AsmParser &parser, Type) {
  StringRef kindName;
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<ScaleKind> kind = symbolizeScaleKind(kindName);
  if (!kind) {
    parser.emitError(kindLoc, "unknown scale kind '")
        << kindName << "'; expected tensor, channel, block or mx";
    return {};
  }
  int64_t blockMN = 1, blockK = 1;
  ScaleMajor major = ScaleMajor::k_major;
  if (*kind == ScaleKind::block || *kind == ScaleKind::mx) {
    SmallVector<int64_t, 2> block;
    SMLoc blockLoc = parser.getCurrentLocation();
    if (parser.parseDimensionList(block, /*allowDynamic=*/false,
                                  /*withTrailingX=*/false))
      return {};
    if (block.size() != 2) {
      parser.emitError(blockLoc, "expected a block shape BMxBK, e.g. 1x128");
      return {};
    }
    blockMN = block[0];
    blockK = block[1];
    if (succeeded(parser.parseOptionalComma())) {
      StringRef majorName;
      SMLoc majorLoc = parser.getCurrentLocation();
      if (parser.parseKeyword(&majorName))
        return {};
      std::optional<ScaleMajor> parsed = symbolizeScaleMajor(majorName);
      if (!parsed) {
        parser.emitError(majorLoc, "expected k_major or mn_major, got '")
            << majorName << "'";
        return {};
      }
      major = *parsed;
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ScaleAttr>(parser.getContext(), *kind, blockMN,
                                      blockK, major);
}

void ScaleAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyScaleKind(getKind());
  if (getKind() == ScaleKind::block || getKind() == ScaleKind::mx) {
    printer << " " << getBlockMN() << "x" << getBlockK();
    if (getMajor() != ScaleMajor::k_major)
      printer << ", " << stringifyScaleMajor(getMajor());
  }
  printer << ">";
}

LogicalResult ScaleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                ScaleKind kind, int64_t blockMN, int64_t blockK,
                                ScaleMajor major) {
  switch (kind) {
  case ScaleKind::tensor:
  case ScaleKind::channel:
    if (blockMN != 1 || blockK != 1 || major != ScaleMajor::k_major)
      return emitError() << stringifyScaleKind(kind)
                         << " scales take no block shape and no major order";
    return success();
  case ScaleKind::block:
    // Exactly DeepGEMM's granularities: the kernel applies one scale per
    // 128-wide K block, which is what the two-level accumulation relies on.
    if (blockK != 128 || (blockMN != 1 && blockMN != 128))
      return emitError() << "block scales cover 1x128 or 128x128 blocks, got "
                         << blockMN << "x" << blockK;
    return success();
  case ScaleKind::mx:
    if (blockMN != 1 || (blockK != 32 && blockK != 128))
      return emitError() << "mx scales are per row with K blocks of 32 or 128 "
                            "(1x32 or 1x128), got "
                         << blockMN << "x" << blockK;
    if (major != ScaleMajor::k_major)
      return emitError() << "mx scales have a fixed per-token layout (four "
                            "UE8M0 exponents per i32 along K); drop mn_major";
    return success();
  }
  llvm_unreachable("unknown scale kind");
}

//===----------------------------------------------------------------------===//
// ConfigAttr
//===----------------------------------------------------------------------===//

LogicalResult ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t blockM, int64_t blockN, int64_t blockK,
                                 int64_t stages, int64_t clusterM,
                                 int64_t clusterN, int64_t numSMs,
                                 int64_t splitN) {
  // One wgmma covers 64 rows per warpgroup and 8..256 columns in steps of 8.
  if (blockM <= 0 || blockM % 64 != 0 || blockM > 256)
    return emitError() << "block M must be 64, 128, 192 or 256, got " << blockM;
  if (blockN <= 0 || blockN % 8 != 0 || blockN > 256)
    return emitError() << "block N must be a multiple of 8 in [8, 256], got "
                       << blockN;
  // Every K step must start on a 128-byte boundary of the swizzled shared
  // memory tile; 32 elements is the smallest step that does so for f32.
  if (blockK <= 0 || blockK % 32 != 0 || blockK > 256)
    return emitError() << "block K must be a multiple of 32 in [32, 256], got "
                       << blockK;
  // 0 asks gg-select-config for the deepest pipeline that fits the tile.
  if (stages < 0 || stages > 16)
    return emitError() << "stages must be in [1, 16] (or 0: chosen by "
                          "gg-select-config), got "
                       << stages;
  if (clusterM < 1 || clusterN < 1 || clusterM > 8 || clusterN > 8 ||
      clusterM * clusterN > 8 ||
      !llvm::isPowerOf2_64(clusterM) || !llvm::isPowerOf2_64(clusterN))
    return emitError() << "cluster must be powers of two with at most 8 CTAs, "
                          "got ["
                       << clusterM << ", " << clusterN << "]";
  if (numSMs < 1)
    return emitError() << "sms must be positive, got " << numSMs;
  if (splitN != 1 && splitN != 2)
    return emitError() << "split_n must be 1 or 2, got " << splitN;
  if (splitN == 2 && blockN % 32 != 0)
    return emitError() << "split_n = " << splitN
                       << " needs block N a multiple of " << 16 * splitN
                       << " (each warpgroup's wgmma takes a multiple of 16 "
                          "columns), got "
                       << blockN;
  return success();
}

//===----------------------------------------------------------------------===//
// ScheduleAttr: `<order = O[, m_band = S][, b_cache = P][, group_reads = R][, odd_block_a = A]>`
//===----------------------------------------------------------------------===//

/// Parses `keyword` `=` and an enum case that `symbolize` knows.
template <typename Enum>
static FailureOr<Enum>
parseEnumEntry(AsmParser &parser, StringRef expected,
               std::optional<Enum> (*symbolize)(StringRef)) {
  StringRef name;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseEqual() || parser.parseKeyword(&name))
    return failure();
  if (std::optional<Enum> value = symbolize(name))
    return *value;
  return parser.emitError(loc, "expected ") << expected << ", got '" << name
                                            << "'";
}

/// parseEnumEntry into `out`; failure (reported) on a case `symbolize`
/// does not know.
template <typename Enum>
static ParseResult parseEnumInto(AsmParser &parser, StringRef expected,
                                 std::optional<Enum> (*symbolize)(StringRef),
                                 Enum &out) {
  FailureOr<Enum> value = parseEnumEntry<Enum>(parser, expected, symbolize);
  if (failed(value))
    return failure();
  out = *value;
  return success();
}

Attribute ScheduleAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess() || parser.parseKeyword("order"))
    return {};
  FailureOr<TileOrder> order = parseEnumEntry<TileOrder>(
      parser, "m_fastest or n_fastest", symbolizeTileOrder);
  if (failed(order))
    return {};
  int64_t mBand = 0;
  CachePolicy bCache = CachePolicy::normal;
  GroupReads groupReads = GroupReads::global;
  OddBlockA oddBlockA = OddBlockA::own;
  while (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("m_band"))) {
      if (parser.parseEqual() || parser.parseInteger(mBand))
        return {};
      continue;
    }
    if (succeeded(parser.parseOptionalKeyword("group_reads"))) {
      if (parseEnumInto(parser, "global or shared", symbolizeGroupReads,
                        groupReads))
        return {};
      continue;
    }
    if (succeeded(parser.parseOptionalKeyword("odd_block_a"))) {
      if (parseEnumInto(parser, "own or multicast", symbolizeOddBlockA,
                        oddBlockA))
        return {};
      continue;
    }
    if (parser.parseKeyword("b_cache",
                            ", 'm_band', 'group_reads' or 'odd_block_a'") ||
        parseEnumInto(parser, "normal, evict_first or evict_last",
                      symbolizeCachePolicy, bCache))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ScheduleAttr>(parser.getContext(), *order, mBand,
                                         bCache, groupReads, oddBlockA);
}

void ScheduleAttr::print(AsmPrinter &printer) const {
  printer << "<order = " << stringifyTileOrder(getOrder());
  if (getMBand() != 0)
    printer << ", m_band = " << getMBand();
  if (getBCache() != CachePolicy::normal)
    printer << ", b_cache = " << stringifyCachePolicy(getBCache());
  if (getGroupReads() != GroupReads::global)
    printer << ", group_reads = " << stringifyGroupReads(getGroupReads());
  if (getOddBlockA() != OddBlockA::own)
    printer << ", odd_block_a = " << stringifyOddBlockA(getOddBlockA());
  printer << ">";
}

LogicalResult
ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     TileOrder order, int64_t mBand, CachePolicy,
                     GroupReads, OddBlockA) {
  // The kernel counts a band's tiles in i32: m_band * N blocks.
  if (mBand < 0 || mBand > kMaxMBand)
    return emitError() << "schedule m_band must be in [0, " << kMaxMBand
                       << "] (0: one band per group), got " << mBand;
  if (mBand > 0 && order != TileOrder::m_fastest)
    return emitError() << "schedule m_band bands a group's M blocks and "
                          "needs order = m_fastest, got order = "
                       << stringifyTileOrder(order);
  return success();
}

LogicalResult
OverfetchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t rows, int64_t k) {
  if (rows < 0 || rows > 255)
    return emitError() << "overfetch rows must be in [0, 255] (below block M), "
                          "got "
                       << rows;
  // Group starts are rounded down to a multiple of k + 1 with a mask.
  if (k < 0 || !llvm::isPowerOf2_64(uint64_t(k) + 1))
    return emitError() << "overfetch k + 1 must be a power of two (the "
                          "alignment of a group's first K block), got k = "
                       << k;
  return success();
}

Attribute KernelPlanAttr::parse(AsmParser &parser, Type) {
  int64_t producerRegs = 0, consumerRegs = 0;
  if (parser.parseLess() || parser.parseKeyword("promotion"))
    return {};
  FailureOr<Promotion> promotion = parseEnumEntry<Promotion>(
      parser, "serial or pipelined", symbolizePromotion);
  if (failed(promotion) || parser.parseComma() ||
      parser.parseKeyword("scales"))
    return {};
  FailureOr<ScalePlacement> scales = parseEnumEntry<ScalePlacement>(
      parser, "none, slots or stages", symbolizeScalePlacement);
  if (failed(scales) || parser.parseComma() ||
      parser.parseKeyword("registers") || parser.parseEqual() ||
      parser.parseLSquare() || parser.parseInteger(producerRegs) ||
      parser.parseComma() || parser.parseInteger(consumerRegs) ||
      parser.parseRSquare() || parser.parseComma() ||
      parser.parseKeyword("staging"))
    return {};
  FailureOr<Staging> staging = parseEnumEntry<Staging>(
      parser, "none, dense, swizzled or swizzled_64", symbolizeStaging);
  if (failed(staging))
    return {};
  // The optional fields, in any order, each at most once.
  int64_t warpColumns = 1, releaseLag = 1, storeColumns = 2,
          epilogueBlocks = KernelPlanAttr::defaultEpilogueBlocks(*promotion);
  Producer producer = Producer::warpgroup;
  StoreIssuers storeIssuers = StoreIssuers::tile;
  ColumnScaleReads columnScaleReads = ColumnScaleReads::at_promotion;
  RingStages ringStages = RingStages::counted;
  StringRef seen[8];
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc at = parser.getCurrentLocation();
    StringRef field;
    if (parser.parseKeyword(&field))
      return {};
    int64_t *number = field == "warp_columns"      ? &warpColumns
                      : field == "release_lag"     ? &releaseLag
                      : field == "store_columns"   ? &storeColumns
                      : field == "epilogue_blocks" ? &epilogueBlocks
                                                   : nullptr;
    if (!number && field != "producer" && field != "store_issuers" &&
        field != "column_scale_reads" && field != "ring_stages") {
      parser.emitError(at) << "kernel_plan has no field '" << field
                           << "' (expected 'warp_columns', 'release_lag', "
                              "'producer', 'store_columns', "
                              "'epilogue_blocks', 'store_issuers', "
                              "'column_scale_reads' or 'ring_stages')";
      return {};
    }
    if (llvm::is_contained(seen, field)) {
      parser.emitError(at) << "kernel_plan gives " << field << " twice";
      return {};
    }
    *llvm::find(seen, StringRef()) = field;
    ParseResult parsed = success();
    if (field == "ring_stages")
      parsed = parseEnumInto(parser, "counted or constant",
                             symbolizeRingStages, ringStages);
    else if (field == "column_scale_reads")
      parsed = parseEnumInto(parser, "at_promotion or at_issue",
                             symbolizeColumnScaleReads, columnScaleReads);
    else if (field == "store_issuers")
      parsed = parseEnumInto(parser, "tile or warpgroup",
                             symbolizeStoreIssuers, storeIssuers);
    else if (!number)
      parsed = parseEnumInto(parser, "warpgroup, none or all_threads",
                             symbolizeProducer, producer);
    else if (parser.parseEqual() || parser.parseInteger(*number))
      parsed = failure();
    if (failed(parsed))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<KernelPlanAttr>(
      parser.getContext(), *promotion, *scales, producerRegs, consumerRegs,
      *staging, warpColumns, releaseLag, producer, storeColumns,
      epilogueBlocks, storeIssuers, columnScaleReads, ringStages);
}

void KernelPlanAttr::print(AsmPrinter &printer) const {
  printer << "<promotion = " << stringifyPromotion(getPromotion())
          << ", scales = " << stringifyScalePlacement(getScales())
          << ", registers = [" << getProducerRegisters() << ", "
          << getConsumerRegisters()
          << "], staging = " << stringifyStaging(getStaging());
  if (getWarpColumns() != 1)
    printer << ", warp_columns = " << getWarpColumns();
  if (getReleaseLag() != 1)
    printer << ", release_lag = " << getReleaseLag();
  if (getProducer() != Producer::warpgroup)
    printer << ", producer = " << stringifyProducer(getProducer());
  if (getStoreColumns() != 2)
    printer << ", store_columns = " << getStoreColumns();
  if (getEpilogueBlocks() != defaultEpilogueBlocks(getPromotion()))
    printer << ", epilogue_blocks = " << getEpilogueBlocks();
  if (getStoreIssuers() != StoreIssuers::tile)
    printer << ", store_issuers = " << stringifyStoreIssuers(getStoreIssuers());
  if (getColumnScaleReads() != ColumnScaleReads::at_promotion)
    printer << ", column_scale_reads = "
            << stringifyColumnScaleReads(getColumnScaleReads());
  if (getRingStages() != RingStages::counted)
    printer << ", ring_stages = " << stringifyRingStages(getRingStages());
  printer << ">";
}

LogicalResult
KernelPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       Promotion promotion, ScalePlacement scales,
                       int64_t producerRegisters, int64_t consumerRegisters,
                       Staging staging, int64_t warpColumns,
                       int64_t releaseLag, Producer producer,
                       int64_t storeColumns, int64_t epilogueBlocks,
                       StoreIssuers storeIssuers,
                       ColumnScaleReads columnScaleReads,
                       RingStages ringStages) {
  if (warpColumns != 1 && warpColumns != 2 && warpColumns != 4)
    return emitError() << "kernel_plan warp_columns must be 1, 2 or 4, got "
                       << warpColumns;
  if (releaseLag != 0 && releaseLag != 1)
    return emitError() << "kernel_plan release_lag must be 0 or 1, got "
                       << releaseLag;
  if (storeColumns != 2 && storeColumns != 8)
    return emitError() << "kernel_plan store_columns must be 2 or 8, got "
                       << storeColumns;
  // The pipelined promotion always defers a tile's epilogue beside one or
  // two of the next tile's K blocks; the serial one beside none (at the
  // tile's end) or one.
  bool pipelined = promotion == Promotion::pipelined;
  if (pipelined ? epilogueBlocks != 1 && epilogueBlocks != 2
                : epilogueBlocks != 0 && epilogueBlocks != 1)
    return emitError() << "kernel_plan epilogue_blocks must be "
                       << (pipelined ? "1 or 2" : "0 or 1") << " with promotion = "
                       << stringifyPromotion(promotion) << ", got "
                       << epilogueBlocks;
  // setmaxnreg takes a multiple of 8 in [24, 256].
  for (auto [who, regs] : {std::pair{"producer", producerRegisters},
                           std::pair{"consumer", consumerRegisters}})
    if (regs < 24 || regs > 256 || regs % 8 != 0)
      return emitError() << "kernel_plan " << who
                         << " registers must be a multiple of 8 in [24, 256] "
                            "(setmaxnreg), got "
                         << regs;
  // The turns of the ring the loop steps start at a stage known when
  // compiling: at stage 0 where no block of a tile runs before the loop
  // (serial), at stage 1 where block 0 goes beside the overlap (pipelined).
  if (ringStages == RingStages::constant &&
      epilogueBlocks != (pipelined ? 1 : 0))
    return emitError() << "kernel_plan ring_stages = constant takes promotion "
                          "= serial with epilogue_blocks = 0 or promotion = "
                          "pipelined with epilogue_blocks = 1, got promotion "
                          "= "
                       << stringifyPromotion(promotion)
                       << " with epilogue_blocks = " << epilogueBlocks;
  if (columnScaleReads == ColumnScaleReads::at_issue && pipelined)
    return emitError() << "kernel_plan column_scale_reads = at_issue takes "
                          "promotion = serial (two partial accumulators and "
                          "the columns' scales do not fit beside each other)";
  if (producerRegisters > consumerRegisters)
    return emitError() << "kernel_plan gives the producer more registers ("
                       << producerRegisters << ") than each consumer ("
                       << consumerRegisters
                       << "); the producer only issues loads";
  return success();
}
