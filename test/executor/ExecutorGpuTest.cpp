//===- ExecutorGpuTest.cpp - every algorithm against each other and fp64 ---===//
//
// Skips without a GPU. Ragged routing: expert 0 gets no row, expert 1 one.
//
//===----------------------------------------------------------------------===//
#include "ggc/Executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <mutex>
#include <thread>

using namespace ggc::executor;

namespace {

struct Problem {
  int64_t tokens = 67, topK = 2, experts = 6, n = 256, k = 256;
  Precision precision = Precision::BF16;
  bool biases = false;
};

struct Run {
  GroupedExpertWeights const *weights = nullptr;
  std::vector<float> x, w, b;      // as rounded to the input type
  RoutingDecision routing;
};

std::vector<uint8_t> encode(const std::vector<float> &values, DType t) {
  std::vector<uint8_t> out(values.size() * dtypeBytes(t));
  for (size_t i = 0; i < values.size(); ++i)
    packing::fromFloat(values[i], t, out.data() + i * dtypeBytes(t));
  return out;
}

std::vector<float> rounded(std::vector<float> values, DType t) {
  std::vector<uint8_t> bytes = encode(values, t);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = packing::toFloat(bytes.data() + i * dtypeBytes(t), t);
  return values;
}

std::vector<float> random(size_t count, float scale, unsigned seed) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = scale * std::sin(0.731f * (i + 1) * (seed + 1) + seed);
  return v;
}

/// Scales the 128-column blocks of a [rows, cols] matrix, and its blocks of
/// `rowsPerBlock` rows, by 1 to 2 in a pattern that differs between
/// neighbours in both dimensions and between experts. FP8's block scales
/// then differ: with one scale everywhere (sin data has amax ~1 in every
/// block), a scale read from the wrong block or transposed would pass.
std::vector<float> blockVaried(std::vector<float> v, int64_t cols, int64_t rowsPerBlock) {
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t rowBlock = static_cast<int64_t>(i) / cols / rowsPerBlock;
    int64_t colBlock = static_cast<int64_t>(i) % cols / 128;
    v[i] *= 1.0f + 0.25f * static_cast<float>((rowBlock * 3 + colBlock) % 5);
  }
  return v;
}

RoutingDecision ragged(const Problem &p) {
  RoutingDecision r;
  r.numTokens = p.tokens;
  r.topK = static_cast<int>(p.topK);
  r.numExperts = p.experts;
  for (int64_t t = 0; t < p.tokens; ++t)
    for (int64_t j = 0; j < p.topK; ++j)
      r.expertIds.push_back(t == 0 && j == 0 ? 1
                                             : 2 + static_cast<int32_t>((t * 7 + j * 3) % (p.experts - 2)));
  return r;
}

/// FP8's reference reads the values the kernels read: tokens per 1x128 and
/// weights per 128x128 block, dequantised.
void quantizeLikeTheGpu(const Problem &p, std::vector<float> &x, std::vector<float> &w) {
  for (int64_t t = 0; t < p.tokens; ++t)
    for (int64_t c0 = 0; c0 < p.k; c0 += 128) {
      float amax = 0;
      for (int64_t c = c0; c < c0 + 128; ++c)
        amax = std::max(amax, std::fabs(x[t * p.k + c]));
      float scale = amax > 0 ? amax / 448.0f : 1.0f;
      for (int64_t c = c0; c < c0 + 128; ++c)
        x[t * p.k + c] = packing::fromE4M3(packing::toE4M3(x[t * p.k + c] / scale)) * scale;
    }
  std::vector<uint8_t> q;
  std::vector<float> scales;
  packing::quantizeBlocks(w.data(), p.experts, p.n, p.k, q, scales);
  int64_t bn = (p.n + 127) / 128, bk = (p.k + 127) / 128;
  for (int64_t i = 0; i < static_cast<int64_t>(w.size()); ++i) {
    int64_t e = i / (p.n * p.k), r = i / p.k % p.n, c = i % p.k;
    w[i] = packing::fromE4M3(q[i]) * scales[(e * bn + r / 128) * bk + c / 128];
  }
}

/// One executor per precision, shared by every test and thread.
GroupedGemmExecutor &shared(const Problem &p) {
  static std::mutex mutex;
  static std::map<std::pair<Precision, int64_t>, std::unique_ptr<GroupedGemmExecutor>> all;
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = all[{p.precision, p.experts}];
  if (!slot) {
    ExecutorConfig config;
    config.groupCount = p.experts;
    config.precision = p.precision;
    slot = std::make_unique<GroupedGemmExecutor>(config);
  }
  return *slot;
}

