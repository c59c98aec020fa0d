//===- Passes.td - ggc passes ----------------------------------*- tablegen -*-===//
//
// Every pass of the pipeline, one per file in compiler/lib, with its options.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_PASSES_TD
#define GGC_PASSES_TD

include "mlir/Pass/PassBase.td"

def SelectConfig : Pass<"gg-select-config", "::mlir::ModuleOp"> {
  let summary = "choose tile sizes, pipeline depth, cluster and grid for each grouped matmul";
  let description = [{
    Takes: `gg.grouped_matmul` ops with or without a `config` attribute.
    Makes: every op carries `config = #gg.config<...>`. A config the user
    wrote is kept, and only checked against the shared-memory budget.

    The heuristics live in `chooseConfig` in SelectConfig.cpp, in the order
    they are applied: block K fills one 128-byte swizzled row of A; block M
    follows the expected rows per group (64 for small masked batches; 192
    for f8, not MX, where that pads a group by little; else 128); block N
    is the widest of 256/128/64 that divides N without waste;
    the pipeline is as deep as shared memory allows after the epilogue
    buffer; the persistent grid has one CTA per SM.
  }];
  let dependentDialects = ["::mlir::gg::GGDialect"];
  let options = [
    Option<"numSMs", "num-sms", "int64_t", /*default=*/"132",
           "multiprocessors of the target GPU (132 on H100/H200 SXM)">,
    Option<"smemBudget", "shared-memory-bytes", "int64_t",
           /*default=*/"232448",
           "shared memory one CTA may use (227 KiB on sm_90)">
  ];
}

def TmaStorePool : Pass<"gg-tma-store-pool", "::mlir::ModuleOp"> {
  let summary = "store each tile's valid rows with a pool of TMA store boxes";
  let description = [{
    Takes: configured `gg.grouped_matmul` ops (run `gg-select-config`
    first).
    Makes: `store_pool = array<i64: BM, BM/2, ..., 1>` (from 128 when BM is
    192) on ops whose layout keeps a tile's valid rows a prefix
    (contiguous, masked, k_grouped). The
    lowering then stages the output tile in shared memory and stores the
    group's rows of it as a sum of those box heights (TMA-Adaptive FP8
    Grouped GEMM's descriptor pool): no row of a neighbouring group is
    written, with whole-tile stores for all full tiles. The staging tile
    takes BM x BN output elements of shared memory; when the config's
    pipeline leaves no room, stages are dropped down to `min-stages`, and
    below that the op keeps per-thread stores (an empty `store_pool`). A
    `store_pool` the user wrote is kept.
  }];
  let options = [
    Option<"smemBudget", "shared-memory-bytes", "int64_t", /*default=*/"232448",
           "shared memory one CTA may use (227 KiB on sm_90)">,
    Option<"minStages", "min-stages", "int64_t", /*default=*/"3",
           "fewest pipeline stages to keep when making room for the tile">
  ];
}

def LowerToNVVM : Pass<"gg-lower-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "generate one persistent, warp-specialised Hopper kernel per grouped matmul";
  let description = [{
    Takes: a module whose functions each hold one `gg.grouped_matmul` with a
    `#gg.config` (run `gg-select-config` first) and take only memrefs.
    Makes: for each such function `@f`, an `llvm.func @f_kernel` in the LLVM
    and NVVM dialects (with scf/arith control flow still to lower) carrying
    `nvvm.kernel` and the launch contract as JSON in `ggc.kernel_info`; the
    function itself is removed.

    The kernel: warpgroup 0 issues TMA loads of A and B tiles into a ring of
    shared-memory buffers guarded by mbarriers; the other warpgroups run
    wgmma on them and store the valid rows of each tile. The tile schedule is
    computed on the device from the group offsets or counts (persistent grid,
    no host synchronisation): tiles start at each group's own first row (no
    padding of A), loads near a group's end fetch whole tiles across the
    boundary (overfetch) and the extra rows are never stored.

    A config with `cluster = [2, 1]` pairs CTAs along M and multicasts
    halves of each B tile to both.

    Not lowered yet (each is a clear error): scales with `k_grouped`, `out`
    in `nm`, tf32 with `a` in `km`, clusters other than [1, 1] and [2, 1].
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // GGC_PASSES_TD
