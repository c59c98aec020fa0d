//===- GGKConsumerOps.td - the consumer warpgroups' ggk ops -*- tablegen -*-===//
//
// The ops that state a consumer warpgroup's work on a tile: whether it
// works or idles (ggk.warpgroup_tile, lowered by ggk-skip-idle-warpgroups)
// its K loop of two-level accumulation (ggk.promotion_loop, lowered by
// ggk-pipeline-promotion) and its end of the tile (ggk.tile_epilogue,
// placed by ggk-defer-epilogue). Included by GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_WarpgroupTileOp : GGK_Op<"warpgroup_tile", [RecursiveMemoryEffects]> {
  let summary = "a consumer warpgroup's work on one tile, or its idle pass when its rows are padding";
  let description = [{
    The work one consumer warpgroup does on a tile: its `work` region
    (wgmma over the tile's K blocks), or else its `idle` region, which only
    passes the ring's buffers back to the producer. Both yield the same
    values (the accumulator and the pipeline counter), which are the op's
    results.

    `idle` runs instead of `work` when `padding` (the op's `#gg.padding`,
    chosen by `gg-eliminate-padding`) says `idle_warpgroups = skip` and the warpgroup's rows, which start at row
    `first_row` of the tile, are all past the group's end
    (`first_row >= rows_valid`): they would be computed and never stored;
    and when `works` (optional, i1) is false. With `compute` and no `works`,
    `work` always runs and `idle` is dropped. `ggk-skip-idle-warpgroups`
    lowers it to an `scf.if`, or to `work` inline.

    Example:
    ```mlir
    %acc, %end = ggk.warpgroup_tile first_row(%row) rows(%rows_valid)
        attributes {padding = #gg.padding<idle_warpgroups = skip>}
        -> !ggk.acc<64x8xf32>, i32 {
      ...
      ggk.yield %sum, %next : !ggk.acc<64x8xf32>, i32
    } idle {
      ...
      ggk.yield %zero, %passed : !ggk.acc<64x8xf32>, i32
    }
    ```
  }];
  let arguments = (ins
    I32:$first_row,
    I32:$rows_valid,
    Optional<I1>:$works,
    GG_PaddingAttr:$padding
  );
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$work, SizedRegion<1>:$idle);
  let hasVerifier = 1;
  let assemblyFormat = [{
    `first_row` `(` $first_row `)` `rows` `(` $rows_valid `)`
    (`when` `(` $works^ `)`)? attr-dict-with-keyword (`->` type($results)^)? $work `idle` $idle
  }];
}

