//===- Passes.td - ggc passes ----------------------------------*- tablegen -*-===//
//
// Every pass of the pipeline, one per file in compiler/lib, with its options.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_PASSES_TD
#define GGC_PASSES_TD

include "mlir/Pass/PassBase.td"

def SelectConfig : Pass<"gg-select-config", "::mlir::ModuleOp"> {
  let summary = "choose tile sizes, pipeline depth, cluster and grid for each grouped matmul";
  let description = [{
    Takes: `gg.grouped_matmul` ops with or without a `config` attribute.
    Makes: every op carries `config = #gg.config<...>`. A config the user
    wrote is kept, and only checked against the shared-memory budget.

    The heuristics live in `chooseConfig` in SelectConfig.cpp, in the order
    they are applied: block K fills one 128-byte swizzled row of A; block M
    follows the expected rows per group (64 for small masked batches, f8
    ones on 64x256 tiles split between two consumer warpgroups; 64x64
    tiles for contiguous groups expected to hold at most 64 rows, a MoE
    decode step bound by reading weights; else 128, where f8's promotions
    pipeline); block N
    is the widest of 256/128/64 that divides N without waste (128 at most
    for f8, and for contiguous ops, whose ragged groups balance better over
    narrower tiles, unless their `expected_m` says a group holds 1,024 rows
    or more, where 128x256 tiles measured 10-40% faster; before sm_90a see
    below);
    the pipeline is as deep as shared memory allows after the epilogue
    buffer; the persistent grid has one CTA per SM.

    Shared memory is the device's where `shared-memory-bytes` gives it (the
    runtime passes the card's opt-in maximum), else the module's
    `gg.target`'s (sm_90a without it). For targets before sm_90a (no
    setmaxnreg) a warpgroup takes 128 columns at most, but for 128x256
    tiles of 16-bit operands where four of their stages fit the budget
    (a Hopper card's shared memory: the mma.sync kernels' smallest share
    of shared-memory traffic per multiply), unless contiguous groups are
    expected to hold fewer than 256 rows; the pass refuses by name what
    their lowering does not take: FP8 before sm_89, clusters, a TMA store
    pool.
  }];
  let dependentDialects = ["::mlir::gg::GGDialect"];
  let options = [
    Option<"numSMs", "num-sms", "int64_t", /*default=*/"132",
           "multiprocessors of the target GPU (132 on H100/H200 SXM)">,
    Option<"smemBudget", "shared-memory-bytes", "int64_t",
           /*default=*/"0",
           "shared memory one CTA of the device may use (its opt-in "
           "maximum); 0: the target's (227 KiB for sm_90a, 163 KiB for "
           "sm_80, 99 KiB for sm_86 and sm_89)">
  ];
}

def ScheduleGroups : Pass<"gg-schedule-groups", "::mlir::ModuleOp"> {
  let summary = "choose the order of each grouped matmul's tiles in the persistent schedule";
  let description = [{
    Takes: configured `gg.grouped_matmul` ops (run `gg-select-config`
    first).
    Makes: `schedule = #gg.schedule<order = m_fastest | n_fastest[,
    m_band = S][, b_cache = evict_first]>` on every op that has none. The kernel walks the tiles group by group, each CTA
    taking every grid-th tile, with the group boundaries found on the device
    from the offsets or counts (no host synchronisation; an empty group has
    no tiles). Within a group, `order` says which block index moves first.

    The heuristic (`chooseOrder` in ScheduleGroups.cpp): when a group's
    M block count is only known at run time (contiguous layouts), or a
    group's tiles fit in one wave, M blocks go first, so the CTAs running at
    once read the same columns of the group's B. When both counts are known
    (masked, k_grouped) and a group spans several waves, the order that
    loads fewer bytes of A and B tiles per wave of `sms` tiles wins; ties go
    to M first. Where a group's rows arrive at run time, a tall group's
    M blocks are walked in bands (`chooseMBand`): every N block of a band
    of S M blocks before the next band, S chosen so that a wave of tiles
    loads the fewest bytes of A and B tiles by the same model (12 for
    128x128 bf16 tiles on 132 SMs; targets before sm_90a count wider B
    tiles as 128 columns, measured 2-3% faster there). Walked whole, a group of 4,096 rows
    has the CTAs running at once on 32 M blocks by 4 N blocks: measured
    on an H100, Mixtral's down projection (N=4096, K=14336) at 4,096 rows
    a group took 11730 us unbanded and 9055 us in bands of 12 on 128x128
    tiles, 5831 and 5285 us on 128x256 tiles (docs/performance.md). f8 ops load B with L2's evict-first policy (`chooseBCache`),
    so A's rows, which every N block reads again, stay in L2: measured
    68.6 against 77.1 us on masked G=4 M=256 and 130.5 against 143.5 us on
    the decode batch; bf16 measured no gain and keeps the default.
  }];
}

