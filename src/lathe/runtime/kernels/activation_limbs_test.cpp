// Activations as int8 limbs (activation_limbs.h) and the VNNI 4-bit kernel
// that reads them, against float64 references computed here: the limbs
// give back each value to within s2 / 2 of its group's largest |x|, and a
// weight-only int4 linear on activations with LLM-style outliers stays as
// close to float64 as the float kernels are. Values a split cannot carry
// (not finite, too small) go to the float kernels and give their result.
#include "lathe/runtime/kernels/activation_limbs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "lathe/runtime/kernels/quantized_linear.h"
#include "lathe/runtime/quantized_test_support.h"

namespace lathe {
namespace {

using kernels::qpanels::ActivationLimbs;
using kernels::qpanels::kLimbs;
using kernels::qpanels::split_into_limbs;
using quantized_test::isas_here;
using quantized_test::Isa;

int8_t limb(const ActivationLimbs& a, int64_t r, int64_t k, int l) {
  return a.bytes[r * a.row_bytes() + ((k / 8) * kLimbs + l) * 8 + (k % 2) * 4 + (k % 8) / 2];
}

// Rows of normal values, one group with a value 400 times the rest (the
// "massive activations" of LLM hidden states), one all zero.
std::vector<float> outlier_rows(int64_t m, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<size_t>(m * k));
  for (float& v : x) v = normal(rng);
  for (int64_t r = 0; r < m; ++r) x[r * k + 37] = 400.0f * (r % 2 ? -1.0f : 1.0f);
  if (k >= 96) std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // row 0, group [64, 96)
  return x;
}

TEST(ActivationLimbs, EachValueComesBackToWithinFloatRoundingOfItsGroupsLargest) {
  const int64_t M = 3, K = 256, G = 32;
  const std::vector<float> x = outlier_rows(M, K, 1);
  ActivationLimbs a;
  ASSERT_TRUE(split_into_limbs(x.data(), M, K, G, a));
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t g = 0; g < K / G; ++g) {
      double largest = 0;
      for (int64_t k = g * G; k < (g + 1) * G; ++k) largest = std::max(largest, std::fabs(double(x[r * K + k])));
      const float* s = &a.scales[(r * (K / G) + g) * kLimbs];
      for (int l = 0; l < kLimbs; ++l) {
        int32_t sum = 0;
        for (int64_t k = g * G; k < (g + 1) * G; ++k) sum += limb(a, r, k, l);
        EXPECT_EQ(a.offsets[(r * (K / G) + g) * kLimbs + l], -8 * sum);
      }
      for (int64_t k = g * G; k < (g + 1) * G; ++k) {
        double back = 0;
        for (int l = 0; l < kLimbs; ++l) {
          EXPECT_LE(std::abs(int(limb(a, r, k, l))), 127);
          back += double(s[l]) * limb(a, r, k, l);
        }
        // s2 / 2 = largest / (2 * 127 * 254^2) = 6.1e-8 largest, plus the
        // rounding of the residuals.
        EXPECT_LE(std::fabs(back - x[r * K + k]), 6.5e-8 * largest) << "row " << r << " k " << k;
      }
    }
  }
  // The zero group: zero limbs, zero scales.
  for (int l = 0; l < kLimbs; ++l) EXPECT_EQ(a.scales[2 * kLimbs + l], 0.0f);
  for (int64_t k = 64; k < 96; ++k) EXPECT_EQ(limb(a, 0, k, 0), 0);
}

TEST(ActivationLimbs, NonFiniteOrTinyGroupsAreNotSplit_NEG) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 1e-35f}) {
    std::vector<float> x(64, bad == 1e-35f ? 1e-36f : 1.0f);
    x[40] = bad;
    ActivationLimbs a;
    EXPECT_FALSE(split_into_limbs(x.data(), 1, 64, 32, a)) << bad;
  }
}

// x [M, K] @ (q * scale)^T in float64.
std::vector<double> reference(const std::vector<float>& x, const std::vector<int8_t>& q, const std::vector<float>& s,
                              int64_t M, int64_t N, int64_t K, int64_t G) {
  std::vector<double> out(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += double(x[m * K + k]) * q[n * K + k] * s[n * (K / G) + k / G];
      out[m * N + n] = acc;
    }
  return out;
}

