//===- GGRouteOps.cpp - gg.sort_routes ------------------------------------===//
//
// The verifier of gg.sort_routes: each operand's rank, element type and
// static size, and kernel sizes that gg-lower-sort-routes can build.
//
//===----------------------------------------------------------------------===//
#include "gg/GGDialect.h"

using namespace mlir;
using namespace mlir::gg;

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

} // namespace

LogicalResult SortRoutesOp::verify() {
  int64_t experts = getExperts(), topK = getTopK();
  int64_t threads = getThreads(), chunk = getChunkRoutes();
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    return emitOpError() << "threads must be a multiple of 32 in [32, 1024], got "
                         << threads;
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
                         << (ShapedType::isDynamic(offsets)
                                 ? std::string("?")
                                 : std::to_string(offsets));
  return success();
}