def EliminatePadding : Pass<"gg-eliminate-padding", "::mlir::ModuleOp"> {
  let summary = "skip tensor-core work on rows that belong to no group";
  let description = [{
    Takes: configured `gg.grouped_matmul` ops.
    Makes: `padding = #gg.padding<idle_warpgroups = compute | skip>` on
    every op that has none.

    Tiles of contiguous and masked ops start at their group's own first row
    (no padded copy of A, no alignment asked of group sizes); only a group's
    last tile runs past its end. `skip` makes each consumer warpgroup whose
    64 rows of such a tile are all past the end wait for and release the
    tile's buffers without running its wgmma. The pass chooses `compute`
    unless `skip-idle-warpgroups` is set: measured on the H200 (timed
    interleaved with `compute`), skipping saved nothing on the decode
    batch, which the loads bound (166.1 against 167.7 us), and the branch
    around the main loop cost bf16 128x256 tiles 9% (907 against 832 us on
    T=8192 G=8; 121 against 111 us masked). With the option set, `skip`
    goes to contiguous and masked ops with more than one consumer
    warpgroup, except tf32 with B given N-major, whose consumers transpose
    B's tile together.
  }];
  let options = [
    Option<"skipIdleWarpgroups", "skip-idle-warpgroups", "bool",
           /*default=*/"false",
           "let warpgroups with only padding rows skip their wgmma">
  ];
}

def PlanOverfetch : Pass<"gg-plan-overfetch", "::mlir::ModuleOp"> {
  let summary = "check the kernel's TMA addressing and record how far loads reach past a group";
  let description = [{
    Takes: configured `gg.grouped_matmul` ops.
    Makes: `overfetch = #gg.overfetch<rows = R, k = K>` on every op, after
    checking the constraints that keep every TMA address the kernel forms
    aligned (`checkTmaAddressing`, also run by the lowering):
    - block K spans exactly one 128-byte swizzled row of A (64 bf16/f16,
      128 f8, 32 tf32), so each shared-memory tile is a whole number of
      1024-byte swizzle atoms on a 1024-byte boundary;
    - global row strides are multiples of 16 bytes: K for K-major A and B,
      M for M-major A, N for the output (N a multiple of 8);
    - block N is a multiple of 16 (wgmma), of one 128-byte row of B when B
      is N-major, and splits into halves of whole swizzle atoms in a
      cluster of 2.

    A contiguous or masked group's last tile loads only its valid rows
    rounded up to 8 (one 1024-byte swizzle atom: `R = 7`), as a sum of TMA
    boxes of bit_floor(BM), ..., 8 rows, so no whole tile of the next group
    (or, masked, of padding) crosses L2 for a few rows; the rows past the
    load hold stale data, computed and never stored. `R = block M - 1`
    (whole-tile loads) or any power of two from 8 up less one, written by
    the user, is kept. A k_grouped operand given K-major starts each group's first K
    block at the 16-byte-aligned K at or before the group's first
    (`K = 16 / element bytes - 1`), and a k_grouped op with block scales
    starts it on the 128-wide scale block of the concatenated K that holds
    the group's first entry (`K = 127`), so each K block takes one scale
    per row and column; the kernel clears those entries.
  }];
}

def TmaStorePool : Pass<"gg-tma-store-pool", "::mlir::ModuleOp"> {
  let summary = "store each tile's valid rows with a pool of TMA store boxes";
  let description = [{
    Takes: configured `gg.grouped_matmul` ops (run `gg-select-config`
    first).
    Makes: `store_pool = array<i64: BM, BM/2, ..., 1>` (from 128 when BM is
    192) on ops whose layout keeps a tile's valid rows a prefix
    (contiguous, masked, k_grouped with `out` in mn). The
    lowering then stages the output tile in shared memory and stores the
    group's rows of it as a sum of those box heights (TMA-Adaptive FP8
    Grouped GEMM's descriptor pool): no row of a neighbouring group is
    written, with whole-tile stores for all full tiles. The staging tile
    takes BM x BN output elements of shared memory; when the config's
    pipeline leaves no room, stages are dropped down to `min-stages`, and
    below that the op keeps per-thread stores (an empty `store_pool`). A
    `store_pool` the user wrote is kept.

    Targets before sm_90a (`gg.target`) have no TMA: `store_pool = []`.
  }];
  let options = [
    Option<"smemBudget", "shared-memory-bytes", "int64_t", /*default=*/"0",
           "shared memory one CTA of the device may use; 0: the target's">,
    Option<"minStages", "min-stages", "int64_t", /*default=*/"3",
           "fewest pipeline stages to keep when making room for the tile">
  ];
}

