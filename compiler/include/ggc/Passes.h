//===- Passes.h - ggc passes ------------------------------------*- C++ -*-===//
#ifndef GGC_PASSES_H
#define GGC_PASSES_H

#include "gg/GGDialect.h"
#include "ggk/GGKDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace ggc {

#define GEN_PASS_DECL
#include "ggc/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ggc/Passes.h.inc"

/// One buffer of a kernel's shared memory, as `ggk.shared_buffer` declares
/// it: `bytes` in all, starting at a multiple of `align`.
struct SharedBuffer {
  llvm::StringRef name;
  int64_t bytes, align;
};

/// The kernel's buffers, in the order they are laid out.
enum SharedBufferId {
  kATiles,
  kBTiles,
  kTransposedB,
  kTransposedA,
  kFullBarriers,
  kEmptyBarriers,
  kStageAScales,
  kStageBScales,
  kColumnScales,
  kScaleSlots,
  kStagedOutput,
  kRowAmax,
  kGroupTable,
  kNumSharedBuffers
};

/// The name `ggk.shared_buffer` declares buffer `id` by, which
/// `ggk.shared_address` ops refer to.
llvm::StringRef sharedBufferName(SharedBufferId id);

/// Bytes a kernel asks for beyond its buffers: the dynamic shared memory's
/// base is aligned to 1024 (the 128B swizzle's atom) by hand.
constexpr int64_t kSharedBaseSlack = 1024;

/// Places `buffers` one after another, each at the next multiple of its
/// alignment (an empty one too: its alignment still moves the next);
/// returns each one's offset from the aligned base and, last, the bytes
/// the kernel asks for. The one allocator: gg-select-config's footprint
/// query (through sharedMemoryLayout) and ggk-allocate-shared-memory.
llvm::SmallVector<int64_t> allocateSharedMemory(
    llvm::ArrayRef<SharedBuffer> buffers);

/// What the kernel keeps in shared memory, as buffers in layout order
/// (SharedBufferId): the ring of A tiles, the ring of B tiles, the rings
/// of K-major copies of B and of A (tf32 given N- or M-major, which wgmma
/// cannot read), a full and an empty mbarrier per stage, the block scales
/// the stages carry (stagesBlockScales: per stage a window of A's for the
/// tile's rows, TMA, stageAScaleBytes apart; then each stage's
/// stageBScaleBytes of B's, cp.async or TMA), per-column scales of B as f32 factors (each consumer
/// warpgroup's two buffers of [entries][columns of the tile]), each
/// consumer warp's scale slots (kScaleSlotBuffers buffers of [consumer
/// warps][ScaleSlots::words()], filled by cp.async a block ahead), the
/// output tile staged for TMA stores, and the table of group counts or
/// offsets the schedule reads (groupTableEntries; group_reads = shared),
/// preceded by each row's amax per 128-column block of a quantised out
/// whose blocks two warpgroups share (rowAmaxBytes). Placed by allocateSharedMemory; one
/// function, so gg-select-config, gg-tma-store-pool and the lowering
/// agree.
struct SharedMemoryLayout {
  int64_t aTileBytes, bTileBytes, stages, stageAScaleBytes;
  bool transposesB, transposesA;
  /// Every buffer in layout order (indexed by SharedBufferId), as the
  /// kernel declares them (ggk.shared_buffer).
  llvm::SmallVector<SharedBuffer, kNumSharedBuffers> buffers;
  int64_t total; // bytes to ask for, with 1024 to align the base
};
SharedMemoryLayout sharedMemoryLayout(mlir::gg::GroupedMatmulOp op,
                                      mlir::gg::ConfigAttr config,
                                      bool stagedOutput);

/// The counts (masked: G) or offsets (contiguous: G + 1) that a schedule
/// with group_reads = shared copies into shared memory; 0 without one.
int64_t groupTableEntries(mlir::gg::GroupedMatmulOp op);

/// An out quantised in 1x128 blocks (out_scale) whose blocks the split_n
/// warpgroups sharing a tile's rows each hold a part of (one block a
/// tile): their amax per row and warpgroup ([block M][split_n] f32);
/// else 0.
int64_t rowAmaxBytes(mlir::gg::GroupedMatmulOp op, mlir::gg::ConfigAttr config);

/// Bytes of one row of TMA's 128B swizzle: every operand tile is loaded
/// this many bytes along its contiguous dimension at a time.
constexpr int64_t kSwizzleBytes = 128;

/// Bytes of one element of `t`.
int64_t byteWidth(mlir::Type t);

