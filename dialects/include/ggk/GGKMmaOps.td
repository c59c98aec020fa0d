//===- GGKMmaOps.td - the tensor-core MMA as ggk ops -------*- tablegen -*-===//
//
// A consumer warpgroup's matrix multiply-accumulate on a stage's tiles,
// stated without the target's instruction: ggk.mma (the K steps of one K
// block) on a typed accumulator (!ggk.acc) and the ops that make and read
// one, and the ordering around it, ggk.mma_fence, ggk.mma_commit and
// ggk.mma_wait. ggk-lower-mma lowers them for sm_90a (wgmma),
// ggk-lower-mma-sync for the others, ggk-lower-accumulators the
// accumulators. Included by GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_MmaOp : GGK_Op<"mma", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "a consumer warpgroup's multiply-accumulate of K steps of a stage's A and B tiles into its accumulator";
  let description = [{
    `result = (fresh ? 0 : acc) + A[64 rows, K steps] x B[K steps, n]` for
    the consumer warpgroup's 64 rows of the A tile at `a_tile` and the `n`
    columns of the B tile at `b_tile` (shared-memory addresses of the
    stage's tiles, 128-byte swizzled), `n` being the accumulator's columns,
    over K steps `first_step .. first_step + steps` of `k_per_step`
    elements each (16 for 16-bit operands, 32 for 8-bit, 8 for tf32).
    `a_type` and `b_type` are the operands' element types (f32: tf32
    math). `a_mn_major` / `b_mn_major`: the tile lies MN-major (its
    64-wide MN chunks `block_k` rows of 128 bytes apart) instead of
    K-major. `fresh`: the first step overwrites the accumulator. The
    accumulator's type says which warp computes which rows and columns
    (`!ggk.acc`'s `warp_columns`). The product may complete
    asynchronously: `ggk.mma_commit` and `ggk.mma_wait` say when it must
    have. `three_tf32` (f32 operands without gg's `tf32`): f32 accuracy
    from TF32 tensor cores, each operand split into its TF32 part and the
    TF32 of the rest, and three products (rest x part, part x rest, part x
    part) summed; only `ggk-lower-mma-sync` lowers it, on every target.
    `ggk-lower-mma` lowers it for sm_90a (warp_columns = 1 only): one
    `wgmma.mma_async` per K step on shared-memory descriptors;
    `ggk-lower-mma-sync` for the other targets.

    `step_offset`, when given, is a run-time count of K steps added to
    every step (the scale block of a K block that MX 1x32 multiplies
    alone); the caller keeps the steps inside `block_k`.

    Example:
    ```mlir
    %acc1 = ggk.mma %acc0, %a, %b attributes {a_type = bf16, b_type = bf16,
        k_per_step = 16, block_k = 64, first_step = 0, steps = 4}
        : !ggk.acc<64x128xf32>
    ```
  }];
  let arguments = (ins GGK_AccType:$acc,
                       LLVM_PointerInAddressSpace<3>:$a_tile,
                       LLVM_PointerInAddressSpace<3>:$b_tile,
                       TypeAttr:$a_type, TypeAttr:$b_type,
                       I64Attr:$k_per_step, I64Attr:$block_k,
                       I64Attr:$first_step, I64Attr:$steps,
                       UnitAttr:$fresh, UnitAttr:$a_mn_major,
                       UnitAttr:$b_mn_major, UnitAttr:$three_tf32,
                       Optional<I32>:$step_offset);
  let results = (outs GGK_AccType:$result);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $acc `,` $a_tile `,` $b_tile (`steps_from` `(` $step_offset^ `)`)?
    attr-dict-with-keyword `:` qualified(type($result))
  }];
  let extraClassDeclaration = [{
    ::mlir::ggk::AccType getAccType() {
      return ::llvm::cast<::mlir::ggk::AccType>(getAcc().getType());
    }
    /// The accumulator's columns.
    int64_t getN() { return getAccType().getColumns(); }
  }];
}

def GGK_AccZeroOp : GGK_Op<"acc_zero", [Pure]> {
  let summary = "an accumulator of zeros";
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let results = (outs GGK_AccType:$result);
}

def GGK_AccUndefOp : GGK_Op<"acc_undef", [Pure]> {
  let summary = "an accumulator whose values are not read (a fresh ggk.mma's)";
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let results = (outs GGK_AccType:$result);
}

