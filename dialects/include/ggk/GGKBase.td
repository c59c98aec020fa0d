//===- GGKBase.td - the ggk dialect and its attributes ------*- tablegen -*-===//
//
// The kernel-level dialect between gg and NVVM: one grouped matmul as the
// kernel that computes it, stated in values (tiles, groups, rows) rather
// than addresses, so that each technique of the lowering is a pass over it.
//
//===----------------------------------------------------------------------===//
#ifndef GGK_BASE_TD
#define GGK_BASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def GGK_Dialect : Dialect {
  let name = "ggk";
  let cppNamespace = "::mlir::ggk";
  let summary = "Grouped GEMM kernels: tile schedules and launch contracts";
  let description = [{
    `ggk` states the kernel that `gg-lower-to-nvvm` makes of a
    `gg.grouped_matmul`: the persistent walk over the tiles of every group
    (`ggk.foreach_tile`), the stage ring, the loads, the MMA on each
    consumer warpgroup's accumulator (`!ggk.acc`, whose type says which
    thread holds which element), the epilogue and the stores, and the
    launch contract the runtime follows (`#ggk.launch`). Its ops are
    lowered to scf, arith, LLVM and NVVM by the `ggk-*` passes before
    translation to LLVM IR.
  }];
  // Its ops take LLVM pointers, which parsing them builds.
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

class GGK_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<GGK_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// A list of sizes, printed and parsed in square brackets (`[128, 64, 1]`).
defvar GGK_SizesPrinter = [{
    $_printer << '[';
    llvm::interleaveComma($_self, $_printer);
    $_printer << ']';
  }];
def GGK_Sizes : ArrayRefParameter<"int64_t", "sizes"> {
  let printer = GGK_SizesPrinter;
  let parser = [{ ::mlir::ggk::parseSizes($_parser) }];
}
def GGK_OptionalSizes : OptionalArrayRefParameter<"int64_t", "sizes"> {
  let printer = GGK_SizesPrinter;
  let parser = [{ ::mlir::ggk::parseSizes($_parser) }];
}

def GGK_ParamKind : I32EnumAttr<"ParamKind", "what a kernel parameter carries", [
  // A CUtensorMap encoded on the host, passed by value (__grid_constant__).
  I32EnumAttrCase<"tensor_map", 0>,
  // A device pointer to a tensor's first element.
  I32EnumAttrCase<"pointer", 1>,
  // A size known only at run time (i64), read from a tensor's shape.
  I32EnumAttrCase<"size", 2>
]> {
  let cppNamespace = "::mlir::ggk";
  let genSpecializedAttr = 0;
}

def GGK_ParamAttr : GGK_Attr<"Param", "param"> {
  let summary = "one parameter of a kernel and the tensor it comes from";
  let description = [{
    `operand` names the gg operand (`a`, `b`, `out`, `groups`, `a_scale`,
    `b_scale`, `rows`, `cols`, `group_scalars`) and `arg` the position of
    its tensor among the source function's arguments. Tensor maps give the
    element type TMA moves (`dtype`, CUtensorMapDataType's name), the box
    (innermost first, spanning the tensor's rank) and the swizzle; sizes
    give the dimension (`dim`) of the tensor they read.
  }];
  let parameters = (ins
    EnumParameter<GGK_ParamKind>:$kind,
    StringRefParameter<"gg operand">:$operand,
    "int64_t":$arg,
    OptionalParameter<"::mlir::StringAttr">:$dtype,
    GGK_OptionalSizes:$box,
    OptionalParameter<"::mlir::StringAttr">:$swizzle,
    OptionalParameter<"std::optional<int64_t>">:$dim
  );
  let assemblyFormat = "`<` $kind `,` struct($operand, $arg, $dtype, $box, $swizzle, $dim) `>`";
  let genVerifyDecl = 1;
}

def GGK_ArgAttr : GGK_Attr<"Arg", "arg"> {
  let summary = "one tensor of the source function, as the kernel expects it";
  let description = [{
    The element type (`bf16`, `f8e4m3fn`, `i32`, ...) and the shape: each
    dimension a size, or the name of a run-time size it follows (`M`, `K`,
    `align4(M)`, `(M+3G)/4*4`, `ceil(K/128)`, `ceil(K/512)`). `written`
    marks the output.
  }];
  let parameters = (ins
    StringRefParameter<"element type">:$dtype,
    "::mlir::ArrayAttr":$shape,
    "bool":$written
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GGK_LaunchAttr : GGK_Attr<"Launch", "launch"> {
  let summary = "the launch contract of a kernel";
  let description = [{
    Everything the runtime needs to launch the kernel, on the `llvm.func`
    the lowering makes, in two steps. `gg-lower-to-nvvm` writes what the
    source op fixes: the cluster size along M and the persistent grid
    bound, the tile and the problem's static sizes, and the tensors of the
    source function (`#ggk.arg`). `ggk-collect-launch`, the last pass,
    adds what the lowering made, from the kernel that remains: the thread
    block (its `nvvm.maxntid`, which `ggk-warp-specialize` sets from the
    roles), the dynamic shared memory (`ggk.shared_bytes`, which
    `ggk-allocate-shared-memory` sets from the buffers it placed) and the
    parameters in order (each kernel argument's `ggk.param`). The compiler
    library hands the whole contract to hosts as JSON
    (`ggc_result_kernel_info`, once stage `nvvm` ran). `ungroupedSpans`
    counts the spans of rows outside every group that the schedule walks
    as groups of their own (2 with gg's zero_ungrouped, else 0 and not
    printed): each may add a partial tile, which the host's tile count
    includes. `dependentLaunch` (set by `ggk-await-prior-grid`, printed
    only where true) says that the kernel waits for the grid ahead of it
    in the stream before it touches global memory, so that the runtime may
    launch it with programmatic stream serialization: its CTAs start while
    that grid's last CTAs still run.
  }];
  let parameters = (ins
    StringRefParameter<"kernel name">:$name,
    StringRefParameter<"group layout">:$layout,
    OptionalParameter<"std::optional<int64_t>">:$block,
    OptionalParameter<"std::optional<int64_t>">:$sharedBytes,
    "int64_t":$cluster,
    "int64_t":$maxGrid,
    GGK_Sizes:$tile,
    "int64_t":$numGroups,
    "int64_t":$n,
    OptionalParameter<"std::optional<int64_t>">:$k,
    OptionalParameter<"::mlir::ArrayAttr">:$params,
    "::mlir::ArrayAttr":$args,
    DefaultValuedParameter<"int64_t", "0">:$ungroupedSpans,
    DefaultValuedParameter<"bool", "false">:$dependentLaunch
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether ggk-collect-launch added the block, the shared memory and
    /// the parameters.
    bool isComplete() const;
    /// The complete contract as the JSON object hosts read (see
    /// docs/runtime.md).
    std::string toJson() const;
  }];
}

include "ggk/GGKTypes.td"

#endif // GGK_BASE_TD
