//===- GGPasses.td - the gg passes ---*- tablegen -*-===//
//
// The gg passes: each decision about a grouped matmul, as an attribute, then the kernel generator (gg -> ggk).
// Included by Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_GG_PASSES_TD
#define GGC_GG_PASSES_TD

def SelectConfig : Pass<"gg-select-config", "::mlir::ModuleOp"> {
  let summary = "choose tile sizes, pipeline depth, cluster and grid for each grouped matmul";
  let description = [{
    Takes: `gg.grouped_matmul` ops with or without a `config` attribute.
    Makes: every op carries `config = #gg.config<...>`. A config the user
    wrote is kept, and only checked against the shared-memory budget.

    The heuristics live in `chooseConfig` in SelectConfig.cpp (the masked
    f8 batches' tile rules in MaskedTileRules.cpp), in the order
    they are applied: block K fills one 128-byte swizzled row of A; block M
    follows the expected rows per group (64 for small masked batches, f8
    ones on 64x256 tiles split between two consumer warpgroups; also f8
    masked batches of M 256 or more whose `expected_m`, counts taken
    spread evenly around it, fills fewer waves of 64x256 tiles than the
    at most 4 of 128x128 ones on the SMs (1.09-1.56x measured there, 6-14%
    lost where no wave is saved), or more than 4 waves of 128x128 tiles
    (with five stages and per-thread stores 1.036-1.102x the paired
    128x192 or 128x128 tiles on an H200); 64x64
    tiles for contiguous groups expected to hold at most 64 rows (16 on
    sm_90a), a MoE decode step bound by reading weights; else 128, where
    f8's promotions pipeline); block N
    is the widest of 256/128/64 that divides N without waste (on sm_90a,
    16-bit contiguous 128-row tiles whose N is a multiple of 64 but not of
    128 take 128 with a ragged last column tile from N = 1,024: 1.20-1.22x
    on gpt-oss's N = 2,880; 128 at most
    for f8, and for contiguous ops, whose ragged groups balance better over
    narrower tiles, unless their `expected_m` says a group holds 256 rows
    or more and N is at least 16,384 (128x256 tiles measured 2.5-6.9%
    faster; N 4,096 lost 4.1-6.1% at 1,024 rows), or 2,048 rows or more
    whatever N (20-40% faster on an H100), or 128 or more
    with `column_halves` (a gated up projection stores half its tile's
    columns), or 256 or more with K at most 1,024 (few K blocks a tile);
    an FP8 weight gradient whose `expected_m` (tokens a group) is 2,048
    or more (256 or more where it writes a 16-bit gradient) takes 144
    (four stages beside an f32 staged tile), or 160 where 144 loses a
    16-bit output's TMA store pool, with serial promotion; contiguous FP8 whose `expected_m` is 128
    or more takes 192 on sm_90a, with serial promotion, where N is a
    multiple of 192 and K at most 3,072 (MoE projections of short K,
    measured 1.4-8% faster, but the gpt-oss-like up projection 2.3% slower
    at 512 rows an expert), or at any K where its ring stages are constant
    (plain groups: no a_rows, zero_ungrouped or MX scales; N 3,072 at K
    4,096 and 8,192 0.99-1.06x the 128x128 tiles on an H100, not measured
    on an H200); masked f8 batches of M 256 or more and K 4,096
    or more whose 128x128 tiles fill more than 4 waves and that take no
    64x256 split tiles (N no multiple of 256, or no `expected_m`) take
    128x192 tiles in pairs
    sharing B by multicast (cluster [2, 1]; 1.03-1.10x the 128x128 tiles
    measured at K 7,168 and N 4,096, 0.97x at K 2,048); before sm_90a see
    below);
    on a card of less DRAM bandwidth than 4,000 GB/s (`memory-gbps`: an
    H100 SXM's 3,352, not an H200's 4,915), which feeds wider tiles
    better, 16-bit contiguous groups expected to hold 512 rows or more
    take 128x256 tiles (1.005-1.24x the 128x128 tiles on an H100), and
    contiguous FP8 of K at most 3,072 takes 192 also where N (at least
    4,096) is no multiple of 192 (N 7,168: 1.02-1.13x);
    the pipeline is as deep as shared memory allows after the epilogue
    buffer; the persistent grid has one CTA per SM, and clusters are
    [1, 1] but for those masked pairs.

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
           "sm_80, 99 KiB for sm_86 and sm_89)">,
    Option<"memoryGBps", "memory-gbps", "int64_t", /*default=*/"0",
           "the device's peak DRAM bandwidth in GB/s (the runtime passes "
           "the card's); 0: unknown, planned as for a card of at least "
           "4,000 (an H200)">
  ];
}

def ScheduleGroups : Pass<"gg-schedule-groups", "::mlir::ModuleOp"> {
  let summary = "choose the order of each grouped matmul's tiles in the persistent schedule";
  let description = [{
    Takes: configured `gg.grouped_matmul` ops (run `gg-select-config`
    first).
    Makes: `schedule = #gg.schedule<order = m_fastest | n_fastest[,
    m_band = S][, b_cache = evict_first][, group_reads = shared][,
    odd_block_a = multicast]>` on every op that has none. The kernel walks the tiles group by group, each CTA
    taking every grid-th tile, with the group boundaries found on the device
    from the offsets or counts (no host synchronisation; an empty group has
    no tiles). Within a group, `order` says which block index moves first.

    The heuristic (`chooseOrder` in ScheduleGroups.cpp): on sm_90a,
    contiguous groups whose `expected_m` is 256 to 1,024 and whose B
    takes at most 4 MiB (N x K, a fine-grained expert's weights, in L2
    whichever way they are walked) go N blocks first: the Qwen3-like
    layer's FP8 projections measured 0.5-1.7% faster at 256 rows an
    expert and 2.2-3.4% at 1,024 (H200), where larger weights lost 4-42%;
    so do FP8 weights of at most 16 MiB at an `expected_m` of 1,024 (the
    DeepSeek-V3-like down projection, N 7,168 x K 2,048: 2.7-3.2% faster
    than M first; 28 MiB at those rows was level). Otherwise, when a group's
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
    tiles, 5831 and 5285 us on 128x256 tiles (docs/performance.md). Where
    the host's `expected_m` says a group is no taller than the band, the
    walk is the unbanded one and the op takes no band, sparing every CTA
    the band's index arithmetic: f8 MoE layers' groups of 256 and 1,024
    rows measured 1-2.5% faster without, groups of 4,096 rows (Mixtral's
    down projection at 16,384 tokens) 13.7% slower (H200). A hint is a
    mean rounded down to a power of two (`ggc.ops.mean_hint`), so groups
    count as 1.5 times it. On a card of narrow memory (`memory-gbps`
    below 4,000: an H100), contiguous f8 groups hinted at 1,024 rows and
    walked M first take bands of 8 instead of none: 0.996-1.066x on N
    4,096 x K 7,168 at T 8,192 to 32,768, seven draws (H100, 2026-12-08).
    Padded f8 ops load B with L2's evict-first
    policy (`chooseBCache`), so A's rows, which every N block reads again,
    stay in L2. Masked f8 ops keep the default: 1.014-1.079x faster than
    evict-first on eight masked batches (single CTAs and pairs of CTAs,
    whose odd last M block reads each B tile again; H100, 2026-12-05).
    Contiguous f8 keeps the default
    policy: a group's M blocks read each B tile in turn, and on MoE-sized
    groups evict-first had them read it again from DRAM (Qwen3-like up and
    down projections at 131,072 rows 749.5 against 777.5 us and 463.6
    against 489.9 us; level, 449.1 against 450.2 us, on groups of about
    1,000 rows; both policies stated without bands, `m_band = 0`). So does
    k_grouped f8 (the weight gradient), whose B, a group's tokens, all of
    the group's M blocks read: 0.4-5.5% faster than evict-first on
    DeepGEMM's six sm90 shapes (H200, 2026-12-02). bf16 measured no gain
    and keeps the default.

    `group_reads` (`chooseGroupReads`) stays `global`: each CTA loads a
    group's count or offsets from global memory when its walk reaches the
    group. `shared`, which a user may state on masked and contiguous ops,
    copies them all into shared memory at the kernel's entry so that a step
    over several groups between two tiles waits on no load; it is not
    chosen before a GPU run measures it. `odd_block_a` stays `own`: each
    CTA of a pair loads its own copy of the rows of a group's odd last M
    block (`multicast`, rank 0 loading them into both, is a user's choice
    until measured).
  }];
  let options = [
    Option<"memoryGBps", "memory-gbps", "int64_t", /*default=*/"0",
           "the device's peak DRAM bandwidth in GB/s, as gg-select-config's; "
           "0: unknown, planned as for a card of at least 4,000 (an H200)">
  ];
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
    tile's buffers without running its wgmma. The pass chooses `skip` for
    contiguous ops whose rows of A's K take at most 2 KiB
    (`kSkipMaxKBytes`), or everywhere with `skip-idle-warpgroups` set, and
    `compute` elsewhere: measured on the H200 (each timed interleaved with
    the other), over so short a main loop the skip saved 2-5% on MoE
    projections with groups of about 256 rows (f8 K = 768 and 2,048, bf16
    K = 768), 6-7% on about 64 and nothing on about 1,024; over longer
    ones skipping lost (bf16 K = 2,048 2% at T = 4,096, within 1% either
    way at 1,024 and 16,384; f8 K = 4,096 4% and K =
    7,168 5%, bf16 128x256 tiles on T=8192 G=8 K=7168 9%: 907 against
    832 us; on an H100, f8 K = 7,168 and 8,192 3.6-12.4%, bf16 K =
    7,168 to 14,336 0.5-2.5%). Not the branch: on equal groups, where no
    warpgroup is idle, the two kernels run alike (f8 T=8192 G=8 N=4096
    K=7168: 428.6 against 428.5 us); once some warpgroups skip, the
    consumers' waits for full stages and the producer's for empty ones
    grow in every tile (stall samples; the cause is not found). f8
    masked batches skip where their `expected_m` is not a multiple of
    block M (a typical group's last tile partial): on random
    counts (uniform in [1, M], block M 128) the skip was 0.6-11% faster at
    K = 2,048 and 7,168 in seven batches of eight (G8 M256 N4096 K7168:
    112.1 against 125.9 us), 1% slower in one (G16 M128 N2048 K7168). Other masked batches
    keep `compute`: full groups (f8 G4 M256 N7168 K2048) lost 2% with the
    skip (33.1 against 32.4 us), and a batch without a hint is taken as
    full. `skip` goes to contiguous and masked ops
    with more than one consumer warpgroup, except tf32 with B given
    N-major, whose consumers transpose
    B's tile together.
  }];
  let options = [
    Option<"skipIdleWarpgroups", "skip-idle-warpgroups", "bool",
           /*default=*/"false",
           "let warpgroups with only padding rows skip their wgmma at every K">
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

    A contiguous FP8 op (two-level accumulation, not MX) loads a group's
    last tile whole (`R = block M - 1`), measured faster there. Any other
    contiguous or masked group's last tile loads only its valid rows
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
    192) on ops whose `out` is row-major (every layout but k_grouped with
    `out` in nm). The lowering then stages the output tile in shared memory and stores the
    group's rows of it as a sum of those box heights (TMA-Adaptive FP8
    Grouped GEMM's descriptor pool): no row of a neighbouring group is
    written, with whole-tile stores for all full tiles. DeepGEMM's padded
    layout promises no prefix: each of its tiles tests its rows' tags when
    it is stored (`ggk.store_tile`'s `tagged`) and stores through the pool
    only where the group's rows are its leading ones, else per thread.
    The staging tile
    takes BM x BN output elements of shared memory (with the user's
    `store_slice = C`, a ring of two BM x C buffers); when the config's
    pipeline leaves no room, stages are dropped down to `min-stages`, and
    below that the op keeps per-thread stores (an empty `store_pool`).
    Masked f8 ops on 128x192 tiles in pairs (cluster [2, 1]) or on
    64x256 tiles split between two consumer warpgroups keep per-thread
    stores where the staged tile would cost a stage, unless a stated
    `kernel_plan` stages it (`maskedF8KeepsStages`): five stages so
    measured 1.011-1.021x four with the pool on the paired batches (H100,
    2026-12-05) and 1.00-1.06x on the split ones (H200, 2026-12-06). A
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
    dense | swizzled | swizzled_64, ...>` on every op that has none; a plan
    the user wrote is checked (`checkKernelPlan`, also run by the lowering)
    and kept.

    The choices (`chooseKernelPlan` in PlanKernel.cpp), in order:
    1. promotion: two-level kernels (f8, scales that change along K)
       pipeline each K block's promotion with the next block's wgmma
       wherever three accumulators fit the consumers' registers and the
       scales are not MX; where B's 1x128 per-column scales ride the
       stages (the FP8 weight gradient) its columns' scales must fit
       beside them too, so 128x128 tiles there are serial (pipelined,
       ptxas spilled 28-36 bytes a thread; serial measured 1.03-1.07x
       writing bf16 and 1.00-1.11x adding to f32 at 256-1,024 tokens an
       expert: docs/performance-history.md, thirty-fourth and
       thirty-fifth sessions);
    2. scales: 1x128 M-major scales of A and 128x128 of B ride with the
       stages (TMA box and cp.async per stage) unless split_n; so do a
       k_grouped weight gradient's 1x128 scales of A (M-major) and B
       (N-major: a TMA box of the tile's columns, which the promotion
       reads from the stage, so the loop gives the stage back after it)
       where M and N are multiples of 4 (1.03-1.14x the slots on
       DeepGEMM's sm90 k-grouped shapes: docs/performance-history.md,
       nineteenth session); K-major 1x128 scales of A ride too, as boxes
       four K blocks wide, where a row of them is whole 16-byte units
       (1.04-1.25x the slots on contiguous groups at 16 to 64 K blocks,
       level with M-major scales), but in DeepGEMM's padded layout only
       from 32 K blocks a row (1.14-1.22x there, 0.93-0.95x at 16:
       docs/performance.md, fortieth session); other scales that change
       along K go through each warp's slots; column_scale_reads: where B's per-column scales
       ride the stages of a serial kernel with an f32 output (the FP8
       weight gradient) and fit the registers beside its two
       accumulators (tiles of 144-160 columns; on 128 columns reading at
       the promotion measured 1.00-1.03x), at the wgmma's issue
       (`at_issue`: each thread reads its columns' scales into registers
       and the stage goes back before the promotion; 128x144 tiles with
       four stages 1.03-1.12x 128x176 with three read at the promotion,
       128x176 read at the issue 0.89-0.95x), else at the promotion
       (a bf16 output's 128x160 with four stages: at_issue 0.93-0.98x;
       docs/performance.md, thirty-third session);
    3. registers: the producer keeps 40 (24 with three or more consumer
       warpgroups, pipelined promotion or column scales read at the
       wgmma's issue), the consumers share the rest;
    4. staging: the store pool's tile is 128B-swizzled when its rows are
       whole 128-byte rows, else 64B-swizzled when they are whole 64-byte
       chunks that TMA stores rather than adds to an f32 `out` (a bf16
       weight gradient's 128x160 tiles 7.1% faster; f32 reduce-adds of
       64-byte boxes 6-12% slower: docs/performance.md, twenty-ninth
       session), else dense;
    5. epilogue_blocks: 1 with pipelined promotion, 0 with serial (the
       serial kernels' epilogue beside the next tile's first wgmma measured
       0.86-1.03x); store_issuers: one for the tile (each consumer
       warpgroup storing its own rows measured 0.95-1.02x);
    6. ring_stages: constant (the serial K loop a turn of the ring at a
       time, each block's stage a constant) for serial FP8 kernels of plain
       contiguous groups (no a_rows, zero_ungrouped or MX scales) on sm_90a
       (1.035-1.181x the counted loop at 128x192 on an H100, level with
       DeepGEMM, fifty-sixth session; K blocks of no whole turn, whose
       last turn ends on stages passed on empty, 1.041-1.084x at K 2,880,
       fifty-eighth session: docs/performance.md), else counted.

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

    `store_columns`: 8 where the threads store (no store pool) a
    row-major 16-bit `out` of N a multiple of 8 without `column_pairs`,
    on sm_90a and, before it, for warps of 64 rows (`warp_columns = 4`):
    a quad's threads exchange their pairs and store 16 bytes each,
    filling the 32-byte sectors a pair's 4-byte store half fills
    (padded_contiguous on sm_90a 7-21% faster, the 128x256 sm_80 kernels
    6-10%, on an H200; the 32x64 warps of 128x128 sm_80 tiles ran 0-5%
    slower with it and keep 2). DeepGEMM's padded layout with a pool
    stores by thread the tiles whose group's rows do not lead: 8 there
    too, but 2 where the promotion is pipelined (its consumers spilled 4
    bytes with the quads' exchange beside the staged epilogue, ptxas -v).
    Else 2. A user's plan may give 8 wherever a warp's columns are a
    multiple of 32 and the rest holds.
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
    [2, 1], per-column scales of B (MX or 1x128) with block N over 128
    unless the stages carry them (k_grouped's 1x128, up to 256 columns).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::ggk::GGKDialect"];
}

def LowerSortRoutes : Pass<"gg-lower-sort-routes", "::mlir::ModuleOp"> {
  let summary = "generate the count and place kernels of each gg.sort_routes";
  let description = [{
    Takes: a module whose functions each hold at most one `gg.sort_routes`
    and take only memrefs.
    Makes: for each such function `@f`, two kernels, `llvm.func @f_count`
    and `@f_place`, in the LLVM dialect with ggk thread ops
    (`ggk-lower-threads` lowers them) and scf/arith control flow; the
    function itself is removed. Their parameters are the op's operands as
    `!llvm.ptr<1>` and the route count (and the place kernel's chunk
    count) as i64, in the order `gg.sort_routes` documents.

    The place kernel ranks a route among the routes of lower experts (a
    scan over the experts' totals), those of its expert in earlier chunks
    (the count kernel's `chunk_counts`) and those of its expert earlier in
    its own chunk: each round of `threads` routes ranks within a warp by
    `match.any` and a population count of the lanes below, and across the
    round's warps by a table of each warp's count per expert. No atomics
    decide an order, so the sort is stable and the same on every run.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::ggk::GGKDialect"];
}

def LowerQuantizeRows : Pass<"gg-lower-quantize-rows", "::mlir::ModuleOp"> {
  let summary = "generate the kernel of each gg.quantize_rows";
  let description = [{
    Takes: a module whose functions each hold at most one
    `gg.quantize_rows` and take only memrefs.
    Makes: for each such function `@f`, one kernel `llvm.func
    @f_quantize` in the LLVM dialect with ggk thread ops
    (`ggk-lower-threads` lowers them) and scf/arith control flow; the
    function itself is removed. Its parameters: the op's memrefs as
    `!llvm.ptr<1>` in operand order, then M (out's rows), R (input's rows)
    and LD (scales' row length) as i64.

    A warp takes `steps` steps of a row at a time (a grid-stride loop over
    these units), half a warp a 128-column block a step: each lane issues
    the unit's 16-byte loads first (8 bf16 a block; with `gated`, the
    gate's and the up half's), the half-warp's amax comes from four
    butterfly shuffles, each lane multiplies by the block's factor `448 /
    max(amax, 1e-12)` (one IEEE division a block) and converts pairs with
    `cvt.rn.satfinite.e4m3x2.f32` (`ggk.convert_e4m3x2`), storing 8 bytes;
    the block's first lane stores the scale. With `route` each row's
    weight is loaded with its values and multiplies the SwiGLU before the
    rounding to bf16; with `activation` the rounded values are stored as
    16 bytes of bf16 beside the e4m3 ones.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::ggk::GGKDialect"];
}

def LowerQuantizeBlocks : Pass<"gg-lower-quantize-blocks", "::mlir::ModuleOp"> {
  let summary = "generate the kernel of each gg.quantize_blocks";
  let description = [{
    Takes: a module whose functions each hold at most one
    `gg.quantize_blocks` and take only memrefs.
    Makes: for each such function `@f`, one kernel `llvm.func
    @f_quantize_blocks` (LLVM/NVVM, ggk thread ops, scf/arith); the
    function is removed. Its parameters: input, out, [transposed,] scales
    as `!llvm.ptr<1>`, then G (the experts) as i64.

    256 threads a CTA take one 128x128 block at a time (a grid-stride loop
    over the blocks, in the scales' order), each thread an 8x8 square:
    eight 16-byte loads, its amax, the warp's by butterfly shuffles, the
    eight warps' through shared memory between two barriers; then
    `gg.quantize_rows`' factor `448 / max(amax, 1e-12)` and conversions
    (`ggk.convert_e4m3x2`), 8-byte stores of the square's rows and, for
    `transposed`, of its columns (the square transposed in registers).
    Thread 0 stores the block's scale.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::ggk::GGKDialect"];
}

def LowerQuantizeGroupTokens
    : Pass<"gg-lower-quantize-group-tokens", "::mlir::ModuleOp"> {
  let summary = "generate the kernel of each gg.quantize_group_tokens";
  let description = [{
    Takes: a module whose functions each hold at most one
    `gg.quantize_group_tokens` and take only memrefs.
    Makes: for each such function `@f`, one kernel `llvm.func
    @f_quantize_group_tokens` (LLVM/NVVM, ggk thread ops, scf/arith); the
    function is removed. Its parameters: input, groups, out, scales,
    padded_groups as `!llvm.ptr<1>`, then T, G and P as i64.

    256 threads a CTA take one 128-token x 128-column block of out at a
    time (a grid-stride loop in block order, so a CTA's blocks come in
    token order): a cursor over the groups, carried from block to block,
    finds the group whose padded span holds the block and its first
    source row. Each thread loads an 8x8 square (eight 16-byte loads of
    8 columns, rows past the group's tokens read as zeros), takes each
    column's amax over its 8 tokens, the two squares of a warp sharing
    columns by one shuffle, the eight warps' through shared memory
    between barriers (128 threads finish a column each and store its
    scale); then each column's factor `448 / max(amax, 1e-12)` and 8-byte
    stores of the square's columns (8 tokens each) into out's rows. CTA
    0's thread 0 writes padded_groups.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::ggk::GGKDialect"];
}

def LowerCombineRoutes : Pass<"gg-lower-combine-routes", "::mlir::ModuleOp"> {
  let summary = "generate the kernel of each gg.combine_routes";
  let description = [{
    Takes: a module whose functions each hold at most one
    `gg.combine_routes` and take only memrefs.
    Makes: for each such function `@f`, one kernel `llvm.func @f_combine`
    (LLVM/NVVM, ggk thread ops, scf/arith); the function is removed. Its
    parameters: input, position, out as `!llvm.ptr<1>`, then T (out's
    rows) and M (input's rows) as i64.

    Each thread takes 8 columns of one token (a grid-stride loop over
    tokens x H/8): it reads the token's `top_k` positions, issues their
    16-byte loads together, adds them in f32 in slot order and stores the
    8 sums rounded to bf16 as 16 bytes.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::ggk::GGKDialect"];
}

def LowerSelectExperts : Pass<"gg-lower-select-experts", "::mlir::ModuleOp"> {
  let summary = "generate the kernel of each gg.select_experts and gg.select_experts_backward";
  let description = [{
    Takes: a module whose functions each hold at most one
    `gg.select_experts` or `gg.select_experts_backward` and take only
    memrefs.
    Makes: for each such function `@f`, one kernel `llvm.func
    @f_select_experts(logits, weights, ids, T)` or
    `@f_select_experts_backward(weights, ids, grad, out, T)` (with a
    bias: `(logits, bias, weights, ids, T)` forward), pointers as
    `!llvm.ptr<1>` and T (the tokens) as i64 (LLVM, scf/arith, the
    exponential's `ggk.exp2_approx`, sigmoid's `ggk.reciprocal_approx`
    and `ggk.warp_shuffle_xor`); the function is removed.

    A warp takes a token (a grid-stride loop over T), each lane the
    logits of experts `lane + 32 i` in f32 (an expert past E as already
    chosen). Each expert's score: softmax's `exp(l - m)` (the row's
    largest logit the lanes' maximum by butterfly shuffles) or
    sigmoid's; and its ranking value: with `bias` the normalised score
    plus the expert's bias, else the logit. With groups, each group's
    rank (its best value, with `bias` its two best) by a butterfly, and
    the best `topk_groups` as a mask the same in every lane; experts of
    other groups offer nothing. Then K rounds, each choosing one expert:
    every lane offers its best unchosen ranking value, ordered as an
    integer key with the expert's index behind it (larger first, equal
    values the lower expert) and its score beside it, the butterfly
    leaves every lane with the winner, whose lane marks it chosen, and
    lane `j` of round `j` keeps its id and score. Lanes below K store
    their weight (the score divided by the chosen ones' sum in round
    order with `renormalize`, else by the row's sum with softmax, times
    `scaling`) and id. The backward takes a token a warp too: lane `j < K` loads
    the j-th chosen weight, gradient and id, the lanes add `w * g` by
    butterfly shuffles, every lane stores zeros over its experts of the
    row, the warp meets (`ggk.warp_sync`, so the zeros land first) and
    lanes below K store `w * (g - sum)` at their expert.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::ggk::GGKDialect"];
}

#endif // GGC_GG_PASSES_TD

def LowerSwigluRows : Pass<"gg-lower-swiglu-rows", "::mlir::ModuleOp"> {
  let summary = "generate the kernel of each gg.swiglu_rows and gg.swiglu_rows_backward";
  let description = [{
    Takes: a module whose functions each hold at most one `gg.swiglu_rows`
    or `gg.swiglu_rows_backward` and take only memrefs.
    Makes: for each such function `@f`, one kernel `llvm.func @f_swiglu`
    (input, out; routed: input, route, out) or `@f_swiglu_backward`
    (input, grad, out; routed: input, grad, route, out, route_grad;
    quantised: those, then quantized and quantized_scales),
    pointers as `!llvm.ptr<1>`, then M (the rows) as i64 (LLVM, scf/arith,
    and the activation's `ggk.exp2_approx` and `ggk.reciprocal_approx`,
    `ggk.warp_shuffle_xor` where routed backward); the function is
    removed.

    Each thread takes 8 output columns of one row (a grid-stride loop
    over M x I/8): it loads the gate's and the up half's 16 bytes
    together, computes `silu(gate) * up` in f32 with the epilogue's own
    `silu` (times the row's routing weight where the op has `route`) and
    stores the 8 results rounded to bf16 as 16 bytes. The backward loads
    the gradient's 16 bytes too and stores the gate's and the up half's
    gradients, each computed in f32 from the same sigmoid and rounded
    once. The routed backward gives each row to a warp (a grid-stride
    loop over M, each lane 8 columns a step, 256 columns apart), which
    scales the gradient by the row's weight, sums `grad * silu(gate) *
    up` in an f32 loop value, adds its lanes' sums by butterfly shuffles
    and stores the row's `route_grad` from lane 0. With `quantized` (then
    M and LD, the scales' row length), every lane takes every 256-column
    step and each half-warp quantises its 128 columns of the gate's and
    of the up half's gradient as `gg-lower-quantize-rows` quantises a
    block (shuffled amax, one division, e4m3 pairs), storing both the bf16
    and the e4m3 values and, from its first lane, the two scales.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::ggk::GGKDialect"];
}

def LowerTransposeScales : Pass<"gg-lower-transpose-scales", "::mlir::ModuleOp"> {
  let summary = "generate the kernel of each gg.transpose_scales";
  let description = [{
    Takes: a module whose functions each hold at most one
    `gg.transpose_scales` and take only memrefs.
    Makes: for each such function `@f`, one kernel `llvm.func
    @f_transpose_scales` (LLVM, scf/arith) of 256 threads a CTA; the
    function is removed. Its parameters: input and out as `!llvm.ptr<1>`,
    then B (1 for 2-D scales), R, C and A as i64.

    Each CTA moves tiles of 128 rows x 8 columns through a shared array
    (a grid-stride loop over the B x ceil(C/8) x ceil(A/128) tiles, row
    tiles fastest; a tile's place divided out in i32): each thread reads
    four scales with the columns fastest (a warp reads four rows' 32
    bytes whole; the four loads issued together), waits at a barrier,
    and writes four with the rows fastest (a warp writes 32 rows of one
    column as one 128-byte line), then waits again before the next tile.
    Scale `(b C + c) A + r` of `out` is `input[(b R + r) C + c]`, 0 from
    R on. A column of the shared tile is 132 floats long, so that the
    reads' stores to it fall in 32 different banks.
    DeepGEMM's drop-in copies K-major scales of A to the M-major form
    with it (`ggc.deepgemm.utils.layout`).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::ggk::GGKDialect"];
}

def LowerCopyRows : Pass<"gg-lower-copy-rows", "::mlir::ModuleOp"> {
  let summary = "generate the kernel of each gg.copy_rows";
  let description = [{
    Takes: a module whose functions each hold at most one `gg.copy_rows`
    and take only memrefs.
    Makes: for each such function `@f`, one kernel `llvm.func @f_copy`
    (LLVM, scf/arith); the function is removed. Its parameters: input,
    [input_rows,] out, [out_rows] as `!llvm.ptr<1>`, then R (the rows to
    copy), input's rows and out's rows as i64.

    Each thread moves one `unit_bytes` piece of one row at a time (a
    grid-stride loop over R x the row's pieces): it reads the row's
    indices from the lists, and where both lie inside their matrices
    loads the piece and stores it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::ggk::GGKDialect"];
}