def GGK_AccOriginOp : GGK_Op<"acc_origin", [Pure]> {
  let summary = "where this thread's accumulator elements lie: their first row and column, and its warp's first row";
  let description = [{
    For a warpgroup's accumulator (of type `acc_type`) whose first
    element lies at row `first_row` and column `first_column` of the tile,
    the row and column of the thread's row group 0, column block 0, column
    0; row group `r`, column block `c` and column `j` lie at `row + 8 r`
    and `column + 8 c + j`. `warp_row`: the first of the rows its warp
    holds (per-row data such as scales is fetched a warp's rows at a
    time). The thread's place in its warpgroup is its thread index modulo
    128.

    Example:
    ```mlir
    %row, %column, %warp_row = ggk.acc_origin !ggk.acc<64x128xf32, warp_columns = 2> at (%r0, %c0)
    ```
  }];
  let arguments = (ins TypeAttrOf<GGK_AccType>:$acc_type, I32:$first_row,
                       I32:$first_column);
  let results = (outs I32:$row, I32:$column, I32:$warp_row);
  let assemblyFormat = [{
    qualified($acc_type) `at` `(` $first_row `,` $first_column `)` attr-dict
  }];
  let builders = [OpBuilder<(ins "::mlir::ggk::AccType":$accType,
                                 "::mlir::Value":$firstRow,
                                 "::mlir::Value":$firstColumn), [{
    ::mlir::Type i32 = $_builder.getI32Type();
    build($_builder, $_state, i32, i32, i32, accType, firstRow, firstColumn);
  }]>];
}

def GGK_AccGetOp : GGK_Op<"acc_get", [Pure]> {
  let summary = "one of the thread's accumulator values: row group, column block, column of the pair";
  let description = [{
    Example: `%v = ggk.acc_get %acc[1, 3, 0] : !ggk.acc<64x128xf32>` (row
    `origin + 8`, column `origin + 24`).
  }];
  let arguments = (ins GGK_AccType:$acc, DenseI64ArrayAttr:$position);
  let results = (outs F32:$result);
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$acc,
                                 "::llvm::ArrayRef<int64_t>":$position), [{
    build($_builder, $_state, $_builder.getF32Type(), acc,
          $_builder.getDenseI64ArrayAttr(position));
  }]>];
  let assemblyFormat = "$acc `` $position attr-dict `:` qualified(type($acc))";
}

def GGK_AccSetOp : GGK_Op<"acc_set", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "the accumulator with one of the thread's values replaced";
  let description = [{
    Example: `%acc1 = ggk.acc_set %v, %acc0[1, 3, 0] : !ggk.acc<64x128xf32>`.
  }];
  let arguments = (ins F32:$value, GGK_AccType:$acc,
                       DenseI64ArrayAttr:$position);
  let results = (outs GGK_AccType:$result);
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$value, "::mlir::Value":$acc,
                                 "::llvm::ArrayRef<int64_t>":$position), [{
    build($_builder, $_state, acc.getType(), value, acc,
          $_builder.getDenseI64ArrayAttr(position));
  }]>];
  let assemblyFormat = "$value `,` $acc `` $position attr-dict `:` qualified(type($acc))";
}

def GGK_AccPinOp : GGK_Op<"acc_pin", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "the accumulator, kept in the registers it is in";
  let description = [{
    Keeps the compiler from moving the accumulator's values or the work
    that makes them across this point (pipelined promotion: each K block's
    FMAs stay between the wgmma batches they overlap). Lowered to an empty
    inline asm that ties each register to itself.
  }];
  let arguments = (ins GGK_AccType:$acc);
  let results = (outs GGK_AccType:$result);
  let assemblyFormat = "$acc attr-dict `:` qualified(type($acc))";
}

def GGK_MmaFenceOp : GGK_Op<"mma_fence"> {
  let summary = "order the accumulator's register writes before the next ggk.mma reads it";
  let description = [{
    Before a warpgroup's `ggk.mma` reads an accumulator (or a stage) that
    other instructions wrote, those writes must be visible to it. sm_90a:
    `wgmma.fence` (`ggk-lower-mma`); a synchronous MMA needs nothing.
  }];
  let assemblyFormat = "attr-dict";
}

def GGK_MmaCommitOp : GGK_Op<"mma_commit"> {
  let summary = "close the batch of ggk.mma issued since the last commit";
  let description = [{
    The `ggk.mma` ops issued since the previous commit form one batch,
    which `ggk.mma_wait` counts. sm_90a: `wgmma.commit_group`
    (`ggk-lower-mma`).
  }];
  let assemblyFormat = "attr-dict";
}

def GGK_MmaWaitOp : GGK_Op<"mma_wait"> {
  let summary = "wait until at most `pending` committed batches of ggk.mma are still running";
  let description = [{
    After it, every committed batch but the newest `pending` has completed:
    its results may be read and its stages released. sm_90a:
    `wgmma.wait_group pending` (`ggk-lower-mma`).

    Example:
    ```mlir
    ggk.mma_wait attributes {pending = 1}
    ```
  }];
  let arguments = (ins I64Attr:$pending);
  let hasVerifier = 1;
  let assemblyFormat = "attr-dict-with-keyword";
}
