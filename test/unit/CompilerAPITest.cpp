//===- CompilerAPITest.cpp - the C API of libggc ---------------------------===//
#include "ggc-c/Compiler.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace {

using ResultPtr = std::unique_ptr<ggc_result, decltype(&ggc_result_destroy)>;

ResultPtr compile(const std::string &source, const char *emit) {
  ggc_options options = {emit, nullptr, 0, 0};
  return ResultPtr(
      ggc_compile(source.data(), source.size(), "test.mlir", &options),
      &ggc_result_destroy);
}

const char *kMaskedBf16 = R"mlir(
func.func @k(%a: memref<4x256x7168xbf16>, %b: memref<4x4096x7168xbf16>,
             %m: memref<4xi32>, %o: memref<4x256x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x256x7168xbf16>)
      b(%b : memref<4x4096x7168xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x256x4096xbf16>) {expected_m = 48 : i64}
  return
}
)mlir";

TEST(CompilerAPI, StagesAreListedInPipelineOrder) {
  ASSERT_GE(ggc_num_stages(), 4u);
  EXPECT_STREQ(ggc_stage_name(0), "gg");
  bool sawPtx = false;
  for (size_t i = 0; i < ggc_num_stages(); ++i)
    sawPtx |= std::string(ggc_stage_name(i)) == "ptx";
  EXPECT_TRUE(sawPtx);
  EXPECT_EQ(ggc_stage_name(ggc_num_stages()), nullptr);
}

TEST(CompilerAPI, TargetsDescribeTheirHardware) {
  ASSERT_EQ(ggc_num_targets(), 4u);
  EXPECT_EQ(ggc_target(ggc_num_targets()), nullptr);
  const ggc_target_info &hopper = *ggc_target(0);
  EXPECT_STREQ(hopper.name, "sm_90a"); // the default comes first
  EXPECT_STREQ(hopper.mma, "wgmma");
  EXPECT_STREQ(hopper.async_copy, "tma");
  EXPECT_TRUE(hopper.tensor_maps && hopper.clusters &&
              hopper.register_reallocation && hopper.mbarrier_try_wait &&
              hopper.fp8_mma && hopper.grid_dependencies);
  EXPECT_EQ(hopper.shared_memory_bytes, 232448);
  for (size_t i = 1; i < ggc_num_targets(); ++i) {
    const ggc_target_info &t = *ggc_target(i);
    EXPECT_STREQ(t.mma, "mma_sync") << t.name;
    EXPECT_STREQ(t.async_copy, "cp_async") << t.name;
    EXPECT_FALSE(t.tensor_maps || t.clusters || t.register_reallocation ||
                 t.mbarrier_try_wait || t.grid_dependencies)
        << t.name;
    EXPECT_EQ(t.fp8_mma != 0, std::string(t.name) == "sm_89") << t.name;
  }
  // Each device runs one target's kernels: Orin (8.7) sm_86's.
  EXPECT_STREQ(ggc_target_for_capability(9, 0), "sm_90a");
  EXPECT_STREQ(ggc_target_for_capability(8, 7), "sm_86");
  EXPECT_STREQ(ggc_target_for_capability(8, 9), "sm_89");
  EXPECT_EQ(ggc_target_for_capability(7, 5), nullptr);
  EXPECT_EQ(ggc_target_for_capability(10, 0), nullptr);
}

TEST(CompilerAPI, CompilesEveryStageUpToEmit) {
  ResultPtr r = compile(kMaskedBf16, "gg-config");
  ASSERT_TRUE(ggc_result_ok(r.get())) << ggc_result_diagnostics(r.get());
  ASSERT_EQ(ggc_result_num_stages(r.get()), 2u);
  EXPECT_STREQ(ggc_result_stage_name(r.get(), 0), "gg");
  EXPECT_STREQ(ggc_result_stage_name(r.get(), 1), "gg-config");
  size_t length = 0;
  std::string text = ggc_result_stage_text(r.get(), 1, &length);
  EXPECT_EQ(text.size(), length);
  // expected_m = 48 selects 64-row tiles for a small decode batch.
  EXPECT_NE(text.find("#gg.config<block = [64, "), std::string::npos) << text;
  std::string input = ggc_result_stage_text(r.get(), 0, nullptr);
  EXPECT_EQ(input.find("#gg.config"), std::string::npos);
}

