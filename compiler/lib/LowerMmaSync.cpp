//===- LowerMmaSync.cpp - ggk-lower-mma-sync ------------------------------===//
//
// The consumers' MMA for targets without wgmma (sm_80, sm_86, sm_89): each
// warp of a consumer warpgroup multiplies its rows of the warpgroup's 64
// by its columns with mma.sync m16n8k16 (m16n8k32 for FP8, sm_89), one per
// m16 block, 8 columns and K step of 32 bytes, its operands loaded from the swizzled stage by ldmatrix (.trans
// for an N-major B). With warp_columns = 1 a warp has 16 rows and every
// column, and mma.sync's m16n8 accumulator holds a thread's values where
// wgmma's m64nN fragment does; with 2 (gg-plan-kernel's choice for these
// targets) a warp has 32 rows and half the columns, and so loads a third
// less of the stage per multiply; with 4 (a user's plan) it has all 64
// rows and a quarter of the columns. Either way the accumulator's layout is
// the op's, which the epilogue reads too. The MMA is synchronous: its
// fence, commit and wait lower to nothing.
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

namespace ggc {
#define GEN_PASS_DEF_LOWERMMASYNC
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

constexpr int64_t kRowBytes = ggc::kSwizzleBytes;

/// Byte offset of 16-byte piece `piece` of 128-byte row `row` of a
/// swizzled tile.
Value swizzledOffset(KernelBuilder &b, Value row, Value piece) {
  Value swizzled = b.xorI(piece, b.andI(row, b.c32(7)));
  return b.add(b.mul(row, b.c32(kRowBytes)), b.mul(swizzled, b.c32(16)));
}

/// `num` 8x8 matrices of 16-bit elements, one row address per lane.
SmallVector<Value> loadMatrices(KernelBuilder &b, Value tile, Value offset,
                                int64_t num, bool transpose) {
  MLIRContext *ctx = b.getContext();
  Value address = b.gep(tile, b.toI64(offset));
  Type i32 = b.i32();
  Type result = num == 1 ? i32
                         : Type(LLVM::LLVMStructType::getLiteral(
                               ctx, SmallVector<Type>(num, i32)));
  Value loaded = b.create<NVVM::LdMatrixOp>(
      result, address, num,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8), NVVM::LdStMatrixEltType::B16);
  if (num == 1)
    return {loaded};
  SmallVector<Value> regs;
  for (int64_t i = 0; i < num; ++i)
    regs.push_back(b.create<LLVM::ExtractValueOp>(loaded, i));
  return regs;
}

/// The lane's fragments of one K step: A's four registers and, for each
/// 8 columns, B's two.
struct StepOperands {
  SmallVector<Value> a;
  SmallVector<std::array<Value, 2>> b;
};

/// The warp's place in the warpgroup's 64 x n tile: its first row and
/// column, its m16 blocks and its columns.
struct WarpTile {
  Value row, column;
  int64_t blocks, columns;
};

WarpTile warpTile(KernelBuilder &b, ggk::MmaOp op, Value warp) {
  int64_t warpColumns = op.getAccType().getWarpColumns();
  int64_t blocks = warpColumns, columns = op.getN() / warpColumns;
  Value row = b.mul(b.divU(warp, b.c32(warpColumns)), b.c32(16 * blocks));
  Value column = b.mul(b.remU(warp, b.c32(warpColumns)), b.c32(columns));
  return {row, column, blocks, columns};
}

