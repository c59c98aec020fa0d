//===- GGKTargetPasses.td - the per-target conversions of ggk ops (sm_90a's and the mma.sync targets') and the passes that end the ggk stage ---*- tablegen -*-===//
//
// The per-target conversions of ggk ops (sm_90a's and the mma.sync targets') and the passes that end the ggk stage.
// Included by Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_GGK_TARGET_PASSES_TD
#define GGC_GGK_TARGET_PASSES_TD

def LowerMma : Pass<"ggk-lower-mma", "::mlir::ModuleOp"> {
  let summary = "lower the consumers' MMA for sm_90a: ggk.mma to wgmma.mma_async per K step, its fence, commit and wait to wgmma's";
  let description = [{
    Takes: `ggk.mma` (a consumer warpgroup's multiply-accumulate of a K
    block's steps of a stage's A and B tiles, at their shared-memory
    addresses, with the operand types, N, the K steps and the tiles'
    majors as attributes), `ggk.mma_fence`, `ggk.mma_commit` and
    `ggk.mma_wait {pending}`, made by `gg-lower-to-nvvm` in the consumers'
    K loops and by `ggk-pipeline-promotion` (its waits).
    Makes, for sm_90a: each tile's 128-byte-swizzle matrix descriptor once
    (start address, leading byte offset 16 for a K-major tile or the
    64-wide MN chunks' distance block_k x 128 for an MN-major one, stride
    1024), computed on the tile's address less its constant byte offsets
    (through geps, adds, multiplications by constants and extensions),
    which are then added to the start-address field in 16-byte units:
    tiles at constant offsets from one address (a ring's stages in a loop
    unrolled for `ring_stages = constant`) share one descriptor computation. Then one
    `nvvm.wgmma.mma_async` m64nNk per K step on the
    descriptors plus the step's offset (32 bytes along a K-major row, 16
    rows of an MN-major tile), the first step scaling the accumulator by
    zero when `fresh`; `nvvm.wgmma.fence.aligned`,
    `nvvm.wgmma.commit.group.sync.aligned` and
    `nvvm.wgmma.wait.group.sync.aligned pending`. `ggk-lower-mma-sync` is
    the other targets' conversion.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerRing : Pass<"ggk-lower-ring", "::mlir::ModuleOp"> {
  let summary = "lower the ring's protocol for sm_90a: ggk.acquire_stage and ggk.wait_stage to mbarrier try-wait loops, ggk.commit_stage to an arrive with expect_tx";
  let description = [{
    Takes: `ggk.acquire_stage` (the producer's wait for a free stage, on its
    empty barrier), `ggk.commit_stage` (the producer's statement of the
    bytes its loads into a stage will bring, on its full barrier) and
    `ggk.wait_stage` (a consumer's wait for a loaded stage, on its full
    barrier), made by `gg-lower-to-nvvm` in the producer's and the
    consumers' K loops (also inside `ggk.promotion_loop` steps and
    `ggk.warpgroup_tile` regions). `ggk.release_stage` is `ggk-multicast`'s.
    Makes, for sm_90a: one `nvvm.mbarrier.try_wait.parity.shared` on the
    barrier and parity for each wait, which loops until the phase completes
    (its tick count, 10,000,000, only bounds how long each try may
    suspend), and `nvvm.mbarrier.arrive.expect_tx` of the bytes for each
    commit. `ggk-lower-ring-test-wait` is the other targets' conversion.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerLoadsCpAsync : Pass<"ggk-lower-loads-cp-async", "::mlir::ModuleOp"> {
  let summary = "lower the producer's tile loads for targets without TMA: per-thread cp.async into the swizzled stages";
  let description = [{
    Takes: `ggk.load_tile_rows` (A's rows) and `ggk.load_b_tile` (B's
    tile), made by `gg-lower-to-nvvm` in the producer's K loop, with the
    operand's address as their source, its `extents` (and A's
    `element_bytes`); no cluster.
    Makes, for sm_80, sm_86 and sm_89: for each 16-byte piece of the tile,
    thread `piece % 128` of the producer warpgroup issues a
    `ggk.copy_async` (16 bytes, `read(0)`, a zero fill, for pieces past
    the extents or, for A, past the group's valid rows) into the piece's
    place in the 128-byte swizzled layout TMA writes on sm_90a (piece `c`
    of row `r` at `r * 128 + (c ^ r % 8) * 16`; an N-major B as 64-column
    chunks `block_k * 128` bytes apart), then one `ggk.copy_async_arrive`
    on the stage's full barrier. `ggk-place-scales` initialises that
    barrier for the two arrivals (A's, B's) of each of the 128 threads.
    A load with `gather(%indices)` reads each row's index from the list
    (an `scf.if` on whether the row is one of the group's, so no entry past
    them is read) and zero-fills rows whose index lies outside the operand.
    On sm_90a it lowers only such gathered loads of A (gg's `a_rows`,
    which TMA's boxes cannot take), left by `ggk-split-partial-loads`:
    there the 128 threads of the producer warpgroup (the kernel plan's
    `producer = all_threads`) copy, and `ggk-place-scales` counts their
    arrivals beside the leader's arming for B.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def LowerRingTestWait : Pass<"ggk-lower-ring-test-wait", "::mlir::ModuleOp"> {
  let summary = "lower the ring's waits for targets without try_wait: poll the stage's mbarrier with test_wait.parity";
  let description = [{
    Takes: `ggk.acquire_stage` and `ggk.wait_stage` (see `ggk-lower-ring`).
    `ggk.commit_stage`, which states bytes for TMA's transaction count, is
    an error here: without TMA the loads arrive on the barrier per thread
    (`ggk-lower-loads-cp-async`).
    Makes, for sm_80, sm_86 and sm_89: an `scf.while` that polls
    `nvvm.mbarrier.test.wait` on the barrier and the phase's parity until
    it completes.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def LowerMmaSync : Pass<"ggk-lower-mma-sync", "::mlir::ModuleOp"> {
  let summary = "lower the consumers' MMA for targets without wgmma, and f32 (3xTF32) everywhere: ldmatrix and mma.sync per warp";
  let description = [{
    Takes: `ggk.mma` with bf16, f16, FP8 (sm_89) or f32 operands and a
    K-major A (an error otherwise), `ggk.mma_fence`, `ggk.mma_commit`,
    `ggk.mma_wait`; with `three-tf32-only` (sm_90a) only the `ggk.mma`
    ops with `three_tf32`. f32 is m16n8k8 tf32, its operands (with
    `three_tf32`) split in registers into a TF32 part and the TF32 of the
    rest (cvt.rna), three products summed.
    Makes, for sm_80, sm_86 and sm_89: for each K step, warp `w` of the
    consumer warpgroup loads its A fragment (rows `16 w ..`) with one
    `nvvm.ldmatrix` x4 and B's with one x4 per 16 columns (x2 for a last
    8; `.trans` for an N-major B) from the swizzled stage, then issues one
    `nvvm.mma.sync` m16n8k16 per 8 columns. Its accumulator registers are
    those of the m64nN fragment, so the struct is updated in place. The
    fence, commit and wait lower to nothing: `mma.sync` is synchronous.
  }];
  let options = [
    Option<"threeTf32Only", "three-tf32-only", "bool", /*default=*/"false",
           "lower only the ggk.mma ops with three_tf32 and leave the rest "
           "(and the fences, commits and waits) to ggk-lower-mma: sm_90a's "
           "f32 kernels">
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerAccumulators : Pass<"ggk-lower-accumulators", "::mlir::ModuleOp"> {
  let summary = "lower the typed accumulators to registers: !ggk.acc to an !llvm.struct of f32, its ops to the registers they name";
  let description = [{
    Takes: every value of type `!ggk.acc` (the consumers' accumulators,
    across scf loops, ifs and regions), `ggk.acc_zero`, `ggk.acc_undef`,
    `ggk.acc_get` / `ggk.acc_set` (an element by row group, column block
    and column), `ggk.acc_pin` and `ggk.acc_origin`, and the
    `builtin.unrealized_conversion_cast`s with which `ggk-lower-mma` and
    `ggk-lower-mma-sync` hand their registers back; runs after them, on
    every target.
    Makes: the thread's `rows * columns / 128` f32 as one `!llvm.struct`,
    m16 block by m16 block, each as mma's n8 quads (register
    `4 (i blocks + c) + 2 half + j` for row group `2 i + half`, column
    block `c` and column `j`): `llvm.extractvalue` / `llvm.insertvalue`
    of that register, zeros inserted into an `llvm.mlir.undef`, an empty
    side-effecting `llvm.inline_asm` tying each register to itself for
    the pin, and for the origin the thread's row and column from its
    index in the warpgroup (`warp / warp_columns * 16 warp_columns +
    lane / 4`, `warp % warp_columns * columns / warp_columns +
    2 (lane % 4)`). The casts between equal types are dropped.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerMNMajorLoads : Pass<"ggk-lower-mn-major-loads", "::mlir::ModuleOp"> {
  let summary = "lower the producer's MN-major tile loads for sm_90a: one TMA box per chunk";
  let description = [{
    Takes: `ggk.load_mn_major_tile` (the producer's load of an MN-major
    A tile, the k-grouped layout's token-major A, made by
    `gg-lower-to-nvvm` after the `ggk.commit_stage` that arms its stage).
    Makes, for sm_90a: per chunk j one
    `nvvm.cp.async.bulk.tensor.shared.cluster.global` (CTA-only) of the
    box at (`row + j * chunk_rows`, `k`) into `dst + j * chunk_bytes`,
    completing on the stage's full barrier.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerAsyncCopies : Pass<"ggk-lower-async-copies", "::mlir::ModuleOp"> {
  let summary = "lower the threads' asynchronous copies: ggk.copy_async and its commit and wait to cp.async";
  let description = [{
    Takes: `ggk.copy_async %dst, %src {bytes}` (a thread's copy from global
    to shared memory: the block scales' slots, made by `gg-lower-to-nvvm`),
    `ggk.copy_async_commit` and `ggk.copy_async_wait {pending}` (also from
    `ggk-place-scales`' reads of the slots).
    Makes: `nvvm.cp.async.shared.global` (cache at all levels),
    `nvvm.cp.async.commit.group`, `nvvm.cp.async.wait.group pending`: the
    same on sm_80 and sm_90a.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def LowerTma : Pass<"ggk-lower-tma", "::mlir::ModuleOp"> {
  let summary = "lower the TMA ops: ggk.tma_load, ggk.tma_store, ggk.bulk_commit_group, ggk.bulk_wait_group and the mbarriers' ggk.mbarrier_init, ggk.mbarrier_arrive and ggk.mbarrier_arrive_expect_tx to their instructions";
  let description = [{
    Takes: the TMA and mbarrier ops that `gg-lower-to-nvvm` and the passes
    before make through `KernelBuilder`: the stages' tile and scale-window
    loads (`ggk-split-partial-loads`, `ggk-multicast` outside a cluster,
    `ggk-place-scales`, `ggk-lower-mn-major-loads`), the full barriers'
    expect_tx (`ggk-split-partial-loads`, `ggk-lower-ring`), the barriers'
    initialisation and the consumers' releases, and the store pool's TMA
    stores and bulk groups (`ggk-lower-store-pool`): after every pass that
    makes them, beside `ggk-lower-threads`.
    Makes, where each op was: `nvvm.mbarrier.init.shared`,
    `nvvm.mbarrier.arrive.shared`, `nvvm.mbarrier.arrive.expect_tx`,
    `nvvm.cp.async.bulk.tensor.shared.cluster.global` (tile mode, this
    CTA only, with the L2 hint where there is one),
    `nvvm.cp.async.bulk.tensor.global.shared.cta` (tile mode),
    `nvvm.cp.async.bulk.commit.group` and `nvvm.cp.async.bulk.wait_group`
    (`.read` where asked). The mbarrier ops are sm_80's too: its ring and
    cp.async arrivals use the same barriers.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerThreads : Pass<"ggk-lower-threads", "::mlir::ModuleOp"> {
  let summary = "lower the thread ops: ggk.thread_index, ggk.block_index, ggk.grid_size, ggk.cluster_rank, ggk.fence_async_shared, ggk.warp_broadcast, ggk.warp_shuffle_xor, ggk.warp_sync and ggk.sync_threads to their instructions";
  let description = [{
    Takes: `ggk.thread_index`, `ggk.block_index`, `ggk.grid_size`,
    `ggk.cluster_rank`, `ggk.fence_async_shared`, `ggk.warp_broadcast %v`,
    `ggk.warp_shuffle_xor %v, lanes`, `ggk.warp_sync` and
    `ggk.sync_threads %id, %count`, made by `gg-lower-to-nvvm` and by the
    passes before (through `KernelBuilder`: the tile schedule's CTA index
    and grid size, the operands' and the store pool's fences), and
    `ggk.warp_match_any`, `ggk.lanes_below` and `ggk.convert_e4m3x2`
    (`gg-lower-sort-routes`, `gg-lower-quantize-rows`), and
    `ggk.exp2_approx` and `ggk.reciprocal_approx` (the activations of
    `ggk-lower-epilogue`, `gg-lower-quantize-rows` and
    `gg-lower-swiglu-rows`): last in the list, after every pass that
    makes them.
    Makes: `nvvm.read.ptx.sreg.tid.x`, `ctaid.x`, `nctaid.x` and
    `cluster.ctarank`, `nvvm.fence.proxy async.shared::cta`,
    `nvvm.shfl.sync idx` from lane 0 with every lane, `nvvm.shfl.sync bfly`
    with every lane, `nvvm.bar.warp.sync` with every lane,
    `nvvm.barrier id, count` (`bar.sync`), `nvvm.match.sync any` with
    every lane, `nvvm.read.ptx.sreg.lanemask.lt` and
    `nvvm.convert.f32x2.to.f8x2` (rn, satfinite, e4m3),
    `llvm.nvvm.ex2.approx.ftz.f32` (an intrinsic call) and
    `nvvm.rcp.approx.ftz.f`, where the ops were. The same
    instructions on every target; the passes that make
    `ggk.cluster_rank` and `ggk.fence_async_shared` do so only for a
    target with clusters, or whose wgmma or TMA stores read shared memory
    through the async proxy.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def AwaitPriorGrid : Pass<"ggk-await-prior-grid", "::mlir::ModuleOp"> {
  let summary = "let each kernel start while the kernel ahead of it ends: griddepcontrol.wait at entry, the launch contract's dependent_launch";
  let description = [{
    Takes: every kernel (`llvm.func` with `nvvm.kernel`) of a target with
    grid dependencies (sm_90a), after every pass that adds code at its
    entry.
    Makes: at the top of its entry block, before any access to global
    memory, `griddepcontrol.wait` (the grid ahead of it in the stream has
    ended and its writes are visible; at once where the kernel was
    launched without programmatic stream serialization), as inline
    assembly that clobbers memory (LLVM's griddepcontrol intrinsics claim
    no memory, so a load could move above the wait); on a kernel with a
    `ggk.launch` contract, `dependent_launch = true`, from which the
    runtime launches it with
    `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`
    (`GGC_DEPENDENT_LAUNCH=0` turns that off). The kernel behind it then
    launches once this one's CTAs have all exited, before its writes are
    flushed, and waits for them at its own entry: a chain of kernels in
    one stream (a MoE layer's, the DeepGEMM drop-in's copy and GEMM, calls
    back to back) overlaps each launch with the end of the kernel before
    it. With `launch-dependents-at-entry`, `griddepcontrol.launch_dependents`
    follows the wait, so that the next kernel's CTAs take SMs as this
    one's leave them: measured slower on the H200 (0.94-1.00x the plain
    launch on five back-to-back GEMMs, against 1.00-1.01x without it;
    docs/performance.md). Nothing on targets without `griddepcontrol`
    (sm_80, sm_86, sm_89), or with `enabled=false`.
  }];
  let options = [
    Option<"enabled", "enabled", "bool", /*default=*/"true",
           "wait for the prior grid at entry and mark the contract">,
    Option<"launchDependentsAtEntry", "launch-dependents-at-entry", "bool",
           /*default=*/"false",
           "let the next grid launch right after the wait, not when this one's CTAs have all exited">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def CollectLaunch : Pass<"ggk-collect-launch", "::mlir::ModuleOp"> {
  let summary = "complete each kernel's launch contract from the kernel that remains: its block, shared memory and parameters";
  let description = [{
    Takes: each `llvm.func` with a `ggk.launch` (what `gg-lower-to-nvvm`
    wrote of it: the source op's tile, sizes, grid bound and tensors), at
    the end of the pipeline: its `nvvm.maxntid` (set by
    `ggk-warp-specialize` from the roles), its `ggk.shared_bytes` (set by
    `ggk-allocate-shared-memory` from the buffers it placed), its
    parameters as `ggk.kernel_param` ops (each with its `#ggk.param`, what
    feeds it: stated by `gg-lower-to-nvvm` or by a pass that needs the
    parameter), and a `ggk.param` on each argument it already has.
    Makes: each `ggk.kernel_param`, in the order they appear, an argument
    after those (a tensor map passed by value: `llvm.byval` of 128 bytes,
    aligned to 64, `nvvm.grid_constant`), its uses the argument; the
    complete `#ggk.launch` (block, shared bytes, the parameters in
    argument order), which `ggc_result_kernel_info` hands to hosts; the
    `ggk.shared_bytes` and `ggk.param` attributes, now in the contract, are
    dropped. A kernel that lacks any of them is an error naming it. Last
    in the list, after every pass that could change the kernel's threads,
    shared memory or parameters.
  }];
}

def WarpSpecialize : Pass<"ggk-warp-specialize", "::mlir::ModuleOp"> {
  let summary = "lower each ggk.warp_specialize to the warp roles: setmaxnreg and the producer's and consumers' branches";
  let description = [{
    Takes: `ggk.warp_specialize` (the kernel's roles, made by
    `gg-lower-to-nvvm`: the producer's region, the consumers' region with
    the consumer's index as argument, and the op's `#gg.kernel_plan`).
    Makes: the warpgroup index (`thread / 128`) and an `scf.if` on it: for
    warpgroup 0, `nvvm.setmaxregister decrease` to the plan's producer
    registers and, in the leader thread (`scf.if`), the producer's ops; for
    the others, `nvvm.setmaxregister increase` to its consumer registers,
    the consumer's index (warpgroup - 1) broadcast from lane 0
    (`nvvm.shfl.sync idx`, so it is warp-uniform), and the consumers' ops
    on it.

    Under a `gg.target` before sm_90a there is no setmaxnreg: the
    warpgroups below the op's `consumer_warpgroups` run the consumers on
    their own index, and the threads after them, a producer warpgroup where
    the plan has one, run the producer's ops (its loads are per-thread
    copies).

    Also makes the kernel's CTA: `nvvm.maxntid` on the enclosing
    `llvm.func`, the consumer warpgroups' threads and the producer's, which
    the launch contract states (`ggk-collect-launch`).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // GGC_GGK_TARGET_PASSES_TD
