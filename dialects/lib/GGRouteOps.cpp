//===- GGRouteOps.cpp - gg's MoE ops beside the GEMMs ----------------------===//
//
// The verifiers of a MoE layer's ops beside its GEMMs: each operand's
// rank, element type and static size, and kernel sizes their lowerings
// (gg-lower-sort-routes, gg-lower-quantize-rows,
// gg-lower-combine-routes, gg-lower-swiglu-rows, gg-lower-copy-rows,
// gg-lower-select-experts) can build. The block-scale ops' are in
// GGBlockScaleOps.cpp.
//
//===----------------------------------------------------------------------===//
#include "GGOpChecks.h"
#include "gg/GGDialect.h"

using namespace mlir;
using namespace mlir::gg;
using namespace mlir::gg::checks;

/// Static shared memory a CTA may declare.
static constexpr int64_t kStaticSharedBytes = 48 * 1024;

int64_t SortRoutesOp::placeSharedBytes(int64_t experts, int64_t threads) {
  return 4 * ((threads / 32) * experts + 3 * experts + 2 * threads);
}

namespace {

/// Checks that `value` (operand `name`) is a 1-D memref with the identity
/// layout and one of `elements`; returns its type.
FailureOr<MemRefType> rank1(SortRoutesOp op, Value value, StringRef name,
                            ArrayRef<Type> elements, StringRef expected) {
  auto type = cast<MemRefType>(value.getType());
  if (type.getRank() != 1 || !type.getLayout().isIdentity())
    return op.emitOpError() << name << " must be a 1-D memref with the identity "
                            << "layout, got " << type;
  if (!llvm::is_contained(elements, type.getElementType()))
    return op.emitOpError() << name << " must hold " << expected << ", got "
                            << type.getElementType();
  return type;
}

/// The small kernels' CTA size: whole warps, at most 1024 threads.
LogicalResult checkThreads(Operation *op, int64_t threads) {
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    return op->emitOpError() << "threads must be a multiple of 32 in [32, 1024], got "
                             << threads;
  return success();
}

} // namespace

LogicalResult SortRoutesOp::verify() {
  int64_t experts = getExperts(), topK = getTopK();
  int64_t threads = getThreads(), chunk = getChunkRoutes();
  if (failed(checkThreads(*this, threads)))
    return failure();
  if (chunk < threads || chunk % threads != 0)
    return emitOpError() << "chunk_routes must be a positive multiple of threads = "
                         << threads << ", got " << chunk;
  // The place kernel sums the chunks' counts with at least one thread an
  // expert.
  if (experts < 1 || experts > threads)
    return emitOpError() << "experts must be in [1, threads = " << threads
                         << "], got " << experts;
  if (topK < 1)
    return emitOpError() << "top_k must be at least 1, got " << topK;
  int64_t shared = placeSharedBytes(experts, threads);
  if (shared > kStaticSharedBytes)
    return emitOpError() << "needs " << shared << " bytes of shared memory for "
                         << experts << " experts and " << threads
                         << " threads, more than the " << kStaticSharedBytes
                         << " a kernel declares statically; use fewer threads";

  MLIRContext *ctx = getContext();
  Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
  Type f32 = Float32Type::get(ctx);
  struct Operand {
    Value value;
    StringRef name;
    SmallVector<Type, 2> elements;
    StringRef expected;
    bool perRoute;
  };
  Operand operands[] = {
      {getIds(), "ids", {i32, i64}, "i32 or i64", true},
      {getWeights(), "weights", {f32}, "f32", true},
      {getChunkCounts(), "chunk_counts", {i32}, "i32", false},
      {getOffsets(), "offsets", {i32}, "i32", false},
      {getOrder(), "order", {i64}, "i64", true},
      {getSource(), "source", {i32}, "i32", true},
      {getPosition(), "position", {i64}, "i64", true},
      {getRoute(), "route", {f32}, "f32", true}};
  std::optional<int64_t> routes;
  for (const Operand &operand : operands) {
    FailureOr<MemRefType> type = rank1(*this, operand.value, operand.name,
                                       operand.elements, operand.expected);
    if (failed(type))
      return failure();
    int64_t size = type->getDimSize(0);
    if (!operand.perRoute || ShapedType::isDynamic(size))
      continue;
    if (routes && *routes != size)
      return emitOpError() << operand.name << " has " << size
                           << " routes where the operands before it have "
                           << *routes;
    routes = size;
  }
  if (routes && *routes % topK != 0)
    return emitOpError() << "holds " << *routes
                         << " routes, not a multiple of top_k = " << topK;
  int64_t offsets = cast<MemRefType>(getOffsets().getType()).getDimSize(0);
  if (offsets != experts + 1)
    return emitOpError() << "offsets must have experts + 1 = " << experts + 1
                         << " entries, got "
                         << sizeText(offsets);
  return success();
}


