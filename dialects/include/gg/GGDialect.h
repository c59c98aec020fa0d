//===- GGDialect.h - the gg dialect -----------------------------*- C++ -*-===//
#ifndef GG_GGDIALECT_H
#define GG_GGDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "gg/GGEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "gg/GGAttrs.h.inc"

#include "gg/GGDialect.h.inc"

#define GET_OP_CLASSES
#include "gg/GGOps.h.inc"

#endif // GG_GGDIALECT_H
