// The vectorised exp, tanh and erf against libm (the scalar path they replace),
// in ulp, over a sweep of the whole float range, the special values, the
// subnormal results of exp and array lengths that leave a tail.
#include "lathe/runtime/kernels/vector_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace lathe::kernels {
namespace {

// Distance in representable floats (0 for equal values and two NaNs).
int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  if (a == b) return 0;
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof(i));
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::abs(ordered(a) - ordered(b));
}

std::vector<float> sweep() {
  std::vector<float> v;
  for (float x = -110.0f; x <= 110.0f; x += 0.0137f) v.push_back(x);
  for (float x = 1e-30f; x < 10.0f; x *= 1.37f) {  // tiny to moderate, both signs
    v.push_back(x);
    v.push_back(-x);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 88.72f, 88.73f, -87.33f, -103.9f,
                  -104.5f, 1.1f, 0.55f, 1e-45f, 20.0f, -20.0f})
    v.push_back(x);
  return v;
}

template <typename Vec, typename Ref>
int64_t worst_ulp(Vec vec, Ref ref, const std::vector<float>& xs, float& at) {
  std::vector<float> y(xs.size());
  vec(xs.data(), y.data(), static_cast<int64_t>(xs.size()));
  int64_t worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t d = ulp_distance(y[i], ref(xs[i]));
    if (d > worst) {
      worst = d;
      at = xs[i];
    }
  }
  return worst;
}

TEST(VectorMath, ExpWithinTwoUlpOfLibm) {
  float at = 0;
  const int64_t w = worst_ulp(exp_f32, [](float x) { return std::exp(x); }, sweep(), at);
  EXPECT_LE(w, 2) << "at x = " << at;
}

TEST(VectorMath, TanhWithinThreeUlpOfLibm) {
  float at = 0;
  const int64_t w = worst_ulp(tanh_f32, [](float x) { return std::tanh(x); }, sweep(), at);
  EXPECT_LE(w, 3) << "at x = " << at;
}

// Every 4099th float bit pattern (about a million values: both signs,
// subnormals, the whole exponent range, infinities and NaNs), then the
// points where erf_f32 changes formula (|x| = 1, 4) and where erf rounds
// to +-1 in float, densely.
std::vector<float> erf_sweep() {
  std::vector<float> v;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) {
    const uint32_t bits = static_cast<uint32_t>(b);
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    v.push_back(f);
  }
  for (float edge : {1.0f, 4.0f, 3.8325f}) {
    float up = edge, down = edge;
    for (int i = 0; i < 2000; ++i) {
      up = std::nextafter(up, 10.0f);
      down = std::nextafter(down, 0.0f);
      for (float x : {up, down, -up, -down}) v.push_back(x);
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, 1e-45f, -1e-45f, 1e-40f, -1e-40f, std::numeric_limits<float>::min(), inf, -inf,
                  std::numeric_limits<float>::quiet_NaN(), 3e38f, -3e38f, 0.5f, -0.5f, 2.0f, -2.0f})
    v.push_back(x);
  return v;
}

// libm's double erf rounded to float: correctly rounded but for rare
// ties, where float erff itself is off by up to an ulp. (Over all 2^32
// floats erf_f32 is within 2 ulp of this reference and 3 of erff.)
float erf_ref(float x) { return static_cast<float>(std::erf(static_cast<double>(x))); }

TEST(VectorMath, ErfWithinTwoUlpOfLibm) {
  float at = 0;
  const int64_t w = worst_ulp(erf_f32, erf_ref, erf_sweep(), at);
  EXPECT_LE(w, 2) << "at x = " << at;
}

// GELU against the scalar formula it replaces (float, libm erff). Both
// round 1 + erf(x / sqrt 2) in float, so where that cancels (x < -2) they
// agree to an ulp or two of 1 times |x|, not relatively.
TEST(VectorMath, GeluMatchesTheScalarFormula) {
  std::vector<float> xs;
  for (float x = -12.0f; x <= 12.0f; x += 0.00731f) xs.push_back(x);
  std::vector<float> y(xs.size());
  gelu_f32(xs.data(), y.data(), static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    const float x = xs[i];
    const float want = x * 0.5f * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2)));
    ASSERT_NEAR(y[i], want, 2.5e-7f * std::max(1.0f, std::abs(x))) << "x = " << x;
  }
  const float inf = std::numeric_limits<float>::infinity();
  const float special[] = {inf, 0.0f, std::numeric_limits<float>::quiet_NaN()};
  float out[3];
  gelu_f32(special, out, 3);
  EXPECT_EQ(out[0], inf);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_TRUE(std::isnan(out[2]));
}

TEST(VectorMath, ErfSpecialValuesExactly) {
  const float inf = std::numeric_limits<float>::infinity();
  const float x[] = {0.0f, -0.0f, inf, -inf, 10.0f, -10.0f, std::numeric_limits<float>::quiet_NaN(), 1e-45f};
  float y[8];
  erf_f32(x, y, 8);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_FALSE(std::signbit(y[0]));
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_TRUE(std::signbit(y[1]));
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.0f);
  EXPECT_EQ(y[4], 1.0f);
  EXPECT_EQ(y[5], -1.0f);
  EXPECT_TRUE(std::isnan(y[6]));
  EXPECT_EQ(y[7], 1e-45f);  // the smallest subnormal: 2/sqrt(pi) x rounds back to it
}

TEST(VectorMath, SignsOfZeroAndSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float x[] = {-0.0f, 0.0f, inf, -inf};
  float y[4];
  tanh_f32(x, y, 4);
  EXPECT_TRUE(std::signbit(y[0]));
  EXPECT_FALSE(std::signbit(y[1]));
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.0f);
  exp_f32(x, y, 4);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[2], inf);
  EXPECT_EQ(y[3], 0.0f);
}

TEST(VectorMath, EveryLengthAndInPlace) {
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) x[i] = 0.37f * static_cast<float>(i) - 5.0f;
    exp_f32(x.data(), y.data(), n);
    std::vector<float> e(x);
    erf_f32(e.data(), e.data(), n);   // in place
    tanh_f32(x.data(), x.data(), n);  // in place
    for (int64_t i = 0; i < n; ++i) {
      const float xi = 0.37f * static_cast<float>(i) - 5.0f;
      EXPECT_LE(ulp_distance(y[i], std::exp(xi)), 2) << n << " " << i;
      EXPECT_LE(ulp_distance(x[i], std::tanh(xi)), 3) << n << " " << i;
      EXPECT_LE(ulp_distance(e[i], erf_ref(xi)), 2) << n << " " << i;
    }
  }
}

}  // namespace
}  // namespace lathe::kernels
