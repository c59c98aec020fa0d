//===- Passes.td - ggc passes ----------------------------------*- tablegen -*-===//
//
// Every pass of the pipeline, one per file in compiler/lib, with its options.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_PASSES_TD
#define GGC_PASSES_TD

include "mlir/Pass/PassBase.td"

// The pass list reads in pipeline order: the gg decisions and the
// generator, the ggk techniques, then each target's conversions.
include "ggc/GGPasses.td"
include "ggc/GGKPasses.td"
include "ggc/GGKTargetPasses.td"

#endif // GGC_PASSES_TD
