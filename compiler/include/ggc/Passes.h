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

/// Shared-memory bytes the kernel of a config needs (the operand ring and
/// its mbarriers). Used by gg-select-config and by the lowering.
int64_t sharedMemoryBytes(mlir::gg::ConfigAttr config, mlir::Type aElem,
                          mlir::Type bElem, mlir::Type outElem);

} // namespace ggc

#endif // GGC_PASSES_H
