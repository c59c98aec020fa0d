//===- GGOps.td - gg operations -----------------------------*- tablegen -*-===//

#ifndef GG_OPS_TD
#define GG_OPS_TD

include "gg/GGBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

def GG_GroupedMatmulOp : GG_Op<"grouped_matmul", [
    AttrSizedOperandSegments, IsolatedFromAbove]> {
  let summary = "a whole grouped GEMM: every group's matmul, scales and epilogue";
  let description = [{
    Computes, for every group `g` of `G`, `out[g] = epilogue(A[g] x B[g])` with
    f32 accumulation, where the rows (or the K range) of each group come from
    the `groups` operand at run time:

    | layout | A | B (`nk` / `kn`) | groups | out |
    |--------|---|-----------------|--------|-----|
    | `contiguous` | `[M, K]` token-packed | `[G, N, K]` / `[G, K, N]` | offsets `[G+1]` i32/i64 (CSR `m_indptr`) | `[M, N]` |
    | `masked` | `[G, M_max, K]` | `[G, N, K]` / `[G, K, N]` | valid rows `[G]` i32 | `[G, M_max, N]` |
    | `padded_contiguous` | `[M, K]`, each group starting on a multiple of 128 rows (DeepGEMM's alignment) | `[G, N, K]` / `[G, K, N]` | group index per row `[M]` i32, -1 = skip | `[M, N]` |
    | `k_grouped` | `[M, K]` (`mk`) or `[K, M]` (`km`) | `[N, K]` / `[K, N]` | K offsets `[G+1]` i32/i64 | `[G, M, N]` (`mn`) or `[G, N, M]` (`nm`) |

    `M` (the token count, or `K` for `k_grouped`) may be dynamic; `G`, `N`
    and `K` are static, since the kernel is specialised for them. Rows that
    belong to no group (past the last offset, past `masked_m[g]`, or index -1)
    are never written (unless `zero_ungrouped`, below).

    Element types: A and B are bf16, f16, f32 (`tf32` selects TF32 tensor-core
    math), f8E4M3FN or f8E5M2 (mixed f8 pairs allowed); out is bf16, f16 or
    f32. Scales (`a_scale`, `b_scale`) are allowed for f8 operands only; their
    shapes follow from the `#gg.scale` attribute (see its description).

    The optional `epilogue` region runs on every f32 accumulator element
    before the store. Its block arguments are, in order: the accumulator
    (f32), one value per `rows` vector (indexed by the row), one per `cols`
    vector (indexed by the output column), one per `group_scalars` entry
    (indexed by the group), and the group index (`index`). It ends with
    `gg.yield` of an f32 or of the output element type; only side-effect-free
    scalar operations (arith, math, gg.sigmoid, gg.silu) may appear in it.

    `column_pairs` makes the epilogue combine each pair of adjacent
    accumulator columns: its block takes two accumulators, those of columns
    2j and 2j+1 of the product, before its other arguments, and its value
    is output column j, so `out` has N/2 columns. A gated activation
    (SwiGLU, GeGLU) with gate and up weights interleaved by row of B is one
    GEMM that way, its N/2 outputs the only ones written (on sm_90a staged
    for the TMA store pool, a tile's BN/2 columns; per thread where the
    pool cannot take them: `padded_contiguous`, rows of `out` that are no
    multiple of 16 bytes, or BN/2 columns that are no multiple of 64
    bytes). It takes no `cols` vectors, an even N, and a layout other than
    `k_grouped`.

    `column_halves` pairs the product's halves instead: output column j
    combines product columns j and j + N/2 (B's gate rows first, then its
    up rows, as vLLM and most checkpoints store a gated MLP's weights), so
    the weights need no interleaving. Each tile loads B's rows as two boxes
    of block N / 2 rows, one from each half, and each thread's outputs lie
    where a tile of block N / 2 columns would hold them, so the store pool
    and 16-byte quad stores take them as they take any tile. Besides what
    `column_pairs` takes, it needs B in layout `nk`, scales of B (if any)
    in 128x128 blocks with N/2 a multiple of 128 and block N / 2 dividing
    128 (each half of a tile then lies in one block: an FP8 checkpoint's
    gate and up weights as they are stored), tensor-map loads and one warpgroup
    holding every column of a tile (sm_90a; `gg-plan-kernel` says so
    elsewhere), and no cluster.

    `a_rows` (contiguous only) reads A's rows through a list of row
    indices, as a MoE layer reads its tokens in expert order without
    writing a permuted copy of them: row `r` of the product is row
    `a_rows[r]` of `a`. `a_rows` is `[M]` i32 and `a` any number of rows
    `[T, K]`; the group offsets and `out` count rows of the list. An index
    that is negative or not below T reads zeros, never memory. TMA's boxes
    load consecutive rows only, so on sm_90a every thread of the producer
    warpgroup copies its share of A's rows by cp.async (the kernel plan's
    `producer = all_threads`) while its leader loads B by TMA. Scales of
    A belong to the product's rows, not to `a`'s: row `r`'s are the scale
    operand's row `r` (the caller gathers them with the list, a few bytes
    a row beside the row itself), and the consumers copy them into their
    slots (the plan's `scales = slots`: the stages are armed by every
    producer thread, not by one load a scale box could ride). A in layout
    `mk`.

    `out_rows` (contiguous only) writes the product's rows through a list
    of row indices, as a MoE layer puts each route's row back in token
    order without a permuting pass: row `r` of the product (and of the
    epilogue, whose `rows` vectors index the product's rows: a route's
    weight) goes to row `out_rows[r]` of `out`, and nowhere where that index
    is negative or not below `out`'s row count (a dropped row). `out_rows`
    is `[M]` i32 and `out` `[R, N]` (N/2 with `column_pairs` or
    `column_halves`) with any R. Rows stay unwritten where no index names
    them; where two indices name one row, one of the two rows is written,
    which one is not fixed. The stores are per thread (TMA's boxes store
    consecutive rows:
    `store_pool` empty). It takes no `accumulate` (two indices naming one
    row would add in no fixed order) and no `zero_ungrouped`.

    `out_scale` (contiguous only) quantises the output to FP8 in the
    epilogue, in the layout an FP8 grouped GEMM reads as its A: `out` is
    f8E4M3FN `[M, N]` (N/2 with `column_pairs` or `column_halves`) and
    `out_scale` f32 `[ceil(N / 128), align4(M)]`, the `block_mn` 1x128
    scales (`#gg.scale<block, 1x128, mn_major>`; the columns past M are
    not written). For each row and block of 128 output columns, with `a =
    max(amax, 1e-12)` over the block's epilogue values (f32, not rounded
    between), `out = e4m3(v * (448 / a))` (nearest even, saturated) and the
    scale `a * f32(1 / 448)`: gg.quantize_rows' rule, so a quantised
    SwiGLU up projection gives what its kernel would, without the bf16
    pass between. The amax is taken where a row's columns lie, in the
    quads of one consumer warpgroup: the tile's output columns each
    warpgroup holds must be whole 128-column blocks, or (`split_n = 2`)
    128 output columns in all, half a block in each of the two warpgroups
    that share the rows, which exchange their amax in shared memory
    (`gg-select-config` chooses such a tile), the stores are per thread (an empty
    `store_pool`), and the target converts to FP8 (sm_89, sm_90a). It takes
    no `accumulate`, `zero_ungrouped` or `out_rows`, and an epilogue that
    yields f32.

    `accumulate` adds the epilogue's value to what `out` holds (`out +=`,
    as a weight gradient accumulated over micro-batches): the sum is taken
    in f32 and rounded once to out's type. Each output element is read and
    written by the one thread that computes it, so no atomics are needed
    and the result is the same on every run. An f32 `out` may take the TMA
    store pool, whose boxes then add (TMA's reduce-add, one f32 addition per
    element); a 16-bit one takes per-thread stores (an empty `store_pool`),
    which add in f32 before rounding.

    `zero_ungrouped` (contiguous only) writes zeros to the rows of `out`
    that belong to no group, before `offsets[0]` and from `offsets[G]` on,
    so that a caller needs no pass of its own to clear them (an input
    gradient: rows of x outside every group took no part in the product).
    The schedule walks them as two more groups with no K blocks, whose
    tiles store their zero accumulator. It takes no epilogue region (a
    zero row is written as zero, not as the epilogue of zero), no
    `accumulate` (which would leave the rows as they were) and no `a_rows`.

    `expected_m` is the host's hint of the tokens a group typically holds,
    used to choose tiles: its valid rows (masked, contiguous,
    padded_contiguous), or, for k_grouped, its share of K (a weight
    gradient's tokens an expert). `config` records the tile configuration once
    chosen. `store_pool` (written by `gg-tma-store-pool`) lists the heights
    of the TMA store boxes, `BLOCK_M` halving down to 1: the rows of a tile
    that belong to its group are stored as a sum of such boxes, so no row of
    a neighbouring group is written; an empty list asks for per-thread
    stores instead. `store_slice = C` (the user's, with a store pool)
    stages and stores the output tile C columns at a time through a ring
    of two buffers of BLOCK_M x C outputs instead of one of the whole tile,
    so that a wide tile leaves the pipeline more shared memory: C divides
    the tile's output columns, is fewer, makes rows of whole 128-byte
    chunks, and takes no split_n, column_pairs or column_halves.
    `kernel_plan` (written by `gg-plan-kernel`) records how the kernel's
    warpgroups share the work: promotion, scale placement, register split,
    staging of the output tile (see `#gg.kernel_plan`).

    Example:
    ```mlir
    gg.grouped_matmul contiguous
        a(%x : memref<?x7168xbf16>) b(%w : memref<8x4096x7168xbf16>)
        groups(%m_indptr : memref<9xi32>) out(%y : memref<?x4096xbf16>)
        rows(%route_w : memref<?xf32>)
        epilogue {
        ^bb0(%acc: f32, %w_row: f32, %g: index):
          %r = arith.mulf %acc, %w_row : f32
          gg.yield %r : f32
        }
    ```

    A SwiGLU up projection, gate and up rows of B interleaved:
    ```mlir
    gg.grouped_matmul contiguous
        a(%x : memref<?x7168xbf16>) b(%w13 : memref<8x4096x7168xbf16>)
        groups(%m_indptr : memref<9xi32>) out(%h : memref<?x2048xbf16>)
        {column_pairs}
        epilogue {
        ^bb0(%gate: f32, %up: f32, %g: index):
          %s = gg.silu %gate : f32
          %r = arith.mulf %s, %up : f32
          gg.yield %r : f32
        }
    ```
  }];

  let arguments = (ins
    Arg<AnyMemRef, "A matrix", [MemRead]>:$a,
    Arg<Optional<AnyMemRef>, "row-index list of A (gathered rows)", [MemRead]>:$a_rows,
    Arg<AnyMemRef, "B matrices", [MemRead]>:$b,
    Arg<AnyMemRef, "group offsets, valid counts or row group indices", [MemRead]>:$groups,
    Arg<AnyMemRef, "output", [MemWrite]>:$out,
    Arg<Optional<AnyMemRef>, "row-index list of out (scattered rows)", [MemRead]>:$out_rows,
    Arg<Optional<AnyMemRef>, "1x128 block scales of an FP8 out", [MemWrite]>:$out_scale,
    Arg<Optional<AnyMemRef>, "scales of A", [MemRead]>:$a_scale,
    Arg<Optional<AnyMemRef>, "scales of B", [MemRead]>:$b_scale,
    Arg<Variadic<AnyMemRef>, "per-row epilogue vectors", [MemRead]>:$row_vectors,
    Arg<Variadic<AnyMemRef>, "per-column epilogue vectors", [MemRead]>:$col_vectors,
    Arg<Variadic<AnyMemRef>, "per-group epilogue scalars", [MemRead]>:$group_scalars,
    GG_GroupLayout:$layout,
    DefaultValuedAttr<GG_OperandLayout, "::mlir::gg::OperandLayout::mk">:$a_layout,
    DefaultValuedAttr<GG_OperandLayout, "::mlir::gg::OperandLayout::nk">:$b_layout,
    DefaultValuedAttr<GG_OperandLayout, "::mlir::gg::OperandLayout::mn">:$out_layout,
    OptionalAttr<GG_ScaleAttr>:$a_scale_kind,
    OptionalAttr<GG_ScaleAttr>:$b_scale_kind,
    OptionalAttr<I64Attr>:$expected_m,
    UnitAttr:$tf32,
    UnitAttr:$column_pairs,
    UnitAttr:$column_halves,
    UnitAttr:$accumulate,
    UnitAttr:$zero_ungrouped,
    OptionalAttr<GG_ConfigAttr>:$config,
    OptionalAttr<DenseI64ArrayAttr>:$store_pool,
    OptionalAttr<I64Attr>:$store_slice,
    OptionalAttr<GG_ScheduleAttr>:$schedule,
    OptionalAttr<GG_PaddingAttr>:$padding,
    OptionalAttr<GG_OverfetchAttr>:$overfetch,
    OptionalAttr<GG_KernelPlanAttr>:$kernel_plan
  );
  let regions = (region AnyRegion:$epilogue);

  let assemblyFormat = [{
    $layout
    `a` `(` $a `:` type($a) (`,` $a_layout^)? `)`
    (`a_rows` `(` $a_rows^ `:` type($a_rows) `)`)?
    `b` `(` $b `:` type($b) (`,` $b_layout^)? `)`
    `groups` `(` $groups `:` type($groups) `)`
    (`a_scale` `(` $a_scale^ `:` type($a_scale) `,` $a_scale_kind `)`)?
    (`b_scale` `(` $b_scale^ `:` type($b_scale) `,` $b_scale_kind `)`)?
    `out` `(` $out `:` type($out) (`,` $out_layout^)? `)`
    (`out_rows` `(` $out_rows^ `:` type($out_rows) `)`)?
    (`out_scale` `(` $out_scale^ `:` type($out_scale) `)`)?
    (`rows` `(` $row_vectors^ `:` type($row_vectors) `)`)?
    (`cols` `(` $col_vectors^ `:` type($col_vectors) `)`)?
    (`group_scalars` `(` $group_scalars^ `:` type($group_scalars) `)`)?
    attr-dict
    (`epilogue` $epilogue^)?
  }];

  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    /// The problem sizes the op is specialised for, read off the operand
    /// types. `M` is the row count of A per launch (dynamic: ShapedType::kDynamic).
    struct Dims {
      int64_t numGroups, m, n, k;
    };
    Dims getDims();
    MemRefType getAType() { return ::llvm::cast<MemRefType>(getA().getType()); }
    MemRefType getBType() { return ::llvm::cast<MemRefType>(getB().getType()); }
    MemRefType getOutType() { return ::llvm::cast<MemRefType>(getOut().getType()); }
    /// Why the op's output cannot go out through a TMA store pool (its
    /// valid rows are not a prefix, `out` is not row-major, or, with a
    /// `config`, the staged tile's rows would start some boxes off TMA's
    /// 128-byte alignment), or nullopt when it can. The verifier rejects a
    /// pool for these reasons and gg-tma-store-pool keeps per-thread stores.
    std::optional<std::string> storePoolObstacle(ConfigAttr config);
    /// The output columns of a product of `n` columns, and of a tile of
    /// `config`: as many, or half where column_pairs or column_halves
    /// combines them.
    int64_t outputColumns(int64_t n) { return combinesColumns() ? n / 2 : n; }
    /// Whether the epilogue combines two product columns into one output
    /// (column_pairs or column_halves).
    bool combinesColumns() { return getColumnPairs() || getColumnHalves(); }
    /// The attribute that combines columns, for messages.
    llvm::StringRef combiningName() {
      return getColumnHalves() ? "column_halves" : "column_pairs";
    }
    int64_t outputTileColumns(ConfigAttr config) {
      return outputColumns(config.getBlockN());
    }
    /// The columns the staged tile holds at a time: its `store_slice`, or
    /// all its output columns.
    int64_t stagedColumns(ConfigAttr config) {
      std::optional<int64_t> slice = getStoreSlice();
      return slice ? *slice : outputTileColumns(config);
    }
    /// The block of the epilogue, or null when the op has none.
    Block *getEpilogueBlock() {
      return getEpilogue().empty() ? nullptr : &getEpilogue().front();
    }
  }];
}

