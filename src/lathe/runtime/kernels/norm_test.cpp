// Layer norm's vectorised float rows against a double-precision
// evaluation, on row lengths that leave a tail, and the exact cases: a
// row equal to its mean (length 1, or constant) gives exactly the bias,
// as PyTorch's kernel does (x - mean is 0, not an FMA's rounding error).
#include "lathe/runtime/kernels/norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "lathe/runtime/runtime_test_support.h"

namespace lathe::kernels {
namespace {

using testing::float_tensor;

// Test inputs in [-2, 2].
std::vector<float> values(int64_t n, uint32_t seed) { return testing::lcg_floats(n, seed, 500.0f, 2.0f); }

TEST(LayerNorm, FloatRowsMatchDoubleReference) {
  for (int64_t N : {1, 7, 8, 64, 70}) {
    const int64_t M = 5;
    const std::vector<float> xv = values(M * N, 1), wv = values(N, 2), bv = values(N, 3);
    const Tensor x = float_tensor({M, N}, xv), w = float_tensor({N}, wv), b = float_tensor({N}, bv);
    Tensor out = Tensor::empty(DType::Float32, {M, N});
    ASSERT_TRUE(layer_norm_out(x, {N}, &w, &b, 1e-5, out, nullptr, nullptr).ok());
    for (int64_t i = 0; i < M; ++i) {
      double mu = 0, var = 0;
      for (int64_t j = 0; j < N; ++j) mu += xv[i * N + j];
      mu /= N;
      for (int64_t j = 0; j < N; ++j) var += (xv[i * N + j] - mu) * (xv[i * N + j] - mu);
      const double rs = 1.0 / std::sqrt(var / N + 1e-5);
      for (int64_t j = 0; j < N; ++j) {
        const double want = (xv[i * N + j] - mu) * rs * wv[j] + bv[j];
        ASSERT_NEAR(cdata<float>(out)[i * N + j], want, 2e-5 * (1 + std::abs(want))) << "N=" << N << " (" << i << ", " << j << ")";
      }
    }
  }
}

TEST(LayerNorm, RowEqualToItsMeanGivesExactlyTheBias) {
  const Tensor one = float_tensor({3, 1}, {0.1f, -7.3f, 1e3f}), w1 = float_tensor({1}, {2.5f}), b1 = float_tensor({1}, {0.25f});
  Tensor out1 = Tensor::empty(DType::Float32, {3, 1});
  ASSERT_TRUE(layer_norm_out(one, {1}, &w1, &b1, 1e-5, out1, nullptr, nullptr).ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(cdata<float>(out1)[i], 0.25f) << i;
  const Tensor flat = float_tensor({1, 20}, std::vector<float>(20, 0.3f));
  const std::vector<float> bv = values(20, 9);
  const Tensor w = float_tensor({20}, values(20, 8)), b = float_tensor({20}, bv);
  Tensor out = Tensor::empty(DType::Float32, {1, 20});
  ASSERT_TRUE(layer_norm_out(flat, {20}, &w, &b, 1e-5, out, nullptr, nullptr).ok());
  for (int j = 0; j < 20; ++j) EXPECT_EQ(cdata<float>(out)[j], bv[j]) << j;
}

}  // namespace
}  // namespace lathe::kernels
