//===- GgcKernels.cpp - ggc's grouped kernels, compiled in-process ---------===//
//
// The same launch contract python/ggc/runtime.py follows: compile the gg
// function through the compiler's C API (to a cubin, or to PTX without
// ptxas), read the kernel's parameters from its JSON launch contract, build
// the tensor maps and launch persistent CTAs through the runtime.
//
//===----------------------------------------------------------------------===//
#include "GgcKernels.h"

#include "Json.h"

#include "ggc-c/Compiler.h"

#include <map>
#include <memory>
#include <mutex>

namespace ggc::executor::ggckernels {

namespace {

const char *irType(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F8E4M3: return "f8E4M3FN";
  }
  return "?";
}

/// Targets without TMA copy A's and B's rows in 16-byte pieces, and
/// quads of threads store 16 bytes of an output row each
/// (store_columns = 8): `spec` is the operand's entry in the contract's
/// `args` (its `dtype` the contract's element name).
void checkCopiedRows(const std::string &operand, const json::Value &spec,
                     const ArgTensor &t) {
  if (operand == "a" || operand == "b") {
    int64_t rowBytes = t.shape.back() * argumentElementBytes(spec.at("dtype").text());
    if (rowBytes % 16 != 0 || t.address % 16 != 0)
      throw Error("ggc executor: operand " + operand + " has rows of " +
                  std::to_string(rowBytes) + " bytes at address " +
                  std::to_string(t.address) + "; cp.async needs 16-byte "
                  "aligned rows of a multiple of 16 bytes");
  }
  if (operand == "out" && t.address % 16 != 0)
    throw Error("ggc executor: out at address " + std::to_string(t.address) +
                " is not 16-byte aligned; the kernel's threads store "
                "16-byte pieces of its rows");
}

struct Compiled {
  std::unique_ptr<runtime::Kernel> kernel;
  json::Value info;
  std::string error; // a failed compilation, rethrown to every caller
};

struct Entry {
  std::once_flag once;
  Compiled compiled;
};

/// One compile through the C API; `ok` false leaves the diagnostics.
bool compileTo(const std::string &ir, const char *emit,
               const CompileTarget &target, std::string &image,
               std::string &info, std::string &diagnostics) {
  ggc_options options{};
  options.emit = emit;
  options.arch = target.arch;
  options.num_sms = target.numSMs;
  options.shared_memory_bytes = target.sharedMemoryBytes;
  options.memory_gbps = target.memoryGBps;
  ggc_result *result = ggc_compile(ir.data(), ir.size(), "<ggc executor>", &options);
  bool ok = ggc_result_ok(result);
  diagnostics = ggc_result_diagnostics(result);
  if (ok) {
    size_t last = ggc_result_num_stages(result) - 1, length = 0;
    const char *text = ggc_result_stage_text(result, last, &length);
    image.assign(text, length);
    info = ggc_result_kernel_info(result);
  }
  ggc_result_destroy(result);
  return ok;
}

// Without ptxas the kernel goes to the driver as PTX, as the Python layer
// does (runtime.compile_for_launch).
std::string compileWithInfo(const std::string &ir, const CompileTarget &target,
                            std::string &info) {
  std::string image, diagnostics;
  if (!compileTo(ir, "cubin", target, image, info, diagnostics) &&
      (diagnostics.find("needs ptxas") == std::string::npos ||
       !compileTo(ir, "ptx", target, image, info, diagnostics)))
    throw Error("ggc executor: compiling a kernel failed:\n" + diagnostics +
                "\nfor:\n" + ir);
  return image;
}

Compiled compile(const std::string &ir, const CompileTarget &target) {
  std::string info;
  std::string image = compileWithInfo(ir, target, info);
  Compiled c;
  json::Value all = json::parse(info);
  if (all.kind != json::Value::Kind::Array || all.array.size() != 1)
    throw Error("ggc executor: the compiled module should hold one kernel");
  c.info = all.array[0];
  int cluster = c.info.has("cluster") ? static_cast<int>(c.info.at("cluster").integer()) : 1;
  c.kernel = std::make_unique<runtime::Kernel>(
      image, c.info.at("name").text(),
      static_cast<int>(c.info.at("shared_bytes").integer()),
      static_cast<int>(c.info.at("block").integer()), cluster,
      c.info.has("dependent_launch") && c.info.at("dependent_launch").boolean);
  return c;
}

const Compiled &compiled(Precision precision, int64_t g, int64_t n, int64_t k,
                         bool biases, const CompileTarget &target) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Entry>> entries;
  std::string ir = source(precision, g, n, k, biases);
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto &slot = entries[std::string(target.arch) + " " +
                         std::to_string(target.numSMs) + " " +
                         std::to_string(target.sharedMemoryBytes) + " " +
                         std::to_string(target.memoryGBps) + "\n" + ir];
    if (!slot)
      slot = std::make_shared<Entry>();
    entry = slot;
  }
  // Compiling takes about a second; other kernels' callers do not wait.
  std::call_once(entry->once, [&] {
    try {
      entry->compiled = compile(ir, target);
    } catch (const std::exception &e) {
      entry->compiled.error = e.what();
    }
  });
  if (!entry->compiled.error.empty())
    throw Error(entry->compiled.error);
  return entry->compiled;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A count the grid divides by: a zero from a damaged contract would be a
