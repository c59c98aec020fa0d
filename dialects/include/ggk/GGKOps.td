//===- GGKOps.td - ggk operations ---------------------------*- tablegen -*-===//
#ifndef GGK_OPS_TD
#define GGK_OPS_TD

include "ggk/GGKBase.td"
include "gg/GGBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

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
    that N blocks move first within a group (else M blocks); `tile` the block sizes
    [BM, BN, BK]; `m`, `n`, `k` the static sizes (k_grouped's `k` and
    other layouts' `m` may be dynamic); `cluster` the CTAs that walk the
    schedule together, one M block each (`cluster_rank` then gives this
    CTA's rank); `k_alignment` the alignment of a k_grouped group's first
    K block (gg's overfetch).

    The body's block arguments are the tile's fields, all i32, then the
    carried values:
    `group, m_block, n_block, row_start` (the tile's first row in A's row
    space), `group_start` (the group's), `rows_valid` (rows of the tile
    that belong to the group), `k_start` (where its K blocks start),
    `k_first`, `k_end` (the group's K range), `num_k_blocks`.

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
    Variadic<AnyType>:$inits
  );
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $layout `groups` `(` $groups `:` type($groups) `,` $groups_type `)`
    `size` `(` $size `)` (`rank` `(` $cluster_rank^ `)`)?
    (`iter_args` `(` $inits^ `:` type($inits) `)`)? attr-dict-with-keyword
    $body (`->` type($results)^)?
  }];
  let extraClassDeclaration = [{
    /// Fields of a tile the body receives before the carried values.
    static constexpr unsigned kTileFields = 10;
    mlir::Block *getBodyBlock() { return &getBody().front(); }
  }];
}

def GGK_YieldOp : GGK_Op<"yield", [Pure, Terminator,
    ParentOneOf<["ForeachTileOp"]>]> {
  let summary = "the values a ggk region carries to the next tile";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, mlir::ValueRange()); }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // GGK_OPS_TD
