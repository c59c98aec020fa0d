//===- GGKThreadOps.td - threads, warps and async copies ---*- tablegen -*-===//
//
// What the kernel asks of its threads without naming a target's
// instructions: a thread's, its CTA's and its cluster's index, a
// warp-uniform value, a warp's and a group of threads' meeting points, the
// async proxy's fence, and per-thread asynchronous copies into shared
// memory. ggk-lower-threads and ggk-lower-async-copies lower them (the
// same PTX on sm_80 and sm_90a). Included by GGKOps.td.
//
//===----------------------------------------------------------------------===//

def GGK_ThreadIndexOp : GGK_Op<"thread_index", [Pure]> {
  let summary = "the thread's index in its CTA";
  let description = [{
    The calling thread's index along the CTA's one dimension (the kernel's
    CTAs are one-dimensional). `ggk-lower-threads`: `%tid.x`.

    Example:
    ```mlir
    %tid = ggk.thread_index
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict";
}

def GGK_WarpBroadcastOp : GGK_Op<"warp_broadcast", [Pure]> {
  let summary = "lane 0's value of `value`, in every lane of the warp";
  let description = [{
    Makes a value the same in every lane of the warp (lane 0's), so that
    what derives from it stays warp-uniform (a consumer's index, a warp's
    row: the compiler keeps tile addresses and MMA descriptors derived
    from it in uniform registers). `ggk-lower-threads`: `shfl.sync.idx`
    from lane 0 with every lane taking part.

    Example:
    ```mlir
    %uniform = ggk.warp_broadcast %warp
    ```
  }];
  let arguments = (ins I32:$value);
  let results = (outs I32:$result);
  let assemblyFormat = "$value attr-dict";
}

// Not Pure, and with effects: an op free of them would be hoisted or
// folded, which is what it exists to prevent.
def GGK_OpaqueOp : GGK_Op<"opaque", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "`value`, where it stands, through a move the compilers after ggc cannot see through";
  let description = [{
    Returns `value` unchanged, but LLVM and ptxas can neither fold it nor
    move it: what is computed from it is computed where it stands. A loop
    that computes its addresses from a constant that went through it keeps
    them in the loop, a few adds of constants to one value, instead of
    hoisting every one of them out as its own register (the K loop of
    `ggk-pipeline-promotion` for `ring_stages = constant`: its stages'
    tile descriptors).
    `ggk-lower-threads`: an inline `mov.b32` with side effects.

    Example:
    ```mlir
    %zero = ggk.opaque %c0_i32
    ```
  }];
  let arguments = (ins I32:$value);
  let results = (outs I32:$result);
  let assemblyFormat = "$value attr-dict";
}

// Not Pure: a pure op may be speculated into a branch that only some lanes
// take, where a shuffle of every lane would hang or read garbage.
def GGK_WarpShuffleXorOp : GGK_Op<"warp_shuffle_xor", [NoMemoryEffect]> {
  let summary = "the value of `value` in the lane whose index is this lane's xor `lanes`";
  let description = [{
    A butterfly exchange within the warp: lane `l` gets lane `l ^ lanes`'s
    `value`. Every lane of the warp takes part. `ggk-lower-threads`:
    `shfl.sync.bfly`.

    Example:
    ```mlir
    %theirs = ggk.warp_shuffle_xor %mine, 1
    ```
  }];
  let arguments = (ins I32:$value, ConfinedAttr<I32Attr, [IntMinValue<1>,
                                                          IntMaxValue<31>]>:$lanes);
  let results = (outs I32:$result);
  let assemblyFormat = "$value `,` $lanes attr-dict";
}

def GGK_WarpSyncOp : GGK_Op<"warp_sync"> {
  let summary = "the warp's lanes meet (and reconverge) here";
  let description = [{
    Every lane of the warp waits here for the others: before a warp-aligned
    barrier, after lanes branched, or before lanes read what other lanes
    of the warp wrote. `ggk-lower-threads`: `bar.warp.sync` with every
    lane.
  }];
  let assemblyFormat = "attr-dict";
}

def GGK_SyncThreadsOp : GGK_Op<"sync_threads"> {
  let summary = "the `count` threads of named barrier `id` meet here";
  let description = [{
    The calling thread waits until `count` threads (a multiple of 32: whole
    warps, reconverged first) have arrived at barrier `id`; shared-memory
    writes before it are visible to them after. The kernel numbers its
    barriers: 0 the CTA, 1 every consumer thread, 2 + i consumer warpgroup
    i. `ggk-lower-threads`: `bar.sync id, count`.

    Example:
    ```mlir
    ggk.sync_threads %id, %count
    ```
  }];
  let arguments = (ins I32:$id, I32:$count);
  let assemblyFormat = "$id `,` $count attr-dict";
}

def GGK_CopyAsyncOp : GGK_Op<"copy_async"> {
  let summary = "a thread's asynchronous copy of `bytes` from global to shared memory";
  let description = [{
    The calling thread starts a copy of `bytes` (4, 8 or 16) from `source`
    (global) to `destination` (shared), which completes in the background:
    `ggk.copy_async_commit` closes a batch of them, `ggk.copy_async_wait`
    waits for batches, `ggk.copy_async_arrive` makes a barrier wait for
    them. With `read(%n)` only the first `n` bytes are read and the rest of
    `destination` is zero-filled (`n = 0`: nothing is read, so `source`
    may lie past the tensor). `ggk-lower-async-copies`:
    `cp.async.ca.shared.global` (`.cg`, past L1, for 16 bytes).

    Example:
    ```mlir
    ggk.copy_async %slot, %scale attributes {bytes = 4}
    ggk.copy_async %stage, %row read(%n) attributes {bytes = 16}
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$destination,
                       LLVM_PointerInAddressSpace<1>:$source,
                       Optional<I32>:$read_bytes, I64Attr:$bytes);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $destination `,` $source (`read` `(` $read_bytes^ `)`)?
    attr-dict-with-keyword
  }];
}