/// The copies a scattered row may fill: the lowering loads one index and
/// branches once a copy, unrolled.
static constexpr int64_t kMaxCopies = 64;

/// How out's rows come from the input: rows xor scatter, copies and
/// input_scales only with scatter.
static LogicalResult verifyRowSource(QuantizeRowsOp op) {
  if (op.getRows() && op.getScatter())
    return op.emitOpError() << "takes rows (a gather) or scatter, not both";
  if (op.getInputScales() && !op.getScatter())
    return op.emitOpError() << "input_scales needs scatter (without it the "
                               "input's rows are out's)";
  int64_t copies = op.getCopies();
  if (copies != 1 && !op.getScatter())
    return op.emitOpError() << "copies = " << copies
                            << " needs scatter (the out rows each input row fills)";
  if (copies < 1 || copies > kMaxCopies)
    return op.emitOpError() << "copies must be in [1, " << kMaxCopies
                            << "] (the out rows each input row fills), got "
                            << copies;
  return success();
}

namespace {

/// A routing weight a row for gg.swiglu_rows' `rows` rows (`name` in
/// errors): f32 [M], M as the rows where both are static.
LogicalResult checkRowWeights(Operation *op, Value weights, StringRef name, Value rowsOf) {
  FailureOr<MemRefType> type =
      shaped(op, weights, name, 1, Float32Type::get(op->getContext()), "f32");
  if (failed(type))
    return failure();
  int64_t count = type->getDimSize(0);
  int64_t rows = cast<MemRefType>(rowsOf.getType()).getDimSize(0);
  if (known(count) && known(rows) && count != rows)
    return op->emitOpError() << name << " must hold one value a row, " << rows
                             << ", got " << count;
  return success();
}

} // namespace

/// scatter: one index (i32 or i64) for each of the input's rows' copies.
static LogicalResult verifyScatter(QuantizeRowsOp op, int64_t inputRows) {
  auto type = cast<MemRefType>(op.getScatter().getType());
  Type element = type.getElementType();
  if (type.getRank() != 1 || !type.getLayout().isIdentity() ||
      !(element.isInteger(32) || element.isInteger(64)))
    return op.emitOpError() << "scatter must be a 1-D memref of i32 or i64 "
                               "with the identity layout, got "
                            << type;
  int64_t listed = type.getDimSize(0), copies = op.getCopies();
  if (known(listed) && known(inputRows) && listed != inputRows * copies)
    return op.emitOpError() << "scatter lists " << listed << " rows where input's "
                            << inputRows << " rows times " << copies
                            << " copies want " << inputRows * copies;
  return success();
}

