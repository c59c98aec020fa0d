//===- GGKMma.cpp - verifiers of the MMA and the async copies -------------===//
//
// ggk.mma and ggk.mma_wait: the shapes an MMA of a warpgroup's 64 rows can
// take, and a wait's count; ggk.copy_async and ggk.copy_async_wait: a
// copy's size, a wait's count.
//
//===----------------------------------------------------------------------===//
#include "ggk/GGKDialect.h"

using namespace mlir;
using namespace mlir::ggk;

namespace {

/// The K elements of one MMA step for operands of this type (32 bytes),
/// or 0 for a type the MMA does not take.
int64_t kPerStepOf(Type t) {
  if (t.isBF16() || t.isF16())
    return 16;
  if (t.isF32())
    return 8; // tf32
  if (isa<Float8E4M3FNType, Float8E5M2Type>(t))
    return 32;
  return 0;
}

} // namespace

LogicalResult MmaOp::verify() {
  Type a = getAType(), b = getBType();
  int64_t perStep = kPerStepOf(a);
  if (perStep == 0 || kPerStepOf(b) == 0)
    return emitOpError() << "takes bf16, f16, f32 (tf32) or f8 operands, got "
                         << a << " and " << b;
  if (kPerStepOf(b) != perStep)
    return emitOpError() << "operands of one width: a_type " << a
                         << " and b_type " << b << " differ";
  // The attributes are signless 64-bit: read as signed, so that a
  // negative one is named as such.
  auto value = [](uint64_t v) { return static_cast<int64_t>(v); };
  int64_t kPerStep = value(getKPerStep());
  int64_t first = value(getFirstStep()), steps = value(getSteps());
  int64_t blockK = value(getBlockK());
  if (kPerStep != perStep)
    return emitOpError() << "k_per_step must be " << perStep << " for " << a
                         << " (32 bytes a step), got " << kPerStep;
  if (getThreeTf32() && !(a.isF32() && b.isF32()))
    return emitOpError() << "three_tf32 splits f32 operands, got " << a
                         << " and " << b;
  if (steps < 1 || first < 0)
    return emitOpError() << "needs steps >= 1 and first_step >= 0, got steps "
                         << steps << ", first_step " << first;
  if ((first + steps) * perStep > blockK)
    return emitOpError() << "K steps " << first << " .. " << first + steps
                         << " of " << perStep
                         << " exceed block_k = " << blockK;
  return success();
}

/// A wait's count of batches still allowed to run.
static LogicalResult verifyPending(Operation *op, uint64_t attr) {
  int64_t pending = static_cast<int64_t>(attr);
  if (pending < 0)
    return op->emitOpError() << "pending must be >= 0, got " << pending;
  return success();
}

LogicalResult MmaWaitOp::verify() { return verifyPending(*this, getPending()); }

LogicalResult CopyAsyncOp::verify() {
  int64_t bytes = static_cast<int64_t>(getBytes());
  if (bytes != 4 && bytes != 8 && bytes != 16)
    return emitOpError() << "bytes must be 4, 8 or 16, got " << bytes;
  // The loads that zero-fill copy 16 bytes (.cg, which takes only 16).
  if (getReadBytes() && bytes != 16)
    return emitOpError() << "reads part of its bytes (read) only when it "
                            "copies 16, got bytes = " << bytes;
  return success();
}

LogicalResult CopyAsyncWaitOp::verify() {
  return verifyPending(*this, getPending());
}