def GGK_CopyAsyncCommitOp : GGK_Op<"copy_async_commit"> {
  let summary = "close the batch of the thread's ggk.copy_async since the last commit";
  let description = [{
    `ggk-lower-async-copies`: `cp.async.commit_group`.
  }];
  let assemblyFormat = "attr-dict";
}

def GGK_CopyAsyncArriveOp : GGK_Op<"copy_async_arrive"> {
  let summary = "one arrival on a barrier once the thread's async copies so far have landed";
  let description = [{
    The barrier's phase cannot complete before the calling thread's
    `ggk.copy_async` issued so far have landed: the arrival counts against
    the barrier's expected count (which includes it).
    `ggk-lower-async-copies`: `cp.async.mbarrier.arrive.noinc.shared.b64`.

    Example:
    ```mlir
    ggk.copy_async_arrive %full
    ```
  }];
  let arguments = (ins LLVM_PointerInAddressSpace<3>:$barrier);
  let assemblyFormat = "$barrier attr-dict";
}

def GGK_CopyAsyncWaitOp : GGK_Op<"copy_async_wait"> {
  let summary = "wait until at most `pending` of the thread's committed copy batches are unfinished";
  let description = [{
    After it, the thread's copies of every committed batch but the newest
    `pending` have landed (other lanes' copies need a ggk.warp_sync too).
    `ggk-lower-async-copies`: `cp.async.wait_group pending`.
  }];
  let arguments = (ins I64Attr:$pending);
  let hasVerifier = 1;
  let assemblyFormat = "attr-dict-with-keyword";
}

def GGK_BlockIndexOp : GGK_Op<"block_index", [Pure]> {
  let summary = "the CTA's index in the grid";
  let description = [{
    The calling CTA's index along the grid's one dimension (the persistent
    grid is one-dimensional; a cluster's CTAs are consecutive).
    `ggk-lower-threads`: `%ctaid.x`.

    Example:
    ```mlir
    %cta = ggk.block_index
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict";
}

def GGK_GridSizeOp : GGK_Op<"grid_size", [Pure]> {
  let summary = "the CTAs in the grid";
  let description = [{
    How many CTAs the grid has along its one dimension: the persistent
    schedule's stride. `ggk-lower-threads`: `%nctaid.x`.

    Example:
    ```mlir
    %ctas = ggk.grid_size
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict";
}

def GGK_ClusterRankOp : GGK_Op<"cluster_rank", [Pure]> {
  let summary = "the CTA's rank in its cluster";
  let description = [{
    The calling CTA's index within its thread-block cluster (0 for a CTA
    alone). The generator makes it only for a clustered kernel, which
    gg-select-config refuses on a target without clusters
    (`Target::clusters`). `ggk-lower-threads`: `%cluster_ctarank`.

    Example:
    ```mlir
    %rank = ggk.cluster_rank
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict";
}

def GGK_FenceAsyncSharedOp : GGK_Op<"fence_async_shared"> {
  let summary = "the thread's shared-memory writes become visible to the async proxy";
  let description = [{
    Orders the calling thread's earlier writes to the CTA's shared memory
    (through the generic proxy: st.shared, stmatrix) before later reads of
    the async proxy: a TMA store of a staged tile, wgmma's reads of an
    operand the threads prepared. Only a target whose tensor maps or wgmma
    read through the async proxy needs it; the passes that stage such
    writes make it. `ggk-lower-threads`: `fence.proxy.async.shared::cta`.

    Example:
    ```mlir
    ggk.fence_async_shared
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def GGK_SyncCtaOp : GGK_Op<"sync_cta"> {
  let summary = "every thread of the CTA meets here";
  let description = [{
    The CTA-wide barrier (barrier 0, every thread), e.g. after one thread
    has initialised the mbarriers that all use. `ggk-lower-threads`:
    `bar.sync 0`.
  }];
  let assemblyFormat = "attr-dict";
}

def GGK_ClusterSyncOp : GGK_Op<"cluster_sync"> {
  let summary = "every thread of every CTA of the cluster meets here";
  let description = [{
    Made only for a clustered kernel (gg-select-config refuses a cluster
    on a target without clusters). `ggk-lower-threads`:
    `barrier.cluster.arrive` then `barrier.cluster.wait`.
  }];
  let assemblyFormat = "attr-dict";
}

def GGK_WarpMatchAnyOp : GGK_Op<"warp_match_any", [NoMemoryEffect]> {
  let summary = "the lanes of the warp whose `value` equals this lane's, as a mask";
  let description = [{
    Every lane of the warp takes part. `ggk-lower-threads`:
    `match.any.sync.b32` over the whole warp.

    Example:
    ```mlir
    %same = ggk.warp_match_any %expert
    ```
  }];
  let arguments = (ins I32:$value);
  let results = (outs I32:$result);
  let assemblyFormat = "$value attr-dict";
}

def GGK_WarpBallotOp : GGK_Op<"warp_ballot", [NoMemoryEffect]> {
  let summary = "the lanes of the warp whose `predicate` holds, as a mask";
  let description = [{
    Bit `l` of the result is lane `l`'s `predicate`. Every lane of the
    warp takes part. `ggk-lower-threads`: `vote.sync.ballot.b32` over the
    whole warp.

    Example:
    ```mlir
    %tagged = ggk.warp_ballot %same_group
    ```
  }];
  let arguments = (ins I1:$predicate);
  let results = (outs I32:$result);
  let assemblyFormat = "$predicate attr-dict";
}

def GGK_LanesBelowOp : GGK_Op<"lanes_below", [Pure]> {
  let summary = "the mask of the warp's lanes below this one";
  let description = [{
    Bit `l` is set for every lane `l` below this lane. `ggk-lower-threads`:
    `%lanemask_lt`.

    Example:
    ```mlir
    %below = ggk.lanes_below
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict";
}

def GGK_Exp2ApproxOp : GGK_Op<"exp2_approx", [Pure]> {
  let summary = "2^x approximated by the special-function unit, subnormal results flushed to zero";
  let description = [{
    One MUFU.EX2, the approximation `math.exp2` lowers to, but a result
    below 2^-126 is 0: `math.exp2` lowers to the form that keeps subnormal
    results, a range test and two multiplies more. The activations' exps
    use it (`silu`, `sigmoid`, where the value joins 1 + e, and
    `math.exp` in epilogues, where an argument below -87.3 gives 0
    instead of a subnormal). `ggk-lower-threads`: `ex2.approx.ftz.f32`.

    Example:
    ```mlir
    %e = ggk.exp2_approx %x
    ```
  }];
  let arguments = (ins F32:$x);
  let results = (outs F32:$result);
  let assemblyFormat = "$x attr-dict";
}

def GGK_ReciprocalApproxOp : GGK_Op<"reciprocal_approx", [Pure]> {
  let summary = "1/x approximated by the special-function unit, subnormals flushed to zero";
  let description = [{
    One MUFU.RCP, the approximation a division with `arcp` and `afn`
    lowers to, but a subnormal result is 0 and a subnormal x counts as
    zero (x = +-0 or subnormal gives +-inf).
    `sigmoid`'s 1 / (1 + e), whose divisor is at least 1, uses it.
    `ggk-lower-threads`: `rcp.approx.ftz.f32`.

    Example:
    ```mlir
    %r = ggk.reciprocal_approx %x
    ```
  }];
  let arguments = (ins F32:$x);
  let results = (outs F32:$result);
  let assemblyFormat = "$x attr-dict";
}

def GGK_ConvertE4M3x2Op : GGK_Op<"convert_e4m3x2", [Pure]> {
  let summary = "two f32 values rounded to e4m3 (nearest even, saturated to +-448), packed";
  let description = [{
    The result holds `lo`'s e4m3 byte in its low 8 bits and `hi`'s in its
    high 8 bits (so stored as bytes, `lo` comes first). Targets with FP8
    conversion only (sm_89, sm_90a). `ggk-lower-threads`:
    `cvt.rn.satfinite.e4m3x2.f32`.

    Example:
    ```mlir
    %pair = ggk.convert_e4m3x2 %lo, %hi
    ```
  }];
  let arguments = (ins F32:$lo, F32:$hi);
  let results = (outs I16:$result);
  let assemblyFormat = "$lo `,` $hi attr-dict";
}