/// route and activation: a routed SwiGLU's rows (gated, out's rows the
/// input's), route f32 [M] and activation bf16 with out's shape.
static LogicalResult verifyRoutedActivation(QuantizeRowsOp op, MemRefType out) {
  if (!op.getRoute() && !op.getActivation())
    return success();
  StringRef name = op.getRoute() ? "route" : "activation";
  if (!op.getGated() || op.getRows() || op.getScatter())
    return op.emitOpError() << name << " takes gated without rows or scatter (the routed "
                               "SwiGLU of each input row, stored to the same out row)";
  if (op.getRoute() && failed(checkRowWeights(op, op.getRoute(), "route", op.getOut())))
    return failure();
  if (!op.getActivation())
    return success();
  FailureOr<MemRefType> activation =
      shaped(op, op.getActivation(), "activation", 2,
             BFloat16Type::get(op.getContext()), "bf16");
  if (failed(activation))
    return failure();
  int64_t m = out.getDimSize(0), rows = activation->getDimSize(0);
  if (activation->getDimSize(1) != out.getDimSize(1) ||
      (known(m) && known(rows) && m != rows))
    return op.emitOpError() << "activation must have out's shape [" << sizeText(m) << ", "
                            << out.getDimSize(1) << "], got [" << sizeText(rows) << ", "
                            << sizeText(activation->getDimSize(1)) << "]";
  return success();
}

LogicalResult QuantizeRowsOp::verify() {
  int64_t threads = getThreads();
  if (failed(checkThreads(*this, threads)))
    return failure();
  if (getSteps() < 1 || getSteps() > 8)
    return emitOpError() << "steps must be in [1, 8] (a warp's steps of a row "
                            "loaded together), got "
                         << getSteps();
  if (failed(verifyRowSource(*this)))
    return failure();
  MLIRContext *ctx = getContext();
  FailureOr<MemRefType> input = shaped(*this, getInput(), "input", 2,
                                       BFloat16Type::get(ctx), "bf16");
  FailureOr<MemRefType> out = shaped(*this, getOut(), "out", 2,
                                     Float8E4M3FNType::get(ctx), "f8E4M3FN");
  if (failed(input) || failed(out))
    return failure();
  FailureOr<MemRefType> scales = shaped(*this, getScales(), "scales", 2,
                                        Float32Type::get(ctx), "f32");
  if (failed(scales))
    return failure();
  int64_t k = out->getDimSize(1), inK = input->getDimSize(1);
  if (!known(k) || k <= 0 || k % 8 != 0)
    return emitOpError() << "out's columns must be a static positive multiple of 8 "
                            "(a lane's 16 bytes of bf16; the last 128-column block "
                            "may be partial), got "
                         << sizeText(k);
  int64_t wantK = getGated() ? 2 * k : k;
  if (inK != wantK)
    return emitOpError() << "input must have " << wantK << " columns ("
                         << (getGated() ? "gated: twice out's" : "out's")
                         << "), got "
                         << sizeText(inK);
  int64_t m = out->getDimSize(0);
  int64_t blocks = (k + 127) / 128;
  if (scales->getDimSize(0) != blocks)
    return emitOpError() << "scales must have ceil(out's columns / 128) = " << blocks
                         << " rows (one per block), got "
                         << sizeText(scales->getDimSize(0));
  int64_t scaled = getInputScales() ? input->getDimSize(0) : m;
  if (known(scaled) && known(scales->getDimSize(1)) &&
      scales->getDimSize(1) < scaled)
    return emitOpError() << "scales' rows of " << scales->getDimSize(1)
                         << " cannot hold " << (getInputScales() ? "input's " : "out's ")
                         << scaled << " rows";
  if (Value rows = getRows()) {
    FailureOr<MemRefType> list = shaped(*this, rows, "rows", 1,
                                        IntegerType::get(ctx, 32), "i32");
    if (failed(list))
      return failure();
    if (known(m) && known(list->getDimSize(0)) && list->getDimSize(0) != m)
      return emitOpError() << "rows lists " << list->getDimSize(0)
                           << " rows where out has " << m;
  } else if (getScatter()) {
    return verifyScatter(*this, input->getDimSize(0));
  } else if (known(m) && known(input->getDimSize(0)) &&
             input->getDimSize(0) != m) {
    return emitOpError() << "input has " << input->getDimSize(0)
                         << " rows where out has " << m
                         << " (a gathered copy takes rows)";
  }
  return verifyRoutedActivation(*this, *out);
}

