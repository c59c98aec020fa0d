//===- Packing.cpp - expert weights packed and quantised on the host -------===//
#include "ggc/Executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace ggc::executor::packing {

std::vector<uint8_t> packExperts(const std::vector<const void *> &experts,
                                 size_t bytesPerExpert, const char *argument) {
  if (experts.empty())
    throw std::invalid_argument(std::string("ggc executor: ") + argument +
                                " must hold at least one expert");
  if (bytesPerExpert == 0)
    throw std::invalid_argument(std::string("ggc executor: ") + argument +
                                ": each expert must have at least one element");
  std::vector<uint8_t> packed(experts.size() * bytesPerExpert);
  for (size_t e = 0; e < experts.size(); ++e) {
    if (!experts[e])
      throw std::invalid_argument(std::string("ggc executor: ") + argument + "[" +
                                  std::to_string(e) + "] is a null pointer");
    std::memcpy(packed.data() + e * bytesPerExpert, experts[e], bytesPerExpert);
  }
  return packed;
}

// e4m3 (OCP FN): bias 7, no infinities, 0x7F/0xFF NaN, largest 448,
// subnormals m * 2^-9.
uint8_t toE4M3(float x) {
  if (std::isnan(x))
    return 0x7F;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  float a = std::fabs(x);
  if (a >= 448.0f)
    return sign | 0x7E;
  if (a < 0.015625f) { // below 2^-6: subnormal; 8 * 2^-9 is 0x08, the first normal
    auto q = static_cast<int>(std::nearbyint(a * 512.0f));
    return sign | static_cast<uint8_t>(q);
  }
  int exponent = 0;
  std::frexp(a, &exponent); // a = f * 2^exponent, f in [0.5, 1)
  int e = exponent - 1;
  auto m = static_cast<int>(std::nearbyint((std::ldexp(a, -e) - 1.0f) * 8.0f));
  if (m == 8) {
    m = 0;
    ++e;
  }
  return sign | static_cast<uint8_t>(((e + 7) << 3) | m);
}

float fromE4M3(uint8_t bits) {
  float sign = (bits & 0x80) ? -1.0f : 1.0f;
  int e = (bits >> 3) & 0xF, m = bits & 7;
  if (e == 15 && m == 7)
    return NAN;
  if (e == 0)
    return sign * std::ldexp(static_cast<float>(m), -9);
  return sign * std::ldexp(1.0f + m / 8.0f, e - 7);
}

float toFloat(const void *element, DType t) {
  switch (t) {
  case DType::F32: {
    float f;
    std::memcpy(&f, element, 4);
    return f;
  }
  case DType::F16: {
    _Float16 h;
    std::memcpy(&h, element, 2);
    return static_cast<float>(h);
  }
  case DType::BF16: {
    uint16_t b;
    std::memcpy(&b, element, 2);
    uint32_t bits = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case DType::F8E4M3:
    return fromE4M3(*static_cast<const uint8_t *>(element));
  }
  return 0;
}

void fromFloat(float x, DType t, void *element) {
  switch (t) {
  case DType::F32:
    std::memcpy(element, &x, 4);
    return;
  case DType::F16: {
    auto h = static_cast<_Float16>(x);
    std::memcpy(element, &h, 2);
    return;
  }
  case DType::BF16: {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    uint16_t b = std::isnan(x) ? 0x7FC0
                               : static_cast<uint16_t>(
                                     (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
    std::memcpy(element, &b, 2);
    return;
  }
  case DType::F8E4M3:
    *static_cast<uint8_t *>(element) = toE4M3(x);
    return;
  }
}

void quantizeBlocks(const float *weights, int64_t g, int64_t n, int64_t k,
                    std::vector<uint8_t> &fp8, std::vector<float> &scales) {
  if (g < 1 || n < 1 || k < 1)
    throw std::invalid_argument("ggc executor: quantizeBlocks needs a non-empty "
                                "[G, N, K], got [" + std::to_string(g) + ", " +
                                std::to_string(n) + ", " + std::to_string(k) + "]");
  int64_t bn = (n + 127) / 128, bk = (k + 127) / 128;
  fp8.assign(g * n * k, 0);
  scales.assign(g * bn * bk, 1.0f);
  for (int64_t e = 0; e < g; ++e)
    for (int64_t i = 0; i < bn; ++i)
      for (int64_t j = 0; j < bk; ++j) {
        int64_t n1 = std::min(n, (i + 1) * 128), k1 = std::min(k, (j + 1) * 128);
        float amax = 0;
        for (int64_t r = i * 128; r < n1; ++r)
          for (int64_t c = j * 128; c < k1; ++c)
            amax = std::max(amax, std::fabs(weights[(e * n + r) * k + c]));
        float scale = amax > 0 ? amax / 448.0f : 1.0f;
        scales[(e * bn + i) * bk + j] = scale;
        for (int64_t r = i * 128; r < n1; ++r)
          for (int64_t c = j * 128; c < k1; ++c)
            fp8[(e * n + r) * k + c] = toE4M3(weights[(e * n + r) * k + c] / scale);
      }
}

} // namespace ggc::executor::packing
