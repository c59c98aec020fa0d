//===- GGKMmaOps.td - the tensor-core MMA as ggk ops -------*- tablegen -*-===//
//
// A consumer warpgroup's matrix multiply-accumulate on a stage's tiles,
// stated without the target's instruction: ggk.mma (the K steps of one K
// block), and the ordering around it, ggk.mma_fence, ggk.mma_commit and
// ggk.mma_wait. ggk-lower-mma lowers them for sm_90a (wgmma). Included by
// GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_MmaOp : GGK_Op<"mma", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "a consumer warpgroup's multiply-accumulate of K steps of a stage's A and B tiles into its accumulator fragment";
  let description = [{
    `result = (fresh ? 0 : acc) + A[64 rows, K steps] x B[K steps, n]` for
    the consumer warpgroup's 64 rows of the A tile at `a_tile` and the
    `n` columns of the B tile at `b_tile` (shared-memory addresses of the
    stage's tiles, 128-byte swizzled), over K steps `first_step ..
    first_step + steps` of `k_per_step` elements each (16 for 16-bit
    operands, 32 for 8-bit, 8 for tf32). `a_type` and `b_type` are the
    operands' element types (f32: tf32 math). `a_mn_major` / `b_mn_major`:
    the tile lies MN-major (its 64-wide MN chunks `block_k` rows of 128
    bytes apart) instead of K-major. `fresh`: the first step overwrites the
    accumulator. The accumulator is the warpgroup's f32 fragment, an
    `!llvm.struct` of n / 2 f32 per thread (the m64nNk fragment: thread
    `lane` of warp `w` holds rows `16 w + lane / 4` and `+ 8`, column
    pairs `8 c + 2 (lane % 4)`). The product may complete asynchronously:
    `ggk.mma_commit` and `ggk.mma_wait` say when it must have.
    `warp_columns = 2` (gg-plan-kernel's, for the mma.sync lowering) lays
    the four warps out 2 x 2 instead: warp `w` holds rows `32 (w / 2) ..`
    as two m16 blocks of the columns `(w % 2) n / 2 ..`, register
    `4 (i n / 16 + c) + 2 half + j` for m16 block `i`; `warp_columns = 4`
    side by side: warp `w` holds all 64 rows as four m16 blocks of the
    columns `w n / 4 ..`, register `4 (i n / 32 + c) + 2 half + j`.
    `three_tf32` (f32 operands without gg's `tf32`): f32 accuracy from
    TF32 tensor cores, each operand split into its TF32 part and the TF32
    of the rest, and three products (rest x part, part x rest, part x
    part) summed; only `ggk-lower-mma-sync` lowers it, on every target.
    `ggk-lower-mma` lowers it for sm_90a (warp_columns = 1 only): one
    `wgmma.mma_async` per K step on shared-memory descriptors;
    `ggk-lower-mma-sync` for the other targets.

    Example:
    ```mlir
    %acc1 = ggk.mma %acc0, %a, %b attributes {a_type = bf16, b_type = bf16,
        n = 128, k_per_step = 16, block_k = 64, first_step = 0, steps = 4}
        : !llvm.struct<(f32, ...)>
    ```
  }];
  let arguments = (ins LLVM_AnyStruct:$acc,
                       LLVM_PointerInAddressSpace<3>:$a_tile,
                       LLVM_PointerInAddressSpace<3>:$b_tile,
                       TypeAttr:$a_type, TypeAttr:$b_type, I64Attr:$n,
                       I64Attr:$k_per_step, I64Attr:$block_k,
                       I64Attr:$first_step, I64Attr:$steps,
                       UnitAttr:$fresh, UnitAttr:$a_mn_major,
                       UnitAttr:$b_mn_major,
                       DefaultValuedAttr<I64Attr, "1">:$warp_columns,
                       UnitAttr:$three_tf32);
  let results = (outs LLVM_AnyStruct:$result);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $acc `,` $a_tile `,` $b_tile attr-dict-with-keyword `:` type($result)
  }];
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