LogicalResult CombineRoutesOp::verify() {
  int64_t threads = getThreads(), topK = getTopK();
  if (failed(checkThreads(*this, threads)))
    return failure();
  if (topK < 1)
    return emitOpError() << "top_k must be at least 1, got " << topK;
  MLIRContext *ctx = getContext();
  Type bf16 = BFloat16Type::get(ctx);
  FailureOr<MemRefType> input = shaped(*this, getInput(), "input", 2, bf16, "bf16");
  FailureOr<MemRefType> out = shaped(*this, getOut(), "out", 2, bf16, "bf16");
  if (failed(input) || failed(out))
    return failure();
  auto position = cast<MemRefType>(getPosition().getType());
  if (position.getRank() != 1 || !position.getLayout().isIdentity() ||
      !position.getElementType().isInteger() ||
      (!position.getElementType().isInteger(32) &&
       !position.getElementType().isInteger(64)))
    return emitOpError() << "position must be a 1-D i32 or i64 memref with the "
                         << "identity layout, got " << position;
  int64_t h = out->getDimSize(1);
  if (!known(h) || h % 8 != 0)
    return emitOpError() << "out's columns must be a static multiple of 8, got "
                         << sizeText(h);
  if (input->getDimSize(1) != h)
    return emitOpError() << "input must have out's " << h << " columns, got "
                         << sizeText(input->getDimSize(1));
  int64_t tokens = out->getDimSize(0), routes = position.getDimSize(0);
  if (known(tokens) && known(routes) && routes != tokens * topK)
    return emitOpError() << "position has " << routes << " entries where out's "
                         << tokens << " tokens x top_k = " << topK << " need "
                         << tokens * topK;
  return success();
}

namespace {

/// gg.swiglu_rows' and its backward's rules: threads, and bf16 `halves`
/// [M, 2I] beside bf16 `other` [M, I] (`halvesName`, `otherName` name them
/// in errors), I a static multiple of 8. Returns I.
FailureOr<int64_t> checkSwigluRows(Operation *op, int64_t threads, Value halves,
                                   StringRef halvesName, Value other,
                                   StringRef otherName) {
  if (failed(checkThreads(op, threads)))
    return failure();
  Type bf16 = BFloat16Type::get(op->getContext());
  FailureOr<MemRefType> wide = shaped(op, halves, halvesName, 2, bf16, "bf16");
  FailureOr<MemRefType> narrow = shaped(op, other, otherName, 2, bf16, "bf16");
  if (failed(wide) || failed(narrow))
    return failure();
  int64_t inter = narrow->getDimSize(1), cols = wide->getDimSize(1);
  if (!known(inter) || inter % 8 != 0)
    return op->emitOpError() << otherName << "'s columns must be a static multiple of 8, got "
                             << sizeText(inter);
  if (cols != 2 * inter)
    return op->emitOpError() << halvesName << " must have twice " << otherName
                             << "'s columns (gate, then up), " << 2 * inter << ", got "
                             << sizeText(cols);
  int64_t m = narrow->getDimSize(0), rows = wide->getDimSize(0);
  if (known(m) && known(rows) && m != rows)
    return op->emitOpError() << halvesName << " has " << rows << " rows where "
                             << otherName << " has " << m;
  return inter;
}

} // namespace

LogicalResult SwigluRowsOp::verify() {
  if (failed(checkSwigluRows(*this, getThreads(), getInput(), "input", getOut(), "out")))
    return failure();
  if (getRoute())
    return checkRowWeights(*this, getRoute(), "route", getInput());
  return success();
}

