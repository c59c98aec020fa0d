//===- Kernels.cpp - the executor's small kernels (PTX) ---------------------===//
#include "Kernels.h"

#include <map>
#include <memory>
#include <mutex>

namespace ggc::executor::kernels {

namespace {

constexpr int kThreads = 256;

std::string replaceAll(std::string text, const std::string &from,
                       const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// One CTA per row; its threads stride over the row in units of UNIT bytes.
// A null index array means the identity.
const char *kCopyTemplate = R"(
.visible .entry ggc_copy_rows_UNIT(.param .u64 dst, .param .u64 src,
    .param .u64 dst_index, .param .u64 src_index, .param .u64 units)
{
  .reg .pred %p<4>;
  .reg .b16 %h<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [dst];
  ld.param.u64 %rd2, [src];
  ld.param.u64 %rd3, [dst_index];
  ld.param.u64 %rd4, [src_index];
  ld.param.u64 %rd5, [units];
  mov.u32 %r1, %ctaid.x;
  cvt.u64.u32 %rd6, %r1;
  mov.u64 %rd7, %rd6;
  setp.eq.u64 %p1, %rd3, 0;
  @%p1 bra SOURCE;
  mad.wide.u32 %rd8, %r1, 4, %rd3;
  ld.global.s32 %r2, [%rd8];
  cvt.s64.s32 %rd6, %r2;
SOURCE:
  setp.eq.u64 %p2, %rd4, 0;
  @%p2 bra ROWS;
  mad.wide.u32 %rd8, %r1, 4, %rd4;
  ld.global.s32 %r2, [%rd8];
  cvt.s64.s32 %rd7, %r2;
ROWS:
  mul.lo.u64 %rd9, %rd6, %rd5;
  mad.lo.u64 %rd9, %rd9, UNIT, %rd1;
  mul.lo.u64 %rd10, %rd7, %rd5;
  mad.lo.u64 %rd10, %rd10, UNIT, %rd2;
  mov.u32 %r3, %tid.x;
  cvt.u64.u32 %rd11, %r3;
LOOP:
  setp.ge.u64 %p3, %rd11, %rd5;
  @%p3 bra DONE;
  mad.lo.u64 %rd13, %rd11, UNIT, %rd10;
  mad.lo.u64 %rd14, %rd11, UNIT, %rd9;
  MOVE
  add.u64 %rd11, %rd11, THREADS;
  bra LOOP;
DONE:
  ret;
}
)";

const char *kHeader = ".version 8.0\n.target TARGET\n.address_size 64\n";

std::string copyEntry(int unit, const std::string &move) {
  std::string text = replaceAll(kCopyTemplate, "UNIT", std::to_string(unit));
  return replaceAll(text, "MOVE", move);
}

// One warp per (row, 128-column block); a lane holds 4 columns. The scale
// is amax / 448 (1 for an all-zero block), as packing::quantizeBlocks does.
const char *kQuantize = R"(
.visible .entry ggc_quantize_rows_1x128(.param .u64 fp8, .param .u64 scales,
    .param .u64 src, .param .u64 blocks)
{
  .reg .pred %p<4>;
  .reg .b16 %h<4>;
  .reg .b32 %r<16>;
  .reg .f32 %f<24>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [fp8];
  ld.param.u64 %rd2, [scales];
  ld.param.u64 %rd3, [src];
  ld.param.u64 %rd4, [blocks];
  mov.u32 %r1, %ctaid.x;
  cvt.u64.u32 %rd5, %r1;
  mov.u32 %r2, %tid.x;
  and.b32 %r3, %r2, 31;
  shr.u32 %r4, %r2, 5;
  cvt.u64.u32 %rd6, %r4;
  mul.lo.u64 %rd7, %rd5, %rd4;
LOOP:
  setp.ge.u64 %p1, %rd6, %rd4;
  @%p1 bra DONE;
  add.u64 %rd8, %rd7, %rd6;
  shl.b64 %rd9, %rd8, 7;
  mul.wide.u32 %rd10, %r3, 4;
  add.u64 %rd9, %rd9, %rd10;
  mad.lo.u64 %rd11, %rd9, 2, %rd3;
  ld.global.v2.u32 {%r5, %r6}, [%rd11];
  shl.b32 %r7, %r5, 16;
  and.b32 %r8, %r5, -65536;
  shl.b32 %r9, %r6, 16;
  and.b32 %r10, %r6, -65536;
  mov.b32 %f1, %r7;
  mov.b32 %f2, %r8;
  mov.b32 %f3, %r9;
  mov.b32 %f4, %r10;
  abs.f32 %f5, %f1;
  abs.f32 %f6, %f2;
  max.f32 %f5, %f5, %f6;
  abs.f32 %f6, %f3;
  max.f32 %f5, %f5, %f6;
  abs.f32 %f6, %f4;
  max.f32 %f5, %f5, %f6;
  shfl.sync.bfly.b32 %f6, %f5, 16, 31, -1;
  max.f32 %f5, %f5, %f6;
  shfl.sync.bfly.b32 %f6, %f5, 8, 31, -1;
  max.f32 %f5, %f5, %f6;
  shfl.sync.bfly.b32 %f6, %f5, 4, 31, -1;
  max.f32 %f5, %f5, %f6;
  shfl.sync.bfly.b32 %f6, %f5, 2, 31, -1;
  max.f32 %f5, %f5, %f6;
  shfl.sync.bfly.b32 %f6, %f5, 1, 31, -1;
  max.f32 %f5, %f5, %f6;
  div.rn.f32 %f7, %f5, 0f43E00000;
  setp.gt.f32 %p2, %f5, 0f00000000;
  selp.f32 %f7, %f7, 0f3F800000, %p2;
  div.rn.f32 %f8, %f1, %f7;
  div.rn.f32 %f9, %f2, %f7;
  div.rn.f32 %f10, %f3, %f7;
  div.rn.f32 %f11, %f4, %f7;
  cvt.rn.satfinite.e4m3x2.f32 %h1, %f9, %f8;
  cvt.rn.satfinite.e4m3x2.f32 %h2, %f11, %f10;
  mov.b32 %r11, {%h1, %h2};
  add.u64 %rd12, %rd1, %rd9;
  st.global.u32 [%rd12], %r11;
  setp.ne.u32 %p3, %r3, 0;
  @%p3 bra NEXT;
  mad.lo.u64 %rd13, %rd8, 4, %rd2;
  st.global.f32 [%rd13], %f7;
NEXT:
  add.u64 %rd6, %rd6, 4;
  bra LOOP;
DONE:
  ret;
}
)";

std::string withThreads(std::string text) {
  return replaceAll(std::move(text), "THREADS", std::to_string(kThreads));
}

/// One runtime::Kernel per entry, made on first use and kept: the runtime
/// loads its module once per context and is safe to launch from threads.
runtime::Kernel &kernel(const std::string &module, const std::string &entry,
                        int threads) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<runtime::Kernel>> kernels;
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = kernels[entry];
  if (!slot)
    slot = std::make_unique<runtime::Kernel>(module, entry, 0, threads);
  return *slot;
}