class ExecutorGpu : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!ggc::runtime::driverAvailable(&why))
      GTEST_SKIP() << "no GPU: " << why;
  }

  /// Runs `algorithm` and checks every row against fp64; returns the output.
  std::vector<float> check(const Problem &p, Algorithm algorithm, double inputEps) {
    DType in = inputType(p.precision), outType = outputType(p.precision);
    std::vector<float> x = rounded(blockVaried(random(p.tokens * p.k, 1.0f, 1), p.k, 1), in);
    std::vector<float> w =
        rounded(blockVaried(random(p.experts * p.n * p.k, 1.0f / 16, 2), p.k, 128), in);
    std::vector<float> b = rounded(random(p.experts * p.n, 0.5f, 3), in);
    std::vector<uint8_t> wBytes = encode(w, in), bBytes = encode(b, in), xBytes = encode(x, in);
    std::vector<const void *> experts, biases;
    for (int64_t e = 0; e < p.experts; ++e) {
      experts.push_back(wBytes.data() + e * p.n * p.k * dtypeBytes(in));
      if (p.biases)
        biases.push_back(bBytes.data() + e * p.n * dtypeBytes(in));
    }
    ExpertWeightManager manager =
        ExpertWeightManager::load(experts, biases, p.n, p.k, in, 0);
    if (p.precision == Precision::FP8) {
      manager.quantize();
      quantizeLikeTheGpu(p, x, w);
    }
    GroupedGemmExecutor &executor = shared(p);
    DeviceBuffer tokens(0, xBytes.size(), 0);
    copyToDevice(0, tokens.address(), xBytes.data(), xBytes.size());
    RoutingDecision routing = ragged(p);
    GroupedInput input = executor.prepareInput(tokens.address(), p.tokens, p.k, routing, 0);
    int64_t rows = input.numRows();
    DeviceBuffer out(0, rows * p.n * dtypeBytes(outType), 0);
    if (algorithm == Algorithm::CublasSequential)
      executor.executeSequential(input, manager.weights(), out.address());
    else
      executor.executeGrouped(input, manager.weights(), out.address(), algorithm);
    std::vector<uint8_t> host(rows * p.n * dtypeBytes(outType));
    ggc::runtime::copyToHost(0, out.address(), host.data(), host.size(), 0);
    std::vector<float> result(rows * p.n);
    double outEps = outType == DType::F32 ? 1e-6 : std::ldexp(1.0, outType == DType::F16 ? -11 : -8);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t e = input.mapping.expertOfRow[r], t = input.mapping.tokenOfRow[r];
      for (int64_t c = 0; c < p.n; ++c) {
        double ref = p.biases ? b[e * p.n + c] : 0, magnitude = std::fabs(ref);
        for (int64_t i = 0; i < p.k; ++i) {
          double term = double(x[t * p.k + i]) * w[(e * p.n + c) * p.k + i];
          ref += term;
          magnitude += std::fabs(term);
        }
        float got = packing::toFloat(host.data() + (r * p.n + c) * dtypeBytes(outType), outType);
        result[r * p.n + c] = got;
        // cuBLAS's per-expert GEMM rounds the product before adding the
        // bias in C for small row counts (docs/executor.md): a second
        // rounding, of the product alone.
        double bias = p.biases ? b[e * p.n + c] : 0;
        double roundedTwice = algorithm == Algorithm::CublasSequential && p.biases
                                  ? outEps * std::fabs(ref - bias)
                                  : 0;
        if (std::fabs(got - ref) >
            outEps * std::fabs(ref) + roundedTwice + inputEps * magnitude + 1e-6) {
          ADD_FAILURE() << name(algorithm) << " " << name(p.precision) << " row " << r
            << " (expert " << e << ") col " << c << ": got " << got << ", fp64 " << ref;
          return result; // one report per run, not one per element
        }
      }
    }
    return result;
  }
};

double accumulationEps(Precision p) {
  return p == Precision::TF32 ? std::ldexp(1.0, -10) : p == Precision::FP8 ? std::ldexp(1.0, -10) : 1e-5;
}

} // namespace

TEST_F(ExecutorGpu, EveryAlgorithmAgreesWithFp64) {
  for (Precision precision : {Precision::BF16, Precision::FP16, Precision::TF32}) {
    Problem p;
    p.precision = precision;
    for (Algorithm a : {Algorithm::Ggc, Algorithm::CublasGrouped, Algorithm::CublasSequential})
      check(p, a, accumulationEps(precision));
  }
}

