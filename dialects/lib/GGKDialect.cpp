//===- GGKDialect.cpp - the ggk dialect: registration and verifiers --------===//
#include "ggk/GGKDialect.h"
#include "gg/CheckedMath.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ggk;

#include "ggk/GGKDialect.cpp.inc"
#include "ggk/GGKEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ggk/GGKAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "ggk/GGKTypes.cpp.inc"

#define GET_OP_CLASSES
#include "ggk/GGKOps.cpp.inc"

void GGKDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ggk/GGKOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ggk/GGKAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "ggk/GGKTypes.cpp.inc"
      >();
}

LogicalResult ForeachTileOp::verify() {
  ArrayRef<int64_t> tile = getTile();
  if (tile.size() != 3 || llvm::any_of(tile, [](int64_t d) { return d <= 0; }))
    return emitOpError() << "tile must be [block M, block N, block K], all "
                            "positive, got "
                         << tile.size() << " sizes";
  if (getCluster() < 1 || (getCluster() > 1) != bool(getClusterRank()))
    return emitOpError() << "takes a cluster_rank exactly when its cluster ("
                         << getCluster() << ") has more than one CTA";
  // The schedule pairs tiles (shares_b): no larger cluster is walked.
  if (getCluster() > 2 ||
      (getCluster() > 1 && getLayout() == gg::GroupLayout::padded_contiguous))
    return emitOpError() << "walks clusters of 1 or 2 CTAs (padded_contiguous "
                            "alone), got "
                         << getCluster() << " with layout "
                         << gg::stringifyGroupLayout(getLayout());
  if (getMBand() < 0 || getMBand() > gg::kMaxMBand ||
      (getMBand() > 0 && getNFastest()))
    return emitOpError() << "m_band must be in [0, " << gg::kMaxMBand
                         << "] and bands M blocks, which n_fastest does not "
                            "walk first; got m_band = "
                         << getMBand()
                         << (getNFastest() ? " with n_fastest" : "");
  if (!getGroupsType().isInteger(32) && !getGroupsType().isInteger(64))
    return emitOpError() << "groups_type must be i32 or i64, got "
                         << getGroupsType();
  if (getZeroUngrouped() && getLayout() != gg::GroupLayout::contiguous)
    return emitOpError() << "zero_ungrouped walks the rows outside a "
                            "contiguous layout's groups; got layout "
                         << gg::stringifyGroupLayout(getLayout());
  if (getTable() && getLayout() != gg::GroupLayout::masked &&
      getLayout() != gg::GroupLayout::contiguous)
    return emitOpError() << "reads a table of group counts or offsets in "
                            "a masked or contiguous walk only; got layout "
                         << gg::stringifyGroupLayout(getLayout());
  Block *body = getBodyBlock();
  unsigned expected = kTileFields + getInits().size();
  if (body->getNumArguments() != expected)
    return emitOpError() << "body must take the " << kTileFields
                         << " tile fields and the " << getInits().size()
                         << " carried values, " << expected
                         << " arguments, got " << body->getNumArguments();
  for (unsigned i = 0; i < kTileFields; ++i)
    if (!body->getArgument(i).getType().isInteger(32))
      return emitOpError() << "tile field #" << i << " must be i32, got "
                           << body->getArgument(i).getType();
  for (auto [i, init] : llvm::enumerate(getInits()))
    if (body->getArgument(kTileFields + i).getType() != init.getType() ||
        getResult(i).getType() != init.getType())
      return emitOpError() << "carried value #" << i << " has type "
                           << init.getType()
                           << ", which the body argument and the result must "
                              "have too";
  auto yield = cast<YieldOp>(body->getTerminator());
  if (yield.getValues().getTypes() != getInits().getTypes())
    return yield.emitOpError()
           << "must yield the carried values' types " << getInits().getTypes();
  return success();
}

