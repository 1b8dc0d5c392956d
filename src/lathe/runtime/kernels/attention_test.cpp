// scaled_dot_product_attention's vectorised row sets against the scalar
// one, and the whole kernel against a double-precision evaluation of the
// formula (softmax(q k^T scale + mask) v), on shapes that cross its edges:
// row lengths that leave a vector tail, query blocks past one L1 block
// (kScoreBlock), strided q/k/v views, bool and float masks, causal rows,
// masked-out rows (output 0 and logsumexp 0, as PyTorch 2.13's CPU flash
// attention returns them), one and two threads. PyTorch's own numbers for
// the common cases are in testdata/kernel_cases.json (kernels_test.cpp).
#include "lathe/runtime/kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lathe/runtime/kernels/attention_rows.h"
#include "lathe/runtime/kernels/view.h"
#include "lathe/runtime/parallel.h"
#include "lathe/runtime/runtime_test_support.h"

namespace lathe::kernels {
namespace {

using testing::float_tensor;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> values(int64_t n, uint32_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(seed >> 8) / static_cast<float>(1 << 24);
  }
  return v;
}

std::vector<simd::Isa> vector_sets() {
  std::vector<simd::Isa> v;
  for (simd::Isa isa : {simd::Isa::Avx2, simd::Isa::Avx512})
    if (softmax_rows_for(isa)) v.push_back(isa);
  return v;
}

TEST(AttentionRows, VectorSetsMatchScalar) {
  const SoftmaxRows& scalar = *softmax_rows_for(simd::Isa::Scalar);
  for (simd::Isa isa : vector_sets()) {
    const SoftmaxRows& set = *softmax_rows_for(isa);
    for (int64_t n = 0; n <= 70; ++n) {
      for (int masked = 0; masked < 3; ++masked) {  // none, some -inf, all -inf
        std::vector<float> mask = values(n, 7u + static_cast<uint32_t>(n), -2.0f, 2.0f);
        for (int64_t j = 0; j < n; ++j)
          if (masked == 2 || (masked == 1 && j % 3 == 1)) mask[j] = -kInf;
        const float* m = masked ? mask.data() : nullptr;
        std::vector<float> a = values(n, 11u * static_cast<uint32_t>(n) + 1, -30.0f, 30.0f), b = a;
        float ma = 0, mb = 0;
        const float sa = scalar.numerators(a.data(), n, 0.37f, m, &ma);
        const float sb = set.numerators(b.data(), n, 0.37f, m, &mb);
        SCOPED_TRACE(std::string(set.name) + " n=" + std::to_string(n) + " masked=" + std::to_string(masked));
        EXPECT_NEAR(mb, ma, 1e-6f * std::abs(ma));
        EXPECT_NEAR(sb, sa, 1e-5f * sa);
        for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(b[j], a[j], 1e-5f * a[j] + 1e-37f) << j;
        if (masked == 2) {
          EXPECT_EQ(mb, 0.0f);
          EXPECT_EQ(sb, 0.0f);
        }
      }
    }
  }
}

TEST(AttentionRows, NegativeScaleKeepsTheTailOutOfTheMax) {
  // Lanes past the row's end must not enter the max whatever the scale's sign.
  for (simd::Isa isa : {simd::Isa::Scalar, simd::Isa::Avx2, simd::Isa::Avx512}) {
    const SoftmaxRows* set = softmax_rows_for(isa);
    if (!set) continue;
    std::vector<float> row = {1.0f, 2.0f, 3.0f};
    float m = 0;
    const float sum = set->numerators(row.data(), 3, -1.0f, nullptr, &m);
    EXPECT_FLOAT_EQ(m, -1.0f) << set->name;
    EXPECT_NEAR(sum, 1.0f + std::exp(-1.0f) + std::exp(-2.0f), 1e-6f) << set->name;
  }
}

// Element (b, i, j) of a rank-3 tensor view, whatever its strides.
float at(const Tensor& t, int64_t b, int64_t i, int64_t j) {
  return cdata<float>(t)[b * t.strides[0] + i * t.strides[1] + j * t.strides[2]];
}

struct Expected {
  std::vector<double> out, lse;
};

// The formula in double over [B, L, E] x [B, S, E] x [B, S, Ev]; mask is
// additive [B, L, S] (or empty). A row with no finite score: output 0,
// logsumexp 0.
Expected reference(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<float>& mask, bool causal,
                   double scale) {
  const int64_t B = q.sizes[0], L = q.sizes[1], E = q.sizes[2], S = k.sizes[1], Ev = v.sizes[2];
  Expected r{std::vector<double>(B * L * Ev, 0.0), std::vector<double>(B * L, 0.0)};
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(S);
      double mx = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        double d = 0;
        for (int64_t e = 0; e < E; ++e) d += double(at(q, b, i, e)) * at(k, b, j, e);
        s[j] = d * scale + (mask.empty() ? 0.0 : mask[(b * L + i) * S + j]);
        if (causal && j > i) s[j] = -INFINITY;
        mx = std::max(mx, s[j]);
      }
      if (mx == -INFINITY) continue;
      double sum = 0;
      for (double& x : s) sum += x = std::exp(x - mx);
      for (int64_t e = 0; e < Ev; ++e) {
        double o = 0;
        for (int64_t j = 0; j < S; ++j) o += s[j] * at(v, b, j, e);
        r.out[(b * L + i) * Ev + e] = o / sum;
      }
      r.lse[b * L + i] = mx + std::log(sum);
    }
  }
  return r;
}