StepOperands loadStep(KernelBuilder &b, ggk::MmaOp op, const WarpTile &w,
                      Value lane, int64_t step) {
  StepOperands operands;
  // `perStep` times the step: its pieces (2 of 16 bytes) or rows of K
  // (16), with the op's run-time step offset where it has one.
  auto stepTimes = [&](int64_t perStep) {
    Value fixed = b.c32(perStep * step);
    if (Value offset = op.getStepOffset())
      return b.add(fixed, b.mul(offset, b.c32(perStep)));
    return fixed;
  };
  // A, per m16 block, registers a0..a3 in mma's order: K-major, lanes
  // 0-15 give rows 0-15 at the step's first 8 K, lanes 16-31 the same rows
  // at its second 8; M-major (one 64-row chunk of K rows), lanes give rows
  // of K (0-7, then 8-15 for lanes 16-31) at the block's first 8 M (lanes
  // 0-7, 16-23) or its second (8-15, 24-31), transposed on the way in.
  Value aPiece = b.add(stepTimes(2), b.divU(lane, b.c32(16)));
  Value aKRow = b.add(stepTimes(16),
                      b.add(b.andI(lane, b.c32(7)),
                            b.mul(b.divU(lane, b.c32(16)), b.c32(8))));
  Value aSecondM = b.andI(b.divU(lane, b.c32(8)), b.c32(1));
  for (int64_t i = 0; i < w.blocks; ++i) {
    Value first = b.add(w.row, b.c32(16 * i));
    Value offset =
        op.getAMnMajor()
            ? swizzledOffset(b, aKRow,
                             b.add(b.divU(first, b.c32(8)), aSecondM))
            : swizzledOffset(b, b.add(first, b.remU(lane, b.c32(16))), aPiece);
    SmallVector<Value> regs =
        loadMatrices(b, op.getATile(), offset, 4, op.getAMnMajor());
    operands.a.append(regs.begin(), regs.end());
  }
  Value low = b.andI(lane, b.c32(7));
  Value half = b.andI(b.divU(lane, b.c32(8)), b.c32(1)); // second 8 of K
  Value upper = b.divU(lane, b.c32(16));                 // second 8 columns
  for (int64_t col = 0; col < w.columns; col += 16) {
    int64_t num = w.columns - col >= 16 ? 4 : 2;
    Value first = b.add(w.column, b.c32(col));
    Value offset;
    if (!op.getBMnMajor()) {
      // Rows of N: matrices (n, k) = (0-7, 0-7), (0-7, 8-15), (8-15, 0-7),
      // (8-15, 8-15), i.e. b0, b1 of two 8-column blocks.
      Value nRow = b.add(first, b.add(low, b.mul(upper, b.c32(8))));
      offset = swizzledOffset(b, nRow, b.add(stepTimes(2), half));
    } else {
      // Rows of K in 64-column chunks, transposed on the way in.
      Value kRow = b.add(stepTimes(16), b.add(low, b.mul(half, b.c32(8))));
      Value column = b.add(first, b.mul(upper, b.c32(8)));
      Value chunk = b.divU(column, b.c32(64));
      Value piece = b.divU(b.remU(column, b.c32(64)), b.c32(8));
      offset = b.add(b.mul(chunk, b.c32(op.getBlockK() * kRowBytes)),
                     swizzledOffset(b, kRow, piece));
    }
    SmallVector<Value> regs =
        loadMatrices(b, op.getBTile(), offset, num, op.getBMnMajor());
    for (int64_t i = 0; i < num; i += 2)
      operands.b.push_back({regs[i], regs[i + 1]});
  }
  return operands;
}

/// PTX's name of an FP8 type.
llvm::StringRef fp8Name(Type t) {
  return isa<Float8E4M3FNType>(t) ? "e4m3" : "e5m2";
}

Value tf32Mma(KernelBuilder &b, ValueRange a, ValueRange bRegs, ValueRange c) {
  Type f32 = b.f32();
  auto quad =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  return b.create<NVVM::MmaOp>(
      quad, a, bRegs, c, ArrayRef<int64_t>{16, 8, 8}, std::nullopt,
      std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::tf32,
                                    NVVM::MMATypes::tf32},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
}

/// An f32 register as its TF32 part (`big`, rounded to nearest) and the
/// TF32 of what that leaves (`small`).
std::pair<Value, Value> splitTf32(KernelBuilder &b, Value reg) {
  Value x = b.create<LLVM::BitcastOp>(b.f32(), reg);
  auto toTf32 = [&](Value v) {
    return b.create<NVVM::ConvertFloatToTF32Op>(b.i32(), v,
                                                NVVM::FPRoundingMode::RNA,
                                                NVVM::SaturationMode::NONE,
                                                false);
  };
  Value big = toTf32(x);
  Value rest = b.create<arith::SubFOp>(
      x, b.create<LLVM::BitcastOp>(b.f32(), big));
  return {big, toTf32(rest)};
}

/// f32 operands: m16n8k8 tf32 on the registers as loaded (gg's `tf32`:
/// their low bits are ignored), or, with three_tf32, on their split parts:
/// small x big + big x small + big x big, the small products first.
Value tf32Quads(KernelBuilder &b, ggk::MmaOp op, ValueRange a,
                ValueRange bRegs, ValueRange c) {
  if (!op.getThreeTf32())
    return tf32Mma(b, a, bRegs, c);
  SmallVector<Value> aBig, aSmall, bBig, bSmall;
  for (Value reg : a) {
    auto [big, small] = splitTf32(b, reg);
    aBig.push_back(big);
    aSmall.push_back(small);
  }
  for (Value reg : bRegs) {
    auto [big, small] = splitTf32(b, reg);
    bBig.push_back(big);
    bSmall.push_back(small);
  }
  auto unpack = [&](Value quad) {
    SmallVector<Value> values;
    for (int64_t r = 0; r < 4; ++r)
      values.push_back(b.create<LLVM::ExtractValueOp>(quad, r));
    return values;
  };
  Value d = tf32Mma(b, aSmall, bBig, c);
  d = tf32Mma(b, aBig, bSmall, unpack(d));
  return tf32Mma(b, aBig, bBig, unpack(d));
}