LogicalResult FillGroupTableOp::verify() {
  if (!getGroupsType().isInteger(32) && !getGroupsType().isInteger(64))
    return emitOpError() << "groups_type must be i32 or i64, got "
                         << getGroupsType();
  if (getEntries() < 1 || getThreads() < 1)
    return emitOpError() << "copies at least one entry with at least one "
                            "thread; got entries = "
                         << getEntries() << ", threads = " << getThreads();
  return success();
}

LogicalResult WarpgroupTileOp::verify() {
  for (auto [name, region] :
       {std::pair<StringRef, Region *>{"work", &getWork()},
        std::pair<StringRef, Region *>{"idle", &getIdle()}}) {
    Block &block = region->front();
    if (block.getNumArguments() != 0)
      return emitOpError() << "region '" << name
                           << "' must take no arguments, got "
                           << block.getNumArguments();
    auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
    if (!yield)
      return emitOpError() << "region '" << name
                           << "' must end with ggk.yield";
    if (yield.getValues().getTypes() != getResultTypes())
      return yield.emitOpError()
             << "must yield the warpgroup tile's result types "
             << getResultTypes() << " in region '" << name << "'";
  }
  return success();
}

namespace {
/// Checks that `region`'s block takes `arguments` and ends in a ggk.yield
/// of `yields`; `op` names the region in the error.
LogicalResult verifyStepRegion(Operation *op, StringRef name, Region &region,
                               TypeRange arguments, TypeRange yields) {
  Block &block = region.front();
  if (block.getArgumentTypes() != arguments)
    return op->emitOpError() << "region '" << name << "' must take "
                             << arguments.size() << " arguments of types "
                             << arguments << ", got " << block.getArgumentTypes();
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return op->emitOpError() << "region '" << name << "' must end with ggk.yield";
  if (yield.getValues().getTypes() != yields) {
    InFlightDiagnostic error = yield.emitOpError() << "must yield ";
    if (yields.empty())
      error << "no values";
    else
      error << yields;
    return error << " in region '" << name << "', got "
                 << yield.getValues().getTypes();
  }
  return success();
}
} // namespace

LogicalResult PromotionLoopOp::verify() {
  Builder b(getContext());
  Type i32 = b.getI32Type(), acc = getAcc().getType();
  Block &readScales = getReadScales().front();
  auto scalesYield =
      readScales.empty() ? YieldOp() : dyn_cast<YieldOp>(readScales.back());
  if (!scalesYield)
    return emitOpError() << "region 'read_scales' must end with ggk.yield";
  auto scales = scalesYield.getValues().getTypes();
  SmallVector<Type> promoteArgs = {acc, acc, i32, i32};
  promoteArgs.append(scales.begin(), scales.end());
  struct Step {
    StringRef name;
    Region &region;
    SmallVector<Type> arguments, yields;
  };
  Step steps[] = {{"prefetch", getPrefetch(), {i32}, {}},
                  {"start", getStart(), {}, {}},
                  {"issue", getIssue(), {i32, i32, i32, i32}, {acc}},
                  {"read_scales", getReadScales(), {i32, i32, i32},
                   SmallVector<Type>(scales.begin(), scales.end())},
                  {"promote", getPromote(), promoteArgs, {acc}},
                  {"end_block", getEndBlock(), {i32}, {}},
                  {"release", getRelease(), {i32}, {}},
                  {"overlap", getOverlap(), {}, {}}};
  for (Step &step : steps)
    if (failed(verifyStepRegion(*this, step.name, step.region, step.arguments,
                                step.yields)))
      return failure();
  if (!getAwait().empty() &&
      failed(verifyStepRegion(*this, "await", getAwait(), {i32, i32}, {})))
    return failure();
  if (getStages() < 1)
    return emitOpError() << "stages must be at least 1, got " << getStages();
  if (getPromotions() < 1)
    return emitOpError() << "promotions (scale blocks per K block) must be "
                            "at least 1, got "
                         << getPromotions();
  if (getPlan().getPromotion() == gg::Promotion::pipelined) {
    if (getPromotions() != 1 && getPromotions() % 2 != 0)
      return emitOpError() << "pipelined promotion takes the scale blocks "
                              "in pairs: promotions must be 1 or even, got "
                           << getPromotions();
    if (!isa<AccType>(acc))
      return emitOpError() << "pipelined promotion pins each promotion's "
                              "result in its registers (ggk.acc_pin): the "
                              "accumulator must be a !ggk.acc, got "
                           << acc;
  }
  if (getPlan().getPromotion() == gg::Promotion::serial &&
      getPlan().getEpilogueBlocks() == 0 &&
      !getOverlap().front().without_terminator().empty())
    return emitOpError() << "region 'overlap' must be empty with serial "
                            "promotion and epilogue_blocks = 0: the tile's "
                            "epilogue runs at its end, not beside the first "
                            "wgmma";
  if (getPromoteReadsStage() &&
      getPlan().getScales() != gg::ScalePlacement::stages)
    return emitOpError() << "promote_reads_stage takes a plan whose scales "
                            "ride the stages, got scales = "
                         << gg::stringifyScalePlacement(getPlan().getScales());
  return success();
}