TEST(CompilerAPI, VerifierErrorsComeBackAsDiagnostics) {
  std::string bad = kMaskedBf16;
  bad.replace(bad.find("%m : memref<4xi32>"), 18, "%m : memref<4xi64>");
  bad.replace(bad.find("%m: memref<4xi32>"), 17, "%m: memref<4xi64>");
  ResultPtr r = compile(bad, "gg");
  EXPECT_FALSE(ggc_result_ok(r.get()));
  std::string diag = ggc_result_diagnostics(r.get());
  EXPECT_NE(diag.find("test.mlir:"), std::string::npos) << diag;
  EXPECT_NE(diag.find("'groups' must have element type i32"), std::string::npos)
      << diag;
}

TEST(CompilerAPI, UnknownStageIsRejectedWithTheList) {
  ResultPtr r = compile(kMaskedBf16, "sass");
  EXPECT_FALSE(ggc_result_ok(r.get()));
  std::string diag = ggc_result_diagnostics(r.get());
  EXPECT_NE(diag.find("unknown stage 'sass'"), std::string::npos) << diag;
  EXPECT_NE(diag.find("gg-config"), std::string::npos) << diag;
}

TEST(CompilerAPI, PtxHoldsTmaLoadsAndWgmma) {
  ResultPtr r = compile(kMaskedBf16, "ptx");
  ASSERT_TRUE(ggc_result_ok(r.get())) << ggc_result_diagnostics(r.get());
  size_t last = ggc_result_num_stages(r.get()) - 1;
  std::string ptx = ggc_result_stage_text(r.get(), last, nullptr);
  EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos);
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n"), std::string::npos);
  EXPECT_NE(ptx.find("cp.async.bulk.tensor.3d"), std::string::npos);
  std::string info = ggc_result_kernel_info(r.get());
  EXPECT_NE(info.find("\"name\":\"k_kernel\""), std::string::npos) << info;
  EXPECT_NE(info.find("\"layout\":\"masked\""), std::string::npos) << info;
}

TEST(CompilerAPI, KernelInfoIsEmptyBeforeTheNVVMStage) {
  // ggk-collect-launch, the nvvm stage's last pass, completes the contract.
  for (const char *stage : {"gg-config", "ggk"}) {
    ResultPtr r = compile(kMaskedBf16, stage);
    ASSERT_TRUE(ggc_result_ok(r.get())) << stage;
    EXPECT_STREQ(ggc_result_kernel_info(r.get()), "") << stage;
  }
  ResultPtr r = compile(kMaskedBf16, "nvvm");
  ASSERT_TRUE(ggc_result_ok(r.get())) << ggc_result_diagnostics(r.get());
  std::string info = ggc_result_kernel_info(r.get());
  EXPECT_NE(info.find("\"block\":"), std::string::npos) << info;
  EXPECT_NE(info.find("\"shared_bytes\":"), std::string::npos) << info;
  EXPECT_NE(info.find("\"kind\":\"tensor_map\""), std::string::npos) << info;
}

TEST(CompilerAPI, KernelPlansHoldTheConfigTheIRPrints) {
  ResultPtr r = compile(kMaskedBf16, "gg-config");
  ASSERT_TRUE(ggc_result_ok(r.get())) << ggc_result_diagnostics(r.get());
  std::string plans = ggc_result_kernel_plans(r.get());
  std::string ir = ggc_result_stage_text(r.get(), 1, nullptr);
  size_t begin = ir.find("#gg.config<");
  ASSERT_NE(begin, std::string::npos) << ir;
  std::string printed = ir.substr(begin, ir.find('>', begin) + 1 - begin);
  EXPECT_EQ(plans.front(), '[') << plans;
  EXPECT_NE(plans.find("\"function\":\"k\""), std::string::npos) << plans;
  EXPECT_NE(plans.find("\"config\":\"" + printed + "\""), std::string::npos)
      << plans;
  // expected_m = 48: 64-row tiles, as printed.
  EXPECT_NE(plans.find("\"block\":[64,"), std::string::npos) << plans;
  EXPECT_NE(plans.find("\"store_pool\":[64,32,16,8,4,2,1]"), std::string::npos)
      << plans;
}

TEST(CompilerAPI, KernelPlansAreEmptyBeforeTheConfigStage) {
  ResultPtr r = compile(kMaskedBf16, "gg");
  ASSERT_TRUE(ggc_result_ok(r.get()));
  EXPECT_STREQ(ggc_result_kernel_plans(r.get()), "");
  EXPECT_STREQ(ggc_result_kernel_plans(nullptr), "");
}

TEST(CompilerAPI, WhatTheLoweringLacksIsAnErrorNotAKernel) {
  // Clusters along N are verified but not lowered yet.
  const char *source = R"mlir(
func.func @w(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
             %off: memref<5xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x512xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 2], sms = 132>}
  return
}
)mlir";
  ResultPtr r = compile(source, "ptx");
  EXPECT_FALSE(ggc_result_ok(r.get()));
  EXPECT_NE(std::string(ggc_result_diagnostics(r.get()))
                .find("is not supported by gg-lower-to-nvvm yet: clusters "
                      "other than [1, 1] and [2, 1]"),
            std::string::npos)
      << ggc_result_diagnostics(r.get());
  EXPECT_EQ(ggc_result_num_stages(r.get()), 2u); // gg and gg-config only
}