/// The op's #gg.config; without one, an error telling the user to run
/// gg-select-config before `pass`, and null.
mlir::gg::ConfigAttr requireConfig(mlir::gg::GroupedMatmulOp op,
                                   llvm::StringRef pass);

/// MX (UE8M0) scales on A and B.
bool usesMxScales(mlir::gg::GroupedMatmulOp op);

/// B's scales change per column and per K block (MX, or 1x128 block
/// scales): the consumers stage each K block's in shared memory.
bool stagesColumnScales(mlir::gg::GroupedMatmulOp op);

/// Two-level accumulation: each K block's product goes into a fresh partial
/// accumulator that is scaled and added in f32 (DeepGEMM's), for scales that
/// change along K and for every f8 kernel, whose tensor-core accumulation
/// loses precision over a long K.
bool twoLevelAccumulation(mlir::gg::GroupedMatmulOp op);

/// 128x128 block scales of B a consumer warpgroup's columns touch per K
/// block at most: one per 128 of them, else as many as a run of them
/// starting where a warpgroup may start (a multiple of gcd(columns, 128))
/// can straddle: two for 112 or 192 columns; with column_halves two, one
/// per half (gg's verifier keeps each half within a block).
int64_t bBlockScalesPerWarpgroup(mlir::gg::GroupedMatmulOp op,
                                 mlir::gg::ConfigAttr config);

/// 1x128 block scales of A (M-major, or K-major: stagesKMajorAScales) and
/// 128x128 of B ride with each
/// stage of the A and B tiles: the producer loads A's for the tile's rows by
/// TMA and B's by cp.async, both completing on the stage's full barrier, so
/// the consumers read them from shared memory instead of fetching them
/// themselves (scale slots). TMA's innermost coordinate must be 16-byte
/// aligned, so A's window starts at the tile's first row rounded down to a
/// multiple of 4 and spans kAScaleWindowPad more rows (the overfetch of
/// TMA-Adaptive FP8 Grouped GEMM). A k_grouped weight gradient's 1x128
/// scales of A and B (both M- and N-major, so that a tile's are one TMA
/// box each) ride the same way: B's per-column ones as a box of the
/// tile's columns (stagesColumnScalesInStages). Not for split columns or
/// MX.
bool canStageBlockScales(mlir::gg::GroupedMatmulOp op,
                         mlir::gg::ConfigAttr config);
constexpr int64_t kAScaleWindowPad = 4;
/// TMA's largest box dimension (elements): the window's BM + 4 rows must
/// fit, so 256-row tiles keep the slots.
constexpr int64_t kMaxTmaBoxRows = 256;

/// A's 1x128 block scales are K-major ([.., M, ceil(K/128)]) and ride the
/// stages as they are (no copy into the M-major form): each stage's window
/// is a TMA box of four K blocks by the window's rows (16 bytes a row, so
/// ceil(K/128) must be a multiple of 4 and K static); the consumers read
/// their block's word of a row. Not for k_grouped.
bool stagesKMajorAScales(mlir::gg::GroupedMatmulOp op);

/// Whether gg-plan-kernel puts the block scales in the stages (the plan's
/// `scales`): wherever they can ride there, but K-major scales of A with
/// short rows in the padded layout, which the warps' slots read faster
/// there (ConfigFacts.cpp's rule).
bool stagesBlockScalesByDefault(mlir::gg::GroupedMatmulOp op,
                                mlir::gg::ConfigAttr config);

/// Bytes of one stage's window of A's scales for `blockM` rows: 4 a row
/// M-major, 16 K-major (before the 128-byte alignment of the stages).
int64_t aScaleWindowBytes(int64_t blockM, bool kMajor);

/// The stages carry B's per-column (1x128) scales: a k_grouped op whose
/// block scales ride the stages (stagesBlockScales).
bool stagesColumnScalesInStages(mlir::gg::GroupedMatmulOp op,
                                mlir::gg::ConfigAttr config);

/// Bytes a stage keeps of B's scales: 16 (up to four 128x128 block
/// scales, cp.async), or `columns` f32 (per-column scales, one TMA box
/// into 128-byte aligned shared memory).
inline int64_t stageBScaleBytes(int64_t columns) {
  return columns ? (columns * 4 + 127) / 128 * 128 : 16;
}

/// f32 factors staged per column and K block: one per MX scale block in
/// the K block (4 for 1x32, 1 for 1x128), else 1.
int64_t columnScaleEntries(mlir::gg::GroupedMatmulOp op,
                           mlir::gg::ConfigAttr config);