LogicalResult KLoopOp::verify() {
  Type i32 = IntegerType::get(getContext(), 32), acc = getAcc().getType();
  if (failed(verifyStepRegion(*this, "issue", getIssue(), {i32, i32, i32, acc},
                              {acc})) ||
      failed(verifyStepRegion(*this, "release", getRelease(), {i32}, {})) ||
      failed(verifyStepRegion(*this, "load_ahead", getLoadAhead(), {i32, i32},
                              {})))
    return failure();
  if (getStages() < 1)
    return emitOpError() << "stages must be at least 1, got " << getStages();
  if (getReleaseLag() != 0 && getReleaseLag() != 1)
    return emitOpError() << "release_lag must be 0 or 1 (blocks in flight "
                            "when a stage goes back), got "
                         << getReleaseLag();
  if (getEpilogueBlocks() != 0 && getEpilogueBlocks() != 1)
    return emitOpError() << "epilogue_blocks must be 0 or 1 (K blocks issued "
                            "before the previous tile's epilogue), got "
                         << getEpilogueBlocks();
  bool hasOverlap = !getOverlap().empty();
  if (hasOverlap != (getEpilogueBlocks() == 1))
    return emitOpError() << "has " << (hasOverlap ? "an" : "no")
                         << " 'overlap' region with epilogue_blocks = "
                         << getEpilogueBlocks()
                         << ": the region is the previous tile's epilogue "
                            "beside block 0, present exactly where "
                            "epilogue_blocks = 1";
  if (hasOverlap &&
      failed(verifyStepRegion(*this, "overlap", getOverlap(), {}, {})))
    return failure();
  return success();
}

LogicalResult TileEpilogueOp::verify() {
  // The tile's fields, then the words the tile carries besides (its rows'
  // row-vector values, loaded when it started).
  if (getFields().size() < ForeachTileOp::kTileFields)
    return emitOpError() << "takes the tile's " << ForeachTileOp::kTileFields
                         << " fields (then any words it carries), got "
                         << getFields().size();
  SmallVector<Type> arguments(getFields().getTypes());
  arguments.push_back(getAcc().getType());
  return verifyStepRegion(*this, "body", getBody(), arguments, {});
}

LogicalResult WarpSpecializeOp::verify() {
  if (failed(verifyStepRegion(*this, "producer", getProducer(), {}, {})))
    return failure();
  Type i32 = IntegerType::get(getContext(), 32);
  return verifyStepRegion(*this, "consumers", getConsumers(), {i32}, {});
}

/// Extents, when given, are the operand's sizes: K and N (or N and K),
/// and the groups of a 3-D operand.
static LogicalResult verifyExtents(Operation *op, ValueRange extents,
                                   bool hasGroup) {
  size_t rank = hasGroup ? 3 : 2;
  if (!extents.empty() && extents.size() != rank)
    return op->emitOpError()
           << "takes the operand's " << rank << " extents (innermost first"
           << (hasGroup ? ", the groups last" : "") << ") or none, got "
           << extents.size();
  return success();
}