def GG_YieldOp : GG_Op<"yield", [Pure, Terminator, ReturnLike,
                                 HasParent<"GroupedMatmulOp">]> {
  let summary = "the value an epilogue stores for one output element";
  let arguments = (ins AnyFloat:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

class GG_UnaryFloatOp<string mnemonic, string formula>
    : GG_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # formula;
  let description = "Computes `" # formula # "` on a scalar float, for epilogues.";
  let arguments = (ins AnyFloat:$x);
  let results = (outs AnyFloat:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def GG_SigmoidOp : GG_UnaryFloatOp<"sigmoid", "1 / (1 + exp(-x))">;
def GG_SiluOp : GG_UnaryFloatOp<"silu", "x / (1 + exp(-x))">;

def GG_SortRoutesOp : GG_Op<"sort_routes"> {
  let summary = "a MoE layer's routes sorted by expert: group offsets, the permutation and each row's weight";
  let description = [{
    Sorts the routes of a top-k routing, route `r = token * top_k + slot`
    with expert `ids[r]` and weight `weights[r]`, by expert, stably (each
    expert's rows keep route order, so every run gives the same bits),
    and writes what the layer's grouped GEMMs read:

    | operand | type | holds |
    |---------|------|-------|
    | `ids` | `[M]` i32/i64 | each route's expert; one outside `[0, experts)` counts on the nearest expert and is marked invalid |
    | `weights` | `[M]` f32 | each route's weight |
    | `chunk_counts` | `[ceil(M / chunk_routes) * experts]` i32 | scratch: each chunk's routes per expert |
    | `offsets` | `[experts + 1]` i32 | expert e owns sorted rows `offsets[e] .. offsets[e+1]` |
    | `order` | `[M]` i64 | the route of each sorted row |
    | `source` | `[M]` i32 | the token of each sorted row (`order / top_k`: a GEMM's `a_rows`) |
    | `position` | `[M]` i64 | the sorted row of each route (`order`'s inverse: the combine's) |
    | `route` | `[M]` f32 | each sorted row's weight, NaN for an invalid id |

    `M = T * top_k` may be dynamic. `gg-lower-sort-routes` makes two
    kernels of `threads` threads a CTA, one CTA per chunk of
    `chunk_routes` routes: `<func>_count(ids, M, chunk_counts)` counts
    each chunk's routes per expert, and `<func>_place(ids, weights, M,
    chunks, chunk_counts, offsets, order, source, position, route)` ranks
    each route (the routes of lower experts, then those of its expert in
    earlier chunks, then in its own chunk before it) and writes it. With
    one chunk the place kernel counts its chunk itself and the count
    kernel is not launched. Both take pointers then i64 sizes as listed.

    Example:
    ```mlir
    gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
        chunk_counts(%c : memref<?xi32>) offsets(%off : memref<129xi32>)
        order(%o : memref<?xi64>) source(%s : memref<?xi32>)
        position(%p : memref<?xi64>) route(%r : memref<?xf32>)
        {experts = 128 : i64, top_k = 8 : i64, chunk_routes = 4096 : i64,
         threads = 512 : i64}
    ```
  }];
  let arguments = (ins AnyMemRef:$ids, AnyMemRef:$weights, AnyMemRef:$chunk_counts,
                       AnyMemRef:$offsets, AnyMemRef:$order, AnyMemRef:$source,
                       AnyMemRef:$position, AnyMemRef:$route,
                       I64Attr:$experts, I64Attr:$top_k, I64Attr:$chunk_routes,
                       I64Attr:$threads);
  let assemblyFormat = [{
    `ids` `(` $ids `:` type($ids) `)` `weights` `(` $weights `:` type($weights) `)`
    `chunk_counts` `(` $chunk_counts `:` type($chunk_counts) `)`
    `offsets` `(` $offsets `:` type($offsets) `)` `order` `(` $order `:` type($order) `)`
    `source` `(` $source `:` type($source) `)` `position` `(` $position `:` type($position) `)`
    `route` `(` $route `:` type($route) `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Static shared memory of the place kernel, in bytes (its per-warp
    /// table, per-expert counters and per-thread partial sums).
    static int64_t placeSharedBytes(int64_t experts, int64_t threads);
  }];
}

def GG_QuantizeRowsOp : GG_Op<"quantize_rows", [AttrSizedOperandSegments]> {
  let summary = "rows quantised to FP8 e4m3 with a scale per row and 128 columns, in the layout an FP8 GEMM reads";
  let description = [{
    Writes `out[p, c] = e4m3(x[p, c] * (448 / a))` and `scale[c / 128, p]
    = a * f32(1 / 448)` with `a = max(amax_b(|x[p, :]|), 1e-12)`, the amax
    over the row's 128 columns of block `b` (one IEEE division a block,
    a multiply an element, as DeepGEMM's `per_token_cast_to_fp8`): the
    1x128 block scales of DeepGEMM's sm90 FP8 recipe, stored M-major
    (`scales[ceil(K / 128), LD]`, `LD >= M`, the `block_mn` layout
    `gg.grouped_matmul` reads for A; with `input_scales`, below, indexed by
    input row, `LD >= R`). `x` is:

    - without `rows`: `input[p]`;
    - with `rows` (`[M]` i32): `input[rows[p]]`, zeros where the index lies
      outside `input` (a gathered copy quantised in the same pass);
    - with `scatter` (`[R * copies]` i32 or i64, `copies` in [1, 64]):
      each row of `input` once, written to the `copies` rows of `out`
      that `scatter[r * copies + c]` names (`c < copies`): the same copy
      as `rows` with the inverse list, each input row read and quantised
      once however many rows it fills. An index outside `out` is skipped;
      rows of `out` that no index names are not written (the MoE layer's
      route positions name each row once). With `input_scales`, `scales`
      holds each input row's scales instead (`LD >= R`, written once a row;
      the caller gathers them into out's rows): out's rows' scales are
      4-byte stores at scattered rows, which cost more than the copy;
    - with `gated` (`input` has `2K` columns): `bf16(silu(g) * u)` for the
      gate `g = input[., c]` and up `u = input[., K + c]` (SwiGLU over the
      column halves, rounded to bf16 as an activation stored between the
      steps would be). With `route` (f32 `[M]`, a weight a row):
      `bf16(silu(g) * u * route[p])`, gg.swiglu_rows' routed rows. With
      `activation` (bf16 `[M, K]`), those bf16 values are stored there too:
      one pass gives a training step both the rows its weight gradient
      reads and their FP8 copy, which `gated` alone would leave to a
      second read. `route` and `activation` take `gated` without `rows`
      or `scatter`, and an input of out's rows (R = M, which the verifier
      checks where both are static).

    `input` is bf16 `[R, K or 2K]`, `out` f8E4M3FN `[M, K]` with `K` a
    multiple of 8 (where it is not of 128 the last block is partial: its
    amax and scale cover its valid columns), `scales` `[ceil(K / 128), LD]`;
    `M` and `R` may be dynamic. `gg-lower-quantize-rows`
    makes one kernel `<func>_quantize(input, [rows | scatter,] [route,] out,
    scales, [activation,] M, R, LD)` of `threads` threads a CTA: a warp takes `steps` steps of a
    row at a time (grid-stride; of `input`'s rows with `scatter`, else of
    `out`'s), half a warp a 128-column block a step, the step's loads
    issued together (more steps: more bytes in flight a warp, more
    registers).

    Example:
    ```mlir
    gg.quantize_rows input(%h : memref<?x1536xbf16>)
        out(%q : memref<?x768xf8E4M3FN>) scales(%s : memref<6x?xf32>)
        {gated, threads = 256 : i64}
    // Each of the tokens' rows to its 8 routes' sorted rows.
    gg.quantize_rows input(%x : memref<?x2048xbf16>)
        scatter(%position : memref<?xi64>) out(%q : memref<?x2048xf8E4M3FN>)
        scales(%s : memref<16x?xf32>) {copies = 8 : i64, threads = 256 : i64}
    // A training step's routed SwiGLU rows, in bf16 and in FP8.
    gg.quantize_rows input(%h : memref<?x1536xbf16>) route(%r : memref<?xf32>)
        out(%q : memref<?x768xf8E4M3FN>) scales(%s : memref<6x?xf32>)
        activation(%a : memref<?x768xbf16>) {gated, threads = 256 : i64}
    ```
  }];
  let arguments = (ins AnyMemRef:$input, Optional<AnyMemRef>:$rows,
                       Optional<AnyMemRef>:$scatter, Optional<AnyMemRef>:$route,
                       AnyMemRef:$out, AnyMemRef:$scales,
                       Optional<AnyMemRef>:$activation, UnitAttr:$gated, I64Attr:$threads,
                       DefaultValuedAttr<I64Attr, "2">:$steps,
                       DefaultValuedAttr<I64Attr, "1">:$copies,
                       UnitAttr:$input_scales);
  let assemblyFormat = [{
    `input` `(` $input `:` type($input) `)`
    (`rows` `(` $rows^ `:` type($rows) `)`)?
    (`scatter` `(` $scatter^ `:` type($scatter) `)`)?
    (`route` `(` $route^ `:` type($route) `)`)?
    `out` `(` $out `:` type($out) `)` `scales` `(` $scales `:` type($scales) `)`
    (`activation` `(` $activation^ `:` type($activation) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def GG_QuantizeGroupTokensOp : GG_Op<"quantize_group_tokens"> {
  let summary = "a weight gradient's operand: each group's tokens quantised to FP8 e4m3 in 1x128 blocks along the tokens, transposed, each group padded to whole blocks";
  let description = [{
    For `input` `[T, C]` (the tokens of consecutive groups, group `g` the
    rows `[groups[g], groups[g+1])`), writes the K-major operand of a
    k-grouped FP8 weight gradient (`dw[g] = dy_g^T x_g`): `out[c, p]`
    holds token `p` of the padded token axis, on which group `g` starts
    at `padded_groups[g] = sum over h < g of roundup(size_h, 128)`, its
    tokens in order, then zeros to its next multiple of 128. Every
    128-token block of `out` thus holds one group's tokens only, and a
    weight gradient over `padded_groups` reads no K block shared by two
    groups (none to clear in shared memory). Each block's column `c` is
    quantised as `gg.quantize_rows` quantises a 128-wide block: `a =
    max(amax, 1e-12)`, `out = e4m3(value * (448 / a))`, `scales[b, c] =
    a * f32(1 / 448)` (MN-major: a block's scales of consecutive
    columns are adjacent). The blocks past the last group's hold zeros.
    DeepSeek-V3's FP8 recipe quantises a weight gradient's tokens so.

    `input` bf16 `[T, C]` (`C` a static multiple of 16; the last 128
    columns may be partial); `groups` and `padded_groups` i32 `[G + 1]`;
    `out` f8E4M3FN `[C, P]` and `scales` f32 `[P / 128, C]`, where `P`
    (dynamic) is a multiple of 128 of at least `padded_groups[G]` (`T` +
    128 G always is). Offsets are clamped to `[0, T]` and to at least
    the group's start; tokens of a group past `P` are not written.
    `gg-lower-quantize-group-tokens` makes one kernel
    `<func>_quantize_group_tokens(input, groups, out, scales,
    padded_groups, T, G, P)` of 256 threads a CTA.

    Example:
    ```mlir
    gg.quantize_group_tokens input(%x : memref<?x2048xbf16>)
        groups(%offsets : memref<129xi32>)
        out(%xt : memref<2048x?xf8E4M3FN>) scales(%s : memref<?x2048xf32>)
        padded_groups(%padded : memref<129xi32>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$groups, AnyMemRef:$out,
                       AnyMemRef:$scales, AnyMemRef:$padded_groups);
  let assemblyFormat = [{
    `input` `(` $input `:` type($input) `)` `groups` `(` $groups `:` type($groups) `)`
    `out` `(` $out `:` type($out) `)` `scales` `(` $scales `:` type($scales) `)`
    `padded_groups` `(` $padded_groups `:` type($padded_groups) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def GG_QuantizeBlocksOp : GG_Op<"quantize_blocks"> {
  let summary = "expert weights quantised to FP8 e4m3 in 128x128 blocks, with the transposed copy an input gradient reads";
  let description = [{
    For each expert `g` and 128x128 block `(i, j)` of `input[g]`: with `a
    = max(amax(|block|), 1e-12)`, writes `out[g, r, c] = e4m3(input[g, r,
    c] * (448 / a))` (one IEEE division a block, a multiply an element:
    `gg.quantize_rows`' rule over a square block), `scales[g, i, j] = a *
    f32(1 / 448)`, and with `transposed`, `transposed[g, c, r] = out[g, r,
    c]`: the same values K-major for a product over N (an input
    gradient's `dx = dy @ w[g]`; wgmma reads e4m3 only along K). The 128x128
    block scales of DeepSeek-V3's FP8 recipe, for training, where the
    weights change every step.

    `input` is bf16 `[G, N, K]`, `out` f8E4M3FN `[G, N, K]`, `transposed`
    f8E4M3FN `[G, K, N]`, `scales` f32 `[G, ceil(N/128), ceil(K/128)]`;
    `N` and `K` static multiples of 16 (where they are not of 128 the last
    blocks are partial: their amax covers their valid values), `G` may be
    dynamic. `gg-lower-quantize-blocks`
    makes one kernel `<func>_quantize_blocks(input, out, [transposed,]
    scales, G)` of 256 threads a CTA, one block at a time (a grid-stride
    loop over the blocks), each thread an 8x8 square of it.

    Example:
    ```mlir
    gg.quantize_blocks input(%w : memref<?x1536x2048xbf16>)
        out(%q : memref<?x1536x2048xf8E4M3FN>)
        transposed(%qt : memref<?x2048x1536xf8E4M3FN>)
        scales(%s : memref<?x12x16xf32>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$out, Optional<AnyMemRef>:$transposed,
                       AnyMemRef:$scales);
  let assemblyFormat = [{
    `input` `(` $input `:` type($input) `)` `out` `(` $out `:` type($out) `)`
    (`transposed` `(` $transposed^ `:` type($transposed) `)`)?
    `scales` `(` $scales `:` type($scales) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def GG_TransposeScalesOp : GG_Op<"transpose_scales"> {
  let summary = "f32 scales of rows, K-major, copied to the M-major form a grouped matmul's `block_mn` scales take";
  let description = [{
    `out[.., c, r] = input[.., r, c]` for `r < R`, and 0 for `R <= r < A`:
    `input` f32 `[R, C]` or `[B, R, C]` (a row's C scales adjacent, as a
    per-token quantiser writes them, DeepGEMM's `sfa`), `out` f32 `[C, A]`
    or `[B, C, A]` with `A >= R` (a row of out holds one K block's scales
    of every row; DeepGEMM's TMA alignment makes `A` R rounded up to 4).
    Any size may be dynamic; where both are known they must agree.
    `gg-lower-transpose-scales` makes one kernel
    `<func>_transpose_scales(input, out, B, R, C, A)` of 256 threads a
    CTA: each thread one row `r` of one batch, its `C` scales read in
    order and written a row of `out` apart, so that a warp's writes of one
    K block are 32 adjacent words.

    Example:
    ```mlir
    gg.transpose_scales input(%sfa : memref<?x56xf32>)
        out(%t : memref<56x?xf32>)
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$out);
  let assemblyFormat = [{
    `input` `(` $input `:` type($input) `)` `out` `(` $out `:` type($out) `)`
    attr-dict
  }];
  let hasVerifier = 1;
}

def GG_CopyRowsOp : GG_Op<"copy_rows", [AttrSizedOperandSegments]> {
  let summary = "rows copied through optional row-index lists: a gather, a scatter, or both";
  let description = [{
    For each `r < R`: `out[out_rows[r]] = input[input_rows[r]]` (a missing
    list is the identity), whole rows. `R` is the lists' length (both the
    same), or with no list `input`'s rows. A row whose index lies outside
    its matrix (negative, or not below its rows) is skipped: nothing is
    read or written for it. The executor gathers its tokens into expert
    order, scatters the experts' rows back and broadcasts each row's
    expert bias with it.

    `input` and `out` are 2-D with the same element type and the same
    static row width (rows may be dynamic); the lists are `[R]` i32. Each
    thread moves `unit_bytes` (1, 2, 4, 8 or 16, dividing a row's bytes)
    at a time: the caller picks the widest unit that its buffers' start
    addresses are aligned to. `gg-lower-copy-rows` makes one kernel
    `<func>_copy(input, [input_rows,] out, [out_rows,] R, input rows, out
    rows)` of `threads` threads a CTA (a grid-stride loop over R x the
    row's units).

    Example:
    ```mlir
    gg.copy_rows input(%x : memref<?x2048xbf16>) input_rows(%i : memref<?xi32>)
        out(%y : memref<?x2048xbf16>) {unit_bytes = 16 : i64, threads = 256 : i64}
    ```
  }];
  let arguments = (ins AnyMemRef:$input, Optional<AnyMemRef>:$input_rows,
                       AnyMemRef:$out, Optional<AnyMemRef>:$out_rows,
                       I64Attr:$unit_bytes, I64Attr:$threads);
  let assemblyFormat = [{
    `input` `(` $input `:` type($input) `)`
    (`input_rows` `(` $input_rows^ `:` type($input_rows) `)`)?
    `out` `(` $out `:` type($out) `)`
    (`out_rows` `(` $out_rows^ `:` type($out_rows) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def GG_SwigluRowsOp : GG_Op<"swiglu_rows"> {
  let summary = "SwiGLU over each row's column halves: a MoE layer's activation as a kernel of its own";
  let description = [{
    Writes `out[p, c] = bf16(silu(input[p, c]) * input[p, I + c])`, in f32
    and rounded once: the gated activation between an up projection that
    wrote its gate and up columns and the down projection, where the up
    projection's epilogue does not compute it (decode tiles, expert
    biases).

    With `route` (f32 `[M]`, each row's routing weight), writes
    `out[p, c] = bf16(silu(input[p, c]) * input[p, I + c] * route[p])`,
    rounded once: the routed rows a training step's down projection
    reads, whose routing weight then needs no pass of its own (and no
    epilogue product: its gradient comes from gg.swiglu_rows_backward's
    `route_grad`).

    `input` and `out` are bf16 `[M, 2I]` and `[M, I]` with `I` static and
    a multiple of 8; `M` may be dynamic. `gg-lower-swiglu-rows` makes one
    kernel `<func>_swiglu(input, out, M)` (with `route`:
    `<func>_swiglu(input, route, out, M)`) of `threads` threads a CTA, each
    thread 8 columns of one row (a grid-stride loop).

    Example:
    ```mlir
    gg.swiglu_rows input(%h : memref<?x1536xbf16>) out(%a : memref<?x768xbf16>)
        {threads = 256 : i64}
    gg.swiglu_rows input(%h : memref<?x1536xbf16>) route(%r : memref<?xf32>)
        out(%a : memref<?x768xbf16>) {threads = 256 : i64}
    ```
  }];
  let arguments = (ins AnyMemRef:$input, Optional<AnyMemRef>:$route, AnyMemRef:$out,
                       I64Attr:$threads);
  let assemblyFormat = [{
    `input` `(` $input `:` type($input) `)`
    (`route` `(` $route^ `:` type($route) `)`)?
    `out` `(` $out `:` type($out) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def GG_SwigluRowsBackwardOp : GG_Op<"swiglu_rows_backward", [AttrSizedOperandSegments]> {
  let summary = "the gradient of gg.swiglu_rows: a MoE layer's activation in training, as a kernel of its own";
  let description = [{
    For `a = silu(g) * u` over each row's column halves (`g = input[p, c]`,
    `u = input[p, I + c]`) and the gradient `d = grad[p, c]` of `a`, writes
    `out[p, c] = bf16(d * u * s * (1 + g * (1 - s)))` (the gate's
    gradient, `s = sigmoid(g)`) and `out[p, I + c] = bf16(d * silu(g))`
    (the up half's), each in f32 and rounded once, with
    `gg.swiglu_rows`' sigmoid (`ex2`, an approximate reciprocal).

    With `route` and `route_grad` (f32 `[M]` each), `grad` is the
    gradient of the routed rows `route[p] * a[p, c]` (gg.swiglu_rows with
    `route`): `d` above becomes `route[p] * grad[p, c]`, and
    `route_grad[p] = sum over c of grad[p, c] * a[p, c]` (`a` in f32,
    unrounded), the routing weight's gradient: one pass where the product,
    its gradient and the row sums took four. A warp takes a row then, each
    lane 8 columns at a time, and sums its lanes by butterfly shuffles in a
    fixed order (the same bits on every run).

    With `quantized` (f8E4M3FN `[M, 2I]`) and `quantized_scales` (f32
    `[2I / 128, LD]`, `LD >= M`; routed only, `I` a multiple of 128), the
    same pass also writes `out`'s bf16 values quantised as
    gg.quantize_rows quantises them (1x128 blocks, M-major scales): the
    FP8 input gradient's operand, without a second read of `out`. Each
    half-warp's 128 columns are a block (of the gate half or the up
    half): its amax by shuffles, as gg.quantize_rows takes it.

    `input` and `out` are bf16 `[M, 2I]`, `grad` bf16 `[M, I]`, `I` static
    and a multiple of 8; `M` may be dynamic. `gg-lower-swiglu-rows` makes
    one kernel `<func>_swiglu_backward(input, grad, out, M)` (with `route`:
    `<func>_swiglu_backward(input, grad, route, out, route_grad, M)`;
    quantised: `<func>_swiglu_backward(input, grad, route, out, route_grad,
    quantized, quantized_scales, M, LD)`) of
    `threads` threads a CTA, each thread 8 columns of one row (a
    grid-stride loop; routed, a warp a row).

    Example:
    ```mlir
    gg.swiglu_rows_backward input(%h : memref<?x1536xbf16>)
        grad(%d : memref<?x768xbf16>) out(%dh : memref<?x1536xbf16>)
        {threads = 256 : i64}
    gg.swiglu_rows_backward input(%h : memref<?x1536xbf16>)
        grad(%d : memref<?x768xbf16>) route(%r : memref<?xf32>)
        out(%dh : memref<?x1536xbf16>) route_grad(%dr : memref<?xf32>)
        {threads = 256 : i64}
    gg.swiglu_rows_backward input(%h : memref<?x1536xbf16>)
        grad(%d : memref<?x768xbf16>) route(%r : memref<?xf32>)
        out(%dh : memref<?x1536xbf16>) route_grad(%dr : memref<?xf32>)
        quantized(%q : memref<?x1536xf8E4M3FN>) quantized_scales(%s : memref<12x?xf32>)
        {threads = 256 : i64}
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$grad, Optional<AnyMemRef>:$route,
                       AnyMemRef:$out, Optional<AnyMemRef>:$route_grad,
                       Optional<AnyMemRef>:$quantized,
                       Optional<AnyMemRef>:$quantized_scales, I64Attr:$threads);
  let assemblyFormat = [{
    `input` `(` $input `:` type($input) `)` `grad` `(` $grad `:` type($grad) `)`
    (`route` `(` $route^ `:` type($route) `)`)?
    `out` `(` $out `:` type($out) `)`
    (`route_grad` `(` $route_grad^ `:` type($route_grad) `)`)?
    (`quantized` `(` $quantized^ `:` type($quantized) `)`)?
    (`quantized_scales` `(` $quantized_scales^ `:` type($quantized_scales) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def GG_CombineRoutesOp : GG_Op<"combine_routes"> {
  let summary = "each token's routed rows summed back in slot order: a MoE layer's deterministic combine";
  let description = [{
    Writes `out[t, c] = bf16(sum over j < top_k of input[position[t * top_k
    + j], c])`, the sum in f32 in slot order and rounded once, so every run
    gives the same bits (no atomics). A position outside `input`'s rows
    adds zero.

    `input` and `out` are bf16 `[M, H]` and `[T, H]` with the same static
    `H`, a multiple of 8; `position` is i32 or i64 `[T * top_k]`; `M` and
    `T` may be dynamic. `gg-lower-combine-routes` makes one kernel
    `<func>_combine(input, position, out, T, M)` of `threads` threads a
    CTA, each thread 8 columns of one token (a grid-stride loop).

    Example:
    ```mlir
    gg.combine_routes input(%y : memref<?x2048xbf16>) position(%p : memref<?xi64>)
        out(%o : memref<?x2048xbf16>) {top_k = 8 : i64, threads = 256 : i64}
    ```
  }];
  let arguments = (ins AnyMemRef:$input, AnyMemRef:$position, AnyMemRef:$out,
                       I64Attr:$top_k, I64Attr:$threads);
  let assemblyFormat = [{
    `input` `(` $input `:` type($input) `)` `position` `(` $position `:` type($position) `)`
    `out` `(` $out `:` type($out) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def GG_SelectExpertsOp : GG_Op<"select_experts"> {
  let summary = "each token's top-k experts and their weights: a MoE layer's router as one kernel";
  let description = [{
    For each token `t` (a row of `logits`, `[T, E]`), writes the `K`
    chosen experts to `ids[t, 0..K)` (i32, best first; equal choices: the
    lower expert first) and their routing weights to `weights[t, 0..K)`
    (f32).

    Softmax (the default): the experts with the largest logits, weighted
    `exp(l - m) / S`, with `m` the row's largest logit and `S` the sum of
    `exp(l - m)` over all `E` experts, or with `renormalize` over the `K`
    chosen ones (softmax, top-k, then division by the chosen weights'
    sum: Mixtral's and Qwen3's routers; the same as a softmax over the
    `K` chosen logits, gpt-oss's). With `sigmoid` (DeepSeek-V3's), each
    expert's score is `sigmoid(l)` and a chosen expert's weight its
    score, divided with `renormalize` by the chosen scores' sum. With
    `bias` (f32 `[E]`, DeepSeek-V3's correction bias), experts are chosen
    by score plus bias (softmax's score: `exp(l - m) / S`) and weighted by
    the score alone. With `groups` (dividing `E`), the experts split into
    that many groups of consecutive experts; a group ranks by its best
    choice value (with `bias`: the sum of its two best), the
    `topk_groups` best groups are kept (equal: the lower group) and the
    `K` experts are chosen among theirs. `scaling` multiplies the final
    weights. Weights are summed in the order they were chosen, so every
    run gives the same bits. `exp` is `ex2` of `x * log2(e)` and sigmoid
    gg.swiglu_rows' (`ex2`, an approximate reciprocal); a NaN logit makes
    the row's weights NaN.

    `logits` is bf16, f16 or f32 `[T, E]` with `E` static in [1, 1024];
    `weights` f32 and `ids` i32 `[T, K]`, `K` static in [1, min(E, 32)]
    and at most the kept groups' experts; `groups` at most 32, and with
    `bias` at least two experts a group; `T` may be dynamic.
    `gg-lower-select-experts` makes one kernel
    `<func>_select_experts(logits, weights, ids, T)` (with `bias`:
    `(logits, bias, weights, ids, T)`) of `threads` threads a CTA, a warp
    a token (a grid-stride loop), each lane holding the logits of every
    32nd expert.

    Example:
    ```mlir
    gg.select_experts logits(%l : memref<?x128xbf16>) weights(%w : memref<?x8xf32>)
        ids(%i : memref<?x8xi32>) {renormalize, threads = 256 : i64}
    gg.select_experts logits(%l : memref<?x256xf32>) bias(%b : memref<256xf32>)
        weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>)
        {sigmoid, renormalize, groups = 8 : i64, topk_groups = 4 : i64,
         scaling = 2.5 : f32, threads = 128 : i64}
    ```
  }];
  let arguments = (ins AnyMemRef:$logits, Optional<AnyMemRef>:$bias, AnyMemRef:$weights,
                       AnyMemRef:$ids, UnitAttr:$renormalize, UnitAttr:$sigmoid,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       OptionalAttr<I64Attr>:$topk_groups,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scaling, I64Attr:$threads);
  let assemblyFormat = [{
    `logits` `(` $logits `:` type($logits) `)` (`bias` `(` $bias^ `:` type($bias) `)`)?
    `weights` `(` $weights `:` type($weights) `)` `ids` `(` $ids `:` type($ids) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def GG_SelectExpertsBackwardOp : GG_Op<"select_experts_backward"> {
  let summary = "the gradient of gg.select_experts' renormalised weights: a MoE router's backward as one kernel";
  let description = [{
    For the renormalised weights `w` a token's `K` chosen experts got from
    gg.select_experts (`renormalize`: a softmax over the chosen logits)
    and their gradient `g`, writes the logits' gradient: `out[t, ids[t,
    j]] = w_j * (g_j - s)` with `s` the sum over the chosen of `w_k *
    g_k` (in f32, added by butterfly shuffles in a fixed order, rounded
    once to `out`'s type), and zero at every expert not chosen.

    `weights` and `grad` are f32, `ids` i32 `[T, K]` (ids in `[0, E)`; a
    chosen id outside it writes nothing); `out` bf16, f16 or f32 `[T, E]`,
    `E` static in [1, 1024], `K` static in [1, min(E, 32)]; `T` may be
    dynamic. `gg-lower-select-experts` makes one kernel
    `<func>_select_experts_backward(weights, ids, grad, out, T)` of
    `threads` threads a CTA, a warp a token.

    Example:
    ```mlir
    gg.select_experts_backward weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>)
        grad(%g : memref<?x8xf32>) out(%d : memref<?x128xbf16>) {threads = 128 : i64}
    ```
  }];
  let arguments = (ins AnyMemRef:$weights, AnyMemRef:$ids, AnyMemRef:$grad,
                       AnyMemRef:$out, I64Attr:$threads);
  let assemblyFormat = [{
    `weights` `(` $weights `:` type($weights) `)` `ids` `(` $ids `:` type($ids) `)`
    `grad` `(` $grad `:` type($grad) `)` `out` `(` $out `:` type($out) `)` attr-dict
  }];
  let hasVerifier = 1;
}

#endif // GG_OPS_TD
