//===- GGKStoreOps.td - a tile's output stores ------------*- tablegen -*-===//
//
// The stores of a consumer's outputs, stated the same way whatever
// gg-tma-store-pool decided (ggk.store_tile and its ggk.store_pair ops);
// ggk-stage-tile-stores makes them the TMA store pool's staged tile or
// per-thread stores. Included by GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_StoreTileOp : GGK_Op<"store_tile", [RecursiveMemoryEffects,
                                            AttrSizedOperandSegments]> {
  let summary = "a consumer's outputs of one tile: its region computes them and states each pair's store";
  let description = [{
    The region computes a consumer thread's outputs of one tile and states
    each pair's store with `ggk.store_pair`. `pool` is gg-tma-store-pool's
    `store_pool` (the box heights; empty: none) and `ggk-stage-tile-stores`
    lowers it by it:
    - with a pool: the tile is staged in shared memory (`staged_output` in
      the kernel's `smem`, column chunks of `chunk_columns` swizzled by
      `swizzle` bytes (128 or 64; `ggk.stage_output`) or, with `swizzle =
      0`, dense rows of `tile_shape` [BM, BN]): the op becomes
      a `ggk.await_staged_tile` at the region's start, a
      `ggk.stage_output` per pair and a `ggk.store_staged_tile` of the
      `rows_valid` rows from `row_start` and N block `n_block` (`group` is
      the maps' outermost coordinate with `group_maps`) through `pool_maps`
      at its end, `issuer` the thread that issues the TMA stores and
      `threads` the consumers' count; where the op stands in a
      `ggk.warp_specialize`, its consumers end with one
      `ggk.drain_tile_stores`; `warpgroup_rows = 64` passes on to them
      (each consumer warpgroup stores its own 64 rows); with
      `slice_columns = C` the tile is staged and stored C columns at a
      time, slice `s` in buffer `s % 2` of a ring of two `[BM, C]` tiles
      (the second `BM * C` elements after the first): an await before the
      slice's first pair (for slice 0 every earlier store's read, after
      that all but the newest group's), its pairs' stage_output, and its
      store_staged_tile (first_column `s * C`) after its last pair; the
      pairs of a slice (their `fragment`'s column block `c`: columns `8 c
      ...`) must stand together, in column order, in the region's block;
    - without: each pair valid in its row and column goes to `out`
      (`n` columns of `out_type`, or with `out_nm` the transposed
      `[G, N, m]` output of group `group`) by the thread.

    `tagged(%tags...)` (DeepGEMM's padded layout, with a pool): the tile's
    rows' group tags, `BM / 32` i32 words a lane, word `j` of lane `l` the
    tag of row `32 j + l` of the tile (-1 from `rows_valid` on). A row is
    the group's where its tag is `group` (the region's `row_valid`s test
    it). The layout pads each group after its rows, so the group's rows of
    a tile are usually its first ones, but nothing promises it: the op
    ballots the tags over each warp, counts the leading rows tagged
    `group` and all of them, and where the two agree stores the tile
    through the pool with that count as its valid rows; else every pair
    by its thread, as without a pool. Every lane of each warp in the
    region takes part.

    `column_pairs` (row-major `out`): the region's epilogue combined each
    pair of adjacent accumulator columns into one output, so each
    `ggk.store_pair` holds one value (a `vector<1x...>`) for output column
    `out_col` of `out`'s `n` columns, half the product's, at column `col`
    of a `tile_shape` of half the product tile's columns: a gated
    activation's output, written once, staged for the pool or per thread.

    `store_columns` (per-thread stores only; gg's kernel plan's): 2 (the
    default) stores each pair by its thread; 8 gathers the pairs of one
    row and four column blocks `4k .. 4k + 3` (their `fragment`s) from the
    four threads of a quad, which hold that row's columns 2t, 2t + 1 of
    each block, by warp shuffles (`ggk.warp_shuffle_xor`), so that thread
    `t` stores the 8 columns of block `4k + t` as one 16-byte store. It
    takes 16-bit `out_type`, `n` a multiple of 8, no `out_nm` and no
    `column_pairs`, and every lane of each warp in the region.

    `accumulate` (`store_columns` 2, no `scatter`): each output is added
    to what `out` holds there. Its `ggk.store_pair`s hold f32 values.
    Without a pool the thread reads the stored ones, adds in f32 and
    writes the sum rounded to `out_type`; with one (f32 `out_type` only)
    the staged tile's boxes are reduce-added by TMA (`add` on
    `ggk.store_staged_tile`). Every output belongs to one tile, so the sum
    is the same on every run (a scatter's indices could repeat a row).

    `scatter(%indices)` (per-thread stores only: the pool's boxes store
    consecutive rows): the rows go by a list of row indices, `i32` in
    global memory, as a permute-free MoE puts its outputs back in token
    order: the pair of output row `out_row` goes to row
    `indices[out_row]`, and nowhere where that index is negative or not
    below `bound` (an i64: the output's row count; a dropped row). A per-row weight is the epilogue's (gg's `rows`
    operands), applied in f32 before the pair is rounded.

    Example:
    ```mlir
    ggk.store_tile %smem, %out rows(%rows_valid, %row_start) block(%n_block)
        group(%group) maps(%m128, %m64) attributes {pool = array<i64: 128, 64>,
        tile_shape = array<i64: 128, 128>, chunk_columns = 64,
        swizzle = 128, n = 4096, m = 0, out_type = bf16, group_maps, issuer = 128,
        threads = 256} {
      ...
      ggk.store_pair %pair at(%row, %col) to(%out_row, %out_col)
          valid(%row_ok, %col_ok) : vector<2xbf16>
      ggk.yield
    }
    ```
  }];
  let arguments = (ins
    LLVM_PointerInAddressSpace<3>:$smem,
    LLVM_PointerInAddressSpace<1>:$out,
    I32:$rows_valid,
    I32:$row_start,
    I32:$n_block,
    I32:$group,
    Variadic<LLVM_PointerInAddressSpace<0>>:$pool_maps,
    Optional<LLVM_PointerInAddressSpace<1>>:$indices,
    Optional<I64>:$bound,
    Variadic<I32>:$tags,
    DenseI64ArrayAttr:$pool,
    DenseI64ArrayAttr:$tile_shape,
    I64Attr:$chunk_columns,
    DefaultValuedAttr<I64Attr, "0">:$swizzle,
    DefaultValuedAttr<I64Attr, "0">:$warpgroup_rows,
    DefaultValuedAttr<I64Attr, "0">:$slice_columns,
    I64Attr:$n,
    I64Attr:$m,
    TypeAttr:$out_type,
    UnitAttr:$out_nm,
    UnitAttr:$column_pairs,
    UnitAttr:$accumulate,
    UnitAttr:$group_maps,
    I64Attr:$issuer,
    I64Attr:$threads,
    DefaultValuedAttr<I64Attr, "2">:$store_columns
  );
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $smem `,` $out `rows` `(` $rows_valid `,` $row_start `)` `block` `(`
    $n_block `)` `group` `(` $group `)` (`maps` `(` $pool_maps^ `)`)?
    (`scatter` `(` $indices^ `bound` $bound `)`)? (`tagged` `(` $tags^ `)`)?
    attr-dict-with-keyword $body
  }];
}

def GGK_StorePairOp : GGK_Op<"store_pair"> {
  let summary = "a thread's store of two adjacent outputs of its tile";
  let description = [{
    Inside a `ggk.store_tile`: the pair `pair` of the tile's row `row` and
    columns `col`, `col` + 1 (in the tile), which is row `out_row` of the
    output (in its flattened [rows, N] view) and columns `out_col`,
    `out_col` + 1; it is stored where `row_valid` and `col_valid` hold
    (the row belongs to the group, the columns are below N); in an
    `accumulate` tile the pair is f32, added to the stored values. Staged, every
    pair is written (the pool's boxes store only valid rows, and TMA clips
    columns past N). In a `column_pairs` tile the two columns were combined
    into one output: `pair` is a `vector<1x...>` for output column
    `out_col`. An f8E4M3FN tile's pair holds the outputs' e4m3 bytes (`i8`:
    LLVM has no f8 type). `fragment = [row group, column block]` says where in the
    thread's accumulator fragment the pair lies (the row group's rows are
    8 apart, the column blocks' columns too); a tile of `store_columns =
    8` needs it.

    Example:
    ```mlir
    ggk.store_pair %pair at(%row, %col) to(%out_row, %out_col)
        valid(%row_ok, %col_ok) : vector<2xbf16>
    ```
  }];
  let arguments = (ins
    VectorOfLengthAndType<[1, 2], [AnyFloat, I8]>:$pair,
    I32:$row,
    I32:$col,
    I64:$out_row,
    I32:$out_col,
    I1:$row_valid,
    I1:$col_valid,
    OptionalAttr<DenseI64ArrayAttr>:$fragment
  );
  let hasVerifier = 1;
  let assemblyFormat = [{
    $pair `at` `(` $row `,` $col `)` `to` `(` $out_row `,` $out_col `)`
    `valid` `(` $row_valid `,` $col_valid `)` attr-dict-with-keyword `:`
    type($pair)
  }];
}

def GGK_EpilogueOp : GGK_Op<"epilogue", [RecursiveMemoryEffects,
                                         SingleBlock]> {
  let summary = "the user's epilogue on one output element (or a column pair's two), as a region";
  let description = [{
    The `gg.grouped_matmul`'s epilogue region carried into the kernel:
    `inputs` are its block's arguments in order (the element's scaled
    accumulator, or a column pair's two; the row vectors' values at the
    element's row; the column vectors' at its column; the group scalars;
    the group as an index), and the region computes the value to store,
    yielded by `ggk.yield`. `ggk-lower-epilogue` inlines it where it sits,
    expanding what NVPTX has no instruction for (`gg.sigmoid`, `gg.silu`,
    `math.exp` through `exp2`).

    Example:
    ```mlir
    %out = ggk.epilogue(%acc, %bias, %g) : (f32, f32, index) -> f32 {
    ^bb0(%x: f32, %b: f32, %group: index):
      %y = arith.addf %x, %b : f32
      %z = gg.silu %y : f32
      ggk.yield %z : f32
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs);
  let results = (outs AnyFloat:$result);
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $result) $body
  }];
  let extraClassDeclaration = [{
    /// Whether `op` may appear in an epilogue: what ggk-lower-epilogue
    /// lowers (arith, and math ops NVPTX has or that are expanded).
    static bool isSupported(::mlir::Operation *op);
  }];
}

def GGK_ScaleOp : GGK_Op<"scale", [Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "an accumulator element times the scales that do not change along K";
  let description = [{
    `result = value * factors[0] * factors[1] ...`, in that order: an
    element of the accumulator times the scales applied once to its K sum
    because they do not change along K (the row's scale of A, per token
    or per tensor, then the column's of B, per channel or per tensor).
    `ggk-lower-epilogue` writes the products where the op sits.

    Example: `%scaled = ggk.scale %acc by %row_scale, %col_scale`
  }];
  let arguments = (ins F32:$value, Variadic<F32>:$factors);
  let results = (outs F32:$result);
  let hasVerifier = 1;
  let assemblyFormat = "$value `by` $factors attr-dict";
}

def GGK_InsertOutputOp : GGK_Op<"insert_output",
    [Pure, AllTypesMatch<["into", "result"]>]> {
  let summary = "one output of a tile element's pair, rounded to the stored type, into the pair's vector";
  let description = [{
    `result` is `into` with element `position` replaced by `value`
    converted to the vector's element type (rounded to nearest even when
    narrower, extended when wider: an accumulating store adds in f32).
    The epilogue's pair of outputs (two adjacent columns, or a column
    pair's one) is built this way for `ggk.store_pair`;
    `ggk-lower-epilogue` writes the conversion and the insertion where
    the op sits.

    Example:
    `%pair1 = ggk.insert_output %out into %pair0[1] : f32 into vector<2xbf16>`
  }];
  let arguments = (ins AnyFloat:$value, VectorOfRankAndType<[1], [AnyFloat]>:$into,
                       I64Attr:$position);
  let results = (outs VectorOfRankAndType<[1], [AnyFloat]>:$result);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $value `into` $into `[` $position `]` attr-dict `:` type($value) `into` type($result)
  }];
}
