//===- GGKDialect.h - the ggk dialect ---------------------------*- C++ -*-===//
#ifndef GGK_GGKDIALECT_H
#define GGK_GGKDIALECT_H

#include "gg/GGDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ggk/GGKEnums.h.inc"

namespace mlir::ggk {
/// `[a, b, ...]`: the sizes of a #ggk.launch tile or a #ggk.param box.
FailureOr<SmallVector<int64_t>> parseSizes(AsmParser &parser);

/// What the lowering leaves for ggk-collect-launch: the kernel's dynamic
/// shared memory (ggk-allocate-shared-memory) and, on each kernel
/// argument, the #ggk.param that feeds it (gg-lower-to-nvvm).
inline constexpr llvm::StringLiteral kSharedBytesAttrName = "ggk.shared_bytes";
inline constexpr llvm::StringLiteral kParamAttrName = "ggk.param";
} // namespace mlir::ggk

#define GET_ATTRDEF_CLASSES
#include "ggk/GGKAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "ggk/GGKTypes.h.inc"

#include "ggk/GGKDialect.h.inc"

#define GET_OP_CLASSES
#include "ggk/GGKOps.h.inc"

#endif // GGK_GGKDIALECT_H