/// quantized and quantized_scales: out quantised in 1x128 blocks (routed,
/// I a multiple of 128), f8E4M3FN [M, 2I] and f32 [2I / 128, LD >= M].
static LogicalResult verifyQuantizedGradient(SwigluRowsBackwardOp op, int64_t inter,
                                             int64_t m) {
  if (bool(op.getQuantized()) != bool(op.getQuantizedScales()))
    return op.emitOpError() << "takes quantized and quantized_scales together (the "
                            << "gradient's e4m3 values and their scales), got only "
                            << (op.getQuantized() ? "quantized" : "quantized_scales");
  if (!op.getQuantized())
    return success();
  if (!op.getRoute())
    return op.emitOpError() << "quantized needs route (the routed kernel, a warp a row, "
                               "whose half-warps take the 128-column blocks)";
  if (inter % 128 != 0)
    return op.emitOpError() << "quantized needs grad's columns a multiple of 128 (each "
                               "block within the gate or the up half), got "
                            << inter;
  MLIRContext *ctx = op.getContext();
  FailureOr<MemRefType> values = shaped(op, op.getQuantized(), "quantized", 2,
                                        Float8E4M3FNType::get(ctx), "f8E4M3FN");
  FailureOr<MemRefType> scales = shaped(op, op.getQuantizedScales(), "quantized_scales",
                                        2, Float32Type::get(ctx), "f32");
  if (failed(values) || failed(scales))
    return failure();
  int64_t rows = values->getDimSize(0);
  if (values->getDimSize(1) != 2 * inter || (known(m) && known(rows) && m != rows))
    return op.emitOpError() << "quantized must have out's shape [" << sizeText(m) << ", "
                            << 2 * inter << "], got [" << sizeText(rows) << ", "
                            << sizeText(values->getDimSize(1)) << "]";
  int64_t blocks = 2 * inter / 128, ld = scales->getDimSize(1);
  if (scales->getDimSize(0) != blocks)
    return op.emitOpError() << "quantized_scales must have " << blocks
                            << " rows (one per 128 columns of out), got "
                            << sizeText(scales->getDimSize(0));
  if (known(ld) && known(m) && ld < m)
    return op.emitOpError() << "quantized_scales' rows of " << ld << " cannot hold out's "
                            << m << " rows";
  return success();
}

LogicalResult SwigluRowsBackwardOp::verify() {
  FailureOr<int64_t> inter =
      checkSwigluRows(*this, getThreads(), getInput(), "input", getGrad(), "grad");
  if (failed(inter))
    return failure();
  Type bf16 = BFloat16Type::get(getContext());
  FailureOr<MemRefType> out = shaped(*this, getOut(), "out", 2, bf16, "bf16");
  if (failed(out))
    return failure();
  auto input = cast<MemRefType>(getInput().getType());
  int64_t m = out->getDimSize(0), rows = input.getDimSize(0);
  if (out->getDimSize(1) != 2 * *inter || (known(m) && known(rows) && m != rows))
    return emitOpError() << "out must have input's shape [" << sizeText(rows) << ", "
                         << 2 * *inter << "], got [" << sizeText(m) << ", "
                         << sizeText(out->getDimSize(1)) << "]";
  if (bool(getRoute()) != bool(getRouteGrad()))
    return emitOpError() << "takes route and route_grad together (the routed rows' "
                         << "gradient and the routing weight's), got only "
                         << (getRoute() ? "route" : "route_grad");
  if (getRoute() && (failed(checkRowWeights(*this, getRoute(), "route", getInput())) ||
                     failed(checkRowWeights(*this, getRouteGrad(), "route_grad",
                                            getInput()))))
    return failure();
  return verifyQuantizedGradient(*this, *inter, m);
}