/// division by zero.
int64_t positive(const json::Value &info, const char *key) {
  int64_t value = info.at(key).integer();
  if (value < 1)
    throw Error(std::string("ggc executor: the compiler's kernel info has ") + key +
                " = " + std::to_string(value) + " where a positive count belongs");
  return value;
}

/// Persistent CTAs, as runtime.py's Kernel._grid for the contiguous layout:
/// each group adds at most one partial M tile (per cluster), and so does
/// each span of rows outside every group that a kernel zeroes.
int grid(const json::Value &info, int64_t rows) {
  int64_t cluster = info.has("cluster") ? positive(info, "cluster") : 1;
  int64_t spans = info.at("num_groups").integer() +
                  (info.has("ungrouped_spans") ? info.at("ungrouped_spans").integer() : 0);
  int64_t tiles = (ceilDiv(rows, positive(info, "block_m")) + spans * cluster) *
                  ceilDiv(info.at("n").integer(), positive(info, "block_n"));
  int64_t units = ceilDiv(tiles, cluster) * cluster;
  return static_cast<int>(std::min(info.at("max_grid").integer() / cluster * cluster, units));
}

/// The epilogue that adds expert g's bias to the f32 accumulator, so that
/// the sum is rounded to the output type once (adding it to the rounded
/// output would round twice, and lose the cancelled bits of acc + bias).
std::string biasEpilogue(const std::string &biasType) {
  std::string text = "epilogue {\n  ^bb0(%acc: f32, %bias_n: " + biasType +
                     ", %g: index):\n";
  std::string bias = "%bias_n";
  if (biasType != "f32") {
    text += "    %bias32 = arith.extf %bias_n : " + biasType + " to f32\n";
    bias = "%bias32";
  }
  return text + "    %sum = arith.addf %acc, " + bias +
         " : f32\n    gg.yield %sum : f32\n  }";
}

} // namespace

CompileTarget targetOf(const DeviceCapabilities &caps) {
  return {caps.multiprocessors, caps.sharedMemoryPerBlock, caps.ggcTarget(),
          caps.memoryGBps};
}

std::string compileImage(const std::string &ir, const CompileTarget &target) {
  std::string info;
  return compileWithInfo(ir, target, info);
}

