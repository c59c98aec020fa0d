//===- GGBlockScaleOps.cpp - gg's ops that make block scales -------------===//
//
// The verifiers of the ops that quantise in blocks or lay block scales out
// for a GEMM: gg.quantize_blocks (expert weights, 128x128),
// gg.quantize_group_tokens (a weight gradient's tokens, 1x128 along them)
// and gg.transpose_scales (rows' scales to the M-major form); their
// lowerings are gg-lower-quantize-blocks, gg-lower-quantize-group-tokens
// and gg-lower-transpose-scales.
//
//===----------------------------------------------------------------------===//
#include "GGOpChecks.h"
#include "gg/GGDialect.h"

using namespace mlir;
using namespace mlir::gg;
using namespace mlir::gg::checks;

LogicalResult TransposeScalesOp::verify() {
  auto inputType = cast<MemRefType>(getInput().getType());
  int64_t rank = inputType.getRank();
  if (rank != 2 && rank != 3)
    return emitOpError() << "input must be [R, C] or [B, R, C], got a "
                         << rank << "-D memref";
  Type f32 = Float32Type::get(getContext());
  FailureOr<MemRefType> input = shaped(*this, getInput(), "input", rank, f32, "f32");
  FailureOr<MemRefType> out = shaped(*this, getOut(), "out", rank, f32, "f32");
  if (failed(input) || failed(out))
    return failure();
  ArrayRef<int64_t> in = input->getShape(), to = out->getShape();
  int64_t rows = in[rank - 2], columns = in[rank - 1];
  int64_t outColumns = to[rank - 2], aligned = to[rank - 1];
  bool batchDiffers = rank == 3 && known(in[0]) && known(to[0]) && in[0] != to[0];
  bool columnsDiffer = known(columns) && known(outColumns) && columns != outColumns;
  bool tooShort = known(rows) && known(aligned) && aligned < rows;
  if (batchDiffers || columnsDiffer || tooShort) {
    InFlightDiagnostic diag = emitOpError() << "out must be ";
    if (rank == 3)
      diag << "[" << sizeText(in[0]) << ", ";
    else
      diag << "[";
    diag << sizeText(columns) << ", A] with A at least R = " << sizeText(rows)
         << " (input's rows as out's columns), got [";
    for (int64_t d = 0; d < rank; ++d)
      diag << (d ? ", " : "") << sizeText(to[d]);
    return diag << "]";
  }
  return success();
}

LogicalResult QuantizeBlocksOp::verify() {
  MLIRContext *ctx = getContext();
  Type f8 = Float8E4M3FNType::get(ctx);
  FailureOr<MemRefType> input = shaped(*this, getInput(), "input", 3,
                                       BFloat16Type::get(ctx), "bf16");
  FailureOr<MemRefType> out = shaped(*this, getOut(), "out", 3, f8, "f8E4M3FN");
  FailureOr<MemRefType> scales = shaped(*this, getScales(), "scales", 3,
                                        Float32Type::get(ctx), "f32");
  if (failed(input) || failed(out) || failed(scales))
    return failure();
  int64_t n = input->getDimSize(1), k = input->getDimSize(2);
  if (!known(n) || !known(k) || n <= 0 || k <= 0 || n % 16 != 0 || k % 16 != 0)
    return emitOpError() << "input must be [G, N, K] with N and K static positive "
                            "multiples of 16 (e4m3 rows of whole 16 bytes, both "
                            "ways; the last 128x128 blocks may be partial), got [?, "
                         << sizeText(n) << ", " << sizeText(k) << "]";
  int64_t experts = input->getDimSize(0);
  // Each operand's expected [G, d1, d2], the one G known anywhere.
  auto check = [&](MemRefType type, StringRef name, int64_t d1,
                   int64_t d2) -> LogicalResult {
    int64_t g = type.getDimSize(0);
    if (type.getDimSize(1) != d1 || type.getDimSize(2) != d2 ||
        (known(g) && known(experts) && g != experts))
      return emitOpError() << name << " must be [" << sizeText(experts) << ", "
                           << d1 << ", " << d2 << "], got [" << sizeText(g) << ", "
                           << sizeText(type.getDimSize(1)) << ", "
                           << sizeText(type.getDimSize(2)) << "]";
    if (known(g))
      experts = g;
    return success();
  };
  if (failed(check(*out, "out", n, k)) ||
      failed(check(*scales, "scales", (n + 127) / 128, (k + 127) / 128)))
    return failure();
  if (Value transposed = getTransposed()) {
    FailureOr<MemRefType> type =
        shaped(*this, transposed, "transposed", 3, f8, "f8E4M3FN");
    if (failed(type) || failed(check(*type, "transposed", k, n)))
      return failure();
  }
  return success();
}

LogicalResult QuantizeGroupTokensOp::verify() {
  MLIRContext *ctx = getContext();
  Type i32 = IntegerType::get(ctx, 32);
  FailureOr<MemRefType> input = shaped(*this, getInput(), "input", 2,
                                       BFloat16Type::get(ctx), "bf16");
  FailureOr<MemRefType> groups = shaped(*this, getGroups(), "groups", 1, i32, "i32");
  FailureOr<MemRefType> padded =
      shaped(*this, getPaddedGroups(), "padded_groups", 1, i32, "i32");
  FailureOr<MemRefType> out = shaped(*this, getOut(), "out", 2,
                                     Float8E4M3FNType::get(ctx), "f8E4M3FN");
  FailureOr<MemRefType> scales = shaped(*this, getScales(), "scales", 2,
                                        Float32Type::get(ctx), "f32");
  if (failed(input) || failed(groups) || failed(padded) || failed(out) ||
      failed(scales))
    return failure();
  int64_t c = input->getDimSize(1);
  if (!known(c) || c <= 0 || c % 16 != 0)
    return emitOpError() << "input must be [T, C] with C a static positive "
                            "multiple of 16 (out's rows of whole 16-byte "
                            "pieces of 8 tokens' columns), got ["
                         << sizeText(input->getDimSize(0)) << ", "
                         << sizeText(c) << "]";
  int64_t bounds = groups->getDimSize(0), paddedBounds = padded->getDimSize(0);
  for (auto [name, size] : {std::pair<StringRef, int64_t>{"groups", bounds},
                            {"padded_groups", paddedBounds}})
    if (known(size) && size < 1)
      return emitOpError() << name << " must hold G + 1 >= 1 offsets, got "
                           << size;
  if (known(bounds) && known(paddedBounds) && bounds != paddedBounds)
    return emitOpError() << "padded_groups must be [" << bounds
                         << "] like groups, got [" << paddedBounds << "]";
  int64_t p = out->getDimSize(1);
  if (out->getDimSize(0) != c || (known(p) && (p <= 0 || p % 128 != 0)))
    return emitOpError() << "out must be [" << c << ", P] with P a multiple "
                            "of 128 (whole token blocks), got ["
                         << sizeText(out->getDimSize(0)) << ", " << sizeText(p)
                         << "]";
  int64_t blocks = scales->getDimSize(0);
  if (scales->getDimSize(1) != c ||
      (known(p) && known(blocks) && blocks != p / 128))
    return emitOpError() << "scales must be [" << (known(p) ? sizeText(p / 128) : "P / 128")
                         << ", " << c << "] (one per 128-token block and "
                         << "column of out), got [" << sizeText(blocks) << ", "
                         << sizeText(scales->getDimSize(1)) << "]";
  return success();
}