TEST_F(ExecutorGpu, Fp32GroupedAndGgcWithin1e4OfSequential) {
  Problem p;
  p.precision = Precision::FP32;
  std::vector<float> grouped = check(p, Algorithm::CublasGrouped, 1e-5);
  std::vector<float> sequential = check(p, Algorithm::CublasSequential, 1e-5);
  float largest = 0;
  for (float v : sequential)
    largest = std::max(largest, std::fabs(v));
  for (size_t i = 0; i < grouped.size(); ++i)
    ASSERT_LE(std::fabs(grouped[i] - sequential[i]), 1e-4f * largest) << i;
  // ggc's FP32 is 3xTF32 on tensor cores: as close.
  std::vector<float> ggc = check(p, Algorithm::Ggc, 1e-5);
  for (size_t i = 0; i < ggc.size(); ++i)
    ASSERT_LE(std::fabs(ggc[i] - sequential[i]), 1e-4f * largest) << i;
}

TEST_F(ExecutorGpu, Fp8OnGgcWithBlockScales) {
  Problem p;
  p.precision = Precision::FP8;
  check(p, Algorithm::Ggc, accumulationEps(Precision::FP8));
  check(p, Algorithm::Auto, accumulationEps(Precision::FP8));
  EXPECT_THROW(check(p, Algorithm::CublasGrouped, 1), Error);
}

TEST_F(ExecutorGpu, BiasesOnEveryAlgorithm) {
  Problem p;
  p.biases = true;
  for (Algorithm a : {Algorithm::Ggc, Algorithm::CublasGrouped, Algorithm::CublasSequential})
    check(p, a, accumulationEps(p.precision));
}

TEST_F(ExecutorGpu, OneTokenAndThreadsShareTheExecutor) {
  Problem one;
  one.tokens = 3; // experts 0 empty, 1 with a single row
  check(one, Algorithm::Auto, accumulationEps(one.precision));
  Problem p;
  std::vector<float> expected = check(p, Algorithm::CublasGrouped, 1e-5);
  std::vector<std::thread> threads;
  std::vector<std::vector<float>> results(6);
  for (int i = 0; i < 6; ++i)
    threads.emplace_back([&, i] {
      results[i] = check(p, i % 2 ? Algorithm::Ggc : Algorithm::CublasGrouped, 1e-5);
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < 6; i += 2)
    EXPECT_EQ(results[i], expected);
}

TEST_F(ExecutorGpu, ScatterRestoresTokenOrder) {
  Problem p;
  p.n = 64;
  p.k = 128;
  ExecutorConfig config;
  config.groupCount = p.experts;
  GroupedGemmExecutor executor(config);
  std::vector<float> x = rounded(random(p.tokens * p.k, 1.0f, 5), DType::BF16);
  std::vector<uint8_t> xBytes = encode(x, DType::BF16);
  DeviceBuffer tokens(0, xBytes.size(), 0);
  copyToDevice(0, tokens.address(), xBytes.data(), xBytes.size());
  GroupedInput input = executor.prepareInput(tokens.address(), p.tokens, p.k, ragged(p), 0);
  // Scattering the gathered rows themselves gives each assignment its token.
  DeviceBuffer back(0, input.numRows() * p.k * 2, 0);
  executor.scatterOutput(input.rows.address(), p.k, DType::BF16, input, back.address());
  std::vector<uint8_t> host(input.numRows() * p.k * 2);
  ggc::runtime::copyToHost(0, back.address(), host.data(), host.size(), 0);
  for (int64_t a = 0; a < p.tokens * p.topK; ++a)
    for (int64_t c = 0; c < p.k; ++c)
      ASSERT_EQ(packing::toFloat(host.data() + (a * p.k + c) * 2, DType::BF16),
                x[(a / p.topK) * p.k + c]) << "assignment " << a;
  EXPECT_THROW(executor.scatterOutput(0, p.k, DType::BF16, input, back.address()),
               std::invalid_argument);
}

// Weights described but never loaded (a hand-filled struct): named before
// anything launches with a null B.
TEST_F(ExecutorGpu, WeightsWithoutMemoryAreNamed) {
  Problem p;
  GroupedGemmExecutor &executor = shared(p);
  std::vector<uint8_t> xBytes(p.tokens * p.k * dtypeBytes(inputType(p.precision)), 0);
  DeviceBuffer tokens(0, xBytes.size(), 0);
  copyToDevice(0, tokens.address(), xBytes.data(), xBytes.size());
  GroupedInput input = executor.prepareInput(tokens.address(), p.tokens, p.k, ragged(p), 0);
  GroupedExpertWeights empty;
  empty.numExperts = p.experts;
  empty.expertDim = p.n;
  empty.hiddenDim = p.k;
  empty.dtype = inputType(p.precision);
  DeviceBuffer out(0, input.numRows() * p.n * 4, 0);
  try {
    executor.executeGrouped(input, empty, out.address(), Algorithm::Ggc);
    ADD_FAILURE() << "weights without memory were launched";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("hold no expert weights"), std::string::npos)
        << e.what();
  }
}