LogicalResult CopyRowsOp::verify() {
  int64_t threads = getThreads(), unit = getUnitBytes();
  if (failed(checkThreads(*this, threads)))
    return failure();
  if (unit != 1 && unit != 2 && unit != 4 && unit != 8 && unit != 16)
    return emitOpError() << "unit_bytes must be 1, 2, 4, 8 or 16, got " << unit;
  auto input = cast<MemRefType>(getInput().getType());
  auto out = cast<MemRefType>(getOut().getType());
  for (auto [name, type] : {std::pair<StringRef, MemRefType>{"input", input},
                            std::pair<StringRef, MemRefType>{"out", out}})
    if (type.getRank() != 2 || !type.getLayout().isIdentity())
      return emitOpError() << name << " must be a 2-D memref with the identity "
                           << "layout, got " << type;
  if (input.getElementType() != out.getElementType())
    return emitOpError() << "input and out must hold the same type, got "
                         << input.getElementType() << " and "
                         << out.getElementType();
  int64_t width = out.getDimSize(1);
  if (!known(width) || input.getDimSize(1) != width)
    return emitOpError() << "input and out must have the same static columns, got "
                         << input << " and " << out;
  int64_t bits = input.getElementTypeBitWidth();
  if (bits % 8 != 0 || (width * bits / 8) % unit != 0)
    return emitOpError() << "unit_bytes " << unit << " must divide a row's "
                         << width * bits / 8 << " bytes";
  Type i32 = IntegerType::get(getContext(), 32);
  int64_t listRows = ShapedType::kDynamic;
  for (auto [name, list] : {std::pair<StringRef, Value>{"input_rows", getInputRows()},
                            std::pair<StringRef, Value>{"out_rows", getOutRows()}}) {
    if (!list)
      continue;
    FailureOr<MemRefType> type = shaped(*this, list, name, 1, i32, "i32");
    if (failed(type))
      return failure();
    int64_t n = type->getDimSize(0);
    if (known(n) && known(listRows) && n != listRows)
      return emitOpError() << "input_rows and out_rows must list as many rows, got "
                           << listRows << " and " << n;
    if (known(n))
      listRows = n;
  }
  if (!getInputRows() && !getOutRows() && known(input.getDimSize(0)) &&
      known(out.getDimSize(0)) && out.getDimSize(0) < input.getDimSize(0))
    return emitOpError() << "out's " << out.getDimSize(0)
                         << " rows cannot hold input's " << input.getDimSize(0);
  return success();
}

/// The most experts a router kernel takes: 32 logits a lane.
static constexpr int64_t kMaxSelectExperts = 1024;
/// The most experts a token chooses: one a lane.
static constexpr int64_t kMaxSelectTopK = 32;

/// `value` (operand `name`) as the router's [T, E] logits or their
/// gradient: bf16, f16 or f32, E static in [1, kMaxSelectExperts];
/// returns E.
static FailureOr<int64_t> checkExpertRows(Operation *op, Value value, StringRef name) {
  auto type = cast<MemRefType>(value.getType());
  Type element = type.getElementType();
  if (type.getRank() != 2 || !type.getLayout().isIdentity())
    return op->emitOpError() << name << " must be a 2-D memref with the identity layout, got "
                             << type;
  if (!element.isBF16() && !element.isF16() && !element.isF32())
    return op->emitOpError() << name << " must hold bf16, f16 or f32, got " << element;
  int64_t experts = type.getDimSize(1);
  if (!known(experts) || experts < 1 || experts > kMaxSelectExperts)
    return op->emitOpError() << name << (name.ends_with("s") ? "'" : "'s")
                             << " columns (the experts) must be static in [1, "
                             << kMaxSelectExperts << "], got " << sizeText(experts);
  return experts;
}

