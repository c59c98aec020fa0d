//===- GGKPasses.td - the target-neutral ggk passes ---*- tablegen -*-===//
//
// The target-neutral ggk passes: each technique of the kernel, lowered on ggk ops.
// Included by Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_GGK_PASSES_TD
#define GGC_GGK_PASSES_TD

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
    the producer's arrival and, with `stages`, the cp.async's) and
    `ggk.pass_stage` (a stage passed on empty: the same arrivals, made by
    the producer's thread, with no bytes).
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
    after the boxes before it. Rows a pair of CTAs shares (`shared`, gg's
    `odd_block_a = multicast`) are loaded, where the flag holds, by rank 0
    alone into both CTAs (`ggk.tma_load_multicast`), the barrier armed
    with the same bytes on each.
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
    one arrival per warp on every CTA's empty barrier (lane r on CTA r's),
    at CTA scope, which
    counts c x the consumer warps; the leader's barrier inits are fenced
    for the cluster (`fence.mbarrier_init`) and the CTAs meet
    (`barrier.cluster`) after them and again before returning. A load
    with `second_half_row` (gg's `column_halves`, alone) is two boxes of
    block_n / 2 rows: the gate's, and the same rows of B's second half.
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
    (whether one is pending, its fields and carried words, its accumulator; first
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
    consumers' K loop of two-level kernels, MX included), each with its
    `#gg.kernel_plan` and its `promotions`: scale blocks per K block (MX
    1x32: four; else one).
    Makes, for `promotion = serial`, an `scf.for` over the K blocks: prefetch
    block k + 1's scales, then for each scale block j issue it, read its
    scales, wait for its wgmma (`wgmma.wait_group 0`), release the stage
    after the last, promote it; `end_block` after the K block. For
    `promotion = pipelined`, DeepGEMM-style overlap in pairs, each scale
    block in a fresh partial accumulator: the first before the loop (with
    the `overlap` region while its wgmma runs; with the plan's
    `epilogue_blocks = 2` and a K block count known to be at least 2, the
    first two, the first promoted before the loop), then per pair issue X;
    promote the pending Y; issue the next Y; wait for X
    (`wgmma.wait_group 1`); promote X; wait for Y, so no wgmma is in flight
    across the loop's back edge (one pending there makes ptxas serialise
    every wgmma: C7514). With one scale block per K block an iteration is
    two K blocks and an odd last block follows the loop; with an even
    number P, an iteration is scale blocks (k, 1) .. (k + 1, 0) and the
    last K block's other P - 1 follow it. Slot scales run two K blocks
    ahead there (refilled after a K block's last scale block has read
    them), and each promotion's result is pinned (an empty inline asm
    tying it) so LLVM cannot sink it below the next wgmma issue. Scales
    that travel with the stages are read right after each issue, before
    the stage is released, and carried to the promotion.

    With the plan's `ring_stages = constant`, a serial loop (with
    `epilogue_blocks = 0`) whose ring counter is a constant multiple of
    the stages or the tile loop's, carried from one, starts every tile at
    stage 0 (each tile moves the counter on by whole turns: where its K
    blocks, static or counted at run time as k_grouped's, leave a partial
    last turn, the producer passes the rest on empty and the loop's
    'await' region waits for them; the turn's stages that may hold no
    block test their block against the tile's count); it is
    then unrolled by the stages, each block's stage a constant (its
    barriers and tiles at fixed offsets) and the phase computed once a
    turn of the ring (an error where the loop is not such a loop;
    gg-check-kernel-plan refuses those plans first). The constants are
    added to a zero that goes through `ggk.opaque` once a turn: LLVM then
    computes the stages' addresses in the loop, each a constant from one
    value (`ggk-lower-mma` peels them off the descriptors), instead of
    hoisting each out of the tile loop into a register of its own, which
    made ptxas spill.

    A pipelined loop with `ring_stages = constant` (`epilogue_blocks = 1`,
    one scale block a K block, its tiles' K block count N known when
    compiling) issues block 0 on stage 0 beside the overlap, then the
    (N - 1) % S blocks that leave whole turns, straight, then steps a turn
    of the ring at a time: each block issued while the one before it is
    promoted, two wgmma groups at most in flight, none across the back
    edge. The last block's promotion and the last turn's empty stages
    follow the loop. (The straight blocks went after the loop first:
    ptxas then spilled the accumulators inside it.)
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerKLoop : Pass<"ggk-lower-k-loop", "::mlir::ModuleOp"> {
  let summary = "lower each ggk.k_loop: one-level accumulation over the K blocks of a tile";
  let description = [{
    Takes: `ggk.k_loop` ops (made by `gg-lower-to-nvvm` for the consumers'
    K loop of one-level kernels: no scales that change along K).
    Makes an `scf.for` over the K blocks carrying the accumulator and the
    ring counter: the block's ring slot (stage `it % stages`, phase
    `(it / stages) % 2`), its `issue` step, then `ggk.mma_wait` down to
    `release_lag` groups in flight and the release: with a lag of 0 the
    block's own stage; with 1 the previous block's (none for the first),
    and after the loop, once every multiply is done, the last block's
    (when the tile had any). The `load_ahead` step ends each iteration.
    Runs beside `ggk-pipeline-promotion`, which lowers the two-level
    kernels' `ggk.promotion_loop`.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerPromotion : Pass<"ggk-lower-promotion", "::mlir::ModuleOp"> {
  let summary = "lower ggk.promote, ggk.load_column_scales and ggk.decode_ue8m0 to the fragment's FMAs and loads";
  let description = [{
    Takes: `ggk.promote` ops (made by `gg-lower-to-nvvm` for each K block,
    or MX scale block, of a two-level kernel, and placed by
    `ggk-pipeline-promotion`) and `ggk.decode_ue8m0` ops (MX's exponents).
    Makes, where each sits: for every element of the thread's fragment
    (`ggk.acc_get` / `ggk.acc_set`), `fma(partial, scale_a * scale_b,
    acc)`, the scale of B being the element's column's (a load from
    `column_scales`, or with `per_column` one of the values a
    `ggk.load_column_scales` read earlier: its 8-byte loads, where it
    sits) or its 128-column block's. Where a block boundary
    may fall inside the warpgroup's columns, each place it may take gets a
    copy of the FMAs with the scales fixed, picked once by an
    `scf.index_switch` on the place (up to 7 places; beyond, a select per
    element). A decode is the exponent's byte shifted into an f32's
    exponent bits (the subnormal `2^-127` for 0).
    Runs after `ggk-pipeline-promotion` and before
    `ggk-lower-accumulators`.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerEpilogue : Pass<"ggk-lower-epilogue", "::mlir::ModuleOp"> {
  let summary = "inline each ggk.epilogue: the user's epilogue, with what NVPTX lacks expanded";
  let description = [{
    Takes: `ggk.epilogue` ops (made by `gg-lower-to-nvvm` for each output
    element, or column pair, from the `gg.grouped_matmul`'s epilogue
    region), wherever `ggk-defer-epilogue` and `ggk-stage-tile-stores` left
    them.
    Makes: the region's ops in place of each, on the op's inputs, with
    `gg.sigmoid` as `1 / (1 + exp(-x))` (`ggk.reciprocal_approx`),
    `gg.silu` as `x * sigmoid(x)` and `math.exp(x)` of f32 as
    `ggk.exp2_approx(x * log2(e))` (both flush subnormal results to
    zero; other float types take `math.exp2` and a division with `arcp`
    and `afn`); other ops are copied. Also takes the
    `ggk.scale` ops (an accumulator element times the scales constant
    along K: `arith.mulf` by each factor in order) and `ggk.insert_output`
    (a pair's output rounded or extended to the stored type, then
    `llvm.insertelement`), written where they sit: after this pass the
    epilogue's arithmetic is arith and the two approximations, which
    `ggk-lower-threads` lowers.
    Runs before `ggk-lower-accumulators` and the conversions.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
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
    metadata never reaches outside the tensors. Where the rows come from the
    device (contiguous, masked) the cursor also carries its group's span
    (tiles, first row, rows), read once when it reaches the group, so that
    a tile's fields load nothing; k_grouped's span is a constant (all M
    rows) and is not carried. `padded_contiguous` numbers
    tiles over A's rows and skips those whose first row is padding (group
    -1). The tile's fields replace the body's arguments: for k_grouped its
    K range starts at the group's first K rounded down to `k_alignment`.
    A walk with a `table` (gg's `group_reads = shared`) reads the counts or
    offsets from that shared-memory copy; the pass also lowers the
    `ggk.fill_group_table` that writes it at the kernel's entry (thread t
    copies entries t, t + threads, ...).
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
    only, and nowhere for a negative one). With `store_columns = 8` the
    pairs of each row group and four column blocks (their `fragment`s)
    go through two rounds of `ggk.warp_shuffle_xor` (lanes ^ 1, then ^ 2)
    and each thread of a quad stores one block's 8 columns as a 16-byte
    `vector<4xi32>`, where the row and that block are valid. A `tagged`
    tile (DeepGEMM's padded layout) becomes each warp's `ggk.warp_ballot`
    of its tag words, the count of the leading rows tagged with the group
    against the count of all (`llvm.intr.cttz`, `llvm.intr.ctpop`), and an
    `scf.if` on their agreement holding two copies of the tile: the pool's
    with that count as its valid rows, and the per-thread stores'. Runs
    before `ggk-allocate-shared-memory` (it makes a `ggk.shared_address`).
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
    memory at its place in the tile (swizzled: 128- or 64-byte column
    chunks, the 16-byte unit XORed with `row % 8` or `row / 2 % 4`; dense:
    rows of the tile); the tile's store as `fence.proxy.async.shared::cta`,
    the barrier, and, on the issuer, for each pool height `h`, `if
    (max(rows_valid, 0) & h)` the TMA stores (`cp.async.bulk.tensor` shared
    to global) of an `h`-row box per column chunk that starts before N, the
    boxes stacked from the tile's first row, then
    `cp.async.bulk.commit_group`; the drain as the issuer's
    `cp.async.bulk.wait_group 0`. With `warpgroup_rows = 64` the issuer is
    each consumer warpgroup's first thread, storing its own 64 rows, and
    the barrier its warpgroup's (named barrier 8 + w, 128 threads).
    With `constant-offsets`, a pair placed at a row and column built as
    `base + constant` (the epilogue's fragment: 8 * half, 8 * block) is
    stored at the place of its base row and column with the constant's
    whole swizzle periods (8 rows) and whole chunks left out, plus those
    as an immediate: the same address, but a thread's pairs share one
    variable address per 16-byte unit of a chunk (8 for 128-byte chunks)
    instead of one each (48 at 192 bf16 columns, which LLVM folds into
    XORs, more than the consumers' registers keep across the K loop: 64
    fewer SASS instructions in the FP8 128x192 kernel, docs/pipeline.md).
    Off until old and new are timed in one device call.
    With `matrix-stores`, each warp's four 16-bit pairs of fragments [0,
    2k], [1, 2k], [0, 2k + 1], [1, 2k + 1] (`ggk.stage_output`'s
    `fragment`: rows r and r + 8 of two column blocks) become one
    `stmatrix.x4` (`nvvm.stmatrix`, m8n8, b16) where the last of them was,
    lane l addressing row l % 8 of matrix l / 8, as DeepGEMM's epilogue
    stores (12 instead of 48 shared stores a thread at 128x192); pairs
    without a complete group are stored one by one. Off until timed.
  }];
  let options = [
    Option<"constantOffsets", "constant-offsets", "bool", /*default=*/"false",
           "store staged pairs at shared addresses that share their variable part, the constant part an immediate">,
    Option<"matrixStores", "matrix-stores", "bool", /*default=*/"false",
           "store each warp's four staged 16-bit fragment pairs of two column blocks as one stmatrix.x4">
  ];
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

#endif // GGC_GGK_PASSES_TD
