//===- AllocateSharedMemory.cpp - ggk-allocate-shared-memory ---------------===//
//
// The kernel's shared memory: the buffers it declares (ggk.shared_buffer:
// the rings of A and B tiles, their K-major copies, the barriers, the
// scales, the staged output tile) are placed one after another, each at a
// multiple of its alignment, by the allocator that also answers
// gg-select-config's footprint query; each address into them
// (ggk.shared_address) becomes byte arithmetic on the aligned base, where
// it stands. The kernel's `ggk.shared_bytes` records the total, which the
// launch contract states (ggk-collect-launch).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"
#include "ggc/Passes.h"
#include "ggk/GGKDialect.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

namespace ggc {
#define GEN_PASS_DEF_ALLOCATESHAREDMEMORY
#include "ggc/Passes.h.inc"
} // namespace ggc

using namespace mlir;
using ggc::KernelBuilder;

llvm::SmallVector<int64_t>
ggc::allocateSharedMemory(llvm::ArrayRef<SharedBuffer> buffers) {
  llvm::SmallVector<int64_t> offsets;
  int64_t next = 0;
  for (const SharedBuffer &buffer : buffers) {
    next = llvm::alignTo(next, buffer.align);
    offsets.push_back(next);
    next += buffer.bytes;
  }
  offsets.push_back(next + kSharedBaseSlack);
  return offsets;
}

namespace {

/// `offset + index * stride` bytes past `base`, the arithmetic the
/// generator wrote by hand before (so the PTX is the same): no add for a
/// zero start, an i32 index sign-extended.
Value address(ggk::SharedAddressOp op, int64_t start) {
  KernelBuilder b(op.getLoc(), op);
  if (!op.getIndex())
    return b.gep(op.getBase(), b.c64(start));
  Value scaled = b.mul(b.toI64(op.getIndex()), b.c64(int64_t(op.getStride())));
  return b.gep(op.getBase(), start == 0 ? scaled : b.add(b.c64(start), scaled));
}

/// Allocates the buffers `fn` declares and lowers its addresses; fails
/// with an error on the op at fault.
LogicalResult allocate(LLVM::LLVMFuncOp fn) {
  SmallVector<ggk::SharedBufferOp> declared;
  fn.walk([&](ggk::SharedBufferOp op) { declared.push_back(op); });
  SmallVector<ggc::SharedBuffer> buffers;
  llvm::StringMap<size_t> byName;
  for (ggk::SharedBufferOp op : declared) {
    if (!byName.try_emplace(op.getName(), buffers.size()).second)
      return op.emitOpError() << "declares buffer '" << op.getName()
                              << "' a second time";
    buffers.push_back({op.getName(), int64_t(op.getBytes()),
                       int64_t(op.getAlign())});
  }
  SmallVector<int64_t> offsets = ggc::allocateSharedMemory(buffers);
  // The launch's dynamic shared memory (ggk-collect-launch reads it here):
  // on every kernel, and on any function that declares buffers.
  if (!declared.empty() || fn->hasAttr("ggk.launch"))
    fn->setAttr(ggk::kSharedBytesAttrName,
                IntegerAttr::get(IntegerType::get(fn.getContext(), 64),
                                 offsets.back()));
  SmallVector<ggk::SharedAddressOp> uses;
  fn.walk([&](ggk::SharedAddressOp op) { uses.push_back(op); });
  for (ggk::SharedAddressOp op : uses) {
    auto it = byName.find(op.getBuffer());
    if (it == byName.end())
      return op.emitOpError() << "addresses buffer '" << op.getBuffer()
                              << "', which the function does not declare";
    const ggc::SharedBuffer &buffer = buffers[it->second];
    if (int64_t(op.getOffset()) > buffer.bytes)
      return op.emitOpError() << "offset " << op.getOffset()
                              << " lies past buffer '" << buffer.name
                              << "' of " << buffer.bytes << " bytes";
    Value lowered = address(op, offsets[it->second] + int64_t(op.getOffset()));
    op.replaceAllUsesWith(lowered);
    op.erase();
  }
  for (ggk::SharedBufferOp op : declared)
    op.erase();
  return success();
}

struct AllocateSharedMemoryPass
    : public ggc::impl::AllocateSharedMemoryBase<AllocateSharedMemoryPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>())
      if (failed(allocate(fn)))
        return signalPassFailure();
  }
};

} // namespace
