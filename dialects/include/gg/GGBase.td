//===- GGBase.td - the gg dialect, its enums and attributes -*- tablegen -*-===//
//
// The `gg` dialect states a whole grouped GEMM (the Mixture-of-Experts
// many-matrices-at-once multiply) as one operation, so that later passes can
// reason about group boundaries, masks and scales before anything is tiled.
//
//===----------------------------------------------------------------------===//

#ifndef GG_BASE_TD
#define GG_BASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def GG_Dialect : Dialect {
  let name = "gg";
  let cppNamespace = "::mlir::gg";
  let summary = "Grouped GEMM: group offsets, masks, scales and epilogues";
  let description = [{
    The `gg` dialect describes a grouped matrix multiplication
    `out[g] = epilogue(scale(A[g]) x scale(B[g]))` over `G` groups (experts)
    in one operation. Operands are memrefs in device memory; the element
    counts of each group live in a device array, so nothing about the routing
    has to be known on the host.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let useDefaultAttributePrinterParser = 1;
}

class GG_Op<string mnemonic, list<Trait> traits = []>
    : Op<GG_Dialect, mnemonic, traits>;

class GG_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<GG_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def GG_GroupLayout : I32EnumAttr<"GroupLayout",
    "how the rows (or the K range) of A are split into groups", [
  I32EnumAttrCase<"contiguous", 0>,
  I32EnumAttrCase<"masked", 1>,
  I32EnumAttrCase<"padded_contiguous", 2>,
  I32EnumAttrCase<"k_grouped", 3>
]> {
  let cppNamespace = "::mlir::gg";
}

def GG_OperandLayout : I32EnumAttr<"OperandLayout",
    "which dimension of a matrix operand is contiguous in memory", [
  // Named by the dimensions in memory order: `nk` is [.., N, K] with K
  // contiguous (the NT / K-major form), `kn` is [.., K, N] with N contiguous.
  I32EnumAttrCase<"mk", 0>,
  I32EnumAttrCase<"km", 1>,
  I32EnumAttrCase<"nk", 2>,
  I32EnumAttrCase<"kn", 3>,
  I32EnumAttrCase<"mn", 4>,
  I32EnumAttrCase<"nm", 5>
]> {
  let cppNamespace = "::mlir::gg";
}

def GG_ScaleKind : I32EnumAttr<"ScaleKind", "granularity of a scale operand", [
  // One f32 per group.
  I32EnumAttrCase<"tensor", 0>,
  // One f32 per row of A (per token) or per column of the output (per channel).
  I32EnumAttrCase<"channel", 1>,
  // One f32 per (block_mn x block_k) block: DeepGEMM's 1x128 and 128x128.
  I32EnumAttrCase<"block", 2>,
  // UE8M0 exponents per row and per block_k (32 or 128), four per i32.
  I32EnumAttrCase<"mx", 3>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_ScaleMajor : I32EnumAttr<"ScaleMajor",
    "which dimension of a blockwise scale operand is contiguous", [
  I32EnumAttrCase<"k_major", 0>,
  I32EnumAttrCase<"mn_major", 1>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_TileOrder : I32EnumAttr<"TileOrder",
    "which tile index of a group the persistent schedule advances first", [
  // M blocks first: CTAs running at once share B's columns in L2.
  I32EnumAttrCase<"m_fastest", 0>,
  // N blocks first: CTAs running at once share A's rows in L2.
  I32EnumAttrCase<"n_fastest", 1>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_CachePolicy : I32EnumAttr<"CachePolicy",
    "how the tiles a load brings into L2 are kept there", [
  I32EnumAttrCase<"normal", 0>,
  // Evicted before other lines: tiles read once (or by few CTAs at once).
  I32EnumAttrCase<"evict_first", 1>,
  // Kept over other lines: tiles many CTAs read at different times.
  I32EnumAttrCase<"evict_last", 2>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_GroupReads : I32EnumAttr<"GroupReads",
    "where the persistent schedule reads each group's offsets or count", [
  // From global memory, when a CTA's walk reaches the group.
  I32EnumAttrCase<"global", 0>,
  // From a table in shared memory that the CTA's threads fill at entry.
  I32EnumAttrCase<"shared", 1>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_OddBlockA : I32EnumAttr<"OddBlockA",
    "how a pair of CTAs loads A where both compute a group's odd last M block", [
  // Each CTA loads its own copy of the rows.
  I32EnumAttrCase<"own", 0>,
  // Rank 0 loads them into both CTAs (TMA multicast).
  I32EnumAttrCase<"multicast", 1>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_IdleWarpgroups : I32EnumAttr<"IdleWarpgroups",
    "what a consumer warpgroup does when all its rows of a tile are padding", [
  // Run the wgmma anyway (rows past the group are computed, never stored).
  I32EnumAttrCase<"compute", 0>,
  // Only wait for and release the tile's buffers.
  I32EnumAttrCase<"skip", 1>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_Promotion : I32EnumAttr<"Promotion",
    "how a two-level kernel adds each K block's product to its accumulator", [
  // Wait for block k's wgmma, then scale and add it, then issue block k + 1.
  I32EnumAttrCase<"serial", 0>,
  // Block k's promotion runs while block k + 1's wgmma does (two partial
  // accumulators beside the main one).
  I32EnumAttrCase<"pipelined", 1>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_ScalePlacement : I32EnumAttr<"ScalePlacement",
    "where the consumers find the scales that change along K", [
  // The op has no such scales (none, or per-tensor / per-channel ones,
  // applied once in the epilogue).
  I32EnumAttrCase<"none", 0>,
  // Each consumer warp copies its K block's scale words into its own
  // shared-memory slots, one K block ahead (cp.async).
  I32EnumAttrCase<"slots", 1>,
  // The producer loads them with each stage's tiles.
  I32EnumAttrCase<"stages", 2>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_Producer : I32EnumAttr<"Producer",
    "who copies the operands' tiles into the stages", [
  // A warpgroup of its own (warpgroup 0 on sm_90a, whose one thread issues
  // the TMA loads; after the consumers before sm_90a, every thread copying).
  I32EnumAttrCase<"warpgroup", 0>,
  // No producer: the consumers copy each stage in their own K loop.
  I32EnumAttrCase<"none", 1>,
  // sm_90a, A's rows gathered (a_rows): every thread of warpgroup 0 copies
  // its share of A by cp.async; its leader alone issues B's TMA loads.
  I32EnumAttrCase<"all_threads", 2>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_StoreIssuers : I32EnumAttr<"StoreIssuers",
    "who issues the store pool's TMA stores of a staged tile", [
  // One thread for the whole tile: every consumer warpgroup meets before
  // the stores and before its outputs overwrite the previous tile's.
  I32EnumAttrCase<"tile", 0>,
  // One thread of each consumer warpgroup for the warpgroup's 64 rows: the
  // warpgroups meet only their own threads.
  I32EnumAttrCase<"warpgroup", 1>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_Staging : I32EnumAttr<"Staging",
    "how the output tile is laid out in shared memory for the store pool", [
  // No staged tile: per-thread stores from registers.
  I32EnumAttrCase<"none", 0>,
  // Dense rows of BN elements.
  I32EnumAttrCase<"dense", 1>,
  // Column chunks of 128 bytes, 128B-swizzled like the operand tiles.
  I32EnumAttrCase<"swizzled", 2>,
  // Column chunks of 64 bytes, 64B-swizzled: rows of an odd number of
  // 64-byte chunks (176 f32 columns), whose dense rows would put a warp's
  // 8 rows on half the banks.
  I32EnumAttrCase<"swizzled_64", 3>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def GG_ScaleAttr : GG_Attr<"Scale", "scale"> {
  let summary = "how a scale operand maps onto its matrix";
  let description = [{
    Syntax: `<tensor>`, `<channel>`, `<block 1x128, mn_major>`,
    `<block 128x128, k_major>`, `<mx 1x32>`.

    `block_mn x block_k` is the block that one scale value covers. The scale
    operand is given in its physical (row-major) shape; `major` says which of
    its dimensions is contiguous, and the op verifier derives the expected
    shape from the layout, the matrix shape and this attribute:

    | kind | A operand | B operand (per group) |
    |------|-----------|-----------------------|
    | tensor | `[G]` f32 | `[G]` f32 |
    | channel | `[M]` (`[G, M_max]` masked) f32 | `[G, N]` f32 |
    | block, k_major | `[M, ceil(K/bk)]` (`[G, M_max, ..]` masked) f32 | `[G, ceil(N/bn), ceil(K/bk)]` f32 |
    | block, mn_major | `[ceil(K/bk), align4(M)]` (`[G, .., align4(M_max)]` masked) f32 | `[G, ceil(K/bk), ceil(N/bn)]` f32 |
    | mx | `[(M + 3G)/4*4, ceil(K/(4 bk))]` i32 (`[G, M_max, ..]` masked) | `[G, N, ceil(K/(4 bk))]` i32 |

    B's `block` scales are 128x128 (per 128 columns) or 1x128 (per column).
    With `k_grouped` (K split into groups, M and N static) B's scales have
    no `G`, M-major A block scales are not 4-aligned, and block scales
    follow the 128-wide blocks of the concatenated K (`ceil(K/128)` of
    them): a group may start or end inside one. mx words likewise follow
    the concatenated K (`[M or N, ceil(K/(4 bk))]`), and a 32- or 128-wide
    scale block may span two groups.
  }];
  let parameters = (ins
    EnumParameter<GG_ScaleKind>:$kind,
    DefaultValuedParameter<"int64_t", "1">:$blockMN,
    DefaultValuedParameter<"int64_t", "1">:$blockK,
    DefaultValuedParameter<"::mlir::gg::ScaleMajor",
                           "::mlir::gg::ScaleMajor::k_major">:$major
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when the scale value changes along K (block and mx scales), so the
    /// kernel must apply it inside the K loop rather than once in the epilogue.
    bool variesAlongK() const {
      return getKind() == ScaleKind::block || getKind() == ScaleKind::mx;
    }
  }];
}

def GG_ConfigAttr : GG_Attr<"Config", "config"> {
  let summary = "the tile configuration chosen for one grouped matmul";
  let description = [{
    Written by `gg-select-config` (or by the user, to override it). Later
    passes read the tile sizes, pipeline depth, cluster shape and persistent
    grid size from here and from nowhere else. A user's `stages = 0` asks
    gg-select-config for the deepest pipeline that fits the given tile.

    Consumer warpgroups split the tile's rows, 64 each; with `split_n = 2`
    each 64 rows go to two warpgroups, one per half of the columns, so a
    64-row tile keeps two warpgroups on the tensor cores (decode batches,
    whose groups have few rows).
  }];
  let parameters = (ins
    "int64_t":$blockM,
    "int64_t":$blockN,
    "int64_t":$blockK,
    "int64_t":$stages,
    "int64_t":$clusterM,
    "int64_t":$clusterN,
    "int64_t":$numSMs,
    DefaultValuedParameter<"int64_t", "1">:$splitN
  );
  let builders = [
    AttrBuilder<(ins "int64_t":$blockM, "int64_t":$blockN, "int64_t":$blockK,
                     "int64_t":$stages, "int64_t":$clusterM,
                     "int64_t":$clusterN, "int64_t":$numSMs), [{
      return $_get($_ctxt, blockM, blockN, blockK, stages, clusterM, clusterN,
                   numSMs, 1);
    }]>
  ];
  let assemblyFormat = [{
    `<` `block` `=` `[` $blockM `,` $blockN `,` $blockK `]` `,`
        `stages` `=` $stages `,`
        `cluster` `=` `[` $clusterM `,` $clusterN `]` `,`
        `sms` `=` $numSMs (`,` `split_n` `=` $splitN^)? `>`
  }];
  let genVerifyDecl = 1;
}

def GG_ScheduleAttr : GG_Attr<"Schedule", "schedule"> {
  let summary = "the order of a grouped matmul's tiles in the persistent schedule";
  let description = [{
    Written by `gg-schedule-groups`. The kernel numbers the tiles group by
    group (empty groups have none), and within a group by `order`; CTA `c`
    of a grid of `g` takes tiles `c`, `c + g`, ... The tiles of a group are
    counted on the device from its offsets or counts, so the host never
    reads the group sizes. `b_cache` is the L2 policy of B's tile loads
    (TMA's cache hint): `evict_first` lets the weights, which the CTAs
    running at once read together and then leave, give way in L2 to A's
    rows, which every N block of the group reads again.

    `m_band` (with `order = m_fastest`; 0, the default, is one band per
    group) walks a group's M blocks in bands of that many: every N block
    of a band before the next band, M blocks first within it. The CTAs
    running at once then cover a band of A's rows by a band of B's columns
    instead of all of a large group's rows by a few columns, so each K
    slice they load is shared by more of them in L2.

    `group_reads` (masked and contiguous layouts) says where the walk reads
    the counts or offsets that bound each group's tiles. With `global`, the
    default, a CTA loads a group's from global memory when its walk reaches
    the group, so a step over several groups waits for one load after
    another. With `shared` the CTA's threads copy all of them into a table
    in shared memory at the kernel's entry (G counts, or G + 1 offsets),
    and the walk reads the table; the table's bytes count in the kernel's
    shared memory.

    `odd_block_a` (pairs of CTAs, cluster [2, 1]): a pair walks a group's
    odd last M block two N blocks at a time, so both CTAs read the same
    rows of A there. With `multicast` rank 0 loads them into both CTAs'
    stages (TMA multicast), halving A's reads from L2 on those tiles; with
    `own`, the default, each CTA loads its own copy.
  }];
  let parameters = (ins
    EnumParameter<GG_TileOrder>:$order,
    DefaultValuedParameter<"int64_t", "0">:$mBand,
    DefaultValuedParameter<"::mlir::gg::CachePolicy",
                           "::mlir::gg::CachePolicy::normal">:$bCache,
    DefaultValuedParameter<"::mlir::gg::GroupReads",
                           "::mlir::gg::GroupReads::global">:$groupReads,
    DefaultValuedParameter<"::mlir::gg::OddBlockA",
                           "::mlir::gg::OddBlockA::own">:$oddBlockA
  );
  let builders = [
    AttrBuilder<(ins "::mlir::gg::TileOrder":$order), [{
      return $_get($_ctxt, order, 0, ::mlir::gg::CachePolicy::normal,
                   ::mlir::gg::GroupReads::global, ::mlir::gg::OddBlockA::own);
    }]>
  ];
  // `<order = O[, m_band = S][, b_cache = P][, group_reads = R]
  // [, odd_block_a = A]>`, defaults elided.
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def GG_PaddingAttr : GG_Attr<"Padding", "padding"> {
  let summary = "how the kernel avoids work on rows that belong to no group";
  let description = [{
    Written by `gg-eliminate-padding`. Tiles of `contiguous` and `masked`
    ops start at their group's first row, so A needs no padded copy; the
    last tile of a group may still run past the group's end. With
    `idle_warpgroups = skip`, a consumer warpgroup whose 64 rows of the tile
    are all past the end only waits for and releases the tile's buffers,
    instead of running its wgmma on rows that are never stored; with
    `compute` it runs them (the rows are dropped at the store).
  }];
  let parameters = (ins EnumParameter<GG_IdleWarpgroups>:$idleWarpgroups);
  let assemblyFormat = "`<` `idle_warpgroups` `=` $idleWarpgroups `>`";
}

def GG_OverfetchAttr : GG_Attr<"Overfetch", "overfetch"> {
  let summary = "how far the kernel's loads may reach past a group's own data";
  let description = [{
    Written by `gg-plan-overfetch`, after it checks that every TMA address
    the kernel forms is aligned. TMA loads whole tiles, so near a group's
    boundary they fetch the neighbouring group's data; the kernel computes
    with it and never stores it (rows) or clears it (K entries).

    `rows`: how many rows past a group's last row a tile's A load may read:
    block M - 1 when tiles load whole, `2^j - 1` when a group's last tile
    loads its valid rows rounded up to `2^j` (contiguous and masked; a sum
    of power-of-two TMA boxes), 0 where every group is padded to whole
    tiles (padded_contiguous, k_grouped's M). `k`: for `k_grouped`, how many K entries
    before a group's first its first K block may start at, so that a TMA box
    starts 16-byte aligned along its contiguous dimension (`k + 1` is a
    power of two: the alignment of each group's first K block); 0 otherwise.
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$k);
  let assemblyFormat = "`<` `rows` `=` $rows `,` `k` `=` $k `>`";
  let genVerifyDecl = 1;
}

def GG_ColumnScaleReads : I32EnumAttr<"ColumnScaleReads",
    "when a two-level kernel reads B's per-column scales from the stage", [
  // At the K block's promotion: the stage is kept until then.
  I32EnumAttrCase<"at_promotion", 0>,
  // Into registers right after the K block's wgmma is issued: the stage
  // goes back once the wgmma is done, before the promotion.
  I32EnumAttrCase<"at_issue", 1>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_RingStages : I32EnumAttr<"RingStages",
    "how a two-level kernel's serial K loop knows each block's stage", [
  // Each block's stage and phase from the ring counter (modulo the stages).
  I32EnumAttrCase<"counted", 0>,
  // The loop unrolled a turn of the ring at a time, each block's stage a
  // constant: every tile starts at stage 0.
  I32EnumAttrCase<"constant", 1>
]> {
  let cppNamespace = "::mlir::gg";
  let genSpecializedAttr = 0;
}

def GG_KernelPlanAttr : GG_Attr<"KernelPlan", "kernel_plan"> {
  let summary = "how the kernel's warpgroups share the work of one grouped matmul";
  let description = [{
    `#gg.kernel_plan<promotion = P, scales = S, registers = [R, R],
    staging = T[, warp_columns = N][, release_lag = N][, producer = P]
    [, store_columns = N][, epilogue_blocks = N][, store_issuers = I]
    [, column_scale_reads = C][, ring_stages = R]>`,
    the optional fields printed only where they are not their default (1,
    1, warpgroup, 2, 1 with pipelined promotion and 0 with serial, tile,
    at_promotion and counted). Written by `gg-plan-kernel` (or by
    the user, to override it), read by the lowering and nowhere decided
    again:

    - `promotion`: two-level kernels (f8, scales that change along K) add
      each K block's product to the f32 accumulator either `serial`ly or
      `pipelined` with the next block's wgmma (three accumulators per
      consumer thread).
    - `scales`: where the consumers read the scales that change along K:
      `slots` (each warp copies its own, a K block ahead), `stages` (the
      producer loads them with the tiles) or `none` (the op has none).
    - `registers = [producer, consumer]`: what `setmaxnreg` gives each
      thread of the producer warpgroup and of each consumer warpgroup.
    - `staging`: the layout of the output tile the store pool stores from
      (`none` without a store pool).
    - `warp_columns`: how a consumer warpgroup's four warps share its 64
      rows and N columns, and so which accumulator values each thread
      holds: 1 (the default, wgmma's m64nN fragment: warp `w` has rows
      `16 w ..`, every column) or 2 (warps in 2 x 2: warp `w` has rows
      `32 (w / 2) ..` and columns `(w % 2) N / 2 ..`, as two m16 blocks),
      which only the mma.sync lowering of targets before sm_90a takes;
      4 (warps side by side: warp `w` has all 64 rows and columns
      `w N / 4 ..`, as four m16 blocks), the same.
    - `release_lag`: how many K blocks after its MMA is issued a consumer
      hands a stage back to the producer: 1 (the default) for wgmma, which
      reads the stage while the next block's is issued; 0 for mma.sync,
      whose operands are in registers once it is issued, so that the
      producer refills the stage a whole K block sooner. (Two-level
      kernels hand each stage back once its block's product is complete.)
    - `producer`: who copies the operands' tiles into the stages:
      `warpgroup` (the default: a warpgroup of its own; on sm_90a
      warpgroup 0, whose one thread issues the TMA loads, and before
      sm_90a a warpgroup after the consumers, every thread copying its
      share by cp.async) or `none` (before sm_90a, one-level kernels: the
      consumer warpgroups copy each stage themselves, `stages - 1` K
      blocks ahead of the one they multiply, after each block's
      mma.sync). Without setmaxnreg every thread keeps the CTA's share of
      the register file, which each SM sub-partition splits among its
      warps: two consumer warpgroups keep 256 registers a thread without
      a producer and 168 with one, enough for 64x64 warp tiles only in
      the first. `all_threads` (sm_90a, A's rows gathered through
      `a_rows`): warpgroup 0's every thread runs the producer, copying its
      share of A's rows by cp.async into the same swizzled stage TMA would
      write, while its leader alone arms the stage and loads B by TMA; the
      consumers fence each stage for the async proxy wgmma reads through.
    - `store_columns`: without a store pool, the output columns of one row
      each thread writes with one store: 2 (the default: the pair its
      accumulator holds, 4 bytes of a 16-bit output, so that a warp's store
      fills half of each 32-byte sector it touches) or 8 (16-bit outputs:
      the four threads of a quad, which hold the same row's pairs of four
      column blocks, exchange them by warp shuffles and each store 16
      bytes of one column block). 8 takes a row-major `out` of 16-bit
      elements, N a multiple of 8, no `column_pairs` and a multiple of 32
      columns per warp.
    - `epilogue_blocks`: how many of a tile's first K blocks the consumers
      issue before they run the previous tile's deferred epilogue beside
      them. With `promotion = pipelined`: 1 (the default) or 2, where the
      tile's K block count is known to be at least 2 when the kernel is
      compiled (else 1). Two keep the tensor core busy through an epilogue
      longer than one block's wgmma, at the cost of one more partial
      accumulator live beside it. gg-plan-kernel does not choose 2 yet (not
      measured). With `promotion = serial` (two-level kernels): 0 (the
      default: each tile's epilogue runs at its end, the tensor core idle
      through it) or 1 (deferred beside the next tile's first wgmma, whose
      partial accumulator is the only one live beside the finished tile's,
      as in every serial K block). One-level kernels (no promotion; their
      plan says `serial`) on sm_90a take 1 too where two accumulators fit
      the consumers' registers (128x128 tiles, not 128x256): the finished
      tile's epilogue then runs beside the next tile's first wgmma, which
      accumulates into the other. gg-plan-kernel does not choose it for
      them yet (not measured).
    - `store_issuers`: with a store pool, who stores the staged tile:
      `tile` (the default: one thread, once every consumer warpgroup has
      staged its rows; the warpgroups meet at a barrier of all their
      threads before and after staging) or `warpgroup` (one thread of
      each consumer warpgroup stores the warpgroup's own 64 rows, and each
      warpgroup meets only its own threads, so that one can stage and
      store its rows while another computes). `warpgroup` takes consumer
      warpgroups that split the tile by rows (no `split_n`).
    - `column_scale_reads`: where B's per-column scales ride the stages
      (k_grouped's 1x128 scales of both operands, `scales = stages`),
      when each consumer thread reads its columns' scales: `at_promotion`
      (the default: the promotion reads them from the stage, which goes
      back to the producer after the K block's promotion) or `at_issue`
      (into registers right after the K block's wgmma is issued, two per
      8 columns of the warpgroup; the stage goes back once the wgmma is
      done, before the promotion, as where B's scales are per block).
      `at_issue` takes serial promotion.
    - `ring_stages`: how the consumers' serial K loop knows each block's
      stage of the ring: `counted` (the default: the ring counter modulo
      the stages, and the phase from it, every block) or `constant` (the
      loop steps a whole turn of the ring, each block's stage a constant
      and the phase computed once a turn, as DeepGEMM's loop over the K
      its template knows: fewer instructions a block, more code).
      `constant` takes serial promotion with `epilogue_blocks = 0`, or
      pipelined promotion with `epilogue_blocks = 1` and a static K (block
      0 beside the overlap, then (K blocks - 1) % stages blocks straight,
      then whole turns): every tile starts at stage 0, and where its K
      blocks are no whole number of turns (k_grouped: counted at run time)
      its last turn ends on stages the producer passes on empty
      (`ggk.pass_stage`), each awaited and released by the consumers;
      gathered rows (`a_rows`) take a static K whose blocks are a multiple
      of the stages (`gg-check-kernel-plan`).
  }];
  let parameters = (ins
    EnumParameter<GG_Promotion>:$promotion,
    EnumParameter<GG_ScalePlacement>:$scales,
    "int64_t":$producerRegisters,
    "int64_t":$consumerRegisters,
    EnumParameter<GG_Staging>:$staging,
    DefaultValuedParameter<"int64_t", "1">:$warpColumns,
    DefaultValuedParameter<"int64_t", "1">:$releaseLag,
    DefaultValuedParameter<"Producer", "Producer::warpgroup">:$producer,
    DefaultValuedParameter<"int64_t", "2">:$storeColumns,
    // Where unwritten, the parser and the builder take
    // defaultEpilogueBlocks(promotion): 1 pipelined, 0 serial.
    DefaultValuedParameter<"int64_t", "1">:$epilogueBlocks,
    DefaultValuedParameter<"StoreIssuers", "StoreIssuers::tile">:$storeIssuers,
    DefaultValuedParameter<"ColumnScaleReads",
                           "ColumnScaleReads::at_promotion">:$columnScaleReads,
    DefaultValuedParameter<"RingStages", "RingStages::counted">:$ringStages
  );
  let builders = [
    AttrBuilder<(ins "Promotion":$promotion, "ScalePlacement":$scales,
                     "int64_t":$producerRegisters,
                     "int64_t":$consumerRegisters, "Staging":$staging), [{
      return $_get($_ctxt, promotion, scales, producerRegisters,
                   consumerRegisters, staging, 1, 1,
                   Producer::warpgroup, 2, defaultEpilogueBlocks(promotion),
                   StoreIssuers::tile, ColumnScaleReads::at_promotion,
                   RingStages::counted);
    }]>
  ];
  let extraClassDeclaration = [{
    /// epilogue_blocks where the plan does not say: pipelined promotion
    /// defers each epilogue beside one K block, serial runs it in place.
    static int64_t defaultEpilogueBlocks(Promotion promotion) {
      return promotion == Promotion::pipelined ? 1 : 0;
    }
  }];
  // `<promotion = P, scales = S, registers = [R, R], staging = T
  //  [, warp_columns = N][, release_lag = N][, producer = P]
  //  [, store_columns = N][, epilogue_blocks = N][, store_issuers = I]
  //  [, column_scale_reads = C][, ring_stages = R]>`, the optional fields
  //  only where they are not their default.
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // GG_BASE_TD
