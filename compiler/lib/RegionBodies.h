//===- RegionBodies.h - a ggk region's body where its op stood --*- C++ -*-===//
//
// The ggk ops whose regions a pass lowers by putting the region's ops in
// place (a step of a promotion loop, a tile's body, a role's code) share
// these two: copy the body (it may run more than once) or move it (once).
//
//===----------------------------------------------------------------------===//
#ifndef GGC_REGIONBODIES_H
#define GGC_REGIONBODIES_H

#include "mlir/IR/Builders.h"

namespace ggc {

/// A copy of the ops of `region`'s block but its ggk.yield, at `b`'s
/// insertion point, its arguments bound to `args`; returns what the copy
/// yields.
llvm::SmallVector<mlir::Value> cloneBody(mlir::Region &region,
                                         mlir::ValueRange args,
                                         mlir::OpBuilder &b);

/// Moves the ops of `region`'s block but its ggk.yield to `b`'s insertion
/// point, its arguments replaced by `args`, and erases the yield; returns
/// what it yielded.
llvm::SmallVector<mlir::Value> moveBody(mlir::Region &region,
                                        mlir::ValueRange args,
                                        mlir::OpBuilder &b);

} // namespace ggc

#endif // GGC_REGIONBODIES_H