/// The chosen experts' [T, K] operands (`named`: name, value, element,
/// its name): K static in [1, min(E, 32)] and shared, and a row a token
/// where `rows` (the [T, E] operand) knows T.
static LogicalResult
checkChosen(Operation *op, int64_t experts, Value rows,
            ArrayRef<std::tuple<StringRef, Value, Type, StringRef>> named) {
  int64_t topK = ShapedType::kDynamic;
  int64_t tokens = cast<MemRefType>(rows.getType()).getDimSize(0);
  for (auto [name, value, element, expected] : named) {
    FailureOr<MemRefType> type = shaped(op, value, name, 2, element, expected);
    if (failed(type))
      return failure();
    int64_t columns = type->getDimSize(1), most = std::min(experts, kMaxSelectTopK);
    if (!known(topK)) {
      if (!known(columns) || columns < 1 || columns > most)
        return op->emitOpError() << name << "' columns (top_k) must be static in [1, "
                                 << most << "], got " << sizeText(columns);
      topK = columns;
    } else if (columns != topK) {
      return op->emitOpError() << name << " must have " << std::get<0>(named[0]) << "' "
                               << topK << " columns, got " << sizeText(columns);
    }
    int64_t count = type->getDimSize(0);
    if (known(tokens) && known(count) && count != tokens)
      return op->emitOpError() << name << " must have a row a token, " << tokens
                               << ", got " << count;
  }
  return success();
}

/// The most expert groups a router kernel takes: one bit each of a mask.
static constexpr int64_t kMaxSelectGroups = 32;

/// gg.select_experts' groups, topk_groups and bias against E experts and
/// K chosen a token.
static LogicalResult checkGroupsAndBias(SelectExpertsOp op, int64_t experts) {
  int64_t groups = op.getGroups();
  int64_t kept = op.getTopkGroups().value_or(groups);
  if (groups < 1 || groups > kMaxSelectGroups || experts % groups != 0)
    return op.emitOpError() << "groups must divide the " << experts
                            << " experts and be in [1, " << kMaxSelectGroups << "], got "
                            << groups;
  if (kept < 1 || kept > groups)
    return op.emitOpError() << "topk_groups must be in [1, groups = " << groups << "], got "
                            << kept;
  int64_t topK = cast<MemRefType>(op.getWeights().getType()).getDimSize(1);
  if (topK > kept * (experts / groups))
    return op.emitOpError() << "top_k = " << topK << " exceeds the " << kept * (experts / groups)
                            << " experts of the topk_groups = " << kept << " groups kept";
  if (!op.getBias())
    return success();
  FailureOr<MemRefType> bias =
      shaped(op, op.getBias(), "bias", 1, Float32Type::get(op.getContext()), "f32");
  if (failed(bias))
    return failure();
  if (bias->getDimSize(0) != experts)
    return op.emitOpError() << "bias must hold one value an expert, " << experts << ", got "
                            << sizeText(bias->getDimSize(0));
  if (groups > 1 && experts / groups < 2)
    return op.emitOpError() << "with bias a group ranks by its two best experts; " << experts
                            << " experts in " << groups << " groups leave one a group";
  return success();
}

LogicalResult SelectExpertsOp::verify() {
  if (failed(checkThreads(*this, getThreads())))
    return failure();
  FailureOr<int64_t> experts = checkExpertRows(*this, getLogits(), "logits");
  if (failed(experts))
    return failure();
  MLIRContext *ctx = getContext();
  Type f32 = Float32Type::get(ctx), i32 = IntegerType::get(ctx, 32);
  if (failed(checkChosen(*this, *experts, getLogits(),
                         {{"weights", getWeights(), f32, "f32"},
                          {"ids", getIds(), i32, "i32"}})))
    return failure();
  return checkGroupsAndBias(*this, *experts);
}

LogicalResult SelectExpertsBackwardOp::verify() {
  if (failed(checkThreads(*this, getThreads())))
    return failure();
  FailureOr<int64_t> experts = checkExpertRows(*this, getOut(), "out");
  if (failed(experts))
    return failure();
  MLIRContext *ctx = getContext();
  Type f32 = Float32Type::get(ctx), i32 = IntegerType::get(ctx, 32);
  return checkChosen(*this, *experts, getOut(),
                     {{"weights", getWeights(), f32, "f32"},
                      {"ids", getIds(), i32, "i32"},
                      {"grad", getGrad(), f32, "f32"}});
}
