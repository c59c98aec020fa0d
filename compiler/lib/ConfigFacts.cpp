//===- ConfigFacts.cpp - what a config makes of an op ---------------------===//
//
// The facts of a configured gg.grouped_matmul that every pass asks alike:
// its element sizes and scale kinds, which operands a tile transposes,
// where its scales can ride (the stages or the warps' slots), its scale
// slots and the shared memory its stages, scales and staged output take
// (gg-select-config and gg-tma-store-pool size the pipeline by it, the
// lowering allocates by it).
//
//===----------------------------------------------------------------------===//
#include "Target.h"
#include "ggc/Passes.h"

#include <numeric>

using namespace mlir;
using namespace mlir::gg;

using ggc::byteWidth;

int64_t ggc::byteWidth(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

ConfigAttr ggc::requireConfig(GroupedMatmulOp op, llvm::StringRef pass) {
  ConfigAttr config = op.getConfigAttr();
  if (!config)
    op.emitOpError() << "has no #gg.config; run gg-select-config before "
                     << pass;
  return config;
}

bool ggc::usesMxScales(GroupedMatmulOp op) {
  // The verifier requires MX on both operands or on neither.
  ScaleAttr aScale = op.getAScaleKindAttr();
  return aScale && aScale.getKind() == ScaleKind::mx;
}

bool ggc::stagesColumnScales(GroupedMatmulOp op) {
  ScaleAttr bScale = op.getBScaleKindAttr();
  return usesMxScales(op) ||
         (bScale && bScale.getKind() == ScaleKind::block &&
          bScale.getBlockMN() == 1);
}

int64_t ggc::columnScaleEntries(GroupedMatmulOp op, ConfigAttr config) {
  if (!usesMxScales(op))
    return 1;
  return std::max<int64_t>(
      1, config.getBlockK() / op.getBScaleKindAttr().getBlockK());
}

int64_t ggc::bBlockScalesPerWarpgroup(GroupedMatmulOp op, ConfigAttr config) {
  if (op.getColumnHalves())
    return 2;
  int64_t columns = config.getBlockN() / config.getSplitN();
  if (columns % 128 == 0)
    return columns / 128;
  // A warpgroup starts on a multiple of gcd(columns, 128); the run that
  // starts latest in a scale block touches the most of them.
  int64_t latestStart = 128 - std::gcd(columns, int64_t(128));
  return (latestStart + columns + 127) / 128;
}

ggc::ScaleSlots ggc::scaleSlotsPerWarp(GroupedMatmulOp op,
                                       ConfigAttr config) {
  ScaleAttr aScale = op.getAScaleKindAttr(), bScale = op.getBScaleKindAttr();
  ScaleSlots slots;
  if (stagesBlockScales(op, config))
    return slots; // the stages carry them
  if (aScale && (aScale.getKind() == ScaleKind::block ||
                 aScale.getKind() == ScaleKind::mx))
    slots.aRows = 16;
  if (stagesColumnScales(op))
    slots.columns = 32;
  else if (bScale && bScale.getKind() == ScaleKind::block)
    slots.bBlocks = bBlockScalesPerWarpgroup(op, config);
  return slots;
}

bool ggc::transposesB(GroupedMatmulOp op) {
  return op.getBType().getElementType().isF32() &&
         op.getBLayout() == OperandLayout::kn;
}

bool ggc::transposesA(GroupedMatmulOp op) {
  return op.getAType().getElementType().isF32() &&
         op.getALayout() == OperandLayout::km;
}

llvm::StringRef ggc::sharedBufferName(SharedBufferId id) {
  static const char *const names[kNumSharedBuffers] = {
      "a_tiles",        "b_tiles",        "transposed_b",  "transposed_a",
      "full_barriers",  "empty_barriers", "stage_a_scales", "stage_b_scales",
      "column_scales",  "scale_slots",    "staged_output", "row_amax",
      "group_table"};
  return names[id];
}

ggc::SharedMemoryLayout ggc::sharedMemoryLayout(GroupedMatmulOp op,
                                                ConfigAttr config,
                                                bool stagedOutput) {
  SharedMemoryLayout l;
  Type a = op.getAType().getElementType(), b = op.getBType().getElementType();
  l.stages = config.getStages();
  l.aTileBytes = config.getBlockM() * config.getBlockK() * byteWidth(a);
  l.bTileBytes = config.getBlockN() * config.getBlockK() * byteWidth(b);
  l.transposesB = transposesB(op);
  l.transposesA = transposesA(op);
  bool stageScales = stagesBlockScales(op, config);
  l.stageAScaleBytes =
      stageScales ? llvm::alignTo(aScaleWindowBytes(config.getBlockM(),
                                                    stagesKMajorAScales(op)),
                                  128)
                  : 0;
  int64_t consumerWarps = config.getBlockM() / 64 * config.getSplitN() * 4;
  int64_t s = l.stages;
  l.buffers.resize(kNumSharedBuffers);
  l.buffers[kATiles] = {sharedBufferName(kATiles), s * l.aTileBytes, 1};
  l.buffers[kBTiles] = {sharedBufferName(kBTiles), s * l.bTileBytes, 1};
  l.buffers[kTransposedB] = {sharedBufferName(kTransposedB),
                             l.transposesB ? s * l.bTileBytes : 0, 1};
  l.buffers[kTransposedA] = {sharedBufferName(kTransposedA),
                             l.transposesA ? s * l.aTileBytes : 0, 1};
  l.buffers[kFullBarriers] = {sharedBufferName(kFullBarriers), s * 8, 1};
  l.buffers[kEmptyBarriers] = {sharedBufferName(kEmptyBarriers), s * 8, 1};
  // TMA writes shared memory at 128-byte-aligned addresses.
  l.buffers[kStageAScales] = {sharedBufferName(kStageAScales), s * l.stageAScaleBytes,
                              stageScales ? 128 : 1};
  bool columnsInStages = stagesColumnScalesInStages(op, config);
  l.buffers[kStageBScales] = {
      sharedBufferName(kStageBScales),
      stageScales ? s * stageBScaleBytes(columnsInStages ? config.getBlockN() : 0)
                  : 0,
      columnsInStages ? 128 : 1};
  l.buffers[kColumnScales] = {
      sharedBufferName(kColumnScales),
      stagesColumnScales(op) && !columnsInStages
                             ? 2 * (config.getBlockM() / 64) *
                                   config.getSplitN() * config.getBlockN() *
                                   4 * columnScaleEntries(op, config)
                             : 0,
      16}; // the promotion reads a thread's two columns as one 8-byte load
  l.buffers[kScaleSlots] = {sharedBufferName(kScaleSlots),
                            kScaleSlotBuffers * consumerWarps *
                                scaleSlotsPerWarp(op, config).words() * 4,
                            1};
  // The staged output tile is read by 128B- or 64B-swizzled TMA stores; a
  // tile stored a slice at a time (store_slice) takes a ring of two.
  int64_t stagedBuffers = op.getStoreSlice() ? 2 : 1;
  l.buffers[kStagedOutput] = {
      sharedBufferName(kStagedOutput),
      stagedOutput ? stagedBuffers * config.getBlockM() *
                         op.stagedColumns(config) *
                         byteWidth(op.getOutType().getElementType())
                   : 0,
      1024};
  l.buffers[kRowAmax] = {sharedBufferName(kRowAmax), rowAmaxBytes(op, config),
                         1};
  // Last, so that the other buffers keep their places with or without it;
  // an empty table aligns nothing.
  int64_t tableBytes = groupTableEntries(op) *
                       byteWidth(cast<MemRefType>(op.getGroups().getType()).getElementType());
  l.buffers[kGroupTable] = {sharedBufferName(kGroupTable), tableBytes,
                            tableBytes ? 16 : 1};
  l.total = allocateSharedMemory(l.buffers).back();
  return l;
}

int64_t ggc::rowAmaxBytes(GroupedMatmulOp op, ConfigAttr config) {
  // Shared blocks are one 128-column block a tile (gg-lower-to-nvvm's
  // checkQuantizedOutput).
  int64_t split = config.getSplitN();
  if (!op.getOutScale() || split == 1 ||
      op.outputTileColumns(config) / split % 128 == 0)
    return 0;
  return config.getBlockM() * split * 4;
}

int64_t ggc::groupTableEntries(GroupedMatmulOp op) {
  ScheduleAttr schedule = op.getScheduleAttr();
  if (!schedule || schedule.getGroupReads() != GroupReads::shared)
    return 0;
  int64_t groups = op.getDims().numGroups;
  return op.getLayout() == GroupLayout::contiguous ? groups + 1 : groups;
}

bool ggc::twoLevelAccumulation(GroupedMatmulOp op) {
  auto variesAlongK = [](ScaleAttr s) { return s && s.variesAlongK(); };
  Type a = op.getAType().getElementType();
  return isa<Float8E4M3FNType, Float8E5M2Type>(a) ||
         variesAlongK(op.getAScaleKindAttr()) ||
         variesAlongK(op.getBScaleKindAttr());
}

bool ggc::canStageBlockScales(GroupedMatmulOp op, ConfigAttr config) {
  ScaleAttr aScale = op.getAScaleKindAttr(), bScale = op.getBScaleKindAttr();
  // A's scales are one TMA box per stage: a window of BM + 4 consecutive
  // f32 of an M-major [.., ceil(K/128), align4(M)] tensor. B's are whole
  // 128x128 blocks shared by every consumer of the tile: no split columns,
  // but for column_halves, whose split_n warpgroups share the rows and
  // each half's block (the FP8 SwiGLU out_scale tile: its K loop 114 SASS
  // instructions a block against 150 with slots, 0.953-1.032x the two
  // kernels it replaces against 0.898-0.953x; H100, fifty-ninth session).
  // The window is a TMA box. Gathered rows of A (a_rows) arm each stage
  // on every producer thread's arrival, not on one load the window could
  // be counted in: their consumers copy the scales into slots.
  // The window's BM + 4 rows are one TMA box dimension: at most 256.
  bool aWindow = ggc::targetOf(op).tensorMaps && !op.getARows() && aScale &&
                 aScale.getKind() == ScaleKind::block &&
                 (aScale.getMajor() == ScaleMajor::mn_major ||
                  stagesKMajorAScales(op)) &&
                 (config.getSplitN() == 1 || op.getColumnHalves()) &&
                 config.getBlockM() + kAScaleWindowPad <= kMaxTmaBoxRows;
  if (!aWindow || !bScale || bScale.getKind() != ScaleKind::block)
    return false;
  if (op.getLayout() != GroupLayout::k_grouped)
    return bScale.getBlockMN() == 128;
  // k_grouped: A's [ceil(K/128), M] and B's 1x128 [ceil(K/128), N] scales
  // are TMA boxes of a tile's rows and columns where each row of them is a
  // whole number of 16 bytes (M and N multiples of 4), and the tile's
  // columns fit one box; A K-major, whose tile load the stage's bytes are
  // counted in (f8 wgmma reads K-major tiles only).
  GroupedMatmulOp::Dims dims = op.getDims();
  return bScale.getBlockMN() == 1 && op.getALayout() != OperandLayout::km &&
         bScale.getMajor() == ScaleMajor::mn_major && dims.m > 0 &&
         dims.m % 4 == 0 &&
         dims.n % 4 == 0 && config.getBlockN() <= 256;
}

bool ggc::stagesKMajorAScales(GroupedMatmulOp op) {
  // A K-major window is a box four K blocks wide: its rows (M's stride)
  // must be whole 16-byte units for TMA.
  ScaleAttr aScale = op.getAScaleKindAttr();
  int64_t k = op.getDims().k;
  return aScale && aScale.getKind() == ScaleKind::block &&
         aScale.getMajor() == ScaleMajor::k_major &&
         op.getLayout() != GroupLayout::k_grouped &&
         !ShapedType::isDynamic(k) && llvm::divideCeil(k, 128) % 4 == 0;
}

int64_t ggc::aScaleWindowBytes(int64_t blockM, bool kMajor) {
  return (blockM + kAScaleWindowPad) * 4 * (kMajor ? 4 : 1);
}

bool ggc::stagesColumnScalesInStages(GroupedMatmulOp op, ConfigAttr config) {
  return op.getLayout() == GroupLayout::k_grouped &&
         stagesColumnScales(op) && stagesBlockScales(op, config);
}

/// K-major scales of A ride the stages by default, but in DeepGEMM's padded
/// layout not below this many K blocks a row. Each stage's box of four K
/// blocks by the tile's rows is one TMA line a row (132 of them, against
/// one line of the M-major window); the warps' slots read short rows,
/// whose words share cache lines, cheaply. Measured against the slots
/// (H200, 128x128 FP8, T8192 G8 N4096 / N7168 and T16384 G32 N3072,
/// benchmarks/probes/k_major_scales.py, docs/performance.md, fortieth
/// session): contiguous 1.04-1.25x at 16 to 64 K blocks, level with
/// M-major scales (0.99-1.02x); padded 1.14-1.22x at 32 to 64 but
/// 0.93-0.95x at 16 (its kernel stores directly and keeps six stages).
constexpr int64_t kPaddedKMajorStagedScaleBlocks = 32;

bool ggc::stagesBlockScalesByDefault(GroupedMatmulOp op, ConfigAttr config) {
  bool shortPaddedRows =
      stagesKMajorAScales(op) &&
      op.getLayout() == GroupLayout::padded_contiguous &&
      llvm::divideCeil(op.getDims().k, 128) < kPaddedKMajorStagedScaleBlocks;
  return canStageBlockScales(op, config) && !shortPaddedRows;
}

bool ggc::stagesBlockScales(GroupedMatmulOp op, ConfigAttr config) {
  if (KernelPlanAttr plan = op.getKernelPlanAttr())
    return plan.getScales() == ScalePlacement::stages;
  return stagesBlockScalesByDefault(op, config);
}

int64_t ggc::stagingSwizzleBytes(Staging staging) {
  switch (staging) {
  case Staging::swizzled:
    return kSwizzleBytes;
  case Staging::swizzled_64:
    return 64;
  case Staging::none:
  case Staging::dense:
    return 0;
  }
  llvm_unreachable("unknown staging");
}
