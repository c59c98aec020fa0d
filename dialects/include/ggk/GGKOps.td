//===- GGKOps.td - ggk operations ---------------------------*- tablegen -*-===//
#ifndef GGK_OPS_TD
#define GGK_OPS_TD

include "ggk/GGKBase.td"
include "gg/GGBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
// LLVM pointer type constraints (the loads' barriers, tiles and tensor maps).
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"

class GGK_Op<string mnemonic, list<Trait> traits = []>
    : Op<GGK_Dialect, mnemonic, traits>;

def GGK_ForeachTileOp : GGK_Op<"foreach_tile", [
    SingleBlockImplicitTerminator<"::mlir::ggk::YieldOp">, AttrSizedOperandSegments,
    RecursiveMemoryEffects]> {
  let summary = "the persistent walk over the tiles of every group this CTA owns";
  let description = [{
    Runs its body once for every tile of the grouped matmul that this CTA
    owns, in order, carrying `inits` from tile to tile like `scf.for`'s
    iteration arguments; the results are the values after the last tile.
    The schedule is computed on the device from the group offsets or counts
    at `groups` (a pointer; `groups_type` is its element type) and the
    run-time size `size`, so nothing about the routing reaches the host.

    `layout` says how groups are stated (gg's group layouts); `n_fastest`
    that N blocks move first within a group (else M blocks, walked in bands
    of `m_band` M blocks when it is positive: gg's #gg.schedule); `tile` the block sizes
    [BM, BN, BK]; `m`, `n`, `k` the static sizes (k_grouped's `k` and
    other layouts' `m` may be dynamic); `cluster` the CTAs that walk the
    schedule together, one tile each (`cluster_rank` then gives this
    CTA's rank; see `shares_b`); `k_alignment` the alignment of a k_grouped group's first
    K block (gg's overfetch). `zero_ungrouped` (contiguous) walks the rows
    before the first group and past the last one as two more groups, with
    no K blocks and the group field of the nearest real group (gg's
    zero_ungrouped: their tiles store zeros).

    The body's block arguments are the tile's fields, all i32, then the
    carried values:
    `group, m_block, n_block, row_start` (the tile's first row in A's row
    space), `group_start` (the group's), `rows_valid` (rows of the tile
    that belong to the group), `k_start` (where its K blocks start),
    `k_first`, `k_end` (the group's K range), `num_k_blocks`, `shares_b`.

    In a cluster of two (cluster along M, sharing B by multicast) the pair
    walks units of two tiles: while a group has M blocks left in pairs, the
    unit is M blocks 2u and 2u + 1 of one N block (rank r takes 2u + r) and
    `shares_b` is 1; a group's odd last M block is walked two N blocks a
    unit (rank r takes N block 2v + r), each CTA loading its own B, and
    `shares_b` is 0, so that no CTA of the pair idles beside a tile past
    the group's end (where N blocks are odd, the last unit's rank 1 still
    does: M block past the end, the same N block, `shares_b` 1). Alone,
    `shares_b` is 1.

    With `table` (masked and contiguous; gg's `group_reads = shared`) the
    walk reads each group's count or offsets from that shared-memory copy
    of `groups`, which `ggk.fill_group_table` wrote at the kernel's entry,
    instead of loading them from global memory.

    Example (before `ggk-lower-tile-schedule`):
    ```mlir
    %end = ggk.foreach_tile contiguous groups(%offsets : i32)
        size(%m) iter_args(%c0_i32) tile = [128, 128, 64] ... {
    ^bb0(%group: i32, ..., %num_k_blocks: i32, %counter: i32):
      ...
      ggk.yield %next : i32
    }
    ```
  }];
  let arguments = (ins
    GG_GroupLayout:$layout,
    UnitAttr:$n_fastest,
    UnitAttr:$zero_ungrouped,
    DefaultValuedAttr<I64Attr, "0">:$m_band,
    DenseI64ArrayAttr:$tile,
    I64Attr:$num_groups,
    I64Attr:$m,
    I64Attr:$n,
    I64Attr:$k,
    I64Attr:$cluster,
    I64Attr:$k_alignment,
    TypeAttr:$groups_type,
    AnyType:$groups,
    I64:$size,
    Optional<I32>:$cluster_rank,
    Optional<LLVM_PointerInAddressSpace<3>>:$table,
    Variadic<AnyType>:$inits
  );
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $layout `groups` `(` $groups `:` type($groups) `,` $groups_type `)`
    `size` `(` $size `)` (`rank` `(` $cluster_rank^ `)`)?
    (`table` `(` $table^ `)`)?
    (`iter_args` `(` $inits^ `:` type($inits) `)`)? attr-dict-with-keyword
    $body (`->` type($results)^)?
  }];
  let extraClassDeclaration = [{
    /// Fields of a tile the body receives before the carried values.
    static constexpr unsigned kTileFields = 11;
    /// The position of `num_k_blocks` among them.
    static constexpr unsigned kNumKBlocksField = 9;
    mlir::Block *getBodyBlock() { return &getBody().front(); }
  }];
}

def GGK_FillGroupTableOp : GGK_Op<"fill_group_table"> {
  let summary = "copy the group counts or offsets into shared memory";
  let description = [{
    The CTA's `threads` threads copy the `entries` elements of type
    `groups_type` (i32 or i64) at `groups` into the shared memory at
    `table`, thread `thread` taking entries `thread`, `thread + threads`,
    ... It stands at the kernel's entry, before the barrier that publishes
    the mbarriers' initialisation, which publishes the table too; the
    `ggk.foreach_tile` that takes `table` then reads each group's count or
    offsets there. Lowered by `ggk-lower-tile-schedule`.

    Example (eight masked counts, 384 threads):
    ```mlir
    ggk.fill_group_table %table from(%counts : !llvm.ptr<1>) thread(%tid)
        attributes {entries = 8, threads = 384, groups_type = i32}
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$table,
    AnyType:$groups,
    I32:$thread,
    I64Attr:$entries,
    I64Attr:$threads,
    TypeAttr:$groups_type
  );
  let hasVerifier = 1;
  let assemblyFormat = [{
    $table `from` `(` $groups `:` type($groups) `)` `thread` `(` $thread `)`
    attr-dict-with-keyword
  }];
}

def GGK_YieldOp : GGK_Op<"yield", [Pure, Terminator,
    ParentOneOf<["ForeachTileOp", "WarpgroupTileOp", "PromotionLoopOp",
                 "KLoopOp", "TileEpilogueOp", "WarpSpecializeOp",
                 "StoreTileOp", "EpilogueOp"]>]> {
  let summary = "the values a ggk region carries on (to the next tile, out of a warpgroup's tile, or out of a step of a K loop)";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, mlir::ValueRange()); }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def GGK_LoadTileRowsOp : GGK_Op<"load_tile_rows", [AttrSizedOperandSegments]> {
  let summary = "arm a stage's full barrier and TMA-load the rows of a K-major operand tile that its group needs";
  let description = [{
    The producer's load of one K block of a K-major operand tile (A's)
    into a stage of the shared-memory ring, with the arming of the stage's
    full mbarrier `barrier` that the loads complete on.

    `tile_rows` is the tile's height and `rows_valid` how many of its rows
    belong to the group; `row_bytes` the bytes of one row (a 128-byte
    swizzled row of K). The op loads the tile's first `rows` rows into
    `dst`, rows `row`, `row + 1`, ... of the operand at K `k` (and at
    `group`, for a 3-D operand such as masked A), and arms `barrier` with
    `rows * row_bytes + other_bytes` (`other_bytes`: what else completes on
    the barrier, B's tile and the stage's scales):
    - one box (`box_rows = [tile_rows]`, `granule = tile_rows`): the whole
      tile, `rows = tile_rows`;
    - else (gg-plan-overfetch's granule, after TMA-Adaptive FP8 Grouped
      GEMM's partial-tile loads): `rows = min(roundup(max(rows_valid, 0),
      granule), tile_rows)`, loaded with `maps[0]` when it is the whole
      tile and otherwise as a sum of the smaller boxes, `box_rows[i]` rows
      high through `maps[i]`: the powers of two from the largest below
      `tile_rows` down to `granule`. Rows of `dst` past `rows` keep what
      the stage held: computed on and never stored.

    `maps` are the operand's tensor maps, one per height of `box_rows`
    (the first the whole-tile box). `ggk-split-partial-loads` lowers the
    op to the expect_tx and the TMA loads for sm_90a.

    On targets without TMA the one `map` is the operand's address,
    `extents` its sizes, innermost first (K, rows, groups), and
    `element_bytes` the width of its elements:
    `ggk-lower-loads-cp-async` copies the tile's valid rows in 16-byte
    pieces into the same swizzled layout, zero-filling the rest.
    `copy_threads` threads share the copies: the producer warpgroup's
    128 (the default), or every consumer's with the plan's `producer =
    none`.

    `gather(%indices)` (address form only): the rows come by a list of row
    indices, `i32` in global memory, as a permute-free MoE reads its
    tokens: tile row `r` (of the `rows_valid` first) is operand row
    `indices[row + r]`, so `row` counts entries of the list. A row whose
    index is negative or past the operand's rows is zero-filled, never
    read. TMA's boxes load consecutive rows only: `ggk-split-partial-loads`
    (sm_90a) leaves it to `ggk-lower-loads-cp-async`, whose copies the
    producer warpgroup's every thread shares there (gg's `a_rows`).

    `shared(%flag) rank(%rank)` (TMA, a pair of CTAs): where `flag` is true
    at run time both CTAs of the pair load these very rows (a group's odd
    last M block, gg's `odd_block_a = multicast`), so rank 0 loads every
    box into both CTAs' stages (TMA multicast, completing on each one's
    barrier) and rank 1 loads none; each still arms its own barrier with
    the same bytes. Not with `gather`.

    Example (a masked tile of 128 rows in 8-row granules):
    ```mlir
    ggk.load_tile_rows %dst, %full from(%a128, %a64, %a32, %a16, %a8)
        at[%k, %row_start, %group] valid(%rows_valid)
        attributes {tile_rows = 128, row_bytes = 128, other_bytes = 16384,
                    granule = 8, box_rows = array<i64: 128, 64, 32, 16, 8>}
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$barrier,
    LLVM_PointerInAddressSpace<3>:$dst,
    Variadic<LLVM_PointerInAddressSpace<0>>:$maps,
    I32:$k,
    I32:$row,
    Optional<I32>:$group,
    I32:$rows_valid,
    Variadic<I32>:$extents,
    Optional<LLVM_PointerInAddressSpace<1>>:$indices,
    Optional<I1>:$shared,
    Optional<I32>:$rank,
    OptionalAttr<I64Attr>:$element_bytes,
    I64Attr:$tile_rows,
    I64Attr:$row_bytes,
    I64Attr:$other_bytes,
    I64Attr:$granule,
    DenseI64ArrayAttr:$box_rows,
    DefaultValuedAttr<I64Attr, "128">:$copy_threads
  );
  let hasVerifier = 1;
  let assemblyFormat = [{
    $dst `,` $barrier `from` `(` $maps `)` `at` `[` $k `,` $row
    (`,` $group^)? `]` `valid` `(` $rows_valid `)`
    (`extents` `(` $extents^ `)`)? (`gather` `(` $indices^ `)`)?
    (`shared` `(` $shared^ `)` `rank` `(` $rank `)`)?
    attr-dict-with-keyword
  }];
}

def GGK_LoadMNMajorTileOp : GGK_Op<"load_mn_major_tile"> {
  let summary = "TMA-load an MN-major operand tile as its chunks into a stage";
  let description = [{
    The producer's load of one K block of an MN-major operand tile (A
    given [K, M], the k-grouped layout's token-major A) into a stage, on
    the stage's full barrier `barrier` (armed before by `ggk.commit_stage`)
    to complete on. The tile is `chunks` boxes of
    `chunk_rows` MN rows (one 128-byte swizzled row of MN) by the K block,
    box j loaded from the operand at (MN `row + j * chunk_rows`, K `k`)
    through `map` to `dst + j * chunk_bytes`. Whole boxes always: the
    k-grouped layout has no row granule. `ggk-lower-mn-major-loads` lowers
    it (sm_90a: one TMA load per chunk); on targets without TMA `map` is
    the operand's address and `extents` its sizes (MN, then K), and
    `ggk-lower-loads-cp-async` copies the chunks, shared by
    `copy_threads` threads (as `ggk.load_tile_rows`).

    Example (a 128-row bf16 tile, BK = 64: two 64-row chunks 8 KB apart):
    ```mlir
    ggk.load_mn_major_tile %dst, %full from(%map) at[%k, %row]
        attributes {chunks = 2, chunk_rows = 64, chunk_bytes = 8192}
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier,
                       LLVM_PointerInAddressSpace<3>:$dst,
                       LLVM_PointerInAddressSpace<0>:$map, I32:$k, I32:$row,
                       Variadic<I32>:$extents,
                       I64Attr:$chunks, I64Attr:$chunk_rows,
                       I64Attr:$chunk_bytes,
                       DefaultValuedAttr<I64Attr, "128">:$copy_threads);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $dst `,` $barrier `from` `(` $map `)` `at` `[` $k `,` $row `]`
    (`extents` `(` $extents^ `)`)? attr-dict-with-keyword
  }];
}

//===----------------------------------------------------------------------===//
// Operand preparation: the consumers' in-place work on a full stage before
// wgmma reads it (lowered by ggk-prepare-operands).
//===----------------------------------------------------------------------===//

// (Guarded: a second include of it is harmless.)
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"

def GGK_ClearKOutsideOp : GGK_Op<"clear_k_outside"> {
  let summary = "zero the K entries of a stage's A and B tiles outside the K range to keep";
  let description = [{
    k_grouped: a K block of a group may hold K entries of the neighbouring
    groups, past the group's end in its last block and, for K-major
    operands whose TMA boxes start on an aligned K, before its first in its
    first block. The op zeroes every K entry of the block outside
    `[lo, hi)` (relative to the block's first K) in the stage's A tile `a`
    and B tile `b`, in shared memory, so that the wgmma adds nothing of
    another group; then fences the zeros for the async proxy and meets the
    other consumer threads at their named barrier. When `[lo, hi)` covers
    the block, nothing is cleared and no barrier is met: `lo` and `hi` must
    be the same for every consumer thread.

    The tiles are 128B-swizzled with `block_k` K entries of
    `element_bytes` bytes per 128-byte row; `a_rows` and `b_columns` are
    their M and N extents. An operand marked MN-major (`a_mn_major`,
    `b_mn_major`) is stored as column chunks of 128 bytes, each `block_k`
    rows of K, and loses whole rows; a K-major one (MN rows of 128 bytes)
    loses 16-byte chunks of every row, found through the swizzle, and single
    bytes where a boundary cuts a chunk. The work is spread over the
    `consumer_threads` threads that follow the producer's warpgroup.

    Example (bf16, A and B token-major):
    ```mlir
    ggk.clear_k_outside %a, %b keep [%lo, %hi) attributes {a_mn_major,
        b_mn_major, block_k = 64, a_rows = 128, b_columns = 128,
        element_bytes = 2, consumer_threads = 256}
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$a,
    LLVM_PointerInAddressSpace<3>:$b,
    I32:$lo,
    I32:$hi,
    I64Attr:$block_k,
    I64Attr:$a_rows,
    I64Attr:$b_columns,
    UnitAttr:$a_mn_major,
    UnitAttr:$b_mn_major,
    I64Attr:$element_bytes,
    I64Attr:$consumer_threads
  );
  let hasVerifier = 1;
  let assemblyFormat = [{
    $a `,` $b `keep` ` ` `[` $lo `,` $hi `)` attr-dict-with-keyword
  }];
}

def GGK_TransposeToKMajorOp : GGK_Op<"transpose_to_k_major"> {
  let summary = "copy an MN-major tf32 tile into a K-major one for wgmma";
  let description = [{
    wgmma reads tf32 operands only K-major. The consumer threads copy the
    MN-major f32 tile `src` (column chunks of 32 f32, each `block_k` rows
    of K, 128B-swizzled) of `mn_extent` columns into `dst`, K-major (one
    128B-swizzled row of `block_k` = 32 f32 per column); then they fence the
    copy for the async proxy and meet at their named barrier, so that the
    wgmma reads it whole. The work is spread over the `consumer_threads`
    threads that follow the producer's warpgroup.

    Example (B's 128 columns):
    ```mlir
    ggk.transpose_to_k_major %b to %b_k_major attributes {block_k = 32,
        mn_extent = 128, consumer_threads = 256}
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$src,
    LLVM_PointerInAddressSpace<3>:$dst,
    I64Attr:$block_k,
    I64Attr:$mn_extent,
    I64Attr:$consumer_threads
  );
  let hasVerifier = 1;
  let assemblyFormat = "$src `to` $dst attr-dict-with-keyword";
}

//===----------------------------------------------------------------------===//
// The TMA store pool (TMA-Adaptive FP8 Grouped GEMM): the consumers stage a
// tile's output in shared memory and one thread stores its valid rows with
// TMA boxes of the pool's heights (lowered by ggk-lower-store-pool).
//===----------------------------------------------------------------------===//

def GGK_AwaitStagedTileOp : GGK_Op<"await_staged_tile"> {
  let summary = "wait until the previous tile's TMA stores have read the staged tile";
  let description = [{
    Before a tile's outputs overwrite the staged tile `tile`, the thread
    `issuer`, which issued the previous tile's TMA stores from it, waits
    until those stores have read shared memory (their writes to global
    memory may still be in flight); then the `consumer_threads` consumer
    threads meet at their named barrier, so that none writes earlier. A
    bulk-async group belongs to the thread that committed it, so `issuer`
    must be the `issuer` of the `ggk.store_staged_tile` that reads `tile`.

    A step of its own rather than part of the other ops: it comes once
    per tile, before the first `ggk.stage_output`, and as late as that, so
    that the previous tile's stores overlap this tile's main loop (waiting
    right after `ggk.store_staged_tile` would serialise them with it).

    With `warpgroup_rows = 64` (the plan's `store_issuers = warpgroup`)
    each consumer warpgroup `w` (threads `issuer + 128 w ...`) stages and
    stores only rows `64 w ...` of the tile: its first thread waits for its
    own stores and the warpgroup's 128 threads meet at named barrier
    `8 + w`. `pending` (a tile staged a slice at a time in a ring of two
    buffers: 1) lets that many of the issuer's newest store groups still be
    reading: the buffer about to be written was read by an older one.

    Example:
    ```mlir
    ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 256}
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$tile,
    I64Attr:$issuer,
    I64Attr:$consumer_threads,
    DefaultValuedAttr<I64Attr, "0">:$warpgroup_rows,
    DefaultValuedAttr<I64Attr, "0">:$pending
  );
  let hasVerifier = 1;
  let assemblyFormat = "$tile attr-dict-with-keyword";
}

def GGK_StageOutputOp : GGK_Op<"stage_output"> {
  let summary = "write a pair of output elements into the staged tile";
  let description = [{
    Writes `pair`, the outputs of columns `column` and `column + 1` of row
    `row` of the tile (both counted within the tile; `column` even), or a
    `vector<1x...>`, one output at `column` (a combined column pair's, any
    column), into
    the staged tile `tile` of `tile_shape = [rows, columns]` elements of the
    pair's element type, laid out as `ggk.store_staged_tile`'s boxes read
    it back:
    - `swizzle = 128`: as column chunks of 128 bytes, each `rows` rows of
      128 bytes, 128B-swizzled like the operand tiles (the 16-byte unit of
      a row is XORed with `row % 8`), so that a warp's fragment stores hit
      32 distinct banks; a row of the tile must be whole chunks;
    - `swizzle = 64`: as column chunks of 64 bytes, 64B-swizzled as TMA's
      `SWIZZLE_64B` reads them (the 16-byte unit of a row is XORed with
      `row / 2 % 4`): a warp's 8 rows of 32 bytes again spread over all
      the banks, for rows of an odd number of 64-byte chunks;
    - `swizzle = 0` (the default): dense, `rows` rows of `columns`
      elements.
    `fragment = [row group, column block]` (from the `ggk.store_pair` it
    stages) says that the pair lies in the thread's accumulator fragment
    there: every thread of the warp stages it, at `row` = the fragment's
    row (its warp's first row + lane / 4) + 8 * row group and `column` =
    its column (2 * (lane % 4) plus the warp's first) + 8 * column block,
    so that `ggk-lower-store-pool`'s `matrix-stores` may store four such
    pairs of a warp as one `stmatrix`.

    Example:
    ```mlir
    ggk.stage_output %pair, %tile[%row, %column] attributes {swizzle = 128,
        tile_shape = array<i64: 128, 128>} : vector<2xbf16>
    ```
  }];
  let arguments = (ins
    FixedVectorOfLengthAndType<[1, 2], [AnyFloat]>:$pair,
    LLVM_PointerInAddressSpace<3>:$tile,
    I32:$row,
    I32:$column,
    DefaultValuedAttr<I64Attr, "0">:$swizzle,
    DenseI64ArrayAttr:$tile_shape,
    OptionalAttr<DenseI64ArrayAttr>:$fragment
  );
  let hasVerifier = 1;
  let assemblyFormat = [{
    $pair `,` $tile `[` $row `,` $column `]` attr-dict-with-keyword `:`
    type($pair)
  }];
}

def GGK_StoreStagedTileOp : GGK_Op<"store_staged_tile", [AttrSizedOperandSegments]> {
  let summary = "store the staged tile's valid rows with the TMA store pool's boxes";
  let description = [{
    Once every consumer thread has staged its outputs (`ggk.stage_output`),
    the threads fence them for the async proxy and meet at their named
    barrier (`consumer_threads` threads); then the thread `issuer` stores
    the tile's first `rows_valid` rows (a prefix: the rows of its group;
    none when not positive) to rows `row_start`, ... and columns
    `n_block * tile_shape[1]`, ... of the output (the tile's N block
    `n_block`), through the pool's tensor maps `maps`, one per
    height of `heights` (`tile_shape[0]`, or the largest power of two below
    it, halving down to 1): a box of `heights[i]` rows for each binary digit
    of `rows_valid`, so that no row of the next group is ever written, and
    full tiles take one box per chunk. `element_type` is the output's.

    The staged tile is read per column chunk of `chunk_columns` columns
    (the whole tile's `tile_shape[1]` when dense, 64 or 128 bytes when
    swizzled: the maps' swizzle), each `tile_shape[0]` rows; a chunk that starts at or past
    `n` is skipped, and TMA clips a chunk that crosses it. With a `group`,
    the maps are 3-D (masked, k_grouped) and the group is the outermost
    coordinate. The stores are committed as one bulk-async group of the
    issuer's, which `ggk.await_staged_tile` and `ggk.drain_tile_stores`
    wait for. With `add` (f32 only: gg's `accumulate`) each box is added to
    what the output holds (TMA's reduce-add) instead of replacing it.

    A slice of a tile staged a slice at a time stores at columns `n_block
    * block_columns + first_column`, ... (`block_columns`: the whole tile's
    columns; 0, the default, is `tile_shape[1]`, and `first_column` 0).

    With `warpgroup_rows = 64` each consumer warpgroup `w` (threads `issuer
    + 128 w ...`) fences and meets only its own threads (named barrier `8 +
    w`), and its first thread stores the valid rows of the tile's rows `64
    w ... 64 w + 63` (`rows_valid - 64 w` of them, at most 64) with the
    boxes of 64 rows and down: no warpgroup waits for another's outputs.

    Example (a swizzled 128 x 128 bf16 tile, masked):
    ```mlir
    ggk.store_staged_tile %tile rows(%rows_valid) at(%row_start)
        n_block(%n_block) group(%group) maps(%m128, %m64, %m32, %m16, %m8, %m4, %m2, %m1)
        attributes {heights = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>,
        tile_shape = array<i64: 128, 128>, chunk_columns = 64, n = 7168,
        element_type = bf16, issuer = 128, consumer_threads = 256}
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$tile,
    I32:$rows_valid,
    I32:$row_start,
    I32:$n_block,
    Optional<I32>:$group,
    Variadic<LLVM_PointerInAddressSpace<0>>:$maps,
    DenseI64ArrayAttr:$heights,
    DenseI64ArrayAttr:$tile_shape,
    I64Attr:$chunk_columns,
    I64Attr:$n,
    TypeAttr:$element_type,
    I64Attr:$issuer,
    I64Attr:$consumer_threads,
    UnitAttr:$add,
    DefaultValuedAttr<I64Attr, "0">:$warpgroup_rows,
    DefaultValuedAttr<I64Attr, "0">:$first_column,
    DefaultValuedAttr<I64Attr, "0">:$block_columns
  );
  let hasVerifier = 1;
  let assemblyFormat = [{
    $tile `rows` `(` $rows_valid `)` `at` `(` $row_start `)` `n_block` `(`
    $n_block `)` (`group` `(` $group^ `)`)? `maps` `(` $maps `)`
    attr-dict-with-keyword
  }];
}

def GGK_DrainTileStoresOp : GGK_Op<"drain_tile_stores"> {
  let summary = "wait until the thread's TMA stores of staged tiles have completed";
  let description = [{
    At the kernel's end, the thread `issuer` of `ggk.store_staged_tile`
    waits until all its committed TMA stores have completed, so that the
    CTA, and its shared memory, does not go away while they still read it;
    with `warpgroup_rows = 64`, the first thread of each consumer warpgroup
    (`issuer + 128 w`) waits for its own.

    Example:
    ```mlir
    ggk.drain_tile_stores attributes {issuer = 128}
    ```
  }];
  let arguments = (ins I64Attr:$issuer,
                       DefaultValuedAttr<I64Attr, "0">:$warpgroup_rows);
  let hasVerifier = 1;
  let assemblyFormat = "attr-dict-with-keyword";
}

include "ggk/GGKConsumerOps.td"
include "ggk/GGKMmaOps.td"
include "ggk/GGKThreadOps.td"
include "ggk/GGKScaleOps.td"
include "ggk/GGKPromotionOps.td"
include "ggk/GGKFrameOps.td"
include "ggk/GGKStoreOps.td"
include "ggk/GGKTmaOps.td"

def GGK_LoadBTileOp : GGK_Op<"load_b_tile", [AttrSizedOperandSegments]> {
  let summary = "TMA-load one K block of a stage's B tile; in a cluster, each CTA its share, multicast to all";
  let description = [{
    The producer's load of B's tile for K `k` and N block `n_block` (and
    group `group`, for a 3-D B) into `dst`, completing on the stage's full
    barrier `barrier` (armed elsewhere, with the bytes of the whole tile).
    The tile is `block_k` x `block_n`: K-major (rows of N, 128 bytes of K
    each, one box) or, with `n_major`, columns of `chunk_columns` (one
    128-byte swizzled [block_k, chunk_columns] box each).

    With `cluster` = c > 1 (gg's config, cluster along M), the c CTAs of a
    cluster compute c M blocks of the same N block: CTA `cluster_rank`
    loads the rank-th 1/c of the tile (of its rows of N, or of its column
    chunks) and multicasts it to the same place in every CTA's `dst`,
    completing on each CTA's `barrier`, which cuts B's traffic from L2 by
    c. With `shared` (an i1: the tile field `shares_b` of
    `ggk.foreach_tile`), that is decided per tile at run time: where it is
    false the CTAs compute different N blocks, and each loads its whole tile
    itself (every share, without multicast), completing on its own barrier
    with the same bytes. `cache_policy` is gg-schedule-groups' L2 policy for
    B (0: none). `ggk-multicast` lowers it to the TMA loads for sm_90a.

    With `second_half_row` = S > 0 (gg's `column_halves`; K-major, alone)
    the tile is two boxes of `block_n` / 2 rows: B's rows from
    `n_block` * `block_n` / 2 (the gate's) and the same rows from S on (the
    up's), one after the other in `dst`. With `half_shares` = s > 1 (gg's
    `split_n`: s consumer warpgroups split the tile's columns) each half is
    cut into s shares of `block_n` / (2 s) rows, and `dst` holds share i's
    gate rows, then its up rows, for i = 0 .. s - 1: warpgroup i's
    `block_n` / s rows pair row j with row j + `block_n` / (2 s), as one
    warpgroup's whole tile does.

    On targets without TMA `map` is B's address and `extents` its sizes,
    innermost first: `ggk-lower-loads-cp-async` copies the tile in 16-byte
    pieces, shared by `copy_threads` threads (as `ggk.load_tile_rows`),
    zero-filling what lies past them.

    Example (a cluster of two, K-major B of 128 rows):
    ```mlir
    ggk.load_b_tile %dst, %full from(%map) at[%k, %n_block, %group]
        rank(%rank) attributes {block_n = 128, block_k = 64,
                                chunk_columns = 64, cluster = 2,
                                cache_policy = 0}
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$barrier,
    LLVM_PointerInAddressSpace<3>:$dst,
    LLVM_PointerInAddressSpace<0>:$map,
    I32:$k,
    I32:$n_block,
    Optional<I32>:$group,
    Optional<I32>:$cluster_rank,
    Optional<I1>:$shared,
    Variadic<I32>:$extents,
    I64Attr:$block_n,
    I64Attr:$block_k,
    I64Attr:$chunk_columns,
    UnitAttr:$n_major,
    I64Attr:$cluster,
    I64Attr:$cache_policy,
    DefaultValuedAttr<I64Attr, "128">:$copy_threads,
    DefaultValuedAttr<I64Attr, "0">:$second_half_row,
    DefaultValuedAttr<I64Attr, "1">:$half_shares
  );
  let hasVerifier = 1;
  let assemblyFormat = [{
    $dst `,` $barrier `from` `(` $map `)` `at` `[` $k `,` $n_block
    (`,` $group^)? `]` (`rank` `(` $cluster_rank^ `)`)?
    (`shared` `(` $shared^ `)`)? (`extents` `(` $extents^ `)`)?
    attr-dict-with-keyword
  }];
}

include "ggk/GGKRingOps.td"

def GGK_SharedBufferOp : GGK_Op<"shared_buffer"> {
  let summary = "declare one buffer of the kernel's dynamic shared memory";
  let description = [{
    One buffer of the kernel's shared memory: `bytes` in all (every stage's
    copy, where it has one per stage), starting at a multiple of `align`
    bytes. The kernel declares each of its buffers once, at its entry, in
    the order they are laid out; `ggk-allocate-shared-memory` places them
    one after the other (`ggc::allocateSharedMemory`, the function that
    also answers gg-select-config's footprint query), replaces each
    `ggk.shared_address` with the address it names and erases the
    declarations. A buffer the kernel does not use is declared with 0
    bytes, since its alignment still moves the ones after it.

    Example (six stages of 128x64 bf16 A tiles):
    ```mlir
    ggk.shared_buffer "a_tiles" attributes {bytes = 98304, align = 1}
    ```
  }];
  let arguments = (ins
    StrAttr:$name,
    I64Attr:$bytes,
    I64Attr:$align
  );
  let hasVerifier = 1;
  let assemblyFormat = "$name attr-dict-with-keyword";
}

def GGK_SharedAddressOp : GGK_Op<"shared_address"> {
  let summary = "an address inside a declared shared-memory buffer";
  let description = [{
    The address `offset + index * stride` bytes into buffer `buffer` (a
    `ggk.shared_buffer` of the same function), in the shared memory at
    `base` (the kernel's dynamic shared memory, aligned to 1024 bytes).
    `index` (i32, sign-extended, or i64) picks a stage's copy, a barrier,
    a slot; without it the address is `offset` bytes in.
    `ggk-allocate-shared-memory` lowers it to the byte arithmetic on
    `base`, where it stands (no side effects are declared, so nothing
    moves or merges the addresses before: LLVM keeps an address computed
    where it is used, and the PTX is the one of addresses made by hand).

    Example (stage %s's full barrier):
    ```mlir
    %full = ggk.shared_address %smem "full_barriers" [%s : i32]
        attributes {stride = 8, offset = 0}
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$base,
    StrAttr:$buffer,
    Optional<AnyTypeOf<[I32, I64]>>:$index,
    I64Attr:$stride,
    I64Attr:$offset
  );
  let results = (outs LLVM_PointerInAddressSpace<3>:$address);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $base $buffer (`[` $index^ `:` type($index) `]`)? attr-dict-with-keyword
  }];
}

#endif // GGK_OPS_TD