TEST(CompilerAPI, RejectsOtherArchitecturesAndNullSource) {
  ggc_options options = {"gg", "sm_75", 0, 0};
  ResultPtr r(ggc_compile(kMaskedBf16, std::string(kMaskedBf16).size(), "t",
                          &options),
              &ggc_result_destroy);
  EXPECT_FALSE(ggc_result_ok(r.get()));
  EXPECT_NE(std::string(ggc_result_diagnostics(r.get())).find("unsupported arch 'sm_75'"),
            std::string::npos);
  // The C API takes the driver's and Python's bound on SMs (it planned a
  // grid of 2^31 CTAs).
  ggc_options many = {"gg", "sm_90a", GGC_MAX_NUM_SMS + 1, 0};
  ResultPtr m(ggc_compile(kMaskedBf16, std::string(kMaskedBf16).size(), "t", &many),
              &ggc_result_destroy);
  EXPECT_FALSE(ggc_result_ok(m.get()));
  EXPECT_NE(std::string(ggc_result_diagnostics(m.get()))
                .find("num_sms must be from 1 to 4096, got 4097"),
            std::string::npos)
      << ggc_result_diagnostics(m.get());
  ResultPtr n(ggc_compile(nullptr, 0, "t", nullptr), &ggc_result_destroy);
  EXPECT_FALSE(ggc_result_ok(n.get()));
  EXPECT_NE(std::string(ggc_result_diagnostics(n.get())).find("'source'"),
            std::string::npos);
}

// The device's shared memory reaches the plan: 128 rows of 4,096 bf16
// columns for sm_80 take 128x128 tiles in an A100's 163 KiB (the target's,
// 0) and 128x256 in a Hopper card's 227 KiB; a negative budget is refused
// by name.
TEST(CompilerAPI, SharedMemoryBytesPlansForTheDevice) {
  const std::string source = R"mlir(
func.func @k(%a: memref<16x256x4096xbf16>, %b: memref<16x4096x4096xbf16>,
             %m: memref<16xi32>, %o: memref<16x256x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x256x4096xbf16>)
      b(%b : memref<16x4096x4096xbf16>) groups(%m : memref<16xi32>)
      out(%o : memref<16x256x4096xbf16>)
  return
}
)mlir";
  auto plan = [&](int64_t bytes) {
    ggc_options options = {"gg-config", "sm_80", 0, 0, bytes};
    ResultPtr r(ggc_compile(source.data(), source.size(), "t", &options),
                &ggc_result_destroy);
    return std::make_pair(ggc_result_ok(r.get()) != 0,
                          std::string(ggc_result_kernel_plans(r.get())) +
                              ggc_result_diagnostics(r.get()));
  };
  auto [a100Ok, a100] = plan(0);
  ASSERT_TRUE(a100Ok) << a100;
  EXPECT_NE(a100.find("\"block\":[128,128,64]"), std::string::npos) << a100;
  auto [hopperOk, hopper] = plan(232448);
  ASSERT_TRUE(hopperOk) << hopper;
  EXPECT_NE(hopper.find("\"block\":[128,256,64]"), std::string::npos)
      << hopper;
  auto [negativeOk, negative] = plan(-1);
  EXPECT_FALSE(negativeOk);
  EXPECT_NE(negative.find("shared_memory_bytes must be 0 (the target's) or "
                          "the device's opt-in shared memory per CTA, got -1"),
            std::string::npos)
      << negative;
}