/// The 4-byte scale words one consumer warp stages per K block, in this
/// order: A's for the warp's 16 rows (1x128 f32 blocks or MX words), B's
/// 128x128 block scale per 128 of the warpgroup's columns, and, where B's
/// scales are per column (stagesColumnScales), each lane's column word.
struct ScaleSlots {
  int64_t aRows = 0, bBlocks = 0, columns = 0;
  int64_t words() const { return aRows + bBlocks + columns; }
};
ScaleSlots scaleSlotsPerWarp(mlir::gg::GroupedMatmulOp op,
                             mlir::gg::ConfigAttr config);

/// Buffers of scale slots: the K block being promoted, and the next.
constexpr int64_t kScaleSlotBuffers = 2;

/// Whether the block scales ride with the stages: as the op's kernel_plan
/// says, or, before gg-plan-kernel has written one, where they can.
bool stagesBlockScales(mlir::gg::GroupedMatmulOp op,
                       mlir::gg::ConfigAttr config);

/// Threads of a warpgroup: the producer is one, each consumer another.
constexpr int64_t kWarpgroupThreads = 128;

/// The CTA's threads: `consumers` warpgroups and, unless the plan has none,
/// the producer's (gg-plan-kernel sizes registers by it, ggk-warp-specialize
/// launches it).
inline int64_t ctaThreads(int64_t consumers,
                          mlir::gg::Producer producer =
                              mlir::gg::Producer::warpgroup) {
  return kWarpgroupThreads *
         (consumers + (producer == mlir::gg::Producer::none ? 0 : 1));
}

/// Checks that a warpgroup's wgmma accumulator fits the registers
/// setmaxnreg can give each consumer thread of `config`'s CTA; emits an
/// error naming the tile otherwise. Run by gg-select-config and
/// gg-plan-kernel.
mlir::LogicalResult checkRegisterFit(mlir::gg::GroupedMatmulOp op,
                                     mlir::gg::ConfigAttr config);

/// gg-plan-kernel's choice for `op` under `config` (see #gg.kernel_plan).
mlir::gg::KernelPlanAttr chooseKernelPlan(mlir::gg::GroupedMatmulOp op,
                                          mlir::gg::ConfigAttr config);

/// Whether the kernel can follow `plan`; emits an error naming the part of
/// it that cannot be followed. Run by gg-plan-kernel and by the lowering.
mlir::LogicalResult checkKernelPlan(mlir::gg::GroupedMatmulOp op,
                                    mlir::gg::ConfigAttr config,
                                    mlir::gg::KernelPlanAttr plan);

/// The bytes a staged output tile's column chunks are swizzled by under
/// `staging` (TMA's swizzle of the store pool's maps): 128, 64, or 0 for
/// dense rows and for no staged tile.
int64_t stagingSwizzleBytes(mlir::gg::Staging staging);

/// tf32 wgmma reads B only K-major: B given as [G, K, N] is copied
/// transposed in shared memory.
bool transposesB(mlir::gg::GroupedMatmulOp op);

/// Likewise for A given as [K, M] (k_grouped, token-major).
bool transposesA(mlir::gg::GroupedMatmulOp op);

/// Checks the constraints that keep every TMA address of the kernel aligned
/// (block K, block N, 16-byte global strides); emits an error naming the
/// one broken. Run by gg-plan-overfetch and again by the lowering.
mlir::LogicalResult checkTmaAddressing(mlir::gg::GroupedMatmulOp op,
                                       mlir::gg::ConfigAttr config);

/// Checks that the kernel's 32-bit tile indices can number every tile the
/// sizes known at compile time imply, plus one wave of CTAs. Run by
/// gg-plan-overfetch and again by the lowering.
mlir::LogicalResult checkTileIndices(mlir::gg::GroupedMatmulOp op,
                                     mlir::gg::ConfigAttr config);

/// How far the kernel's loads reach past a group's own data by default
/// (see #gg.overfetch): partial tiles load A's valid rows in 8-row units.
mlir::gg::OverfetchAttr planOverfetch(mlir::gg::GroupedMatmulOp op,
                                      mlir::gg::ConfigAttr config);

/// Whether the kernel can keep to `given`: the planned K reach, and rows
/// that are whole tiles (block M - 1) or a power-of-two granule less one.
mlir::LogicalResult checkOverfetch(mlir::gg::GroupedMatmulOp op,
                                   mlir::gg::ConfigAttr config,
                                   mlir::gg::OverfetchAttr given);

} // namespace ggc

#endif // GGC_PASSES_H