/// Shared by the load ops: copies by address are shared by whole
/// warpgroups (the producer's, or the consumers'); TMA's loads are one
/// thread's, with the default.
static LogicalResult verifyCopyThreads(Operation *op, int64_t threads,
                                       ValueRange extents) {
  if (threads <= 0 || threads % 128 != 0 || threads > 1024)
    return op->emitOpError() << "copy_threads must be whole warpgroups (a "
                                "multiple of 128 up to 1024), got "
                             << threads;
  if (extents.empty() && threads != 128)
    return op->emitOpError() << "takes copy_threads only for copies by "
                                "address (extents); TMA's loads are one "
                                "thread's";
  return success();
}

LogicalResult LoadBTileOp::verify() {
  if (failed(verifyExtents(*this, getExtents(), bool(getGroup()))) ||
      failed(verifyCopyThreads(*this, getCopyThreads(), getExtents())))
    return failure();
  int64_t cluster = getCluster(), blockN = getBlockN();
  if (cluster < 1)
    return emitOpError() << "cluster must be at least 1, got " << cluster;
  if ((cluster > 1) != bool(getClusterRank()))
    return emitOpError() << "takes a cluster_rank exactly when its cluster ("
                         << cluster << ") has more than one CTA";
  if (getShared() && cluster == 1)
    return emitOpError() << "takes `shared` (whether the cluster's CTAs "
                            "load one tile together) only in a cluster, "
                            "got cluster 1";
  if (blockN <= 0 || getBlockK() <= 0 || getChunkColumns() <= 0)
    return emitOpError() << "block_n, block_k and chunk_columns must be "
                            "positive";
  // Each CTA of the cluster loads an equal share: rows of N, or whole
  // column chunks.
  if (getNMajor() && blockN % getChunkColumns() != 0)
    return emitOpError() << "block_n " << blockN
                         << " is not a whole number of column chunks of "
                         << getChunkColumns();
  // (I64Attr's getter is unsigned.)
  int64_t secondHalf = getSecondHalfRow();
  if (secondHalf < 0)
    return emitOpError() << "second_half_row must be >= 0, got " << secondHalf;
  if (secondHalf > 0 && (getNMajor() || cluster > 1 || blockN % 16 != 0))
    return emitOpError() << "loads two halves (second_half_row "
                         << secondHalf
                         << ") only K-major, alone (cluster 1) and with "
                            "block_n a multiple of 16, got "
                         << (getNMajor() ? "n_major, " : "") << "cluster "
                         << cluster << ", block_n " << blockN;
  int64_t halfShares = getHalfShares();
  if (halfShares < 1 ||
      (halfShares > 1 && (secondHalf == 0 || blockN % (16 * halfShares) != 0)))
    return emitOpError() << "half_shares must be at least 1, and above 1 "
                            "only with second_half_row and block_n a "
                            "multiple of 16 * half_shares; got half_shares "
                         << halfShares << ", second_half_row " << secondHalf
                         << ", block_n " << blockN;
  int64_t shares = getNMajor() ? blockN / getChunkColumns() : blockN;
  if (shares % cluster != 0)
    return emitOpError() << "cannot split its " << shares
                         << (getNMajor() ? " column chunks" : " rows of N")
                         << " among the " << cluster
                         << " CTAs of its cluster";
  return success();
}

LogicalResult ReleaseStageOp::verify() {
  if (getCluster() < 1)
    return emitOpError() << "cluster must be at least 1, got " << getCluster();
  // Lane r of each warp arrives on CTA r's barrier (ggk-multicast).
  if (getCluster() > 32)
    return emitOpError() << "cluster must be at most 32 (a warp's lanes "
                            "arrive one CTA each), got "
                         << getCluster();
  return success();
}