// The device's DRAM bandwidth reaches gg-select-config: a card below 4,000
// GB/s (an H100 SXM's 3,352) gets 128x256 tiles for 16-bit contiguous
// groups of 512 rows, an unknown one (0) 128x128; a negative one is refused
// by name.
TEST(CompilerAPI, MemoryBandwidthPlansForTheDevice) {
  const std::string source = R"mlir(
func.func @k(%a: memref<?x8192xbf16>, %b: memref<32x3072x8192xbf16>,
             %off: memref<33xi32>, %o: memref<?x3072xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x8192xbf16>)
      b(%b : memref<32x3072x8192xbf16>) groups(%off : memref<33xi32>)
      out(%o : memref<?x3072xbf16>) {expected_m = 512 : i64}
  return
}
)mlir";
  auto plan = [&](int64_t gbps) {
    ggc_options options = {"gg-config", "sm_90a", 0, 0, 0, gbps};
    ResultPtr r(ggc_compile(source.data(), source.size(), "t", &options),
                &ggc_result_destroy);
    return std::make_pair(ggc_result_ok(r.get()) != 0,
                          std::string(ggc_result_kernel_plans(r.get())) +
                              ggc_result_diagnostics(r.get()));
  };
  auto [unknownOk, unknown] = plan(0);
  ASSERT_TRUE(unknownOk) << unknown;
  EXPECT_NE(unknown.find("\"block\":[128,128,64]"), std::string::npos) << unknown;
  auto [narrowOk, narrow] = plan(3352);
  ASSERT_TRUE(narrowOk) << narrow;
  EXPECT_NE(narrow.find("\"block\":[128,256,64]"), std::string::npos) << narrow;
  auto [negativeOk, negative] = plan(-1);
  EXPECT_FALSE(negativeOk);
  EXPECT_NE(negative.find("memory_gbps must be 0 (unknown) or the device's "
                          "peak DRAM bandwidth in GB/s, got -1"),
            std::string::npos)
      << negative;
}

TEST(CompilerAPI, InputWithoutKernelIsAnError) {
  for (const char *source : {"", "func.func @f() { return }"}) {
    ResultPtr r = compile(source, "ptx");
    EXPECT_FALSE(ggc_result_ok(r.get())) << "source: '" << source << "'";
    EXPECT_EQ(ggc_result_num_stages(r.get()), 0u);
    EXPECT_NE(std::string(ggc_result_diagnostics(r.get()))
                  .find("'test.mlir' holds no function with an op that makes a kernel"),
              std::string::npos)
        << ggc_result_diagnostics(r.get());
  }
}

TEST(CompilerAPI, PrintIRAfterAllRecordsEachPass) {
  ggc_options options = {"gg-config", nullptr, 0, 1};
  std::string src = kMaskedBf16;
  ResultPtr r(ggc_compile(src.data(), src.size(), "t", &options),
              &ggc_result_destroy);
  ASSERT_TRUE(ggc_result_ok(r.get()));
  std::string dump = ggc_result_ir_after_all(r.get());
  EXPECT_NE(dump.find("IR Dump After SelectConfig"), std::string::npos) << dump;
}

TEST(CompilerAPI, TimingListsEveryStageAndItsPassesOnlyWhenAsked) {
  std::string src = kMaskedBf16;
  ggc_options quiet = {"nvvm", nullptr, 0, 0};
  ResultPtr plain(ggc_compile(src.data(), src.size(), "t", &quiet),
                  &ggc_result_destroy);
  ASSERT_TRUE(ggc_result_ok(plain.get()));
  EXPECT_STREQ(ggc_result_timing(plain.get()), "");

  ggc_options timed = {"nvvm", nullptr, 0, 0, 0, 0, 1};
  ResultPtr r(ggc_compile(src.data(), src.size(), "t", &timed),
              &ggc_result_destroy);
  ASSERT_TRUE(ggc_result_ok(r.get()));
  std::string report = ggc_result_timing(r.get());
  // The stages in order, each pass under the stage that ran it.
  size_t config = report.find("stage gg-config");
  size_t select = report.find("gg-select-config");
  size_t ggk = report.find("stage ggk");
  size_t lower = report.find("gg-lower-to-nvvm");
  size_t nvvm = report.find("stage nvvm");
  ASSERT_NE(config, std::string::npos) << report;
  EXPECT_LT(config, select) << report;
  EXPECT_LT(select, ggk) << report;
  EXPECT_LT(ggk, lower) << report;
  EXPECT_LT(lower, nvvm) << report;
  EXPECT_EQ(report.find("stage llvm"), std::string::npos) << report;
  EXPECT_NE(report.find("total"), std::string::npos) << report;
  // Timing changes no output.
  size_t last = ggc_result_num_stages(r.get()) - 1;
  EXPECT_STREQ(ggc_result_stage_text(r.get(), last, nullptr),
               ggc_result_stage_text(plain.get(), last, nullptr));
}

} // namespace

// The ptxas stage 'cubin' runs: $GGC_PTXAS first (a cache of cubins keys
// on it).
TEST(CompilerAPI, PtxasNamesTheAssemblerTheCubinStageRuns) {
  const char *saved = std::getenv("GGC_PTXAS");
  std::string old = saved ? saved : "";
  setenv("GGC_PTXAS", "/opt/other/ptxas", 1);
  EXPECT_EQ(std::string(ggc_ptxas()), "/opt/other/ptxas");
  if (saved)
    setenv("GGC_PTXAS", old.c_str(), 1);
  else
    unsetenv("GGC_PTXAS");
}
