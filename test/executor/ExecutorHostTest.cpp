//===- ExecutorHostTest.cpp - the executor's checks that need no GPU -------===//
#include "Cublas.h"
#include "GgcKernels.h"
#include "Json.h"
#include "Kernels.h"
#include "ggc-c/Compiler.h"
#include "ggc/Executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <stdexcept>

using namespace ggc::executor;

namespace {

/// The message of the std::invalid_argument that `fn` throws ("" if none).
template <typename Fn> std::string invalidArgument(Fn fn) {
  try {
    fn();
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

ExecutorConfig config(int64_t groups, Precision p = Precision::BF16) {
  ExecutorConfig c;
  c.groupCount = groups;
  c.precision = p;
  return c;
}

DeviceCapabilities gpu(int major, int minor) {
  DeviceCapabilities caps;
  caps.major = major;
  caps.minor = minor;
  caps.name = "test GPU";
  return caps;
}

} // namespace

TEST(ExecutorConfig, NamesTheBadField) {
  EXPECT_NE(invalidArgument([] { config(0).validate(); }).find("config.group_count"),
            std::string::npos);
  ExecutorConfig c = config(8);
  c.workspaceBytes = 1000;
  EXPECT_NE(invalidArgument([&] { c.validate(); }).find("config.workspace_bytes"),
            std::string::npos);
  c = config(8);
  c.maxConcurrentCalls = 0;
  EXPECT_NE(invalidArgument([&] { c.validate(); }).find("config.max_concurrent_calls"),
            std::string::npos);
  c = config(8, Precision::TF32);
  c.useTensorCores = false;
  EXPECT_NE(invalidArgument([&] { c.validate(); }).find("config.use_tensor_cores"),
            std::string::npos);
  c = config(8);
  c.device = -1;
  EXPECT_NE(invalidArgument([&] { c.validate(); }).find("config.device"),
            std::string::npos);
  // Each of 64 calls' shares must hold the pointers of 2^20 groups: not in 1 MiB.
  c = config(1 << 20);
  c.workspaceBytes = 1 << 20;
  EXPECT_NE(invalidArgument([&] { c.validate(); }).find("GEMM pointers"),
            std::string::npos);
  EXPECT_NO_THROW(config(256).validate());
}

TEST(ExecutorConfig, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(parseAlgorithm("cublas_grouped", "algorithm"), Algorithm::CublasGrouped);
  EXPECT_EQ(parsePrecision("tf32", "precision"), Precision::TF32);
  std::string why = invalidArgument([] { parseAlgorithm("cutlass", "config.algorithm"); });
  EXPECT_NE(why.find("config.algorithm"), std::string::npos);
  EXPECT_NE(why.find("'cutlass'"), std::string::npos);
  EXPECT_NE(invalidArgument([] { parsePrecision("fp4", "precision"); }).find("'fp4'"),
            std::string::npos);
}

TEST(SelectAlgorithm, FollowsTheDocumentedRules) {
  DeviceCapabilities h100 = gpu(9, 0), a100 = gpu(8, 0);
  ExecutorConfig bf16 = config(8), fp32 = config(8, Precision::FP32),
                 fp8 = config(8, Precision::FP8);
  // 1. an explicit algorithm wins
  ExecutorConfig fixed = config(8);
  fixed.algorithm = Algorithm::CublasGrouped;
  EXPECT_EQ(selectAlgorithmFor(fixed, h100, true, true, 100, 4), Algorithm::CublasGrouped);
  // 2. FP8 is ggc's
  EXPECT_EQ(selectAlgorithmFor(fp8, h100, true, true, 100, 4), Algorithm::Ggc);
  // 3. FP32, or a GPU where ggc is not preferred (before sm_90: the sm_80
  //    lowering is slower than cuBLAS's): cuBLAS, grouped for several experts
  EXPECT_EQ(selectAlgorithmFor(fp32, h100, true, true, 100, 4), Algorithm::CublasGrouped);
  EXPECT_EQ(selectAlgorithmFor(bf16, a100, true, true, 100, 4), Algorithm::CublasGrouped);
  EXPECT_EQ(selectAlgorithmFor(bf16, a100, true, false, 100, 4), Algorithm::CublasSequential);
  EXPECT_EQ(selectAlgorithmFor(bf16, a100, true, true, 100, 1), Algorithm::CublasSequential);
  EXPECT_EQ(selectAlgorithmFor(bf16, h100, false, false, 100, 1), Algorithm::Ggc);
  // Without cuBLAS, ggc runs wherever it compiles, before sm_90 too.
  EXPECT_EQ(selectAlgorithmFor(bf16, a100, false, false, 100, 4), Algorithm::Ggc);
  EXPECT_EQ(selectAlgorithmFor(fp32, a100, false, false, 100, 4), Algorithm::Ggc);
  EXPECT_EQ(selectAlgorithmFor(bf16, gpu(7, 5), false, false, 100, 4),
            Algorithm::CublasSequential); // refused at creation: no cuBLAS
  ExecutorConfig noTensorCores = config(8);
  noTensorCores.useTensorCores = false;
  EXPECT_EQ(selectAlgorithmFor(noTensorCores, h100, true, true, 100, 4),
            Algorithm::CublasGrouped);
  // 4. one expert (or none): one cublasGemmEx
  EXPECT_EQ(selectAlgorithmFor(bf16, h100, true, true, 100, 1), Algorithm::CublasSequential);
  EXPECT_EQ(selectAlgorithmFor(bf16, h100, true, true, 0, 0), Algorithm::CublasSequential);
  // 5. otherwise ggc's grouped kernels
  EXPECT_EQ(selectAlgorithmFor(bf16, h100, true, true, 100, 2), Algorithm::Ggc);
  EXPECT_NE(invalidArgument([&] { selectAlgorithmFor(bf16, h100, true, true, 1, 9); })
                .find("active_experts"),
            std::string::npos);
  EXPECT_NE(invalidArgument([&] { selectAlgorithmFor(bf16, h100, true, true, -1, 1); })
                .find("batch_size"),
            std::string::npos);
}

TEST(DeviceCapabilities, NameTheTargetGgcCompilesFor) {
  EXPECT_STREQ(gpu(9, 0).ggcTarget(), "sm_90a");
  EXPECT_STREQ(gpu(8, 0).ggcTarget(), "sm_80");
  EXPECT_STREQ(gpu(8, 6).ggcTarget(), "sm_86");
  EXPECT_STREQ(gpu(8, 7).ggcTarget(), "sm_86");
  EXPECT_STREQ(gpu(8, 9).ggcTarget(), "sm_89");
  EXPECT_EQ(gpu(7, 5).ggcTarget(), nullptr);
  EXPECT_EQ(gpu(10, 0).ggcTarget(), nullptr);
  EXPECT_TRUE(gpu(8, 9).ggcFp8());
  EXPECT_FALSE(gpu(8, 0).ggcFp8());
  EXPECT_TRUE(gpu(9, 0).ggcPreferred());
  EXPECT_FALSE(gpu(8, 9).ggcPreferred());
}

TEST(SelectAlgorithm, RefusesWhatCannotRun) {
  auto why = [](Algorithm a, const ExecutorConfig &c, DeviceCapabilities caps,
                bool loaded, bool grouped) -> std::string {
    try {
      checkAlgorithm(a, c, caps, loaded, grouped);
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(why(Algorithm::Ggc, config(8), gpu(7, 5), true, true)
                .find("needs a GPU ggc compiles for (sm_90a: 9.0; sm_80: 8.0; "
                      "sm_86: 8.6, 8.7; sm_89: 8.9)"),
            std::string::npos);
  // Ampere and Ada: the sm_80 lowering; FP8 where the tensor cores have it.
  EXPECT_EQ(why(Algorithm::Ggc, config(8), gpu(8, 0), true, true), "");
  EXPECT_EQ(why(Algorithm::Ggc, config(8), gpu(8, 6), true, true), "");
  EXPECT_NE(why(Algorithm::Ggc, config(8, Precision::FP8), gpu(8, 6), true, true)
                .find("precision 'fp8' needs FP8 tensor cores (sm_90a: 9.0; sm_89: 8.9)"),
            std::string::npos);
  EXPECT_EQ(why(Algorithm::Ggc, config(8, Precision::FP8), gpu(8, 9), true, true), "");
  EXPECT_NE(why(Algorithm::Auto, config(8, Precision::FP8), gpu(8, 0), true, true)
                .find("precision 'fp8' needs FP8 tensor cores"),
            std::string::npos);
  // FP32 is ggc's too now (3xTF32), on every target.
  EXPECT_EQ(why(Algorithm::Ggc, config(8, Precision::FP32), gpu(9, 0), true, true), "");
  EXPECT_EQ(why(Algorithm::Ggc, config(8, Precision::FP32), gpu(8, 0), true, true), "");
  EXPECT_NE(why(Algorithm::CublasGrouped, config(8, Precision::FP8), gpu(9, 0), true, true)
                .find("fp8"),
            std::string::npos);
  EXPECT_NE(why(Algorithm::CublasSequential, config(8), gpu(9, 0), false, false)
                .find("needs cuBLAS"),
            std::string::npos);
  EXPECT_NE(why(Algorithm::CublasGrouped, config(8), gpu(9, 0), true, false)
                .find("cublasGemmGroupedBatchedEx"),
            std::string::npos);
  EXPECT_EQ(why(Algorithm::CublasGrouped, config(8), gpu(8, 6), true, true), "");
}

TEST(ExpertWeightManager, OneNotLoadedSaysSo) {
  ExpertWeightManager none;
  EXPECT_EQ(none.quantizedWeights(), nullptr);
  for (auto call : {std::function<void()>([&] { none.quantize(); }),
                    std::function<void()>([&] { (void)none.weights(); })}) {
    try {
      call();
      ADD_FAILURE() << "a manager without weights was used";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("holds no weights"), std::string::npos)
          << e.what();
    }
  }
}

TEST(MapTokens, RaggedStableAndComplete) {
  RoutingDecision r;
  r.numTokens = 5;
  r.topK = 2;
  r.numExperts = 4;
  // expert 0: none; expert 1: one row; expert 3: the most, in token order
  r.expertIds = {3, 2, 3, 1, 2, 3, 3, 2, 3, 3};
  ExpertMapping m = mapTokens(r);
  EXPECT_EQ(m.tokensPerExpert, (std::vector<int32_t>{0, 1, 3, 6}));
  EXPECT_EQ(m.expertOffsets, (std::vector<int32_t>{0, 0, 1, 4, 10}));
  EXPECT_EQ(m.assignmentOfRow, (std::vector<int32_t>{3, 1, 4, 7, 0, 2, 5, 6, 8, 9}));
  EXPECT_EQ(m.tokenOfRow, (std::vector<int32_t>{1, 0, 2, 3, 0, 1, 2, 3, 4, 4}));
  EXPECT_EQ(m.expertOfRow, (std::vector<int32_t>{1, 2, 2, 2, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(m.activeExperts(), 3);
  r.expertIds[4] = 4;
  EXPECT_NE(invalidArgument([&] { mapTokens(r); }).find("routing.expert_ids[4] = 4"),
            std::string::npos);
  r.expertIds.pop_back();
  EXPECT_NE(invalidArgument([&] { mapTokens(r); }).find("num_tokens * top_k = 10"),
            std::string::npos);
  r.topK = 0;
  EXPECT_NE(invalidArgument([&] { mapTokens(r); }).find("routing.top_k"),
            std::string::npos);
  // num_tokens * top_k past int64 wrapped to 0 and matched empty ids.
  RoutingDecision huge;
  huge.numTokens = int64_t(1) << 62;
  huge.topK = 4;
  huge.numExperts = 4;
  EXPECT_NE(invalidArgument([&] { mapTokens(huge); }).find("at most 2^30 assignments"),
            std::string::npos);
  RoutingDecision empty;
  empty.numExperts = 3;
  ExpertMapping none = mapTokens(empty);
  EXPECT_EQ(none.expertOffsets, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(none.activeExperts(), 0);
}

TEST(Packing, ExpertsAreContiguousAndNullIsNamed) {
  std::vector<uint16_t> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  std::vector<uint8_t> packed = packing::packExperts({a.data(), b.data()}, 8, "w");
  ASSERT_EQ(packed.size(), 16u);
  EXPECT_EQ(reinterpret_cast<uint16_t *>(packed.data())[5], 6);
  EXPECT_NE(invalidArgument([&] { packing::packExperts({a.data(), nullptr}, 8, "expert_weights"); })
                .find("expert_weights[1] is a null pointer"),
            std::string::npos);
  EXPECT_NE(invalidArgument([] { packing::packExperts({}, 8, "expert_weights"); })
                .find("at least one expert"),
            std::string::npos);
}

TEST(Packing, E4M3RoundTripsEveryCodeAndSaturates) {
  for (int bits = 0; bits < 256; ++bits) {
    if ((bits & 0x7F) == 0x7F)
      continue; // NaN
    float x = packing::fromE4M3(static_cast<uint8_t>(bits));
    uint8_t back = packing::toE4M3(x);
    if (bits == 0x80)
      EXPECT_EQ(back, 0x80); // -0
    else
      EXPECT_EQ(back, bits) << "code " << bits << " value " << x;
  }
  EXPECT_EQ(packing::fromE4M3(packing::toE4M3(1000.0f)), 448.0f);
  EXPECT_EQ(packing::fromE4M3(packing::toE4M3(-1000.0f)), -448.0f);
  EXPECT_EQ(packing::fromE4M3(0x01), std::ldexp(1.0f, -9));
  // Halfway between 1 and 1.125 rounds to the even code (1).
  EXPECT_EQ(packing::fromE4M3(packing::toE4M3(1.0625f)), 1.0f);
  uint16_t bf16;
  packing::fromFloat(1.00390625f, DType::BF16, &bf16); // halfway: to even
  EXPECT_EQ(packing::toFloat(&bf16, DType::BF16), 1.0f);
}

TEST(Packing, BlockScalesCoverEach128x128Block) {
  int64_t g = 2, n = 130, k = 200; // partial blocks on both axes
  std::vector<float> w(g * n * k);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::sin(0.37 * i) * (1 + i % 7);
  for (int64_t c = 0; c < k; ++c) // expert 1's second row block: all zero
    for (int64_t r = 128; r < n; ++r)
      w[(n + r) * k + c] = 0;
  std::vector<uint8_t> q;
  std::vector<float> scales;
  packing::quantizeBlocks(w.data(), g, n, k, q, scales);
  ASSERT_EQ(scales.size(), static_cast<size_t>(g * 2 * 2));
  EXPECT_EQ(scales[1 * 4 + 2], 1.0f);
  EXPECT_EQ(scales[1 * 4 + 3], 1.0f);
  for (int64_t e = 0; e < g; ++e)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        size_t i = (e * n + r) * k + c;
        float scale = scales[(e * 2 + r / 128) * 2 + c / 128];
        float back = packing::fromE4M3(q[i]) * scale;
        // e4m3 keeps 3 mantissa bits: half an ulp is 2^-4 relative, and
        // subnormals (below 2^-6 of the scale) err by at most 2^-10 of it.
        EXPECT_LE(std::fabs(back - w[i]),
                  std::max(std::fabs(w[i]) / 16, scale * std::ldexp(1.0f, -10)))
            << e << "," << r << "," << c;
      }
}

TEST(Cublas, AMissingLibraryIsReportedClearly) {
  cublas::Library lib = cublas::load({"libcublas-ggc-missing.so.99"});
  EXPECT_EQ(lib.gemmEx, nullptr);
  EXPECT_NE(lib.error.find("libcublas-ggc-missing.so.99"), std::string::npos);
  EXPECT_NE(lib.error.find("GGC_CUBLAS"), std::string::npos);
  EXPECT_EQ(cublas::statusName(15), "CUBLAS_STATUS_NOT_SUPPORTED (15)");
}

TEST(Json, ReadsTheLaunchContract) {
  json::Value v = json::parse(
      R"([{"name":"k","box":[64,128],"ok":true,"no":false,"x":null,"s":"a\"b"}])");
  const json::Value &k = v.array.at(0);
  EXPECT_EQ(k.at("name").text(), "k");
  EXPECT_EQ(k.at("box").array.at(1).integer(), 128);
  EXPECT_TRUE(k.at("ok").boolean);
  EXPECT_FALSE(k.at("no").boolean);
  EXPECT_EQ(k.at("s").text(), "a\"b");
  EXPECT_THROW(k.at("missing"), Error);
  EXPECT_THROW(json::parse("[1, 2"), Error);
  EXPECT_THROW(json::parse("{\"a\": 1} x"), Error);
  // Refused, not undefined: a nesting that would exhaust the stack, a
  // count past what a double holds exactly, a list that is not one, a
  // \u escape without four hex digits.
  EXPECT_THROW(json::parse(std::string(100000, '[') + std::string(100000, ']')), Error);
  EXPECT_NO_THROW(json::parse(std::string(60, '[') + std::string(60, ']')));
  EXPECT_THROW(json::parse("1e300").integer(), Error);
  EXPECT_THROW(json::parse("{\"params\": 3}").at("params").items(), Error);
  EXPECT_THROW(json::parse("\"\\uZZZZ\""), Error);
  EXPECT_EQ(json::parse("\"\\u0041\"").text(), "A");
}

TEST(GgcKernels, EveryPrecisionsSourceCompilesToPtx) {
  for (Precision p : {Precision::BF16, Precision::FP16, Precision::TF32, Precision::FP8})
    for (bool biases : {false, true}) {
      std::string ir = ggckernels::source(p, 4, 384, 256, biases);
      ggc_options options{};
      options.emit = "nvvm"; // the launch contract is complete from here
      ggc_result *r = ggc_compile(ir.data(), ir.size(), "test", &options);
      EXPECT_TRUE(ggc_result_ok(r)) << name(p) << ":\n" << ggc_result_diagnostics(r) << ir;
      json::Value info = json::parse(ggc_result_kernel_info(r));
      EXPECT_EQ(info.array.at(0).at("num_groups").integer(), 4);
      ggc_result_destroy(r);
    }
}

// Every target's launch contract becomes launch arguments: on sm_80/sm_89
// A's and B's `args` dtypes are the contract's names ("bf16", "f8e4m3fn"), which the
// runtime's tensor-map names do not include (every launch there threw
// "unknown tensor map element type 'bf16'").
TEST(GgcKernels, LaunchArgumentsReadEveryTargetsContract) {
  struct Case {
    const char *arch;
    Precision precision;
  };
  for (Case c : {Case{"sm_80", Precision::BF16}, Case{"sm_89", Precision::FP8},
                 Case{"sm_89", Precision::FP16}, Case{"sm_90a", Precision::BF16},
                 Case{"sm_90a", Precision::FP8}}) {
    const int64_t g = 4, n = 384, k = 256, m = 1000;
    std::string ir = ggckernels::source(c.precision, g, n, k, false);
    ggc_options options{};
    options.emit = "nvvm";
    options.arch = c.arch;
    ggc_result *r = ggc_compile(ir.data(), ir.size(), "test", &options);
    ASSERT_TRUE(ggc_result_ok(r)) << c.arch << ":\n" << ggc_result_diagnostics(r);
    json::Value info = json::parse(ggc_result_kernel_info(r));
    ggc_result_destroy(r);
    bool fp8 = c.precision == Precision::FP8;
    std::vector<ggckernels::ArgTensor> args = {{0x100000, {m, k}}};
    if (fp8)
      args.push_back({0x200000, {k / 128, m}});
    args.push_back({0x300000, {g, n, k}});
    if (fp8)
      args.push_back({0x400000, {g, n / 128, k / 128}});
    args.push_back({0x500000, {g + 1}});
    args.push_back({0x600000, {m, n}});
    const json::Value &kernel = info.array.at(0);
    std::vector<ggc::runtime::KernelArg> launchArgs;
    ASSERT_NO_THROW(launchArgs = ggckernels::launchArguments(kernel, args)) << c.arch;
    EXPECT_EQ(launchArgs.size(), kernel.at("params").array.size());
    bool tma = std::string(c.arch) == "sm_90a";
    int maps = 0;
    for (const ggc::runtime::KernelArg &a : launchArgs)
      maps += a.kind == ggc::runtime::KernelArg::Kind::TensorMap;
    EXPECT_EQ(maps > 0, tma) << c.arch;
    if (!tma) { // cp.async's rows: a misaligned A is named before any launch
      args[0].address += 8;
      try {
        ggckernels::launchArguments(kernel, args);
        ADD_FAILURE() << c.arch << ": a misaligned A was taken";
      } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("operand a has rows of"), std::string::npos)
            << e.what();
      }
    }
  }
  EXPECT_EQ(ggckernels::argumentElementBytes("f8e4m3fn"), 1);
  EXPECT_EQ(ggckernels::argumentElementBytes("bf16"), 2);
  EXPECT_THROW(ggckernels::argumentElementBytes("bfloat16x"), Error);
}

// The bias must reach the f32 accumulator (one rounding of acc + bias), as a
// [G, N] column vector of the weights' type that the kernel is given.
TEST(GgcKernels, BiasesJoinTheAccumulatorBeforeRounding) {
  std::string ir = ggckernels::source(Precision::FP8, 4, 384, 256, true);
  EXPECT_NE(ir.find("cols(%bias : memref<4x384xbf16>)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("arith.addf %acc, %bias32 : f32"), std::string::npos) << ir;
  std::string tf32 = ggckernels::source(Precision::TF32, 4, 384, 256, true);
  EXPECT_NE(tf32.find("arith.addf %acc, %bias_n : f32"), std::string::npos) << tf32;
  ggc_options options{};
  options.emit = "ptx";
  ggc_result *r = ggc_compile(ir.data(), ir.size(), "test", &options);
  ASSERT_TRUE(ggc_result_ok(r)) << ggc_result_diagnostics(r);
  json::Value info = json::parse(ggc_result_kernel_info(r));
  int pointers = 0;
  for (const json::Value &p : info.array.at(0).at("params").array)
    pointers += p.at("kind").text() == "pointer" && p.at("arg").integer() == 4;
  EXPECT_EQ(pointers, 1) << "the bias (argument 4) is not a kernel parameter";
  ggc_result_destroy(r);
  EXPECT_EQ(ggckernels::source(Precision::BF16, 4, 384, 256, false).find("cols("),
            std::string::npos);
}

/// The PTX of gg IR `ir` for `arch` ("" with a failure).
static std::string ptxOf(const std::string &ir, const char *arch) {
  ggc_options options{};
  options.emit = "ptx";
  options.arch = arch;
  ggc_result *r = ggc_compile(ir.data(), ir.size(), "test", &options);
  std::string text;
  if (ggc_result_ok(r)) {
    size_t length = 0;
    const char *stage =
        ggc_result_stage_text(r, ggc_result_num_stages(r) - 1, &length);
    text.assign(stage, length);
  } else {
    ADD_FAILURE() << arch << ":\n" << ggc_result_diagnostics(r) << ir;
  }
  ggc_result_destroy(r);
  return text;
}

// The small kernels are ggc's own, compiled from gg ops for the device's
// target: the row copy everywhere (a gather, a scatter, narrow units for
// unaligned rows), the quantisation where e4m3 conversion is.
TEST(Kernels, SourcesCompileForTheirTargets) {
  struct Copy {
    int64_t rowBytes;
    int unit;
    bool gather, scatter;
  };
  for (const char *arch : {"sm_80", "sm_89", "sm_90a"})
    for (Copy c : {Copy{4096, 16, true, false}, Copy{6, 2, false, true},
                   Copy{12, 4, true, true}, Copy{3, 1, false, false}}) {
      std::string name;
      std::string ir = kernels::copySource(c.rowBytes, c.unit, c.gather, c.scatter, name);
      EXPECT_NE(ir.find("gg.copy_rows"), std::string::npos) << ir;
      std::string ptx = ptxOf(ir, arch);
      EXPECT_NE(ptx.find(".entry " + name + "_copy("), std::string::npos) << ptx;
    }
  for (const char *arch : {"sm_89", "sm_90a"}) {
    std::string name;
    std::string ir = kernels::quantizeSource(2048, name);
    EXPECT_NE(ir.find("steps = 4 : i64"), std::string::npos) << ir;
    EXPECT_NE(ir.find("scales(%s : memref<16x?xf32>)"), std::string::npos) << ir;
    std::string ptx = ptxOf(ir, arch);
    EXPECT_NE(ptx.find(".entry " + name + "_quantize("), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("cvt.rn.satfinite.e4m3x2.f32"), std::string::npos);
  }
  EXPECT_EQ(kernels::scalesLd(5), 8);
  EXPECT_EQ(kernels::scalesLd(8), 8);
}

TEST(Executor, WithoutADeviceCreationSaysWhy) {
  std::string whyNot;
  if (ggc::runtime::driverAvailable(&whyNot))
    GTEST_SKIP() << "a GPU is here: test_executor_gpu covers creation";
  try {
    GroupedGemmExecutor executor(config(8));
    FAIL() << "created an executor without a GPU";
  } catch (const Error &e) {
    std::string what = e.what();
    EXPECT_TRUE(what.find("driver") != std::string::npos ||
                what.find("device") != std::string::npos)
        << what;
  }
}