/// The boxes that load a partial tile: the powers of two from the largest
/// below `tileRows` down to `granule`, so that every multiple of the
/// granule below the tile is the sum of the boxes its bits select.
static SmallVector<int64_t> partialBoxes(int64_t tileRows, int64_t granule) {
  SmallVector<int64_t> boxes = {tileRows};
  for (int64_t h = int64_t(llvm::bit_floor(uint64_t(tileRows - 1)));
       h >= granule; h /= 2)
    boxes.push_back(h);
  return boxes;
}

LogicalResult LoadTileRowsOp::verify() {
  if (failed(verifyExtents(*this, getExtents(), bool(getGroup()))) ||
      failed(verifyCopyThreads(*this, getCopyThreads(), getExtents())))
    return failure();
  if (getIndices() && getExtents().empty())
    return emitOpError() << "gathers rows by index only from the operand's "
                            "address (extents): TMA boxes load consecutive "
                            "rows";
  if (bool(getShared()) != bool(getRank()) ||
      (getShared() && getIndices()))
    return emitOpError() << "shares its rows with the pair's other CTA by "
                            "TMA multicast: it takes shared and rank "
                            "together, and neither with a gather";
  int64_t tileRows = getTileRows(), granule = getGranule();
  ArrayRef<int64_t> boxes = getBoxRows();
  if (tileRows <= 0 || getRowBytes() <= 0 || getOtherBytes() < 0)
    return emitOpError() << "needs positive tile_rows and row_bytes and a "
                            "non-negative other_bytes";
  // The barrier's transaction count is a 20-bit signed quantity (each
  // factor is bounded first, so the product cannot overflow).
  int64_t limit = int64_t(1) << 20;
  if (tileRows >= limit || getRowBytes() >= limit ||
      getOtherBytes() >= limit ||
      tileRows * getRowBytes() + getOtherBytes() >= limit)
    return emitOpError() << "arms its barrier with tile_rows * row_bytes + "
                            "other_bytes bytes, which must be below 2^20 "
                            "(an mbarrier's transaction count)";
  if (boxes.empty() || boxes.front() != tileRows)
    return emitOpError() << "box_rows must start with the whole tile's "
                         << tileRows << " rows";
  if (getMaps().size() != boxes.size())
    return emitOpError() << "takes one tensor map per box height, "
                         << boxes.size() << ", got " << getMaps().size();
  if (boxes.size() == 1) {
    if (granule != tileRows)
      return emitOpError() << "loads whole tiles with one box: granule must "
                              "be tile_rows = "
                           << tileRows << ", got " << granule;
    return success();
  }
  if (!llvm::isPowerOf2_64(granule) || granule >= tileRows)
    return emitOpError() << "granule must be a power of two below tile_rows "
                            "= "
                         << tileRows << ", got " << granule;
  SmallVector<int64_t> expected = partialBoxes(tileRows, granule);
  if (boxes != ArrayRef<int64_t>(expected)) {
    InFlightDiagnostic diag = emitOpError()
                              << "box_rows must be the whole tile, then the "
                                 "powers of two from the largest below it "
                                 "down to the granule: [";
    llvm::interleaveComma(expected, diag);
    return diag << "]";
  }
  return success();
}

/// Shared by the operand-preparation ops: their loops stride by the
/// consumer threads, whole warpgroups that meet at one named barrier.
static LogicalResult verifyConsumerThreads(Operation *op, int64_t threads) {
  if (threads <= 0 || threads % 128 != 0)
    return op->emitOpError() << "consumer_threads must be a positive multiple "
                                "of 128 (whole warpgroups), got "
                             << threads;
  return success();
}

LogicalResult LoadMNMajorTileOp::verify() {
  auto value = [](uint64_t v) { return static_cast<int64_t>(v); };
  int64_t chunks = value(getChunks()), rows = value(getChunkRows());
  int64_t stride = value(getChunkBytes());
  if (chunks < 1 || rows < 1)
    return emitOpError() << "needs chunks >= 1 and chunk_rows >= 1, got "
                         << chunks << " and " << rows;
  if (stride < 128 || stride % 128 != 0)
    return emitOpError() << "chunk_bytes must be a positive multiple of 128 "
                            "(whole swizzled rows), got "
                         << stride;
  if (failed(verifyCopyThreads(*this, getCopyThreads(), getExtents())))
    return failure();
  return verifyExtents(*this, getExtents(), /*hasGroup=*/false);
}

