//===- GGKScaleOps.td - where a K block's scales live -----*- tablegen -*-===//
//
// The ops that state what a K block's block scales are and who needs them,
// leaving where they travel to `#gg.kernel_plan`'s `scales` (chosen by
// gg-plan-kernel, overridable): with the ring's stages, or through each
// consumer warp's scale slots. `ggk-place-scales` lowers them as the plan
// says. Included by GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_StageBlockScalesOp : GGK_Op<"stage_block_scales",
    [AttrSizedOperandSegments]> {
  let summary = "the producer's copy of a K block's block scales into a stage, where the plan puts them there";
  let description = [{
    One K block of DeepGEMM-style block scales (1x128 of A, M-major, and
    128x128 of B, or, for a k_grouped weight gradient, 1x128 of B, N-major),
    as the producer could send them with the stage `stage`
    of the ring whose full barrier is `barrier`. The generator states it
    wherever the scales can ride the stages
    (`ggc::canStageBlockScales`); `plan` (the op's `#gg.kernel_plan`) says
    whether they do.

    With `scales = stages`, `ggk-place-scales` lowers it to:
    - B's `b_blocks` block scales for the tile's columns (N block `n_block`
      of `block_n` columns, group `group`, K block `scale_block` of B's
      `[G, ceil(n/128), ceil(k/128)]` scales, or `[G, ceil(k/128),
      ceil(n/128)]` without `b_k_major`) copied from `b_scales` by
      cp.async into the stage's 16 bytes of `stage_b_scales`, and a
      `cp.async.mbarrier.arrive.noinc` on `barrier` (one of its two
      arrivals); with `column_halves` (gg's, `b_blocks` = 2) the tile's
      columns are two halves of `block_n / 2` rows of B, the second `n / 2`
      rows after the first, and entry j is half j's block;
    - A's window of `window_bytes` (the tile's rows from `row_start`
      rounded down to 4, as TMA's innermost coordinate must be 16-byte
      aligned) loaded through `a_map` at (`row_start` & ~3,
      `scale_block`[, `group` with `a_group`]) into the stage's
      `stage_a_scales`, `window_stride` bytes a stage. Its bytes are
      added to the `other_bytes` of the `ggk.load_tile_rows` after it that
      arms `barrier` (so the stage has one expect_tx), and its TMA goes
      right after that load. With `a_k_major` A's scales are K-major
      (`[.., M, ceil(k/128)]`, a row's K blocks contiguous): the box is
      four K blocks wide, loaded at (`scale_block` & ~3, `row_start` & ~3[,
      `group`]), 16 bytes a row of the window (no copy into the M-major
      form first).
    With `slots` (or `none`) it is erased: each consumer warp copies the
    scales itself (`ggk.read_block_scales`).

    `smem` is the kernel's dynamic shared memory; the buffers are named
    as `ggk.shared_buffer` declares them.

    Example:
    ```mlir
    ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n_block, %g]
        from(%b_scales) map(%a_map) attributes {
        plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                               registers = [24, 240], staging = swizzled>,
        b_blocks = 1, block_n = 128, n = 4096, k = 7168, b_k_major,
        a_group, window_bytes = 528, window_stride = 640}
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$smem,
    LLVM_PointerInAddressSpace<3>:$barrier,
    I32:$stage,
    I32:$scale_block,
    I32:$row_start,
    I32:$n_block,
    I32:$group,
    LLVM_PointerInAddressSpace<1>:$b_scales,
    Optional<LLVM_PointerInAddressSpace<0>>:$a_map,
    Optional<LLVM_PointerInAddressSpace<0>>:$b_map,
    GG_KernelPlanAttr:$plan,
    I64Attr:$b_blocks,
    DefaultValuedAttr<I64Attr, "0">:$b_columns,
    I64Attr:$block_n,
    I64Attr:$n,
    I64Attr:$k,
    UnitAttr:$b_k_major,
    UnitAttr:$column_halves,
    UnitAttr:$a_group,
    I64Attr:$window_bytes,
    I64Attr:$window_stride,
    UnitAttr:$a_k_major
  );
  let hasVerifier = 1;
  let assemblyFormat = [{
    $smem `,` $barrier `stage` `(` $stage `)` `at` `[` $scale_block `,`
    $row_start `,` $n_block `,` $group `]` `from` `(` $b_scales `)`
    (`map` `(` $a_map^ `)`)? (`columns_map` `(` $b_map^ `)`)?
    attr-dict-with-keyword
  }];
}

def GGK_ReadBlockScalesOp : GGK_Op<"read_block_scales"> {
  let summary = "a consumer thread's scales of one K block, from where the plan put them";
  let description = [{
    The f32 scales a consumer thread promotes K block `block` with: A's
    for its two rows (`row` and `row` + 8 of the tile, whose first row is
    `row_start`), then B's for each of the `b_blocks` 128-column blocks of
    its warpgroup's columns (one 1.0 where `b_blocks` is 0: B's scales are
    per column, which the promotion reads itself). `stage` is
    the ring stage holding the block's tiles (full, not yet released).
    `ggk-place-scales` reads them as `plan`'s `scales` says:
    - `stages`: from the stage's `stage_a_scales` window (`window_stride`
      bytes a stage, starting at row `row_start` & ~3; with `a_k_major`
      16 bytes a row, of which `block` % 4 picks the word) and its
      `stage_b_scales`, which `ggk.stage_block_scales` filled;
    - `slots`: from the warp's scale slots (`scale_slots`: two buffers, by
      `block` % 2, of `slot_warps` warps x `slot_words` words), once the
      warp's cp.async copies of the block have landed (all but the newest
      group, `cp.async.wait_group 1`) and the warp has met (its lanes
      copied each other's words): lane `lane` reads rows `lane` / 4 and
      + 8 of the warp's `a_rows` words (A's are 1.0 without them), then
      B's words after them;
    - `none`: all 1.0 (the op's scales do not change along K).

    Example:
    ```mlir
    %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
        rows(%row_start, %row) lane(%lane) attributes {
        plan = #gg.kernel_plan<promotion = serial, scales = slots,
                               registers = [40, 232], staging = none>,
        b_blocks = 1, a_rows = 16, slot_words = 17, slot_warps = 8,
        window_stride = 0} : f32, f32, f32
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$smem,
    I32:$block,
    I32:$stage,
    I32:$row_start,
    I32:$row,
    I32:$lane,
    GG_KernelPlanAttr:$plan,
    I64Attr:$b_blocks,
    I64Attr:$a_rows,
    I64Attr:$slot_words,
    I64Attr:$slot_warps,
    I64Attr:$window_stride,
    UnitAttr:$a_k_major
  );
  let results = (outs Variadic<F32>:$scales);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $smem `block` `(` $block `)` `stage` `(` $stage `)` `rows` `(`
    $row_start `,` $row `)` `lane` `(` $lane `)` attr-dict-with-keyword
    `:` type($scales)
  }];
}

def GGK_InitFullBarrierOp : GGK_Op<"init_full_barrier"> {
  let summary = "initialise a stage's full barrier for the arrivals its loads make, which depend on where the scales live";
  let description = [{
    The count of a ring stage's full barrier at `barrier`: the producer's
    `arrive.expect_tx` that arms it, and, where `plan` (the op's
    `#gg.kernel_plan`) puts the block scales in the stages, the
    `cp.async.mbarrier.arrive.noinc` of B's block scales
    (`ggk.stage_block_scales`). Without TMA, two arrivals (after A's
    copies and after B's) of each of the `copy_threads` threads that copy
    the stages (ggk-lower-loads-cp-async). `ggk-place-scales` lowers it,
    beside the copies whose arrival it counts.

    Example:
    ```mlir
    ggk.init_full_barrier %full attributes {
        plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                               registers = [24, 240], staging = swizzled>}
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier,
                       GG_KernelPlanAttr:$plan,
                       DefaultValuedAttr<I64Attr, "128">:$copy_threads);
  let assemblyFormat = "$barrier attr-dict-with-keyword";
}

def GGK_PassStageOp : GGK_Op<"pass_stage"> {
  let summary = "the producer passes a stage of the ring on without loading it";
  let description = [{
    The producer's thread fills the stage whose full barrier is at
    `barrier` with nothing: as many arrivals as a loaded stage's
    (`ggk.init_full_barrier`'s count for `plan`), no bytes, so the
    consumers' `ggk.wait_stage` on it completes at once. With
    `ring_stages = constant`, a tile whose K blocks are no whole number of
    turns of the ring ends its last turn on such stages, so that every
    tile starts at stage 0. `ggk-place-scales` lowers it beside
    `ggk.init_full_barrier`; it takes a TMA producer of one thread
    (gathered rows, whose every thread arrives, and cp.async are refused).

    Example:
    ```mlir
    ggk.pass_stage %full attributes {
        plan = #gg.kernel_plan<promotion = serial, scales = stages,
                               registers = [40, 232], staging = swizzled,
                               ring_stages = constant>}
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier,
                       GG_KernelPlanAttr:$plan);
  let assemblyFormat = "$barrier attr-dict-with-keyword";
}
