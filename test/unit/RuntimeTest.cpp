//===- RuntimeTest.cpp - runtime pieces that need no GPU -------------------===//
#include "ggc/Runtime.h"

#include <gtest/gtest.h>

using namespace ggc::runtime;

namespace {

TEST(Runtime, RowMajorTensorMapListsDimensionsInnermostFirst) {
  // B of a [G=8, N=4096, K=7168] bf16 operand, box [1, 256, 64].
  TensorMapSpec spec = rowMajorTensorMap(ElementType::BFloat16, {8, 4096, 7168},
                                         {64, 256, 1}, 0x10000);
  EXPECT_EQ(spec.rank, 3u);
  EXPECT_EQ(spec.dims[0], 7168u);
  EXPECT_EQ(spec.dims[1], 4096u);
  EXPECT_EQ(spec.dims[2], 8u);
  EXPECT_EQ(spec.strideBytes[1], 7168u * 2);
  EXPECT_EQ(spec.strideBytes[2], 7168u * 4096 * 2);
  EXPECT_EQ(spec.box[0], 64u);
  EXPECT_EQ(spec.box[1], 256u);
  EXPECT_NO_THROW(spec.validate());
}

TEST(Runtime, TensorMapValidationNamesTheField) {
  auto expectError = [](const TensorMapSpec &spec, const std::string &needle) {
    try {
      spec.validate();
      FAIL() << "expected an error mentioning " << needle;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what();
    }
  };
  // K = 100 bf16 gives 200-byte rows: not a multiple of 16.
  expectError(rowMajorTensorMap(ElementType::BFloat16, {64, 100}, {64, 128}, 0),
              "stride of dimension 1 must be a multiple of 16 bytes");
  expectError(rowMajorTensorMap(ElementType::BFloat16, {64, 128}, {64, 128}, 8),
              "16-byte aligned");
  expectError(rowMajorTensorMap(ElementType::Float32, {64, 128}, {64, 128}, 0),
              "spans 256 bytes");
  expectError(rowMajorTensorMap(ElementType::BFloat16, {0, 128}, {64, 128}, 0),
              "dimension 1 must be in [1, 2^32], got 0");
  expectError(rowMajorTensorMap(ElementType::UInt8, {512, 128}, {128, 512}, 0),
              "box dimension 1 must be in [1, 256], got 512");
  // Unswizzled boxes may span more than 128 bytes, in steps of 16.
  EXPECT_NO_THROW(rowMajorTensorMap(ElementType::BFloat16, {64, 256}, {256, 8}, 0,
                                    Swizzle::None)
                      .validate());
  expectError(rowMajorTensorMap(ElementType::BFloat16, {64, 256}, {4, 8}, 0,
                                Swizzle::None),
              "spans 8 bytes; TMA needs a multiple of 16");
  EXPECT_THROW(rowMajorTensorMap(ElementType::BFloat16, {4, 4}, {4}, 0), Error);
  // A staged f32 tile's 64B-swizzled chunks: 16 columns, no more.
  EXPECT_NO_THROW(rowMajorTensorMap(ElementType::Float32, {64, 7168}, {16, 128},
                                    0, Swizzle::Bytes64)
                      .validate());
  expectError(rowMajorTensorMap(ElementType::Float32, {64, 7168}, {32, 128}, 0,
                                Swizzle::Bytes64),
              "spans 128 bytes; the 64B swizzle allows at most 64");
}

TEST(Runtime, TensorMapKeysDifferWhenAnyFieldDiffers) {
  TensorMapSpec a =
      rowMajorTensorMap(ElementType::BFloat16, {1024, 7168}, {64, 128}, 0x1000);
  TensorMapSpec same =
      rowMajorTensorMap(ElementType::BFloat16, {1024, 7168}, {64, 128}, 0x1000);
  EXPECT_EQ(a.key(), same.key());
  EXPECT_NE(a.key(), rowMajorTensorMap(ElementType::BFloat16, {1025, 7168},
                                       {64, 128}, 0x1000)
                         .key());
  EXPECT_NE(a.key(), rowMajorTensorMap(ElementType::BFloat16, {1024, 7168},
                                       {64, 128}, 0x2000)
                         .key());
  EXPECT_NE(a.key(), rowMajorTensorMap(ElementType::Float16, {1024, 7168},
                                       {64, 128}, 0x1000)
                         .key());
  EXPECT_NE(a.key(), rowMajorTensorMap(ElementType::BFloat16, {1024, 7168},
                                       {64, 128}, 0x1000, Swizzle::None)
                         .key());
  EXPECT_NE(rowMajorTensorMap(ElementType::BFloat16, {1024, 7168}, {32, 128},
                              0x1000, Swizzle::Bytes64)
                .key(),
            rowMajorTensorMap(ElementType::BFloat16, {1024, 7168}, {32, 128},
                              0x1000, Swizzle::None)
                .key());
}

// A hand-built spec's rank bounds what its key reads: past five it is
// validate()'s error, not a read past the arrays.
TEST(Runtime, TensorMapKeyRefusesARankPastFive) {
  TensorMapSpec spec =
      rowMajorTensorMap(ElementType::BFloat16, {1024, 7168}, {64, 128}, 0x1000);
  for (uint32_t rank : {0u, 6u, 0xFFFFFFFFu}) {
    spec.rank = rank;
    try {
      (void)spec.key();
      ADD_FAILURE() << "rank " << rank << " was keyed";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("rank must be in [1, 5], got " +
                                           std::to_string(rank)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Runtime, ParametersFollowCudaAlignment) {
  KernelArg map;
  map.kind = KernelArg::Kind::TensorMap;
  KernelArg pointer;
  pointer.kind = KernelArg::Kind::Pointer;
  KernelArg size;
  size.kind = KernelArg::Kind::Int64;
  size_t total = 0;
  std::vector<size_t> offsets =
      parameterOffsets({pointer, map, map, pointer, size}, &total);
  ASSERT_EQ(offsets.size(), 5u);
  EXPECT_EQ(offsets[0], 0u);
  EXPECT_EQ(offsets[1], 64u);  // tensor maps are 64-byte aligned
  EXPECT_EQ(offsets[2], 192u);
  EXPECT_EQ(offsets[3], 320u);
  EXPECT_EQ(offsets[4], 328u);
  EXPECT_EQ(total, 336u);
}

TEST(Runtime, ElementTypesParseByTheirTensorMapNames) {
  EXPECT_EQ(parseElementType("bfloat16"), ElementType::BFloat16);
  EXPECT_EQ(elementBytes(parseElementType("uint8")), 1);
  EXPECT_EQ(elementBytes(parseElementType("float32")), 4);
  EXPECT_THROW(parseElementType("float64"), Error);
  EXPECT_EQ(parseSwizzle("none"), Swizzle::None);
  EXPECT_EQ(parseSwizzle("64B"), Swizzle::Bytes64);
  EXPECT_THROW(parseSwizzle("32B"), Error);
}

TEST(Runtime, KernelArgumentsAreCheckedBeforeTheDriverIsNeeded) {
  EXPECT_THROW(Kernel("", "k", 0, 128), Error);
  EXPECT_THROW(Kernel("x", "k", 0, 2048), Error);
  EXPECT_THROW(Kernel("x", "k", -1, 128), Error);
}

TEST(Runtime, WithoutADriverLaunchingSaysWhy) {
  std::string why;
  if (driverAvailable(&why))
    GTEST_SKIP() << "a CUDA driver is present";
  EXPECT_FALSE(why.empty());
  Kernel kernel("not a cubin", "k", 0, 128);
  try {
    kernel.launch(1, {}, 0);
    FAIL() << "launch without a driver must throw";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("ggc runtime:"), std::string::npos);
  }
}

TEST(Runtime, ANullPointerIsNotDeviceMemory) {
  try {
    pointerDevice(0);
    FAIL() << "a null pointer must be rejected";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("a null pointer is not device memory"),
              std::string::npos);
  }
}

TEST(Runtime, WithoutADriverCopiesAndDeviceQueriesSayWhy) {
  if (driverAvailable())
    GTEST_SKIP() << "a CUDA driver is present";
  char byte = 0;
  EXPECT_THROW(copyToHost(0, 4096, &byte, 1, 0), Error);
  EXPECT_THROW(pointerDevice(4096), Error);
  Kernel kernel("not a cubin", "k", 0, 128);
  EXPECT_THROW(kernel.prepare(1, {}, 1), Error);
}

} // namespace