/// One m16n8 MMA of a K step, `c` += `a` x `b`, as mma.sync: m16n8k16 for
/// bf16 and f16 (NVVM's op), m16n8k8 for f32 (tf32), m16n8k32 for FP8,
/// which NVVM's op does not take (sm_89's instruction, written as PTX).
Value mmaQuad(KernelBuilder &b, ggk::MmaOp op, ValueRange a, ValueRange bRegs,
              ValueRange c) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.f32();
  auto quad = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  Type aType = op.getAType();
  if (isa<Float8E4M3FNType, Float8E5M2Type>(aType)) {
    std::string ptx =
        ("mma.sync.aligned.m16n8k32.row.col.f32." + fp8Name(aType) + "." +
         fp8Name(op.getBType()) +
         ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, "
         "{$10, $11, $12, $13};")
            .str();
    SmallVector<Value> operands(a.begin(), a.end());
    operands.append(bRegs.begin(), bRegs.end());
    operands.append(c.begin(), c.end());
    return b
        .create<LLVM::InlineAsmOp>(
            quad, operands, ptx, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
            /*has_side_effects=*/false, /*is_align_stack=*/false,
            LLVM::TailCallKind::None, LLVM::AsmDialectAttr(),
            /*operand_attrs=*/ArrayAttr())
        .getResult(0);
  }
  if (aType.isF32())
    return tf32Quads(b, op, a, bRegs, c);
  bool f16 = aType.isF16();
  Type pair = VectorType::get({2}, b.getF16Type());
  auto asOperand = [&](Value reg) -> Value {
    return f16 ? Value(b.create<LLVM::BitcastOp>(pair, reg)) : reg;
  };
  SmallVector<Value> aOps, bOps;
  for (Value reg : a)
    aOps.push_back(asOperand(reg));
  for (Value reg : bRegs)
    bOps.push_back(asOperand(reg));
  NVVM::MMATypes type = f16 ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  return b.create<NVVM::MmaOp>(
      quad, aOps, bOps, c, ArrayRef<int64_t>{16, 8, 16}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
}

Value lowerMma(ggk::MmaOp op, KernelBuilder &b) {
  Value thread = b.threadIdx();
  Value lane = b.remU(thread, b.c32(32));
  WarpTile w =
      warpTile(b, op, b.remU(b.divU(thread, b.c32(32)), b.c32(4)));
  ggk::AccType type = op.getAccType();
  Value acc = ggc::accumulatorRegisters(b, op.getAcc());
  int64_t first = op.getFirstStep();
  for (int64_t s = first; s < first + op.getSteps(); ++s) {
    StepOperands operands = loadStep(b, op, w, lane, s);
    for (int64_t i = 0; i < w.blocks; ++i) {
      ArrayRef<Value> a = ArrayRef<Value>(operands.a).slice(4 * i, 4);
      for (auto [index, bRegs] : llvm::enumerate(operands.b)) {
        // The quad's registers: rows +0 and +8 of m16 block i, two
        // columns each.
        int64_t block = index;
        auto quadRegister = [&](int64_t r) {
          return type.getRegister(2 * i + r / 2, block, r % 2);
        };
        SmallVector<Value> c;
        for (int64_t r = 0; r < 4; ++r)
          c.push_back(op.getFresh() && s == first
                          ? b.f32c(0.0)
                          : Value(b.create<LLVM::ExtractValueOp>(
                                acc, quadRegister(r))));
        Value d = mmaQuad(b, op, a, bRegs, c);
        for (int64_t r = 0; r < 4; ++r)
          acc = b.create<LLVM::InsertValueOp>(
              acc, b.create<LLVM::ExtractValueOp>(d, r), quadRegister(r));
      }
    }
  }
  return ggc::asAccumulator(b, acc, op.getType());
}

Value lower(Operation *op, KernelBuilder &b) {
  if (auto mma = dyn_cast<ggk::MmaOp>(op))
    return lowerMma(mma, b);
  return Value(); // fence, commit, wait: mma.sync is done when it returns
}

struct LowerMmaSync : public ggc::impl::LowerMmaSyncBase<LowerMmaSync> {
  using LowerMmaSyncBase::LowerMmaSyncBase;

  void runOnOperation() override {
    if (threeTf32Only) {
      SmallVector<Operation *> split;
      getOperation().walk([&](ggk::MmaOp op) {
        if (op.getThreeTf32())
          split.push_back(op);
      });
      for (Operation *op : split) {
        KernelBuilder b(op->getLoc(), op);
        op->getResult(0).replaceAllUsesWith(
            lowerMma(cast<ggk::MmaOp>(op), b));
        op->erase();
      }
      return;
    }
    WalkResult unsupported = getOperation().walk([&](ggk::MmaOp op) {
      Type t = op.getAType();
      bool sixteen = (t.isBF16() || t.isF16()) && op.getBType() == t;
      bool fp8 = isa<Float8E4M3FNType, Float8E5M2Type>(t) &&
                 isa<Float8E4M3FNType, Float8E5M2Type>(op.getBType());
      // ldmatrix transposes 16-bit elements only.
      bool f32 = t.isF32() && op.getBType().isF32() && !op.getBMnMajor() &&
                 !op.getAMnMajor();
      if (sixteen || f32 || (fp8 && !op.getAMnMajor() && !op.getBMnMajor()))
        return WalkResult::advance();
      op.emitOpError() << "has no mma.sync lowering yet: it takes bf16 or f16 "
                          "operands, or FP8 and f32 ones K-major";
      return WalkResult::interrupt();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    ggc::convertEach<ggk::MmaOp, ggk::MmaFenceOp, ggk::MmaCommitOp,
                     ggk::MmaWaitOp>(getOperation(), lower);
  }
};

} // namespace