void expect_close(const Tensor& out, const Tensor& lse, const Expected& want) {
  const float* o = cdata<float>(out);
  for (size_t i = 0; i < want.out.size(); ++i) ASSERT_NEAR(o[i], want.out[i], 2e-5 + 1e-5 * std::abs(want.out[i])) << i;
  const float* l = cdata<float>(lse);
  for (size_t i = 0; i < want.lse.size(); ++i) ASSERT_NEAR(l[i], want.lse[i], 1e-5 + 1e-5 * std::abs(want.lse[i])) << i;
}

struct Shape {
  int64_t B, L, S, E, Ev;
};

// q as a transposed view ([B, E, L] storage), k and v contiguous; the
// mask (when asked) a float [B, L, S] with masked-out entries and one
// masked-out row.
void run_case(const Shape& sh, bool causal, bool with_mask, std::optional<double> scale) {
  SCOPED_TRACE("B=" + std::to_string(sh.B) + " L=" + std::to_string(sh.L) + " S=" + std::to_string(sh.S) + " E=" +
               std::to_string(sh.E) + " Ev=" + std::to_string(sh.Ev) + (causal ? " causal" : "") + (with_mask ? " mask" : ""));
  const Tensor qt = float_tensor({sh.B, sh.E, sh.L}, values(sh.B * sh.L * sh.E, 1, -2.0f, 2.0f));
  Tensor q = *transpose_view(qt, 1, 2);
  const Tensor k = float_tensor({sh.B, sh.S, sh.E}, values(sh.B * sh.S * sh.E, 2, -2.0f, 2.0f));
  const Tensor v = float_tensor({sh.B, sh.S, sh.Ev}, values(sh.B * sh.S * sh.Ev, 3, -1.0f, 1.0f));
  std::vector<float> mask;
  Tensor mt;
  if (with_mask) {
    mask = values(sh.B * sh.L * sh.S, 4, -1.0f, 1.0f);
    for (size_t i = 0; i < mask.size(); i += 5) mask[i] = -kInf;
    for (int64_t j = 0; j < sh.S; ++j) mask[(sh.L / 2) * sh.S + j] = -kInf;  // batch 0, row L/2
    mt = float_tensor({sh.B, sh.L, sh.S}, mask);
  }
  SdpaArgs a{&q, &k, &v, with_mask ? &mt : nullptr, 0.0, causal, scale};
  Tensor out = Tensor::empty(DType::Float32, {sh.B, sh.L, sh.Ev});
  Tensor lse = Tensor::empty(DType::Float32, {sh.B, sh.L});
  ASSERT_TRUE(sdpa(a, out, &lse).ok());
  expect_close(out, lse, reference(q, k, v, mask, causal, scale.value_or(1.0 / std::sqrt(double(sh.E)))));
}

