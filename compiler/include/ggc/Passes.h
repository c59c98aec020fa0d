//===- Passes.h - ggc passes ------------------------------------*- C++ -*-===//
#ifndef GGC_PASSES_H
#define GGC_PASSES_H

#include "gg/GGDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace ggc {

#define GEN_PASS_DECL
#include "ggc/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ggc/Passes.h.inc"

/// Shared-memory bytes the kernel of a config needs: the operand ring and
/// its mbarriers, plus, with `stagedOutput`, the output tile staged for TMA
/// stores. Used by gg-select-config, gg-tma-store-pool and the lowering.
int64_t sharedMemoryBytes(mlir::gg::ConfigAttr config, mlir::Type aElem,
                          mlir::Type bElem, mlir::Type outElem,
                          bool stagedOutput = false);

/// Where the staged output tile starts (1024-byte aligned) in the kernel's
/// shared memory, after the operand ring and the mbarriers.
int64_t stagedOutputOffset(mlir::gg::ConfigAttr config, mlir::Type aElem,
                           mlir::Type bElem);

} // namespace ggc

#endif // GGC_PASSES_H
