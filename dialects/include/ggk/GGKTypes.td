//===- GGKTypes.td - ggk types ------------------------------*- tablegen -*-===//
//
// The consumer warpgroup's accumulator, typed with its fragment layout, so
// that the MMA's lowerings, the promotion and the epilogue read one
// statement of where each thread's values lie. Included by GGKBase.td.
//
//===----------------------------------------------------------------------===//
#ifndef GGK_TYPES_TD
#define GGK_TYPES_TD

class GGK_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<GGK_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def GGK_AccType : GGK_Type<"Acc", "acc"> {
  let summary = "a consumer warpgroup's accumulator: its rows x columns of f32, as fragments of its threads";
  let description = [{
    The f32 sums of a consumer warpgroup's `rows` (64) x `columns` of the
    output tile, held in its 128 threads' registers, `rows * columns / 128`
    each. `warp_columns` (gg-plan-kernel's, printed when not 1) is how its
    four warps split it:

    - 1 (wgmma's m64nN fragment, the only layout sm_90a's wgmma makes):
      warp `w` holds rows `16 w ..`, every column;
    - 2: 2 x 2 warps, warp `w` holds rows `32 (w / 2) ..` of the columns
      `(w % 2) columns / 2 ..`;
    - 4: warp `w` holds all 64 rows of the columns `w columns / 4 ..`.

    Within a warp the fragment is mma's m16n8 quads: thread `lane` holds
    `2 warp_columns` row groups 8 rows apart from row `lane / 4` of its
    warp's first, by `columns / warp_columns / 8` column blocks 8 columns
    apart from column `2 (lane % 4)` of its warp's first, two adjacent
    columns each. `ggk.acc_origin` gives a thread its first row and column;
    `ggk.acc_get` / `ggk.acc_set` address an element by (row group, column
    block, column of the pair). Which register holds which element is this
    type's alone: `ggk-lower-accumulators` makes it an `!llvm.struct` of
    f32, m16 block by m16 block, each as n8 quads (register
    `4 (i blocks + c) + 2 half + j` for row group `2 i + half`).

    Example: `!ggk.acc<64x128xf32, warp_columns = 2>`.
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$columns,
                        "::mlir::Type":$elementType,
                        DefaultValuedParameter<"int64_t", "1">:$warpColumns);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Row groups a thread holds (8 rows apart), and column blocks (8
    /// columns apart, a pair of adjacent columns each).
    int64_t getRowGroups() const { return 2 * getWarpColumns(); }
    int64_t getColumnBlocks() const {
      return getColumns() / getWarpColumns() / 8;
    }
    /// Values a thread holds.
    int64_t getRegisters() const { return getRows() * getColumns() / 128; }
    /// The thread's values as registers, in getRegister's order.
    ::mlir::LLVM::LLVMStructType getRegisterStruct() const {
      return ::mlir::LLVM::LLVMStructType::getLiteral(
          getContext(),
          ::llvm::SmallVector<::mlir::Type>(getRegisters(), getElementType()));
    }
    /// The register of row group `rowGroup`, column block `block` and
    /// column `column` (0 or 1) of its pair.
    int64_t getRegister(int64_t rowGroup, int64_t block, int64_t column) const {
      return 4 * (rowGroup / 2 * getColumnBlocks() + block) +
             2 * (rowGroup % 2) + column;
    }
  }];
}

#endif // GGK_TYPES_TD