TEST(Attention, MatchesDoubleReference) {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const Shape& sh : {Shape{2, 7, 13, 16, 5}, Shape{3, 128, 128, 16, 16}, Shape{1, 150, 33, 8, 40},
                            Shape{2, 40, 300, 24, 7}, Shape{1, 1, 1, 1, 1},
                            // Decode steps (rows read in place): a KV cache of 256, odd sizes.
                            Shape{8, 1, 256, 64, 64}, Shape{2, 1, 40, 16, 136}, Shape{3, 3, 37, 12, 13}, Shape{2, 2, 5, 3, 9}}) {
      run_case(sh, false, false, std::nullopt);
      run_case(sh, true, false, std::nullopt);
      run_case(sh, false, true, 0.3);
    }
  }
  set_num_threads(1);
}

TEST(Attention, BoolMaskRowMaskedOutGivesZeros) {
  // PyTorch 2.13: softmax over a row with no allowed key is 0, logsumexp 0.
  const Tensor q = float_tensor({1, 2, 4}, values(8, 5, -1.0f, 1.0f));
  const Tensor k = float_tensor({1, 3, 4}, values(12, 6, -1.0f, 1.0f));
  const Tensor v = float_tensor({1, 3, 2}, values(6, 7, -1.0f, 1.0f));
  Tensor m = Tensor::empty(DType::Bool, {2, 3});  // broadcast over the batch
  bool* mp = mdata<bool>(m);
  for (int i = 0; i < 6; ++i) mp[i] = i < 3;  // row 0 all allowed, row 1 none
  SdpaArgs a{&q, &k, &v, &m, 0.0, false, std::nullopt};
  Tensor out = Tensor::empty(DType::Float32, {1, 2, 2});
  Tensor lse = Tensor::empty(DType::Float32, {1, 2});
  ASSERT_TRUE(sdpa(a, out, &lse).ok());
  const float* o = cdata<float>(out);
  EXPECT_EQ(o[2], 0.0f);
  EXPECT_EQ(o[3], 0.0f);
  EXPECT_EQ(cdata<float>(lse)[1], 0.0f);
  EXPECT_TRUE(std::isfinite(o[0]) && std::isfinite(o[1]));
}

// A float mask shared by every head ([1, 1, L, S]) is read in place with
// broadcast strides, a bool one is made additive first: the two spellings
// of one mask give the same bits (sdpa_additive_mask relies on it), a row
// with no allowed key included.
TEST(Attention, BroadcastFloatMaskGivesTheBoolMasksBits) {
  const Tensor q = float_tensor({1, 2, 3, 4}, values(24, 8, -1.0f, 1.0f));
  const Tensor k = float_tensor({1, 2, 5, 4}, values(40, 9, -1.0f, 1.0f));
  const Tensor v = float_tensor({1, 2, 5, 3}, values(30, 10, -1.0f, 1.0f));
  Tensor b = Tensor::empty(DType::Bool, {1, 1, 3, 5});
  Tensor f = Tensor::empty(DType::Float32, {1, 1, 3, 5});
  for (int i = 0; i < 15; ++i) {
    const bool keep = i / 5 != 1 && i % 5 != 4;  // key 4 padded out; query row 1 sees nothing
    mdata<bool>(b)[i] = keep;
    mdata<float>(f)[i] = keep ? 0.0f : -std::numeric_limits<float>::infinity();
  }
  Tensor out_bool = Tensor::empty(DType::Float32, {1, 2, 3, 3});
  Tensor out_float = Tensor::empty(DType::Float32, {1, 2, 3, 3});
  ASSERT_TRUE(sdpa(SdpaArgs{&q, &k, &v, &b, 0.0, false, std::nullopt}, out_bool, nullptr).ok());
  ASSERT_TRUE(sdpa(SdpaArgs{&q, &k, &v, &f, 0.0, false, std::nullopt}, out_float, nullptr).ok());
  for (int i = 0; i < 18; ++i) EXPECT_EQ(cdata<float>(out_float)[i], cdata<float>(out_bool)[i]) << i;
  EXPECT_EQ(cdata<float>(out_float)[3], 0.0f);  // head 0, query row 1: no allowed key
}


