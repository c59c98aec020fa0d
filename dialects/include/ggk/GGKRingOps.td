//===- GGKRingOps.td - the stage ring's protocol -----------*- tablegen -*-===//
//
// The producer's and the consumers' protocol on the ring of stages
// (acquire, commit, wait, release), its barriers' setup and the cluster's
// exit, stated without a target's instructions: ggk-lower-ring (sm_90a) or
// ggk-lower-ring-test-wait (before it) and ggk-multicast lower them.
// Included by GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_AcquireStageOp : GGK_Op<"acquire_stage"> {
  let summary = "the producer waits until a stage of the ring is free to refill";
  let description = [{
    The producer's wait, before it loads a K block into a ring stage,
    until the consumers have released the stage's previous contents: the
    stage's empty barrier at `barrier` completes its phase of parity
    `parity` (0 or 1; the first pass through the ring waits on parity 1,
    the phase before a fresh barrier's first, which counts as complete).
    With `ggk.commit_stage`, `ggk.wait_stage` and `ggk.release_stage` it
    states the ring's
    protocol without saying how a target keeps it; `ggk-lower-ring`
    lowers it for sm_90a (an mbarrier try-wait loop on the parity).

    Example:
    ```mlir
    ggk.acquire_stage %empty, %parity
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier, I32:$parity);
  let assemblyFormat = "$barrier `,` $parity attr-dict";
}

def GGK_CommitStageOp : GGK_Op<"commit_stage"> {
  let summary = "the producer states the bytes its loads into a stage will bring";
  let description = [{
    Before it loads a stage, the producer arms the stage's full barrier at
    `barrier` with the `bytes` the loads into it will bring, so that the
    consumers' `ggk.wait_stage` completes once they have all landed.
    `ggk-lower-ring` lowers it for sm_90a (an mbarrier arrive with
    expect_tx). `ggk.load_tile_rows` arms its stage itself (its bytes
    depend on the rows it loads).

    Example:
    ```mlir
    ggk.commit_stage %full, %bytes
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier, I32:$bytes);
  let assemblyFormat = "$barrier `,` $bytes attr-dict";
}

def GGK_WaitStageOp : GGK_Op<"wait_stage"> {
  let summary = "a consumer waits until a stage's tiles have landed";
  let description = [{
    A consumer thread's wait, before it reads a ring stage, until the
    producer's loads into it are complete: the stage's full barrier at
    `barrier` completes its phase of parity `parity` (0 or 1, flipping
    each pass through the ring). `ggk-lower-ring` lowers it for
    sm_90a (an mbarrier try-wait loop on the parity; the loads' byte
    count armed the barrier).

    Example:
    ```mlir
    ggk.wait_stage %full, %parity
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier, I32:$parity);
  let assemblyFormat = "$barrier `,` $parity attr-dict";
}

def GGK_ReleaseStageOp : GGK_Op<"release_stage"> {
  let summary = "the consumers are done reading a stage: arrive on its empty barrier, in every CTA of the cluster";
  let description = [{
    A consumer thread's release of a ring stage whose tiles it has read,
    so that the producer may refill it. Alone (`cluster` = 1), every
    consumer thread arrives on `barrier` (initialised to the consumer
    threads' count). In a cluster, the peer CTAs multicast into this
    CTA's stage too, so each of them must also learn it is free: lane r
    of each warp arrives on `barrier` at the same offset in CTA r of the
    cluster (initialised to cluster x consumer warps), so a cluster holds
    at most 32 CTAs.
    `ggk-multicast` lowers it to the arrivals.

    Example:
    ```mlir
    ggk.release_stage %empty attributes {cluster = 2}
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier,
                       I64Attr:$cluster);
  let hasVerifier = 1;
  let assemblyFormat = "$barrier attr-dict-with-keyword";
}

def GGK_InitEmptyBarrierOp : GGK_Op<"init_empty_barrier"> {
  let summary = "initialise a stage's empty barrier for the releases that will arrive on it";
  let description = [{
    The count of a ring stage's empty barrier at `barrier`: the arrivals
    `ggk.release_stage` makes once every consumer is done with the stage.
    Alone (`cluster` = 1) every consumer thread arrives: 32 x
    `consumer_warps`. In a cluster, one lane of each consumer warp of each
    CTA arrives on every CTA's barrier: `cluster` x `consumer_warps`.
    `ggk-multicast` lowers it, beside the releases whose count it is.

    Example:
    ```mlir
    ggk.init_empty_barrier %empty attributes {consumer_warps = 8, cluster = 2}
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier,
                       I64Attr:$consumer_warps,
                       I64Attr:$cluster);
  let hasVerifier = 1;
  let assemblyFormat = "$barrier attr-dict-with-keyword";
}

def GGK_PublishBarrierInitOp : GGK_Op<"publish_barrier_init"> {
  let summary = "make the ring's initialised barriers visible before anyone uses them";
  let description = [{
    Once the thread where `leader` holds has initialised the ring's
    barriers, no thread may use them earlier. Alone (`cluster` = 1) the
    CTA's threads meet (`bar.sync 0`). In a cluster, the peers multicast
    into this CTA's stages and arrive on its barriers, so the leader makes
    its inits visible to the cluster (`fence.mbarrier_init`) and the
    cluster's CTAs meet (`barrier.cluster` arrive and wait).
    `ggk-multicast` lowers it.

    Example:
    ```mlir
    ggk.publish_barrier_init %is_leader attributes {cluster = 2}
    ```
  }];
  let arguments = (ins I1:$leader, I64Attr:$cluster);
  let hasVerifier = 1;
  let assemblyFormat = "$leader attr-dict-with-keyword";
}

def GGK_LeaveClusterOp : GGK_Op<"leave_cluster"> {
  let summary = "before the kernel returns, wait for the cluster's other CTAs";
  let description = [{
    In a cluster (`cluster` > 1) no CTA may leave while a peer can still
    multicast into its shared memory or arrive on its barriers: the
    cluster's CTAs meet (`barrier.cluster` arrive and wait) before
    returning. Alone it is nothing. `ggk-multicast` lowers it.

    Example:
    ```mlir
    ggk.leave_cluster attributes {cluster = 2}
    ```
  }];
  let arguments = (ins I64Attr:$cluster);
  let hasVerifier = 1;
  let assemblyFormat = "attr-dict-with-keyword";
}
