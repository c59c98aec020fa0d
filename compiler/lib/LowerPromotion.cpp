//===- LowerPromotion.cpp - ggk-lower-promotion ---------------------------===//
//
// Two-level accumulation's promotion (ggk.promote), the per-column scales
// read ahead of it (ggk.load_column_scales) and MX's exponent decoding
// (ggk.decode_ue8m0) as the fragment's arithmetic and loads, where they sit.
//
//===----------------------------------------------------------------------===//
#include "ConvertOps.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <numeric>

namespace ggc {
#define GEN_PASS_DEF_LOWERPROMOTION
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

namespace {

/// Most places a B scale block boundary may take inside a warpgroup's
/// columns for which the promotion gets one copy of its FMAs per place;
/// beyond, a select per element.
constexpr int64_t kMaxStraddleVariants = 7;

/// 2^(e - 127) for the UE8M0 exponent in byte `byteIndex` of `word` (as
/// an f32 bit pattern; e = 0 is the subnormal 2^-127).
Value decodeUE8M0(KernelBuilder &b, Value word, Value byteIndex) {
  Value e = b.andI(b.create<arith::ShRUIOp>(word, b.mul(byteIndex, b.c32(8))),
                   b.c32(0xFF));
  Value bits = b.select(b.eq(e, b.c32(0)), b.c32(0x00400000),
                        b.create<arith::ShLIOp>(e, b.c32(23)));
  return b.create<arith::BitcastOp>(b.f32(), bits);
}

/// The promotion's FMAs over the thread's fragment.
class Promotion {
public:
  Promotion(ggk::PromoteOp op, KernelBuilder &b)
      : op(op), b(b), type(cast<ggk::AccType>(op.getAcc().getType())),
        columns(type.getColumns()) {
    if (op.getPerColumn())
      return; // each column's own product, at its FMA
    for (int half = 0; half < 2; ++half)
      for (Value bScale : op.getBScales())
        factor.push_back(
            b.create<arith::MulFOp>(op.getAScales()[half], bScale));
  }

  Value lower() {
    if (op.getColumnScales() || op.getPerColumn())
      return accumulate(op.getAcc(), [](int64_t, int) { return Value(); });
    int64_t bScales = op.getBScales().size();
    // column_halves: the first half of the columns (B's gate rows) takes
    // the first scale, the second half (its up rows) the second.
    if (op.getColumnHalves()) {
      int64_t perHalf = columns / 2 / 8;
      return accumulate(op.getAcc(), [&](int64_t c, int half) {
        return factor[half * bScales + (c < perHalf ? 0 : 1)];
      });
    }
    // Columns not a multiple of 128 (112, 192) may straddle two scale
    // blocks: fragment columns before the boundary take the first block's
    // scale, the rest the second's.
    if (bScales == 2 && columns % 128 != 0)
      return straddling();
    // B has one scale per 128 columns (128x128 blocks), or one for all of
    // them, which a warpgroup of 256 columns must not index past.
    int64_t perScale = std::min<int64_t>(columns, 128) / 8;
    return accumulate(op.getAcc(), [&](int64_t c, int half) {
      return factor[half * bScales + std::min(c / perScale, bScales - 1)];
    });
  }

private:
  /// The FMAs of the whole fragment into `into`, each element's scale
  /// given by `scaleOf(column block, row group)` or, for per-column
  /// scales, by its column.
  Value accumulate(Value into,
                   llvm::function_ref<Value(int64_t, int)> scaleOf) {
    Value partial = op.getPartial();
    for (int64_t c = 0; c < columns / 8; ++c) {
      // A thread's two columns of block c are adjacent, its first even: one
      // 8-byte load of their scales (the tables are 8-byte aligned).
      Value pair;
      if (Value table = op.getColumnScales()) {
        Value column = b.add(op.getColumn(), b.c32(8 * c));
        pair = b.create<LLVM::LoadOp>(
            VectorType::get({2}, b.f32()),
            b.gep(table, b.mul(b.toI64(column), b.c64(4))), /*alignment=*/8);
      }
      for (int j = 0; j < 2; ++j) {
        Value bColumn;
        if (pair)
          bColumn = b.create<LLVM::ExtractElementOp>(pair, b.c32(j));
        else if (op.getPerColumn())
          bColumn = op.getBScales()[2 * c + j];
        for (int half = 0; half < 2; ++half) {
          SmallVector<int64_t> at = {half, c, j};
          Value x = b.create<ggk::AccGetOp>(partial, at);
          Value y = b.create<ggk::AccGetOp>(into, at);
          Value scale =
              bColumn ? b.create<arith::MulFOp>(op.getAScales()[half], bColumn)
                      : scaleOf(c, half);
          Value sum = b.create<math::FmaOp>(x, scale, y);
          into = b.create<ggk::AccSetOp>(sum, into, at);
        }
      }
    }
    return into;
  }