def GGK_PromotionLoopOp : GGK_Op<"promotion_loop",
    [RecursiveMemoryEffects, AllTypesMatch<["acc", "result"]>]> {
  let summary = "a consumer's K loop of two-level accumulation: each scale block's wgmma product scaled and added to the f32 accumulator";
  let description = [{
    One consumer warpgroup's K blocks `0 .. num_k_blocks` of a tile, each
    split into `promotions` scale blocks (1, or the 32-wide scale blocks of
    MX 1x32 in a 128-wide K block: 4). Each scale block's wgmma product
    lands in a fresh partial accumulator that is then scaled by the scale
    block's scales and added to `acc` (DeepGEMM's two-level
    accumulation), starting at ring counter `counter` of a ring of
    `stages` buffers (counter `it` uses stage `it % stages`, whose
    barriers are in phase `(it / stages) % 2`); a K block's scale blocks
    share its stage. The results are the accumulator and the counter
    after the tile.

    The regions say what one step does; `plan` (the op's
    `#gg.kernel_plan`, from `gg-plan-kernel`) says how the steps are
    ordered, which `ggk-pipeline-promotion` decides:
    - `prefetch(%k)`: start copying K block `%k`'s scales into the
      warp's slots (`scales = slots`; the copy of a block past the tile's
      end is empty);
    - `start`: once, after the first prefetches (per-column scales' first
      publication; the pipelined schedule has issued block 1's copies
      too, so a publication waits for all but the newest copy group);
    - `issue(%k, %j, %stage, %phase)`: wait for ring stage `%stage` to
      fill (phase `%phase`), issue scale block `%j` of K block `%k`'s
      wgmma into a fresh accumulator and commit it; yields the partial;
    - `read_scales(%k, %j, %stage)`: the scale block's scales (from the
      stage, or from the slots once their copy has landed);
    - `promote(%acc, %partial, %k, %j, %scales...)`: yields `%acc` plus
      the scaled partial;
    - `end_block(%k)`: after K block `%k`'s last promotion (per-column
      scales' publication of block `%k + 1`);
    - `release(%stage)`: give the stage back to the producer;
    - `overlap`: work to run while the first block's wgmma does (the
      previous tile's epilogue, with pipelined promotion);
    - `await(%stage, %phase)` (optional): wait for ring stage `%stage` to
      fill (phase `%phase`) without reading it. Taken by `ring_stages =
      constant` where the tile's K blocks are no whole number of turns of
      the ring: the last turn ends on stages the producer fills with
      nothing, each awaited and released, so that every tile starts at
      stage 0.

    With `promote_reads_stage` (B's per-column scales ride the stages:
    `ggk.stage_block_scales`' `b_columns`) `promote` reads the K block's
    stage, so each schedule gives a stage back after its K block's last
    promotion instead of once its last wgmma is done.

    With `promotion = serial` each scale block is issued, waited for and
    promoted in turn, a K block's stage released after its last. With
    `promotion = pipelined` a scale block's promotion runs while the
    next one's wgmma does (two partial accumulators live); that takes
    `promotions` of 1 or an even number.

    Rules the pass relies on: `issue` commits exactly one wgmma group and
    no other region commits any (the schedule's `wgmma.wait_group 1` and
    `0` count them); waiting for a stage that is already full is free, so
    `issue` may wait at each scale block; slot scales use two buffers
    (`kScaleSlotBuffers`), so
    the serial schedule prefetches one block ahead and the pipelined one
    two; the serial schedule prefetches only with `scales = slots`, the
    pipelined one whenever the scales are not in the stages (with `none`
    an empty copy group, which keeps the slots' wait counts uniform); with
    the scales in the stages `read_scales` runs right after each `issue`,
    else at the scale block's promotion. Pipelined promotion needs a
    `!ggk.acc` accumulator (each promotion is pinned in its registers,
    `ggk.acc_pin`) and at least one K block (the caller guards it: the consumer's
    `ggk.warpgroup_tile` takes its idle path on a tile with none). Serial
    promotion runs `overlap` after the first scale block's wgmma is issued
    where the plan says `epilogue_blocks = 1` (then it too needs a K
    block); with 0 the region must be empty.

    Example:
    ```mlir
    %acc, %end = ggk.promotion_loop %blocks from %counter acc(%zero : !ggk.acc<64x8xf32>)
        attributes {stages = 4 : i64, promotions = 1 : i64,
                    plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                                           registers = [24, 240], staging = swizzled>}
      prefetch { ^bb0(%k: i32): ggk.yield }
      start { ggk.yield }
      issue { ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32): ... ggk.yield %partial : !ggk.acc<64x8xf32> }
      read_scales { ^bb0(%k: i32, %j: i32, %stage: i32): ... ggk.yield %sa0, %sa1, %sb : f32, f32, f32 }
      promote { ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32,
                     %sa0: f32, %sa1: f32, %sb: f32): ... ggk.yield %sum : !ggk.acc<64x8xf32> }
      end_block { ^bb0(%k: i32): ggk.yield }
      release { ^bb0(%stage: i32): ... ggk.yield }
      overlap { ggk.yield }
    ```
  }];
  let arguments = (ins
    I32:$num_k_blocks,
    I32:$counter,
    AnyType:$acc,
    I64Attr:$stages,
    DefaultValuedAttr<I64Attr, "1">:$promotions,
    GG_KernelPlanAttr:$plan,
    UnitAttr:$promote_reads_stage
  );
  let results = (outs AnyType:$result, I32:$end);
  let regions = (region SizedRegion<1>:$prefetch, SizedRegion<1>:$start,
                        SizedRegion<1>:$issue, SizedRegion<1>:$read_scales,
                        SizedRegion<1>:$promote, SizedRegion<1>:$end_block,
                        SizedRegion<1>:$release, SizedRegion<1>:$overlap,
                        MaxSizedRegion<1>:$await);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $num_k_blocks `from` $counter `acc` `(` $acc `:` type($acc) `)` attr-dict-with-keyword
    `prefetch` $prefetch `start` $start `issue` $issue `read_scales` $read_scales
    `promote` $promote `end_block` $end_block `release` $release `overlap` $overlap
    (`await` $await^)?
  }];
}

