//===- GGKTmaOps.td - TMA copies, bulk store groups, mbarriers -*- tablegen -*-===//
//
// The tensor memory accelerator's copies and the mbarriers that count them,
// one op per instruction the technique passes ask for, so that they write
// no NVVM: TMA loads into a stage (counted in bytes on its full barrier),
// TMA stores of a staged output tile (grouped into bulk groups that a
// thread commits and waits on), and a barrier's initialisation and
// arrivals. `ggk-lower-tma` lowers them, last in the list with the thread
// ops, for a target with tensor maps (`Target::tensorMaps`). Included by
// GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_MbarrierInitOp : GGK_Op<"mbarrier_init"> {
  let summary = "initialise a shared-memory barrier for `count` arrivals a phase";
  let description = [{
    `ggk-lower-tma`: `mbarrier.init.shared.b64`.

    Example:
    ```mlir
    ggk.mbarrier_init %full attributes {count = 1 : i64}
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$count);
  let assemblyFormat = "$barrier attr-dict-with-keyword";
}

def GGK_MbarrierArriveOp : GGK_Op<"mbarrier_arrive"> {
  let summary = "one arrival of the calling thread on a shared-memory barrier";
  let description = [{
    `ggk-lower-tma`: `mbarrier.arrive.shared.b64` (its state discarded).

    Example:
    ```mlir
    ggk.mbarrier_arrive %empty
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier);
  let assemblyFormat = "$barrier attr-dict";
}

def GGK_MbarrierArriveExpectTxOp : GGK_Op<"mbarrier_arrive_expect_tx"> {
  let summary = "one arrival, and `bytes` more for the phase's copies to bring";
  let description = [{
    The phase completes once its arrivals are in and the TMA copies on the
    barrier have brought `bytes` bytes. `ggk-lower-tma`:
    `mbarrier.arrive.expect_tx.shared.b64`.

    Example:
    ```mlir
    ggk.mbarrier_arrive_expect_tx %full, %bytes
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier, I32:$bytes);
  let assemblyFormat = "$barrier `,` $bytes attr-dict";
}

def GGK_TmaLoadOp : GGK_Op<"tma_load", [AttrSizedOperandSegments]> {
  let summary = "a TMA load of one box of a tensor map into this CTA's shared memory";
  let description = [{
    The box of `map` at `coords` (innermost first) lands at `dst`; its
    bytes count on `barrier`. `l2_hint` is an L2 cache policy
    (`createpolicy`'s, e.g. evict_first for B's tiles). A multicast load
    to a cluster is `ggk-multicast`'s own. `ggk-lower-tma`:
    `cp.async.bulk.tensor.Nd.shared::cta.global.tile.mbarrier::complete_tx::bytes`.

    Example:
    ```mlir
    ggk.tma_load %stage, %map[%k, %row], %full
    ggk.tma_load %stage, %map[%k, %col, %g], %full l2_hint(%policy)
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$dst,
                       LLVM_PointerInAddressSpace<0>:$map,
                       Variadic<I32>:$coords,
                       LLVM_PointerInAddressSpace<3>:$barrier,
                       Optional<I64>:$l2_hint);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $dst `,` $map `[` $coords `]` `,` $barrier (`l2_hint` `(` $l2_hint^ `)`)?
    attr-dict
  }];
}

def GGK_TmaStoreOp : GGK_Op<"tma_store"> {
  let summary = "a TMA store of one box from shared memory to a tensor map";
  let description = [{
    The box at `src` goes to `map` at `coords` (innermost first); rows and
    columns past the map's extents are clipped. The store joins the
    thread's open bulk group (`ggk.bulk_commit_group`). `ggk-lower-tma`:
    `cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group`, or with
    `add` `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.add.tile.bulk_group`
    (the box is added to what the tensor holds, in the map's element type).

    Example:
    ```mlir
    ggk.tma_store %staged, %map[%col, %row]
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<0>:$map,
                       LLVM_PointerInAddressSpace<3>:$src,
                       Variadic<I32>:$coords,
                       UnitAttr:$add);
  let hasVerifier = 1;
  let assemblyFormat = "$src `,` $map `[` $coords `]` attr-dict";
}

def GGK_BulkCommitGroupOp : GGK_Op<"bulk_commit_group"> {
  let summary = "close the thread's bulk group of TMA stores since the last commit";
  let description = [{
    `ggk-lower-tma`: `cp.async.bulk.commit_group`.
  }];
  let assemblyFormat = "attr-dict";
}

def GGK_BulkWaitGroupOp : GGK_Op<"bulk_wait_group"> {
  let summary = "wait until at most `pending` of the thread's bulk groups are in flight";
  let description = [{
    With `read`, until their stores have read shared memory (their global
    writes may still be in flight), so the staged tile may be overwritten;
    without it, until they are complete, as a CTA must before it exits.
    `ggk-lower-tma`: `cp.async.bulk.wait_group(.read) pending`.

    Example:
    ```mlir
    ggk.bulk_wait_group read attributes {pending = 0 : i64}
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>]>:$pending,
                       UnitAttr:$read);
  let assemblyFormat = "(`read` $read^)? attr-dict-with-keyword";
}

def GGK_TmaLoadMulticastOp : GGK_Op<"tma_load_multicast", [AttrSizedOperandSegments]> {
  let summary = "a TMA load of one box into the same place of every CTA of the cluster";
  let description = [{
    Like `ggk.tma_load`, but the box lands at `dst` in each of the
    `cluster` CTAs' shared memory, its bytes counted on each one's
    `barrier`; `rank` is the calling CTA's rank in its cluster. Made by
    `ggk-multicast` for a clustered kernel. `ggk-lower-tma`: `mapa` of
    `dst` to `rank`'s and
    `cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster`
    with a mask of the cluster's CTAs.

    Example:
    ```mlir
    ggk.tma_load_multicast %stage, %map[%k, %n, %g], %full rank(%rank) l2_hint(%policy) attributes {cluster = 2 : i64}
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$dst,
                       LLVM_PointerInAddressSpace<0>:$map,
                       Variadic<I32>:$coords,
                       LLVM_PointerInAddressSpace<3>:$barrier,
                       I32:$rank,
                       Optional<I64>:$l2_hint,
                       ConfinedAttr<I64Attr, [IntMinValue<2>, IntMaxValue<16>]>:$cluster);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $dst `,` $map `[` $coords `]` `,` $barrier `rank` `(` $rank `)`
    (`l2_hint` `(` $l2_hint^ `)`)? attr-dict-with-keyword
  }];
}

def GGK_MbarrierArriveClusterOp : GGK_Op<"mbarrier_arrive_cluster"> {
  let summary = "one arrival on the barrier at the same place in cluster CTA `rank`";
  let description = [{
    An arrival of CTA scope (the caller's reads are done; no cluster-wide
    fence) on another CTA's barrier, e.g. a consumer warp's release of a
    stage that a multicast filled in every CTA. `ggk-lower-tma`: `mapa` of
    `barrier` to `rank`'s, then `mbarrier.arrive.shared::cluster.b64`.

    Example:
    ```mlir
    ggk.mbarrier_arrive_cluster %empty, %rank
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier, I32:$rank);
  let assemblyFormat = "$barrier `,` $rank attr-dict";
}

def GGK_FenceBarrierInitOp : GGK_Op<"fence_barrier_init"> {
  let summary = "the calling thread's mbarrier initialisations become visible to the cluster";
  let description = [{
    Before a peer CTA may multicast into this CTA or arrive on its
    barriers. `ggk-lower-tma`: `fence.mbarrier_init.release.cluster`.
  }];
  let assemblyFormat = "attr-dict";
}