// Grouped-query attention (enable_gqa): query head h reads key/value head
// h / 3 in place. Checked against the double formula on key/value heads
// repeated by hand (what transformers' repeat_kv copies), for a decode
// step (one query row, read in place) and for blocks of rows, causal and
// with a mask, at one and two threads.
TEST(Attention, GroupedQueryHeadsReadTheirKeyValueHeadInPlace) {
  const int64_t B = 2, H = 6, G = 3, S = 37, E = 16, Ev = 8;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (int64_t L : {1, 9}) {
      for (bool causal : {false, true}) {
        SCOPED_TRACE("L=" + std::to_string(L) + (causal ? " causal" : "") + " threads=" + std::to_string(threads));
        const Tensor q = float_tensor({B, H, L, E}, values(B * H * L * E, 11, -2.0f, 2.0f));
        const Tensor k = float_tensor({B, H / G, S, E}, values(B * (H / G) * S * E, 12, -2.0f, 2.0f));
        const Tensor v = float_tensor({B, H / G, S, Ev}, values(B * (H / G) * S * Ev, 13, -1.0f, 1.0f));
        const std::vector<float> mask = values(B * H * L * S, 14, -1.0f, 1.0f);
        const Tensor m = float_tensor({B, H, L, S}, mask);
        // Heads repeated: row (b, h) of the copies is row (b, h / G) of k and v.
        std::vector<float> k_rep, v_rep;
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < H; ++h) {
            const float* kh = cdata<float>(k) + (b * (H / G) + h / G) * S * E;
            const float* vh = cdata<float>(v) + (b * (H / G) + h / G) * S * Ev;
            k_rep.insert(k_rep.end(), kh, kh + S * E);
            v_rep.insert(v_rep.end(), vh, vh + S * Ev);
          }
        Tensor out = Tensor::empty(DType::Float32, {B, H, L, Ev}), lse = Tensor::empty(DType::Float32, {B, H, L});
        SdpaArgs a{&q, &k, &v, causal ? nullptr : &m, 0.0, causal, std::nullopt};
        a.enable_gqa = true;
        ASSERT_TRUE(sdpa(a, out, &lse).ok());
        const Tensor q3 = float_tensor({B * H, L, E}, std::vector<float>(cdata<float>(q), cdata<float>(q) + q.numel()));
        const Tensor k3 = float_tensor({B * H, S, E}, k_rep), v3 = float_tensor({B * H, S, Ev}, v_rep);
        expect_close(out, lse, reference(q3, k3, v3, causal ? std::vector<float>{} : mask, causal, 1.0 / std::sqrt(double(E))));
      }
    }
  }
  set_num_threads(1);
}

TEST(Attention, GroupedQueryHeadsThatDoNotDivideAreAnError_NEG) {
  const Tensor q = float_tensor({1, 6, 1, 4}, values(24, 1, -1.0f, 1.0f));
  const Tensor k = float_tensor({1, 4, 3, 4}, values(48, 2, -1.0f, 1.0f));
  Tensor out = Tensor::empty(DType::Float32, {1, 6, 1, 4});
  SdpaArgs a{&q, &k, &k, nullptr, 0.0, false, std::nullopt};
  Status s = sdpa(a, out, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("heads that differ need enable_gqa"), std::string::npos) << s.error().message();
  a.enable_gqa = true;
  s = sdpa(a, out, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("enable_gqa with 6 query heads needs key and value with the same number of heads "
                                     "dividing it; got 4 and 4"),
            std::string::npos)
      << s.error().message();
}

}  // namespace
}  // namespace lathe::kernels