def GGK_KLoopOp : GGK_Op<"k_loop",
    [RecursiveMemoryEffects, AllTypesMatch<["acc", "result"]>]> {
  let summary = "a consumer's K loop of one-level accumulation: each K block's product added to the accumulator in place";
  let description = [{
    One consumer's K blocks `0 .. num_k_blocks` of a tile whose products
    go straight into `acc` (16-bit and f32 operands without scales that
    change along K), starting at ring counter `counter` of a ring of
    `stages` buffers (counter `it` uses stage `it % stages`, in phase
    `(it / stages) % 2`). The results are the accumulator and the counter
    after the tile.

    The regions say what one step does; `ggk-lower-k-loop` writes the loop:
    - `issue(%k, %stage, %phase, %acc)`: wait for stage `%stage` to fill,
      issue block `%k`'s multiply into `%acc` and commit it (one group);
      yields the accumulator;
    - `release(%stage)`: give the stage back to the producer;
    - `load_ahead(%k, %it)`: the copies of a later block where the
      consumers copy the stages themselves (no producer), else nothing;
    - `overlap` (present where `epilogue_blocks = 1`): work to run once
      block 0's multiply is issued, while it computes (the previous
      tile's epilogue, which `ggk-defer-epilogue` puts there); it then
      needs a K block (the consumer's `ggk.warpgroup_tile` takes its idle
      path on a tile with none).

    `epilogue_blocks` (gg's kernel plan; 0 by default) is 1 where the
    previous tile's epilogue runs beside this tile's first multiply: the
    op then has an `overlap` region, and with 0 none.

    `release_lag` is how many blocks' multiplies stay in flight when a
    stage goes back (gg's kernel plan): 0 (mma.sync reads its operands at
    issue: block k's stage goes back at once) or 1 (wgmma reads shared
    memory after issue: block k - 1's goes back once only block k's is
    pending, and the last one after the loop).

    Example:
    ```mlir
    %acc, %end = ggk.k_loop %blocks from %counter acc(%zero : !ggk.acc<64x16xf32>)
        attributes {stages = 4 : i64, release_lag = 1 : i64}
      issue { ^bb0(%k: i32, %stage: i32, %phase: i32, %a: !ggk.acc<64x16xf32>):
        ... ggk.yield %sum : !ggk.acc<64x16xf32> }
      release { ^bb0(%stage: i32): ... ggk.yield }
      load_ahead { ^bb0(%k: i32, %it: i32): ggk.yield }
    ```
  }];
  let arguments = (ins
    I32:$num_k_blocks,
    I32:$counter,
    AnyType:$acc,
    I64Attr:$stages,
    I64Attr:$release_lag,
    DefaultValuedAttr<I64Attr, "0">:$epilogue_blocks
  );
  let results = (outs AnyType:$result, I32:$end);
  let regions = (region SizedRegion<1>:$issue, SizedRegion<1>:$release,
                        SizedRegion<1>:$load_ahead,
                        MaxSizedRegion<1>:$overlap);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $num_k_blocks `from` $counter `acc` `(` $acc `:` type($acc) `)` attr-dict-with-keyword
    `issue` $issue `release` $release `load_ahead` $load_ahead
    (`overlap` $overlap^)?
  }];
}

def GGK_TileEpilogueOp : GGK_Op<"tile_epilogue", [RecursiveMemoryEffects]> {
  let summary = "a consumer's end of one tile: the epilogue and the stores, on the tile's fields and its finished accumulator";
  let description = [{
    What a consumer warpgroup does with a tile once its K loop is done:
    the body (the user's epilogue and the stores of the tile's valid rows)
    run on `fields` (the tile's eleven fields, as `ggk.foreach_tile` gives
    them, then any words the tile carries besides: the generator's row
    vectors' values for the thread's rows, loaded when the tile started so
    that their latency passes behind its K loop) and `acc` (its finished
    accumulator), which are the body's block arguments. The body reads the
    tile only through them, so
    `ggk-defer-epilogue` may run it later, for another tile's values: with
    a pipelined promotion loop in the same tile it is run in the next
    tile's `overlap` (beside that tile's first wgmma), in its idle path,
    or after the last tile; otherwise where it stands.

    Example:
    ```mlir
    ggk.tile_epilogue(%group, %m_block, ..., %num_k_blocks, %shares_b) acc(%acc : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, ..., %n: i32, %a: !ggk.acc<64x8xf32>):
      ...
      ggk.yield
    }
    ```
  }];
  let arguments = (ins Variadic<I32>:$fields, AnyType:$acc);
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let assemblyFormat = [{
    `(` $fields `)` `acc` `(` $acc `:` type($acc) `)` attr-dict-with-keyword $body
  }];
}