struct Int4Case {
  int64_t M, N, K, G;
  std::vector<float> x, s;
  std::vector<int8_t> q;
};

Int4Case int4_case(int64_t M, int64_t N, int64_t K, int64_t G) {
  Int4Case c{M, N, K, G, outlier_rows(M, K, 2), {}, {}};
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> nibble(-8, 7);
  std::uniform_real_distribution<float> scale(0.001f, 0.02f);
  c.q.resize(static_cast<size_t>(N * K));
  for (int8_t& v : c.q) v = static_cast<int8_t>(nibble(rng));
  c.s.resize(static_cast<size_t>(N * (K / G)));
  for (float& v : c.s) v = scale(rng);
  return c;
}

Tensor run(const Int4Case& c, Isa isa, const std::vector<float>& x) {
  Tensor xt = Tensor::empty(DType::Float32, {c.M, c.K}), wt = Tensor::empty(DType::Int8, {c.N, c.K});
  Tensor st = Tensor::empty(DType::Float32, {c.N, c.K / c.G}), out = Tensor::empty(DType::Float32, {c.M, c.N});
  std::copy(x.begin(), x.end(), kernels::mdata<float>(xt));
  std::copy(c.q.begin(), c.q.end(), kernels::mdata<int8_t>(wt));
  std::copy(c.s.begin(), c.s.end(), kernels::mdata<float>(st));
  EXPECT_TRUE(kernels::weight_int4_group_mm_out(xt, wt, st, c.G, out, isa).ok());
  return out;
}

// A decode step's GEMV (one row, four panels at a time) and a prefill's
// rows (pairs of rows and panels, a narrow last panel), groups of 32 and 128.
TEST(ActivationLimbs, Int4LinearOnOutlierActivationsIsAsCloseToFloat64AsTheFloatKernels) {
  for (auto [M, N, K, G] : {std::array<int64_t, 4>{1, 256, 2048, 32}, {5, 72, 512, 128}, {2, 40, 256, 32}}) {
    SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + " g" + std::to_string(G));
    const Int4Case c = int4_case(M, N, K, G);
    const std::vector<double> want = reference(c.x, c.q, c.s, M, N, K, G);
    double largest = 0;
    for (double v : want) largest = std::max(largest, std::fabs(v));
    for (Isa isa : isas_here()) {
      const Tensor got = run(c, isa, c.x);
      double worst = 0;
      for (int64_t i = 0; i < M * N; ++i) worst = std::max(worst, std::fabs(kernels::cdata<float>(got)[i] - want[i]));
      std::printf("  %s: max error / max |output| %.2e\n", kernels::simd::isa_name(isa), worst / largest);
      EXPECT_LE(worst / largest, 1e-6) << kernels::simd::isa_name(isa);
    }
  }
}

// A row holding an infinity cannot be split: the whole call takes the float
// kernels, and every path gives the scalar one's infinities and NaNs.
TEST(ActivationLimbs, Int4LinearOnANonFiniteRowGivesTheFloatKernelsResult_NEG) {
  const Int4Case c = int4_case(2, 64, 128, 32);
  std::vector<float> x = c.x;
  x[128 + 5] = std::numeric_limits<float>::infinity();
  const Tensor scalar = run(c, Isa::Scalar, x);
  int non_finite = 0;
  for (int64_t i = 0; i < 2 * 64; ++i) non_finite += !std::isfinite(kernels::cdata<float>(scalar)[i]);
  EXPECT_EQ(non_finite, 64);  // the whole second row: +inf or -inf (or NaN where a weight is 0)
  for (Isa isa : isas_here()) {
    const Tensor got = run(c, isa, x);
    for (int64_t i = 0; i < 2 * 64; ++i) {
      const float a = kernels::cdata<float>(got)[i], b = kernels::cdata<float>(scalar)[i];
      if (std::isfinite(b)) EXPECT_NEAR(a, b, 1e-5f * std::fabs(b) + 1e-6f) << i;
      else EXPECT_TRUE(std::isnan(a) == std::isnan(b) && (std::isnan(a) || a == b)) << i << ": " << a << " vs " << b;
    }
  }
}

}  // namespace
}  // namespace lathe
