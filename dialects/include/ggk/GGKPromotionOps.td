//===- GGKPromotionOps.td - two-level accumulation ---------*- tablegen -*-===//
//
// The ops that apply a K block's scales to its product on `!ggk.acc`
// values (DeepGEMM's two-level accumulation), and the decoding of MX's
// UE8M0 exponents. `ggk-lower-promotion` lowers them to fragment
// arithmetic. Included by GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_PromoteOp : GGK_Op<"promote",
    [Pure, AttrSizedOperandSegments,
     AllTypesMatch<["acc", "partial", "result"]>]> {
  let summary = "adds a K block's product to the f32 accumulator, scaled by the block's scales";
  let description = [{
    `result = acc + partial * scale` element by element, where `partial` is
    one K block's (or one MX scale block's) product of a consumer
    warpgroup and an element's scale is its row's scale of A times its
    column's scale of B:
    - `a_scales`: A's two, for the thread's row groups (rows `r` and
      `r + 8` of `ggk.acc_origin`);
    - `b_scales`: B's per 128 columns (128x128 blocks) of the warpgroup's
      columns, the first for its first 128; one for all of them when B has
      no block scales (the scales of A alone vary along K);
    - with `column_halves` (gg's), B's two: one for each half of the
      columns (the gate's rows of B and the up's, each half within one
      128x128 block);
    - or, with `column_scales`, B's scale per column: f32 in shared memory,
      4 bytes per column of the tile, read at the thread's columns from
      `column` (its first, `ggk.acc_origin`'s, an even one) as one 8-byte
      pair per 8-column block, so the table must be 8-byte aligned;
      `b_scales` is then empty;
    - or, with `per_column`, B's scales of the thread's columns already
      read (`ggk.load_column_scales`): `b_scales` holds two per 8-column
      block, block `c`'s at `2 c` and `2 c + 1`.

    A warpgroup whose width is not a multiple of 128 (112, 192) may have
    a boundary of B's 128x128 blocks inside its columns, which start at
    `n_block * block_n + column_base` of B: `b_scales` then holds the block
    before and the block after it, and each column takes its own. How that
    choice is made (one copy of the FMAs per place the boundary may take,
    picked once per block, or a select per element) is the lowering's.

    The accumulator must have wgmma's fragment (`warp_columns = 1`), whose
    row groups the scales of A follow.

    Example:
    ```mlir
    %sum = ggk.promote %partial into %acc rows(%sa0, %sa1) blocks(%sb)
        at(%n_block, %col_base, %col) {block_n = 128} : !ggk.acc<64x128xf32>
    ```
  }];
  let arguments = (ins
    GGK_AccType:$acc,
    GGK_AccType:$partial,
    Variadic<F32>:$a_scales,
    Variadic<F32>:$b_scales,
    Optional<LLVM_PointerInAddressSpace<3>>:$column_scales,
    I32:$n_block,
    I32:$column_base,
    I32:$column,
    I64Attr:$block_n,
    UnitAttr:$column_halves,
    UnitAttr:$per_column
  );
  let results = (outs GGK_AccType:$result);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $partial `into` $acc `rows` `(` $a_scales `)`
    (`blocks` `(` $b_scales^ `)`)? (`columns` `(` $column_scales^ `)`)?
    `at` `(` $n_block `,` $column_base `,` $column `)` attr-dict `:`
    qualified(type($acc))
  }];
}

def GGK_LoadColumnScalesOp : GGK_Op<"load_column_scales",
    [MemoryEffects<[MemRead]>]> {
  let summary = "a thread's columns' scales of B, read from shared memory into registers";
  let description = [{
    The per-column scales (f32, 4 bytes per column of the tile) that
    `ggk.promote`'s `column_scales` would read at its promotion, read now:
    the thread's two adjacent columns of each 8-column block of a
    warpgroup's `columns`, from `column` (its first, an even one) on, one
    8-byte pair per block (the table must be 8-byte aligned). The results
    are `ggk.promote`'s `b_scales` with `per_column`: `columns / 4` of
    them. Read right after a K block's wgmma is issued, they let its stage
    go back to the producer before the promotion
    (`column_scale_reads = at_issue`).

    Example:
    ```mlir
    %s:4 = ggk.load_column_scales %table at(%column) {columns = 16} : f32, f32, f32, f32
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$table,
    I32:$column,
    I64Attr:$columns
  );
  let results = (outs Variadic<F32>:$scales);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $table `at` `(` $column `)` attr-dict `:` type($scales)
  }];
}

def GGK_DecodeUE8M0Op : GGK_Op<"decode_ue8m0", [Pure]> {
  let summary = "the f32 factor 2^(e - 127) of one UE8M0 exponent byte of a word";
  let description = [{
    MX scales (OCP microscaling) are unsigned 8-bit exponents, four to an
    i32 word. The result is `2^(e - 127)` for the exponent `e` in byte
    `byte` (0 to 3, least significant first) of `word`, as an f32; `e = 0`
    is the subnormal `2^-127`. (`e = 255`, NaN in the format, gives
    infinity.)

    Example: `%f = ggk.decode_ue8m0 %word[%byte]`
  }];
  let arguments = (ins I32:$word, I32:$byte);
  let results = (outs F32:$result);
  let assemblyFormat = "$word `[` $byte `]` attr-dict";
}