LogicalResult ClearKOutsideOp::verify() {
  int64_t bytes = getElementBytes(), blockK = getBlockK();
  if (bytes != 1 && bytes != 2 && bytes != 4)
    return emitOpError() << "element_bytes must be 1, 2 or 4, got " << bytes;
  // The K-major clears walk eight 16-byte chunks per swizzled row.
  if (blockK * bytes != 128)
    return emitOpError() << "block_k must fill one 128-byte swizzled row ("
                         << 128 / bytes << " elements of " << bytes
                         << " bytes), got " << blockK;
  auto checkExtent = [&](StringRef name, int64_t extent,
                         bool mnMajor) -> LogicalResult {
    if (extent <= 0)
      return emitOpError() << name << " must be positive, got " << extent;
    // An MN-major tile is whole 128-byte column chunks.
    if (mnMajor && extent * bytes % 128 != 0)
      return emitOpError() << name << " of an MN-major tile must be a "
                           << "multiple of " << 128 / bytes << ", got "
                           << extent;
    return success();
  };
  if (failed(checkExtent("a_rows", getARows(), getAMnMajor())) ||
      failed(checkExtent("b_columns", getBColumns(), getBMnMajor())))
    return failure();
  return verifyConsumerThreads(*this, getConsumerThreads());
}

LogicalResult TransposeToKMajorOp::verify() {
  // One 128-byte row of f32 per column of the K-major copy.
  if (getBlockK() != 32)
    return emitOpError() << "block_k must be 32 (one 128-byte row of f32), "
                            "got "
                         << getBlockK();
  if (getMnExtent() <= 0 || getMnExtent() % 32 != 0)
    return emitOpError() << "mn_extent must be a positive multiple of 32 "
                            "(128-byte column chunks of f32), got "
                         << getMnExtent();
  return verifyConsumerThreads(*this, getConsumerThreads());
}

LogicalResult SharedBufferOp::verify() {
  // I64Attr getters return uint64_t: compare as written.
  int64_t bytes = getBytesAttr().getInt(), align = getAlignAttr().getInt();
  if (getName().empty())
    return emitOpError() << "needs a name";
  if (bytes < 0)
    return emitOpError() << "bytes must be at least 0, got " << bytes;
  if (align < 1 || !llvm::isPowerOf2_64(align))
    return emitOpError() << "align must be a power of two, got " << align;
  return success();
}

LogicalResult SharedAddressOp::verify() {
  int64_t stride = getStrideAttr().getInt(), offset = getOffsetAttr().getInt();
  if (stride < 0 || offset < 0)
    return emitOpError() << "stride and offset must be at least 0, got "
                         << stride << " and " << offset;
  if (!getIndex() && stride != 0)
    return emitOpError() << "has a stride (" << stride
                         << ") but no index to multiply";
  return success();
}

/// A cluster of CTAs along M, as gg's config allows (1 or 2).
static LogicalResult verifyCluster(Operation *op, int64_t cluster) {
  if (cluster < 1)
    return op->emitOpError() << "cluster must be at least 1, got " << cluster;
  return success();
}

LogicalResult InitEmptyBarrierOp::verify() {
  if (int64_t(getConsumerWarps()) < 1)
    return emitOpError() << "consumer_warps must be at least 1, got "
                         << int64_t(getConsumerWarps());
  return verifyCluster(*this, int64_t(getCluster()));
}

LogicalResult PublishBarrierInitOp::verify() {
  return verifyCluster(*this, int64_t(getCluster()));
}

LogicalResult LeaveClusterOp::verify() {
  return verifyCluster(*this, int64_t(getCluster()));
}
