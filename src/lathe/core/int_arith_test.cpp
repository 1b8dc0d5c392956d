// Hand-checked cases of the integer helpers: PyTorch's wrap-around for
// tensors (torch.tensor([-2**63]) // -1 is -2**63, % -1 is 0; Python's
// floor rules for the signs), and exact int64 arithmetic for sizes.
#include "lathe/core/int_arith.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace lathe {
namespace {

constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();

TEST(IntArith, DivisionByMinusOneWrapsAsPyTorchDoes) {
  EXPECT_EQ(wrapping_trunc_div(kMin64, int64_t{-1}), kMin64);
  EXPECT_EQ(wrapping_floor_div(kMin64, int64_t{-1}), kMin64);
  EXPECT_EQ(wrapping_trunc_mod(kMin64, int64_t{-1}), 0);
  EXPECT_EQ(wrapping_floor_mod(kMin64, int64_t{-1}), 0);
  EXPECT_EQ(wrapping_trunc_div(kMin32, int32_t{-1}), kMin32);
  EXPECT_EQ(wrapping_floor_div(int8_t{-128}, int8_t{-1}), int8_t{-128});
}

TEST(IntArith, FloorAndTruncRoundingFollowPythonAndC) {
  EXPECT_EQ(wrapping_floor_div(int64_t{-7}, int64_t{2}), -4);
  EXPECT_EQ(wrapping_trunc_div(int64_t{-7}, int64_t{2}), -3);
  EXPECT_EQ(wrapping_floor_mod(int64_t{-7}, int64_t{2}), 1);
  EXPECT_EQ(wrapping_trunc_mod(int64_t{-7}, int64_t{2}), -1);
  EXPECT_EQ(wrapping_floor_mod(int64_t{7}, int64_t{-3}), -2);
  EXPECT_EQ(wrapping_floor_div(uint8_t{7}, uint8_t{2}), 3);
}

TEST(IntArith, AddSubMulWrapAround) {
  EXPECT_EQ(wrapping_add(kMax64, int64_t{1}), kMin64);
  EXPECT_EQ(wrapping_sub(kMin64, int64_t{1}), kMax64);
  EXPECT_EQ(wrapping_mul(int64_t{1} << 62, int64_t{4}), 0);
  EXPECT_EQ(wrapping_mul(uint16_t{65535}, uint16_t{65535}), uint16_t{1});  // not int overflow after promotion
  EXPECT_EQ(wrapping_mul(int8_t{100}, int8_t{3}), int8_t{44});             // 300 - 256
  EXPECT_EQ(wrapping_add(1.5f, 2.0f), 3.5f);
}

TEST(IntArith, CheckedArithmeticSaysWhenInt64IsNotEnough) {
  EXPECT_EQ(checked_add(kMax64, 1), std::nullopt);
  EXPECT_EQ(checked_sub(kMin64, 1), std::nullopt);
  EXPECT_EQ(checked_mul(int64_t{1} << 62, 2), std::nullopt);
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(checked_floor_div(kMin64, -1), std::nullopt);
  EXPECT_EQ(checked_floor_div(7, 0), std::nullopt);
  EXPECT_EQ(checked_floor_div(-7, 2), -4);
  EXPECT_EQ(checked_floor_mod(kMin64, -1), 0);
  EXPECT_EQ(checked_pow(3, 39), int64_t{4052555153018976267});
  EXPECT_EQ(checked_pow(3, 40), std::nullopt);
  EXPECT_EQ(checked_pow(2, 62), int64_t{1} << 62);
  EXPECT_EQ(checked_pow(2, 63), std::nullopt);
  EXPECT_EQ(checked_pow(-1, int64_t{1} << 62), 1);
  EXPECT_EQ(checked_pow(5, -1), std::nullopt);
}

// Element counts are exact or nullopt: [2^62, 2^62, 8] would wrap to 0.
TEST(IntArith, ElementCountsNeverWrap) {
  constexpr int64_t k62 = int64_t{1} << 62;
  EXPECT_EQ(checked_numel(std::vector<int64_t>{}), 1);
  EXPECT_EQ(checked_numel(std::vector<int64_t>{3, 4, 5}), 60);
  EXPECT_EQ(checked_numel(std::vector<int64_t>{int64_t{1} << 20, int64_t{1} << 20, 8}), int64_t{1} << 43);
  EXPECT_EQ(checked_numel(std::vector<int64_t>{k62, k62, 8}), std::nullopt);
  EXPECT_EQ(checked_numel(std::vector<int64_t>{k62, 2}), std::nullopt);
  EXPECT_EQ(checked_numel(std::vector<int64_t>{k62, k62, 0}), 0);  // no elements, however large the rest
  EXPECT_EQ(checked_numel(std::vector<int64_t>{0, -1}), std::nullopt);
  EXPECT_EQ(saturating_add(kMax64, 1), kMax64);
  EXPECT_EQ(saturating_add(kMin64, -1), kMin64);
  EXPECT_EQ(saturating_add(40, 2), 42);
}

}  // namespace
}  // namespace lathe