std::string source(Precision precision, int64_t g, int64_t n, int64_t k,
                   bool biases) {
  bool fp8 = precision == Precision::FP8;
  std::string a = fp8 ? "f8E4M3FN" : irType(inputType(precision));
  std::string out = irType(outputType(precision));
  std::string G = std::to_string(g), N = std::to_string(n), K = std::to_string(k);
  std::string aType = "memref<?x" + K + "x" + a + ">";
  std::string bType = "memref<" + G + "x" + N + "x" + K + "x" + a + ">";
  std::string oType = "memref<" + std::to_string(g + 1) + "xi32>";
  std::string yType = "memref<?x" + N + "x" + out + ">";
  // The tokens' scales M-major, as gg.quantize_rows writes them
  // (kernels::quantizeRows): [ceil(K/128), align4(M)].
  std::string asType = "memref<" + std::to_string(ceilDiv(k, 128)) + "x?xf32>";
  std::string bsType = "memref<" + G + "x" + std::to_string(ceilDiv(n, 128)) + "x" +
                       std::to_string(ceilDiv(k, 128)) + "xf32>";
  // The biases come in the weights' type (bf16 for FP8's bf16 weights).
  std::string biasType = irType(inputType(precision));
  std::string cType = "memref<" + G + "x" + N + "x" + biasType + ">";
  std::string ir = "func.func @ggc_executor(%a: " + aType;
  if (fp8)
    ir += ", %as: " + asType;
  ir += ", %b: " + bType;
  if (fp8)
    ir += ", %bs: " + bsType;
  ir += ", %offs: " + oType;
  if (biases)
    ir += ", %bias: " + cType;
  ir += ", %y: " + yType + ") {\n";
  ir += "  gg.grouped_matmul contiguous a(%a : " + aType + ") b(%b : " + bType +
        ")\n      groups(%offs : " + oType + ")";
  if (fp8)
    ir += "\n      a_scale(%as : " + asType + ", <block 1x128, mn_major>) b_scale(%bs : " +
          bsType + ", <block 128x128>)";
  ir += " out(%y : " + yType + ")";
  if (biases)
    ir += " cols(%bias : " + cType + ")";
  if (precision == Precision::TF32)
    ir += " {tf32}";
  if (biases)
    ir += " " + biasEpilogue(biasType);
  return ir + "\n  return\n}\n";
}

int64_t argumentElementBytes(const std::string &name) {
  if (name == "f8e4m3fn" || name == "f8e5m2")
    return 1;
  if (name == "bf16" || name == "f16")
    return 2;
  if (name == "f32" || name == "i32")
    return 4;
  if (name == "i64")
    return 8;
  throw Error("ggc executor: the launch contract names an argument of element "
              "type '" + name + "', which the executor does not know");
}

std::vector<runtime::KernelArg>
launchArguments(const json::Value &info, const std::vector<ArgTensor> &args) {
  std::vector<runtime::KernelArg> launchArgs;
  for (const json::Value &p : info.at("params").items()) {
    size_t index = static_cast<size_t>(p.at("arg").integer());
    const ArgTensor &t = args.at(index);
    runtime::KernelArg arg;
    const std::string &kind = p.at("kind").text();
    if (kind == "tensor_map") {
      std::vector<uint32_t> box;
      for (const json::Value &b : p.at("box").items())
        box.push_back(static_cast<uint32_t>(b.integer()));
      arg.kind = runtime::KernelArg::Kind::TensorMap;
      arg.tensorMap = runtime::rowMajorTensorMap(
          runtime::parseElementType(p.at("dtype").text()), t.shape, box,
          t.address, runtime::parseSwizzle(p.at("swizzle").text()));
    } else if (kind == "pointer") {
      checkCopiedRows(p.at("operand").text(), info.at("args").items().at(index), t);
      arg.value = t.address;
    } else {
      arg.kind = runtime::KernelArg::Kind::Int64;
      arg.value = static_cast<uint64_t>(t.shape.at(p.at("dim").integer()));
    }
    launchArgs.push_back(arg);
  }
  return launchArgs;
}

void launch(Precision precision, int64_t g, int64_t n, int64_t k,
            const CompileTarget &target, int device, const Operands &o,
            uint64_t stream) {
  bool biases = o.biases != 0;
  const Compiled &c = compiled(precision, g, n, k, biases, target);
  if (o.numRows == 0)
    return; // no rows: nothing to compute, nothing to write
  int64_t m = o.numRows;
  std::vector<ArgTensor> args;
  args.push_back({o.rows, {m, k}});
  if (precision == Precision::FP8)
    args.push_back({o.rowScales, {ceilDiv(k, 128), (m + 3) / 4 * 4}});
  args.push_back({o.weights, {g, n, k}});
  if (precision == Precision::FP8)
    args.push_back({o.weightScales, {g, ceilDiv(n, 128), ceilDiv(k, 128)}});
  args.push_back({o.offsets, {g + 1}});
  if (biases)
    args.push_back({o.biases, {g, n}});
  args.push_back({o.out, {m, n}});
  c.kernel->launch(grid(c.info, m), launchArguments(c.info, args), stream,
                   device);
}

} // namespace ggc::executor::ggckernels
