//===- Kernels.cpp - the executor's small kernels, compiled by ggc ---------===//
#include "Kernels.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

namespace ggc::executor::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kCtasPerSM = 8; // enough to fill an SM; the loops do the rest

/// A warp's steps of a row loaded together (gg.quantize_rows' `steps`):
/// the most, up to 4, that divide the row's steps of two 128-column
/// blocks, as ggc.moe.quant_kernel.steps_for (measured there).
int64_t quantizeSteps(int64_t k) {
  int64_t rowSteps = (k + 255) / 256;
  for (int64_t steps = 4; steps > 1; --steps)
    if (rowSteps % steps == 0)
      return steps;
  return 1;
}

/// One runtime::Kernel per (target, source), compiled on first use and
/// kept: the runtime loads its module once per context and is safe to
/// launch from threads.
runtime::Kernel &kernel(const std::string &ir, const std::string &entry,
                        const ggckernels::CompileTarget &target) {
  if (!target.arch)
    throw Error("ggc executor: copying and quantising rows takes kernels ggc "
                "compiles, for sm_80 or newer; this device has no ggc target");
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<runtime::Kernel>> kernels;
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = kernels[std::string(target.arch) + "\n" + ir];
  if (!slot)
    slot = std::make_unique<runtime::Kernel>(ggckernels::compileImage(ir, target),
                                             entry, 0, kThreads);
  return *slot;
}

runtime::KernelArg word(uint64_t value) {
  runtime::KernelArg arg;
  arg.kind = runtime::KernelArg::Kind::Int64;
  arg.value = value;
  return arg;
}

int grid(const ggckernels::CompileTarget &target, int64_t threads) {
  int64_t ctas = (threads + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(ctas, int64_t(target.numSMs) * kCtasPerSM)));
}

} // namespace

std::string copySource(int64_t rowBytes, int unit, bool sourceList,
                       bool destinationList, std::string &name) {
  name = "ggc_copy_w" + std::to_string(rowBytes) + "_u" + std::to_string(unit) +
         (sourceList ? "_gather" : "") + (destinationList ? "_scatter" : "");
  std::string rows = "memref<?x" + std::to_string(rowBytes) + "xi8>";
  std::string ir = "func.func @" + name + "(%in: " + rows;
  if (sourceList)
    ir += ", %in_rows: memref<?xi32>";
  ir += ", %out: " + rows;
  if (destinationList)
    ir += ", %out_rows: memref<?xi32>";
  ir += ") {\n  gg.copy_rows input(%in : " + rows + ")";
  if (sourceList)
    ir += " input_rows(%in_rows : memref<?xi32>)";
  ir += " out(%out : " + rows + ")";
  if (destinationList)
    ir += " out_rows(%out_rows : memref<?xi32>)";
  return ir + " {unit_bytes = " + std::to_string(unit) +
         " : i64, threads = " + std::to_string(kThreads) + " : i64}\n  return\n}\n";
}

std::string quantizeSource(int64_t k, std::string &name) {
  int64_t steps = quantizeSteps(k);
  name = "ggc_quantize_k" + std::to_string(k) + "_s" + std::to_string(steps);
  std::string K = std::to_string(k);
  std::string in = "memref<?x" + K + "xbf16>", out = "memref<?x" + K + "xf8E4M3FN>";
  std::string scales = "memref<" + std::to_string(k / 128) + "x?xf32>";
  return "func.func @" + name + "(%x: " + in + ", %q: " + out + ", %s: " + scales +
         ") {\n  gg.quantize_rows input(%x : " + in + ") out(%q : " + out +
         ") scales(%s : " + scales + ") {threads = " + std::to_string(kThreads) +
         " : i64, steps = " + std::to_string(steps) + " : i64}\n  return\n}\n";
}

void copyRows(const ggckernels::CompileTarget &target, int device, uint64_t stream,
              uint64_t dst, int64_t dstRows, uint64_t src, int64_t srcRows,
              uint64_t dstIndex, uint64_t srcIndex, int64_t rows, int64_t rowBytes) {
  if (rows == 0 || rowBytes == 0)
    return;
  int unit = 1;
  for (int candidate : {16, 8, 4, 2})
    if (rowBytes % candidate == 0 && dst % candidate == 0 && src % candidate == 0) {
      unit = candidate;
      break;
    }
  std::string name;
  std::string ir = copySource(rowBytes, unit, srcIndex != 0, dstIndex != 0, name);
  std::vector<runtime::KernelArg> args = {word(src)};
  if (srcIndex)
    args.push_back(word(srcIndex));
  args.push_back(word(dst));
  if (dstIndex)
    args.push_back(word(dstIndex));
  args.insert(args.end(), {word(uint64_t(rows)), word(uint64_t(srcRows)),
                           word(uint64_t(dstRows))});
  kernel(ir, name + "_copy", target)
      .launch(grid(target, rows * (rowBytes / unit)), args, stream, device);
}

void quantizeRows(const ggckernels::CompileTarget &target, int device, uint64_t stream,
                  uint64_t fp8, uint64_t scales, int64_t scalesLd, uint64_t src,
                  int64_t rows, int64_t k) {
  if (rows == 0)
    return;
  if (k % 128 != 0)
    throw Error("ggc executor: FP8 activations need a hidden size that is a "
                "multiple of 128, got " + std::to_string(k));
  std::string name;
  std::string ir = quantizeSource(k, name);
  // A warp takes `steps` steps of two 128-column blocks of a row at a time.
  int64_t steps = quantizeSteps(k);
  int64_t units = rows * ((k + 256 * steps - 1) / (256 * steps));
  kernel(ir, name + "_quantize", target)
      .launch(grid(target, units * 32), {word(src), word(fp8), word(scales),
                                        word(uint64_t(rows)), word(uint64_t(rows)),
                                        word(uint64_t(scalesLd))},
              stream, device);
}

} // namespace ggc::executor::kernels
