//===- executor_example.cpp - a MoE up-projection through the executor -----===//
//
// Routes 100 tokens to 8 experts (top-2), gathers them by expert on the
// GPU, runs the grouped GEMM with every algorithm this GPU has, scatters the
// rows back to token order and checks them against an fp64 reference.
// Exit status 0: all agree; 1: a mismatch; 2: no GPU (or no cuBLAS).
//
//===----------------------------------------------------------------------===//
#include "ggc/Executor.h"

#include <cmath>
#include <cstdio>

using namespace ggc::executor;

int main() {
  std::string why;
  if (!ggc::runtime::driverAvailable(&why)) {
    std::printf("no GPU here (%s): nothing to run\n", why.c_str());
    return 2;
  }
  const int64_t tokens = 100, topK = 2, experts = 8, hidden = 512, n = 256;
  // Weights of each expert [n, hidden] and the tokens, in bf16.
  auto bf16 = [](float x) {
    uint16_t b;
    packing::fromFloat(x, DType::BF16, &b);
    return b;
  };
  std::vector<std::vector<uint16_t>> weights(experts, std::vector<uint16_t>(n * hidden));
  std::vector<const void *> pointers;
  for (int64_t e = 0; e < experts; ++e) {
    for (int64_t i = 0; i < n * hidden; ++i)
      weights[e][i] = bf16(std::cos(0.01f * i + e) / 16);
    pointers.push_back(weights[e].data());
  }
  std::vector<uint16_t> x(tokens * hidden);
  for (int64_t i = 0; i < tokens * hidden; ++i)
    x[i] = bf16(std::sin(0.003f * i));
  ExpertWeightManager manager = ExpertWeightManager::load(pointers, {}, n, hidden,
                                                          DType::BF16, /*device=*/0);
  ExecutorConfig config;
  config.groupCount = experts;
  config.precision = Precision::BF16;
  GroupedGemmExecutor executor(config);
  std::printf("%s (sm_%d%d), grouped GEMM %s\n", executor.capabilities().name.c_str(),
              executor.capabilities().major, executor.capabilities().minor,
              executor.supportsGroupedGemm() ? "available" : "unavailable");

  // The router's choice: expert 3 for every token's first slot, a spread
  // for the second, so the experts get ragged row counts (one gets none).
  RoutingDecision routing;
  routing.numTokens = tokens;
  routing.topK = topK;
  routing.numExperts = experts;
  for (int64_t t = 0; t < tokens; ++t) {
    routing.expertIds.push_back(3);
    routing.expertIds.push_back(static_cast<int32_t>(t % 7 == 0 ? 1 : 4 + t % 4));
  }
  // In a real program the tokens are already on the GPU.
  DeviceBuffer input(0, x.size() * 2, 0);
  copyToDevice(0, input.address(), x.data(), x.size() * 2);

  GroupedInput grouped = executor.prepareInput(input.address(), tokens, hidden, routing, 0);
  std::printf("experts' rows:");
  for (int32_t count : grouped.mapping.tokensPerExpert)
    std::printf(" %d", count);
  std::printf("; auto picks %s\n",
              name(executor.selectAlgorithm(grouped.numRows(),
                                            grouped.mapping.activeExperts())));
  DeviceBuffer expertOut(0, grouped.numRows() * n * 2, 0);
  DeviceBuffer tokenOut(0, tokens * topK * n * 2, 0);
  int failures = 0;
  for (Algorithm a : {Algorithm::Ggc, Algorithm::CublasGrouped, Algorithm::CublasSequential}) {
    try {
      executor.executeGrouped(grouped, manager.weights(), expertOut.address(), a);
    } catch (const Error &e) {
      std::printf("%-18s skipped: %s\n", name(a), e.what());
      continue;
    }
    executor.scatterOutput(expertOut.address(), n, DType::BF16, grouped, tokenOut.address());
    std::vector<uint16_t> host(tokens * topK * n);
    ggc::runtime::copyToHost(0, tokenOut.address(), host.data(), host.size() * 2, 0);
    double worst = 0;
    for (int64_t a2 = 0; a2 < tokens * topK; ++a2) {
      int64_t t = a2 / topK, e = routing.expertIds[a2];
      for (int64_t c = 0; c < n; ++c) {
        double ref = 0, magnitude = 0;
        for (int64_t i = 0; i < hidden; ++i) {
          double term = double(packing::toFloat(&x[t * hidden + i], DType::BF16)) *
                        packing::toFloat(&weights[e][c * hidden + i], DType::BF16);
          ref += term;
          magnitude += std::fabs(term);
        }
        double err = std::fabs(packing::toFloat(&host[a2 * n + c], DType::BF16) - ref) /
                     (std::fabs(ref) / 256 + 1e-5 * magnitude + 1e-6);
        worst = std::max(worst, err);
      }
    }
    bool ok = worst <= 1.0;
    failures += !ok;
    std::printf("%-18s %s (worst error %.2f of the bf16 bound)\n", name(a),
                ok ? "matches fp64" : "MISMATCH", worst);
  }
  return failures ? 1 : 0;
}