def PlanKernel : Pass<"gg-plan-kernel", "::mlir::ModuleOp"> {
  let summary = "decide how the kernel's warpgroups share each grouped matmul";
  let description = [{
    Takes: configured `gg.grouped_matmul` ops, after `gg-tma-store-pool`
    (the staging follows the store pool).
    Makes: `kernel_plan = #gg.kernel_plan<promotion = serial | pipelined,
    scales = none | slots | stages, registers = [P, C], staging = none |
    dense | swizzled>` on every op that has none; a plan the user wrote is
    checked (`checkKernelPlan`, also run by the lowering) and kept.

    The choices (`chooseKernelPlan` in PlanKernel.cpp), in order:
    1. promotion: two-level kernels (f8, scales that change along K)
       pipeline each K block's promotion with the next block's wgmma
       wherever three accumulators fit the consumers' registers and B's
       scales are not per column (MX, 1x128);
    2. scales: 1x128 M-major scales of A and 128x128 of B ride with the
       stages (TMA box and cp.async per stage) unless split_n or k_grouped;
       other scales that change along K go through each warp's slots;
    3. registers: the producer keeps 40 (24 with three or more consumer
       warpgroups or pipelined promotion), the consumers share the rest;
    4. staging: the store pool's tile is 128B-swizzled when its rows are
       whole 128-byte rows, else dense.

    `warp_columns`: 1 on sm_90a (wgmma's fragment); on the other targets 4
    (warps of 64 rows side by side) where a warpgroup has 256 columns or
    more, else 2 where it has a multiple of 32 (the squarer a mma.sync
    warp's tile, the less of the stages it reads per multiply). A user's
    plan may give 4 where a warpgroup has a multiple of 64 columns.

    `release_lag`: 1 on sm_90a (wgmma reads a stage after it is issued, so
    stage k goes back once block k+1 is issued); 0 on the other targets
    (mma.sync's operands are in registers once it is issued, and the
    producer gets the stage a K block sooner).

    `producer`: `warpgroup` on sm_90a (its one thread issues the TMA loads)
    and for one consumer warpgroup, a two-level kernel or f32 operands;
    `none` before sm_90a for one-level bf16/f16 kernels of two or more
    consumer warpgroups whose rounds of copies (16 rows per consumer
    warpgroup) divide the tiles: their threads copy the stages themselves
    and keep the 256 registers a thread of a CTA without a producer (2-7%
    faster on four 128-row shapes on an H200, docs/performance.md). A
    user's plan may give either before sm_90a where the rounds divide.
  }];
  let dependentDialects = ["::mlir::gg::GGDialect"];
}

def LowerToNVVM : Pass<"gg-lower-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "generate one persistent, warp-specialised Hopper kernel per grouped matmul";
  let description = [{
    Takes: a module whose functions each hold one `gg.grouped_matmul` with a
    `#gg.config`, a `#gg.schedule`, a `#gg.padding`, a `#gg.overfetch` and
    a `#gg.kernel_plan` (run `gg-select-config`, `gg-schedule-groups`,
    `gg-eliminate-padding`, `gg-plan-overfetch` and `gg-plan-kernel` first)
    and take only memrefs.
    Makes: for each such function `@f`, an `llvm.func @f_kernel` in the LLVM
    and NVVM dialects (with scf/arith control flow still to lower) carrying
    `nvvm.kernel` and the launch contract as JSON in `ggc.kernel_info`; the
    function itself is removed.

    The kernel: warpgroup 0 issues TMA loads of A and B tiles into a ring of
    shared-memory buffers guarded by mbarriers; the other warpgroups run
    wgmma on them and store the valid rows of each tile. The tile schedule is
    computed on the device from the group offsets or counts (persistent grid,
    no host synchronisation) in the op's `schedule` order; tiles start at
    each group's own first row (no padding of A), warpgroups with only
    padding rows skip their wgmma as `padding` says, and loads near a
    group's end fetch whole tiles across the boundary as `overfetch` says,
    the extra rows never stored.

    A config with `cluster = [2, 1]` pairs CTAs along M and multicasts
    halves of each B tile to both.

    `out` in `nm` ([G, N, M], k_grouped) takes per-thread stores. Not
    lowered yet (each is a clear error): clusters other than [1, 1] and
    [2, 1], per-column scales of B (MX or 1x128) with block N over 128.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::ggk::GGKDialect"];
}

def PlaceScales : Pass<"ggk-place-scales", "::mlir::ModuleOp"> {
  let summary = "put each K block's block scales where the kernel plan says: with the stages, in each warp's scale slots, or nowhere";
  let description = [{
    Takes: `ggk.stage_block_scales` (the producer's, per K block, where
    the scales could ride the stages) and `ggk.read_block_scales` (a
    consumer thread's, per K block), each with the op's `#gg.kernel_plan`
    (gg-plan-kernel's `scales`, which a user may override).
    Makes, as `scales` says:
    - `stages`: the producer's cp.async of B's block scales into the
      stage's `stage_b_scales` and their `cp.async.mbarrier.arrive.noinc`
      on its full barrier, then, after the `ggk.load_tile_rows` arming that
      barrier (whose `other_bytes` grow by the window's bytes), the TMA
      load of A's window of scales into `stage_a_scales`; the consumers'
      loads from the stage;
    - `slots`: no producer work; the consumers' `cp.async.wait_group 1`,
      `bar.warp.sync` and loads from their warp's `scale_slots` (which the
      generator's copies fill a block ahead);
    - `none`: the scales are the constant 1.0.
    It also lowers `ggk.init_full_barrier` (a stage's full barrier counts
    the producer's arrival and, with `stages`, the cp.async's).
    Runs before `ggk-allocate-shared-memory` (it makes `ggk.shared_address`
    ops) and `ggk-split-partial-loads` (it finds the stage's
    `ggk.load_tile_rows`).

    Under a `gg.target` before sm_90a the full barriers count each producer
    thread's two arrivals (A's and B's copies, `ggk-lower-loads-cp-async`):
    256.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def SplitPartialLoads : Pass<"ggk-split-partial-loads", "::mlir::ModuleOp"> {
  let summary = "lower each ggk.load_tile_rows to the expect_tx and the TMA loads of the rows its tile needs";
  let description = [{
    Takes: `ggk.load_tile_rows` ops (made by `gg-lower-to-nvvm` for K-major
    A; they sit in a `ggk.foreach_tile`, which this pass leaves alone).
    Makes: for each, an `nvvm.mbarrier.arrive.expect_tx` on the stage's
    full barrier and the TMA loads (`nvvm.cp.async.bulk.tensor`) that it
    counts. With one box: the whole tile's bytes and one load. With
    gg-plan-overfetch's granule (TMA-Adaptive FP8 Grouped GEMM's
    partial-tile loads): `rows = min(roundup(max(rows_valid, 0), granule),
    tile_rows)`, armed as `rows * row_bytes + other_bytes`; an `scf.if`
    loads a whole tile with its one box, and otherwise each smaller box
    whose height is a bit of `rows` (`arith.andi`, `scf.if`) at the row
    after the boxes before it.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def Multicast : Pass<"ggk-multicast", "::mlir::ModuleOp"> {
  let summary = "lower B's tile loads, the stages' releases and the cluster's frame, multicast across the cluster when there is one";
  let description = [{
    Takes: `ggk.load_b_tile` (the producer's load of a stage's B tile),
    `ggk.release_stage` (a consumer's release of a stage) and the kernel
    frame's cluster steps, `ggk.init_empty_barrier` (a stage's empty
    barrier's count), `ggk.publish_barrier_init` and `ggk.leave_cluster`,
    made by `gg-lower-to-nvvm`; the loads and releases sit in a
    `ggk.foreach_tile`, which this pass leaves alone.
    Makes, alone (`cluster = 1`): one TMA load per box of the tile
    (`nvvm.cp.async.bulk.tensor.shared.cluster.global`, with B's L2 cache
    hint), each consumer thread's `nvvm.mbarrier.arrive` on an empty
    barrier counting every consumer thread, `bar.sync 0` after the
    barriers' initialisation and nothing before returning. In a cluster
    of c CTAs: CTA `rank` loads the rank-th 1/c of the tile (rows of N, or
    column chunks when B is N-major) with the multicast mask of all c CTAs
    into the same place of each CTA's stage (`nvvm.mapa`); the release is
    one arrival per warp on every CTA's empty barrier, at CTA scope, which
    counts c x the consumer warps; the leader's barrier inits are fenced
    for the cluster (`fence.mbarrier_init`) and the CTAs meet
    (`barrier.cluster`) after them and again before returning.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def PrepareOperands : Pass<"ggk-prepare-operands", "::mlir::ModuleOp"> {
  let summary = "lower the consumers' in-place work on a stage's tiles before wgmma reads them";
  let description = [{
    Takes: `ggk.clear_k_outside` and `ggk.transpose_to_k_major` ops (made
    by `gg-lower-to-nvvm` in the consumers' K loop; they sit in a
    `ggk.foreach_tile`, which this pass leaves alone).
    Makes: for each, an `scf.for` over shared memory that the consumer
    threads share (thread `t` from the producer's warpgroup on takes stores
    `t`, `t + consumer_threads`, ...), then `nvvm.fence.proxy` (async
    shared) and the consumers' named barrier (`nvvm.barrier id = 1`), so
    the wgmma reads the finished tiles.
    `ggk.clear_k_outside` is guarded by an `scf.if` on `lo > 0 || hi <
    block_k`; it stores 16 zero bytes per K row of an MN-major tile's
    column chunk outside `[lo, hi)`, and for a K-major tile walks each
    row's eight 16-byte chunks through the 128B swizzle (physical = logical
    ^ row % 8), zeroing a chunk wholly outside at once and one a boundary
    cuts byte by byte. `ggk.transpose_to_k_major` loads four f32 along MN
    (`vector<4xf32>`) and stores each to its swizzled place along K.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def DeferEpilogue : Pass<"ggk-defer-epilogue", "::mlir::ModuleOp"> {
  let summary = "run each tile's epilogue where it stands, or in the next tile: beside a pipelined promotion loop while its first K block computes, without a producer after its first copies";
  let description = [{
    Takes: `ggk.tile_epilogue` ops (a consumer's end of a tile, made by
    `gg-lower-to-nvvm`), each in a `ggk.foreach_tile`'s body.
    Makes, where the tile's K loop is a `ggk.promotion_loop` with
    `promotion = pipelined` (in the work region of the body's
    `ggk.warpgroup_tile`): the loop over tiles carries the finished tile
    (whether one is pending, its ten fields, its accumulator; first
    nothing, zeros); the next tile runs the pending epilogue in the
    promotion loop's `overlap` (while its first wgmma runs) or at the start
    of its idle path, which a tile without K blocks now takes (the
    pipelined loop needs one); the last tile's epilogue runs after the
    loop. Where the enclosing `ggk.warp_specialize`'s plan has `producer =
    none` (the consumers copy a tile's first stages before its K loop): the
    same carried tile, whose epilogue the next tile runs right before its
    `ggk.warpgroup_tile`, after its first copies are issued, so that their
    latency passes behind the stores. Otherwise: the epilogue's body in
    place. The epilogue's body may
    read its tile only through its block arguments (an error otherwise).
    Runs before `ggk-pipeline-promotion` (it fills the promotion loop's
    `overlap`) and `ggk-skip-idle-warpgroups`.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def PipelinePromotion : Pass<"ggk-pipeline-promotion", "::mlir::ModuleOp"> {
  let summary = "lower each ggk.promotion_loop: two-level accumulation, serial or pipelined";
  let description = [{
    Takes: `ggk.promotion_loop` ops (made by `gg-lower-to-nvvm` for the
    consumers' K loop of two-level kernels without MX scales), each with
    its `#gg.kernel_plan`.
    Makes, for `promotion = serial`, an `scf.for` over the K blocks: prefetch
    block k + 1's scales, issue block k, read its scales, wait for its
    wgmma (`wgmma.wait_group 0`), release its stage, promote it. For
    `promotion = pipelined`, DeepGEMM-style overlap in pairs, each block in
    a fresh partial accumulator: block 0 before the loop (with the
    `overlap` region while its wgmma runs), then per pair issue X(k);
    promote Y(k-1); issue Y(k+1); wait for X (`wgmma.wait_group 1`); promote
    X(k); wait for Y, so no wgmma is in flight across the loop's back edge
    (one pending there makes ptxas serialise every wgmma: C7514); an odd
    last block after the loop. Slot scales run two blocks ahead there, and
    each promotion's result is pinned (an empty inline asm tying it) so
    LLVM cannot sink it below the next wgmma issue. Scales that travel with
    the stages are read right after each block's issue, before its stage
    is released, and carried to its promotion.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def SkipIdleWarpgroups : Pass<"ggk-skip-idle-warpgroups", "::mlir::ModuleOp"> {
  let summary = "lower each ggk.warpgroup_tile: padding elimination inside a tile, as a guarded region";
  let description = [{
    Takes: `ggk.warpgroup_tile` ops (made by `gg-lower-to-nvvm` in the
    consumers' tile loop; they sit in a `ggk.foreach_tile`, which this
    pass leaves alone).
    Makes: with `idle_warpgroups = skip` (gg-eliminate-padding's choice),
    an `scf.if` on `first_row < rows_valid` (and-ed with `works` when
    given) whose then-branch is the `work` region and else-branch the
    `idle` one, so a warpgroup whose rows are all padding only passes the
    ring's buffers back; with `compute`, the same `scf.if` on `works` when
    given, else the `work` region inline and `idle` dropped.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerTileSchedule : Pass<"ggk-lower-tile-schedule", "::mlir::ModuleOp"> {
  let summary = "lower each ggk.foreach_tile to the persistent loop over the group offsets";
  let description = [{
    Takes: `ggk.foreach_tile` ops (made by `gg-lower-to-nvvm`).
    Makes: for each, an `scf.while` that walks the tiles CTA `c` of a grid
    of `g` owns (`c`, `c + g`, ...; a cluster walks them together, one M
    block per CTA). Grouped layouts carry a cursor (group, its first tile)
    that only moves forward, counting each group's tiles on the device from
    its offsets or count, clamped to the run-time size so that malformed
    metadata never reaches outside the tensors; `padded_contiguous` numbers
    tiles over A's rows and skips those whose first row is padding (group
    -1). The tile's fields replace the body's arguments: for k_grouped its
    K range starts at the group's first K rounded down to `k_alignment`.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def StageTileStores : Pass<"ggk-stage-tile-stores", "::mlir::ModuleOp"> {
  let summary = "make each tile's output stores the TMA store pool's staged tile, or per-thread stores, as its store_pool says";
  let description = [{
    Takes: `ggk.store_tile` (a consumer's outputs of one tile, made by
    `gg-lower-to-nvvm`; its `pool` is gg-tma-store-pool's `store_pool`)
    and the `ggk.store_pair` ops in it.
    Makes, with a pool: `ggk.await_staged_tile` on the `staged_output`
    buffer where the tile starts, a `ggk.stage_output` per pair, a
    `ggk.store_staged_tile` of the group's rows with the pool's maps where
    it ends (all lowered by `ggk-lower-store-pool`), and, where it stands
    in a `ggk.warp_specialize`, one `ggk.drain_tile_stores` at the end of
    its consumers. Without: each pair valid in its row
    and columns stored by its thread to `out` (`llvm.store` in an
    `scf.if`; two scalars of the transposed output with `out_nm`; with
    `scatter(%indices)`, at the row the list gives, read for valid pairs
    only, and nowhere for a negative one). Runs before
    `ggk-allocate-shared-memory` (it makes a `ggk.shared_address`).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerStorePool : Pass<"ggk-lower-store-pool", "::mlir::ModuleOp"> {
  let summary = "lower the TMA store pool's staged-tile ops to shared stores and TMA stores";
  let description = [{
    Takes: `ggk.await_staged_tile`, `ggk.stage_output`,
    `ggk.store_staged_tile` and `ggk.drain_tile_stores` (made by
    `gg-lower-to-nvvm` for ops with a `store_pool`), before
    `ggk-lower-tile-schedule` (they sit in the tile loop's body).
    Makes: the await as the issuer's `cp.async.bulk.wait_group.read 0` and
    the consumers' named barrier; each staged pair as a store into shared
    memory at its place in the tile (swizzled: 128-byte column chunks, the
    16-byte unit XORed with `row % 8`; dense: rows of the tile); the tile's
    store as `fence.proxy.async.shared::cta`, the barrier, and, on the
    issuer, for each pool height `h`, `if (max(rows_valid, 0) & h)` the TMA
    stores (`cp.async.bulk.tensor` shared to global) of an `h`-row box per
    column chunk that starts before N, the boxes stacked from the tile's
    first row, then `cp.async.bulk.commit_group`; the drain as the issuer's
    `cp.async.bulk.wait_group 0`.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def AllocateSharedMemory : Pass<"ggk-allocate-shared-memory", "::mlir::ModuleOp"> {
  let summary = "place the kernel's shared-memory buffers and lower the addresses into them";
  let description = [{
    Takes: kernels that declare their shared memory as `ggk.shared_buffer`
    ops (name, bytes, alignment, in layout order: made by
    `gg-lower-to-nvvm`) and address it with `ggk.shared_address` (a buffer,
    an optional index times a stride, a byte offset).
    Makes: each buffer placed at the next multiple of its alignment after
    the one before, by `ggc::allocateSharedMemory`, the same function that
    gives `gg-select-config` and `gg-tma-store-pool` a config's footprint;
    the total on the kernel as `ggk.shared_bytes`, which the launch
    contract states (`ggk-collect-launch`); each address as
    `base + offset + index * stride` bytes, built where it stands; the
    declarations erased. An address into an undeclared buffer, or past a
    buffer's end, is an error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerMma : Pass<"ggk-lower-mma", "::mlir::ModuleOp"> {
  let summary = "lower the consumers' MMA for sm_90a: ggk.mma to wgmma.mma_async per K step, its fence, commit and wait to wgmma's";
  let description = [{
    Takes: `ggk.mma` (a consumer warpgroup's multiply-accumulate of a K
    block's steps of a stage's A and B tiles, at their shared-memory
    addresses, with the operand types, N, the K steps and the tiles'
    majors as attributes), `ggk.mma_fence`, `ggk.mma_commit` and
    `ggk.mma_wait {pending}`, made by `gg-lower-to-nvvm` in the consumers'
    K loops and by `ggk-pipeline-promotion` (its waits).
    Makes, for sm_90a: each tile's 128-byte-swizzle matrix descriptor once
    (start address, leading byte offset 16 for a K-major tile or the
    64-wide MN chunks' distance block_k x 128 for an MN-major one, stride
    1024), then one `nvvm.wgmma.mma_async` m64nNk per K step on the
    descriptors plus the step's offset (32 bytes along a K-major row, 16
    rows of an MN-major tile), the first step scaling the accumulator by
    zero when `fresh`; `nvvm.wgmma.fence.aligned`,
    `nvvm.wgmma.commit.group.sync.aligned` and
    `nvvm.wgmma.wait.group.sync.aligned pending`. `ggk-lower-mma-sync` is
    the other targets' conversion.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerRing : Pass<"ggk-lower-ring", "::mlir::ModuleOp"> {
  let summary = "lower the ring's protocol for sm_90a: ggk.acquire_stage and ggk.wait_stage to mbarrier try-wait loops, ggk.commit_stage to an arrive with expect_tx";
  let description = [{
    Takes: `ggk.acquire_stage` (the producer's wait for a free stage, on its
    empty barrier), `ggk.commit_stage` (the producer's statement of the
    bytes its loads into a stage will bring, on its full barrier) and
    `ggk.wait_stage` (a consumer's wait for a loaded stage, on its full
    barrier), made by `gg-lower-to-nvvm` in the producer's and the
    consumers' K loops (also inside `ggk.promotion_loop` steps and
    `ggk.warpgroup_tile` regions). `ggk.release_stage` is `ggk-multicast`'s.
    Makes, for sm_90a: one `nvvm.mbarrier.try_wait.parity.shared` on the
    barrier and parity for each wait, which loops until the phase completes
    (its tick count, 10,000,000, only bounds how long each try may
    suspend), and `nvvm.mbarrier.arrive.expect_tx` of the bytes for each
    commit. `ggk-lower-ring-test-wait` is the other targets' conversion.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerLoadsCpAsync : Pass<"ggk-lower-loads-cp-async", "::mlir::ModuleOp"> {
  let summary = "lower the producer's tile loads for targets without TMA: per-thread cp.async into the swizzled stages";
  let description = [{
    Takes: `ggk.load_tile_rows` (A's rows) and `ggk.load_b_tile` (B's
    tile), made by `gg-lower-to-nvvm` in the producer's K loop, with the
    operand's address as their source, its `extents` (and A's
    `element_bytes`); no cluster.
    Makes, for sm_80, sm_86 and sm_89: for each 16-byte piece of the tile,
    thread `piece % 128` of the producer warpgroup issues a
    `ggk.copy_async` (16 bytes, `read(0)`, a zero fill, for pieces past
    the extents or, for A, past the group's valid rows) into the piece's
    place in the 128-byte swizzled layout TMA writes on sm_90a (piece `c`
    of row `r` at `r * 128 + (c ^ r % 8) * 16`; an N-major B as 64-column
    chunks `block_k * 128` bytes apart), then one `ggk.copy_async_arrive`
    on the stage's full barrier. `ggk-place-scales` initialises that
    barrier for the two arrivals (A's, B's) of each of the 128 threads.
    A load with `gather(%indices)` reads each row's index from the list
    (an `scf.if` on whether the row is one of the group's, so no entry past
    them is read) and zero-fills rows whose index lies outside the operand.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def LowerRingTestWait : Pass<"ggk-lower-ring-test-wait", "::mlir::ModuleOp"> {
  let summary = "lower the ring's waits for targets without try_wait: poll the stage's mbarrier with test_wait.parity";
  let description = [{
    Takes: `ggk.acquire_stage` and `ggk.wait_stage` (see `ggk-lower-ring`).
    `ggk.commit_stage`, which states bytes for TMA's transaction count, is
    an error here: without TMA the loads arrive on the barrier per thread
    (`ggk-lower-loads-cp-async`).
    Makes, for sm_80, sm_86 and sm_89: an `scf.while` that polls
    `nvvm.mbarrier.test.wait` on the barrier and the phase's parity until
    it completes.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def LowerMmaSync : Pass<"ggk-lower-mma-sync", "::mlir::ModuleOp"> {
  let summary = "lower the consumers' MMA for targets without wgmma, and f32 (3xTF32) everywhere: ldmatrix and mma.sync per warp";
  let description = [{
    Takes: `ggk.mma` with bf16, f16, FP8 (sm_89) or f32 operands and a
    K-major A (an error otherwise), `ggk.mma_fence`, `ggk.mma_commit`,
    `ggk.mma_wait`; with `three-tf32-only` (sm_90a) only the `ggk.mma`
    ops with `three_tf32`. f32 is m16n8k8 tf32, its operands (with
    `three_tf32`) split in registers into a TF32 part and the TF32 of the
    rest (cvt.rna), three products summed.
    Makes, for sm_80, sm_86 and sm_89: for each K step, warp `w` of the
    consumer warpgroup loads its A fragment (rows `16 w ..`) with one
    `nvvm.ldmatrix` x4 and B's with one x4 per 16 columns (x2 for a last
    8; `.trans` for an N-major B) from the swizzled stage, then issues one
    `nvvm.mma.sync` m16n8k16 per 8 columns. Its accumulator registers are
    those of the m64nN fragment, so the struct is updated in place. The
    fence, commit and wait lower to nothing: `mma.sync` is synchronous.
  }];
  let options = [
    Option<"threeTf32Only", "three-tf32-only", "bool", /*default=*/"false",
           "lower only the ggk.mma ops with three_tf32 and leave the rest "
           "(and the fences, commits and waits) to ggk-lower-mma: sm_90a's "
           "f32 kernels">
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerAccumulators : Pass<"ggk-lower-accumulators", "::mlir::ModuleOp"> {
  let summary = "lower the typed accumulators to registers: !ggk.acc to an !llvm.struct of f32, its ops to the registers they name";
  let description = [{
    Takes: every value of type `!ggk.acc` (the consumers' accumulators,
    across scf loops, ifs and regions), `ggk.acc_zero`, `ggk.acc_undef`,
    `ggk.acc_get` / `ggk.acc_set` (an element by row group, column block
    and column), `ggk.acc_pin` and `ggk.acc_origin`, and the
    `builtin.unrealized_conversion_cast`s with which `ggk-lower-mma` and
    `ggk-lower-mma-sync` hand their registers back; runs after them, on
    every target.
    Makes: the thread's `rows * columns / 128` f32 as one `!llvm.struct`,
    m16 block by m16 block, each as mma's n8 quads (register
    `4 (i blocks + c) + 2 half + j` for row group `2 i + half`, column
    block `c` and column `j`): `llvm.extractvalue` / `llvm.insertvalue`
    of that register, zeros inserted into an `llvm.mlir.undef`, an empty
    side-effecting `llvm.inline_asm` tying each register to itself for
    the pin, and for the origin the thread's row and column from its
    index in the warpgroup (`warp / warp_columns * 16 warp_columns +
    lane / 4`, `warp % warp_columns * columns / warp_columns +
    2 (lane % 4)`). The casts between equal types are dropped.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerMNMajorLoads : Pass<"ggk-lower-mn-major-loads", "::mlir::ModuleOp"> {
  let summary = "lower the producer's MN-major tile loads for sm_90a: one TMA box per chunk";
  let description = [{
    Takes: `ggk.load_mn_major_tile` (the producer's load of an MN-major
    A tile, the k-grouped layout's token-major A, made by
    `gg-lower-to-nvvm` after the `ggk.commit_stage` that arms its stage).
    Makes, for sm_90a: per chunk j one
    `nvvm.cp.async.bulk.tensor.shared.cluster.global` (CTA-only) of the
    box at (`row + j * chunk_rows`, `k`) into `dst + j * chunk_bytes`,
    completing on the stage's full barrier.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerAsyncCopies : Pass<"ggk-lower-async-copies", "::mlir::ModuleOp"> {
  let summary = "lower the threads' asynchronous copies: ggk.copy_async and its commit and wait to cp.async";
  let description = [{
    Takes: `ggk.copy_async %dst, %src {bytes}` (a thread's copy from global
    to shared memory: the block scales' slots, made by `gg-lower-to-nvvm`),
    `ggk.copy_async_commit` and `ggk.copy_async_wait {pending}` (also from
    `ggk-place-scales`' reads of the slots).
    Makes: `nvvm.cp.async.shared.global` (cache at all levels),
    `nvvm.cp.async.commit.group`, `nvvm.cp.async.wait.group pending`: the
    same on sm_80 and sm_90a.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def LowerThreads : Pass<"ggk-lower-threads", "::mlir::ModuleOp"> {
  let summary = "lower the thread ops: ggk.thread_index, ggk.warp_broadcast, ggk.warp_sync and ggk.sync_threads to their instructions";
  let description = [{
    Takes: `ggk.thread_index`, `ggk.warp_broadcast %v`, `ggk.warp_sync` and
    `ggk.sync_threads %id, %count`, made by `gg-lower-to-nvvm` and by the
    passes before (through `KernelBuilder`): last in the list, after every
    pass that makes them.
    Makes: `nvvm.read.ptx.sreg.tid.x`, `nvvm.shfl.sync idx` from lane 0
    with every lane, `nvvm.bar.warp.sync` with every lane and
    `nvvm.barrier id, count` (`bar.sync`): the same on sm_80 and sm_90a.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def CollectLaunch : Pass<"ggk-collect-launch", "::mlir::ModuleOp"> {
  let summary = "complete each kernel's launch contract from the kernel that remains: its block, shared memory and parameters";
  let description = [{
    Takes: each `llvm.func` with a `ggk.launch` (what `gg-lower-to-nvvm`
    wrote of it: the source op's tile, sizes, grid bound and tensors), at
    the end of the pipeline: its `nvvm.maxntid` (set by
    `ggk-warp-specialize` from the roles), its `ggk.shared_bytes` (set by
    `ggk-allocate-shared-memory` from the buffers it placed) and a
    `ggk.param` on each argument (what feeds it, from `gg-lower-to-nvvm`
    or a pass that added the parameter).
    Makes: the complete `#ggk.launch` (block, shared bytes, the parameters
    in argument order), which `ggc_result_kernel_info` hands to hosts; the
    `ggk.shared_bytes` and `ggk.param` attributes, now in the contract, are
    dropped. A kernel that lacks any of them is an error naming it. Last
    in the list, after every pass that could change the kernel's threads,
    shared memory or parameters.
  }];
}

def WarpSpecialize : Pass<"ggk-warp-specialize", "::mlir::ModuleOp"> {
  let summary = "lower each ggk.warp_specialize to the warp roles: setmaxnreg and the producer's and consumers' branches";
  let description = [{
    Takes: `ggk.warp_specialize` (the kernel's roles, made by
    `gg-lower-to-nvvm`: the producer's region, the consumers' region with
    the consumer's index as argument, and the op's `#gg.kernel_plan`).
    Makes: the warpgroup index (`thread / 128`) and an `scf.if` on it: for
    warpgroup 0, `nvvm.setmaxregister decrease` to the plan's producer
    registers and, in the leader thread (`scf.if`), the producer's ops; for
    the others, `nvvm.setmaxregister increase` to its consumer registers,
    the consumer's index (warpgroup - 1) broadcast from lane 0
    (`nvvm.shfl.sync idx`, so it is warp-uniform), and the consumers' ops
    on it.

    Under a `gg.target` before sm_90a there is no setmaxnreg: the
    warpgroups below the op's `consumer_warpgroups` run the consumers on
    their own index, and the threads after them, a producer warpgroup where
    the plan has one, run the producer's ops (its loads are per-thread
    copies).

    Also makes the kernel's CTA: `nvvm.maxntid` on the enclosing
    `llvm.func`, the consumer warpgroups' threads and the producer's, which
    the launch contract states (`ggk-collect-launch`).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // GGC_PASSES_TD