  /// Two blocks of B's scales across the columns: the boundary's place is
  /// known per tile only.
  Value straddling() {
    Value firstColumn = b.add(
        b.mul(op.getNBlock(), b.c32(op.getBlockN())), op.getColumnBase());
    Value boundary = b.sub(
        b.mul(b.add(b.divU(firstColumn, b.c32(128)), b.c32(1)), b.c32(128)),
        firstColumn);
    // A warpgroup's first column is a multiple of gcd(its columns, 128),
    // and so is the boundary. Where that leaves few places for it, each
    // gets its own copy of the FMAs with the scales fixed, chosen once per
    // K block by a switch. (LLVM merges the copies back into one run of
    // FMAs and lets the switch pick each column group's scale register, a
    // move apiece.) A select per element, with the predicates for them,
    // measured 289 instructions per K block and warp against 177 unsplit
    // (112 columns, ncu); the switch, 15.2M against 19.0M instructions in
    // all.
    int64_t step = std::gcd(columns, int64_t(128));
    int64_t places = columns / step - 1; // boundaries inside the fragment
    if (places > kMaxStraddleVariants)
      return accumulate(op.getAcc(), [&](int64_t c, int half) {
        return b.select(b.lt(b.c32(8 * c), boundary), factor[half * 2],
                        factor[half * 2 + 1]);
      });
    SmallVector<int64_t> cases;
    for (int64_t i = 1; i <= places; ++i)
      cases.push_back(i);
    Value place = b.create<arith::IndexCastOp>(b.getIndexType(),
                                               b.divU(boundary, b.c32(step)));
    auto sw = b.create<scf::IndexSwitchOp>(TypeRange{type}, place, cases,
                                           cases.size());
    auto fill = [&](Region &region, int64_t columnsBefore) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&region.emplaceBlock());
      b.create<scf::YieldOp>(accumulate(op.getAcc(), [&](int64_t c, int half) {
        return factor[half * 2 + (8 * c < columnsBefore ? 0 : 1)];
      }));
    };
    for (auto [i, region] : llvm::enumerate(sw.getCaseRegions()))
      fill(region, cases[i] * step);
    // No boundary inside the fragment: every column in the first block.
    fill(sw.getDefaultRegion(), columns);
    return sw.getResult(0);
  }

  ggk::PromoteOp op;
  KernelBuilder &b;
  ggk::AccType type;
  int64_t columns;
  /// A's scale times B's, for row group `half` and block `j`: at
  /// half * (B's scales) + j.
  SmallVector<Value> factor;
};

/// A thread's columns' scales: one 8-byte pair per 8-column block, as
/// ggk.promote's column_scales reads them.
void lowerLoadColumnScales(ggk::LoadColumnScalesOp op) {
  KernelBuilder b(op.getLoc(), op);
  SmallVector<Value> scales;
  for (int64_t c = 0; c < op.getColumns() / 8; ++c) {
    Value column = b.add(op.getColumn(), b.c32(8 * c));
    Value pair = b.create<LLVM::LoadOp>(
        VectorType::get({2}, b.f32()),
        b.gep(op.getTable(), b.mul(b.toI64(column), b.c64(4))),
        /*alignment=*/8);
    for (int j = 0; j < 2; ++j)
      scales.push_back(b.create<LLVM::ExtractElementOp>(pair, b.c32(j)));
  }
  op.replaceAllUsesWith(scales);
  op.erase();
}

Value lower(Operation *op, KernelBuilder &b) {
  if (auto decode = dyn_cast<ggk::DecodeUE8M0Op>(op))
    return decodeUE8M0(b, decode.getWord(), decode.getByte());
  return Promotion(cast<ggk::PromoteOp>(op), b).lower();
}

struct LowerPromotion : public ggc::impl::LowerPromotionBase<LowerPromotion> {
  void runOnOperation() override {
    SmallVector<ggk::LoadColumnScalesOp> loads;
    getOperation().walk(
        [&](ggk::LoadColumnScalesOp op) { loads.push_back(op); });
    for (ggk::LoadColumnScalesOp op : loads)
      lowerLoadColumnScales(op);
    ggc::convertEach<ggk::PromoteOp, ggk::DecodeUE8M0Op>(getOperation(),
                                                          lower);
  }
};

} // namespace
