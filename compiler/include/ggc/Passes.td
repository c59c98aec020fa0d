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
    follows the expected rows per group (64 for small masked batches, else
    128); block N is the widest of 256/128/64 that divides N without waste;
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

#endif // GGC_PASSES_TD