runtime::KernelArg word(uint64_t value) {
  runtime::KernelArg arg;
  arg.kind = runtime::KernelArg::Kind::Int64;
  arg.value = value;
  return arg;
}

} // namespace

const std::string &copyModule() {
  static const std::string text = [] {
    std::string t = replaceAll(kHeader, "TARGET", "sm_80");
    t += copyEntry(1, "ld.global.u8 %h1, [%rd13];\n  st.global.u8 [%rd14], %h1;");
    t += copyEntry(2, "ld.global.u16 %h1, [%rd13];\n  st.global.u16 [%rd14], %h1;");
    t += copyEntry(4, "ld.global.u32 %r4, [%rd13];\n  st.global.u32 [%rd14], %r4;");
    t += copyEntry(16, "ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd13];\n"
                       "  st.global.v4.u32 [%rd14], {%r4, %r5, %r6, %r7};");
    return withThreads(t);
  }();
  return text;
}

const std::string &fp8Module() {
  // The conversion to e4m3x2 takes sm_89 and, there, PTX 8.1.
  static const std::string text =
      replaceAll(replaceAll(kHeader, "TARGET", "sm_89"), "8.0", "8.1") +
      std::string(kQuantize);
  return text;
}

void copyRows(int device, uint64_t stream, uint64_t dst, uint64_t src,
              uint64_t dstIndex, uint64_t srcIndex, int64_t rows,
              int64_t rowBytes) {
  if (rows == 0 || rowBytes == 0)
    return;
  int unit = 1;
  for (int candidate : {16, 4, 2})
    if (rowBytes % candidate == 0 && dst % candidate == 0 && src % candidate == 0) {
      unit = candidate;
      break;
    }
  kernel(copyModule(), "ggc_copy_rows_" + std::to_string(unit), kThreads)
      .launch(static_cast<int>(rows),
              {word(dst), word(src), word(dstIndex), word(srcIndex),
               word(static_cast<uint64_t>(rowBytes / unit))},
              stream, device);
}

void quantizeRows(int device, uint64_t stream, uint64_t fp8, uint64_t scales,
                  uint64_t src, int64_t rows, int64_t k) {
  if (rows == 0)
    return;
  if (k % 128 != 0)
    throw Error("ggc executor: FP8 activations need a hidden size that is a "
                "multiple of 128, got " + std::to_string(k));
  kernel(fp8Module(), "ggc_quantize_rows_1x128", 128)
      .launch(static_cast<int>(rows),
              {word(fp8), word(scales), word(src), word(static_cast<uint64_t>(k / 128))},
              stream, device);
}

} // namespace ggc::executor::kernels
