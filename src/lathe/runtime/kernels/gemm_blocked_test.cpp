// The blocked GEMM against a double-precision triple loop, for every tile
// set this CPU has (scalar always, AVX2 and AVX-512's two where present), per
// call and prepacked, on shapes that cross every edge: partial row tiles,
// partial panels, several k blocks (KC = 256), column blocks (NC = 512),
// strided and transposed operands, bias and clamp, one and two threads.
#include "lathe/runtime/kernels/gemm_blocked.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "lathe/runtime/parallel.h"
#include "lathe/runtime/runtime_test_support.h"

namespace lathe::kernels {
namespace {

// Test inputs in [-1, 1].
std::vector<float> values(int64_t n, uint32_t seed) { return testing::lcg_floats(n, seed, 1000.0f, 1.0f); }

struct Case {
  int64_t M, N, K;
};

// Reference in double: C[i,j] = sum_k A(i,k) B(k,j) (+ bias) (clamped), and
// the bound sum_k |A(i,k) B(k,j)| that scales the allowed float error.
void reference(const Case& c, const MatView& A, const MatView& B, const GemmEpilogue& e, std::vector<double>& out,
               std::vector<double>& bound) {
  const float* a = static_cast<const float*>(A.data);
  const float* b = static_cast<const float*>(B.data);
  out.assign(c.M * c.N, 0.0);
  bound.assign(c.M * c.N, 0.0);
  for (int64_t i = 0; i < c.M; ++i) {
    for (int64_t j = 0; j < c.N; ++j) {
      double s = e.bias ? e.bias[j] : 0.0, m = std::abs(s);
      for (int64_t k = 0; k < c.K; ++k) {
        const double p = double(a[i * A.row_stride + k * A.col_stride]) * b[k * B.row_stride + j * B.col_stride];
        s += p;
        m += std::abs(p);
      }
      if (e.clamp) s = std::min<double>(std::max<double>(s, e.lo), e.hi);
      out[i * c.N + j] = s;
      bound[i * c.N + j] = m;
    }
  }
}

enum class Layout { Rows, Transposed, Strided };

// Storage for a [rows, cols] operand in the given layout, and its view.
MatView view(Layout l, int64_t rows, int64_t cols, const std::vector<float>& v) {
  switch (l) {
    case Layout::Rows: return {v.data(), cols, 1};
    case Layout::Transposed: return {v.data(), 1, rows};
    case Layout::Strided: return {v.data(), 2 * cols + 1, 2};  // every other element, rows padded
  }
  return {};
}
int64_t storage(Layout l, int64_t rows, int64_t cols) { return l == Layout::Strided ? rows * (2 * cols + 1) + 1 : rows * cols; }

void check(const TileSet& t, const Case& c, Layout la, Layout lb, const GemmEpilogue& e, bool prepacked) {
  const std::vector<float> a = values(storage(la, c.M, c.K), 7 + c.M), b = values(storage(lb, c.K, c.N), 11 + c.N);
  const MatView A = view(la, c.M, c.K, a), B = view(lb, c.K, c.N, b);
  const int64_t ldc = c.N + 3;  // C rows padded: nothing past N may be written
  std::vector<float> C(c.M * ldc, -777.0f);
  if (prepacked) gemm_packed(c.M, A, PackedB::pack(t, c.K, c.N, B), C.data(), ldc, e);
  else gemm_blocked(t, c.M, c.N, c.K, A, B, C.data(), ldc, e);
  std::vector<double> want, bound;
  reference(c, A, B, e, want, bound);
  const std::string what = std::string(t.name) + (prepacked ? " prepacked " : " per call ") + std::to_string(c.M) + "x" +
                           std::to_string(c.N) + "x" + std::to_string(c.K) + " layouts " + std::to_string(int(la)) +
                           std::to_string(int(lb)) + (e.bias ? " bias" : "") + (e.clamp ? " clamp" : "");
  for (int64_t i = 0; i < c.M; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = C[i * ldc + j];
      if (j >= c.N) {
        ASSERT_EQ(got, -777.0f) << what << ": wrote past column " << c.N;
        continue;
      }
      const double tol = 1e-6 * (bound[i * c.N + j] + 1.0) * std::sqrt(double(c.K) + 1.0);
      ASSERT_NEAR(got, want[i * c.N + j], tol) << what << " at (" << i << ", " << j << ")";
    }
  }
}

std::vector<const TileSet*> available_sets() {
  std::vector<const TileSet*> sets;
  for (simd::Isa isa : {simd::Isa::Scalar, simd::Isa::Avx2, simd::Isa::Avx512}) {
    if (const TileSet* t = gemm_tiles_for(isa)) sets.push_back(t);
  }
  if (gemm_tiles_for(simd::Isa::Avx512) && tiles_avx512_narrow()) sets.push_back(tiles_avx512_narrow());
  return sets;
}

const Case kCases[] = {{1, 1, 1},   {2, 8, 3},    {7, 31, 5},     {8, 32, 256},  {9, 33, 257},
                       {17, 65, 64}, {3, 600, 40}, {150, 20, 300}, {64, 100, 513}, {5, 17, 0}};

TEST(GemmBlocked, EveryTileSetMatchesTheReference) {
  for (const TileSet* t : available_sets()) {
    for (const Case& c : kCases) {
      for (Layout la : {Layout::Rows, Layout::Transposed}) {
        for (Layout lb : {Layout::Rows, Layout::Transposed, Layout::Strided}) {
          check(*t, c, la, lb, {}, false);
        }
      }
      check(*t, c, Layout::Rows, Layout::Transposed, {}, true);
      check(*t, c, Layout::Strided, Layout::Rows, {}, true);
    }
  }
}

TEST(GemmBlocked, BiasAndClampAreApplied) {
  const std::vector<float> bias = values(700, 3);
  for (const TileSet* t : available_sets()) {
    for (const Case& c : kCases) {
      GemmEpilogue e;
      e.bias = bias.data();
      check(*t, c, Layout::Rows, Layout::Transposed, e, true);
      e.clamp = true;
      e.lo = -0.5f;
      e.hi = 0.25f;
      check(*t, c, Layout::Rows, Layout::Transposed, e, true);
      check(*t, c, Layout::Rows, Layout::Rows, e, false);
      e.bias = nullptr;  // clamp alone, and relu (0, inf)
      check(*t, c, Layout::Rows, Layout::Transposed, e, true);
      e.lo = 0.0f;
      e.hi = INFINITY;
      check(*t, c, Layout::Rows, Layout::Transposed, e, false);
    }
  }
}

// The bias holds exactly N floats (a sanitizer build sees any read past it,
// as a partial panel's masked or scratch path must not make).
TEST(GemmBlocked, ExactSizeBiasIsNotReadPastItsEnd) {
  for (const TileSet* t : available_sets()) {
    for (const Case& c : {Case{9, 33, 20}, Case{3, 17, 300}, Case{1, 5, 7}}) {
      const std::vector<float> bias = values(c.N, 5);
      GemmEpilogue e;
      e.bias = bias.data();
      check(*t, c, Layout::Rows, Layout::Transposed, e, true);
      check(*t, c, Layout::Rows, Layout::Rows, e, false);
    }
  }
}

TEST(GemmBlocked, TwoThreadsSplitColumnsAndRows) {
  set_num_threads(2);
  for (const TileSet* t : available_sets()) {
    for (const Case& c : {Case{64, 1100, 300}, Case{300, 40, 70}, Case{33, 33, 600}}) {
      check(*t, c, Layout::Rows, Layout::Transposed, {}, true);
      check(*t, c, Layout::Rows, Layout::Transposed, {}, false);
      check(*t, c, Layout::Transposed, Layout::Rows, {}, false);
    }
  }
  set_num_threads(1);
}

// One row on prepacked panels takes the set's gemv where it has one (four
// panel streams at once): the tile path's sums in the tile path's order, so
// row 0 of a 2-row product (tiles, k blocks of 256) is its result bit for
// bit, and it is within the reference's bound. Shapes: groups of four
// panels and the panels after them, partial panels, one and several k
// blocks, bias and clamp, one and two threads.
TEST(GemmBlocked, OneRowOnPackedPanelsIsTheTilePathsResult) {
  const std::vector<float> bias = values(1100, 3);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const TileSet* t : available_sets()) {
      for (const Case& c : {Case{1, 33, 257}, Case{1, 200, 600}, Case{1, 1100, 300}, Case{1, 129, 5}}) {
        for (int epilogue = 0; epilogue < 3; ++epilogue) {
          GemmEpilogue e;
          if (epilogue > 0) e.bias = bias.data();
          if (epilogue > 1) e.clamp = true, e.lo = -0.5f, e.hi = 0.25f;
          check(*t, c, Layout::Rows, Layout::Transposed, e, true);
          const std::vector<float> a = values(2 * c.K, 9), b = values(c.K * c.N, 13);
          const PackedB packed = PackedB::pack(*t, c.K, c.N, MatView{b.data(), c.N, 1});
          std::vector<float> one(c.N), two(2 * c.N);
          gemm_packed(1, MatView{a.data(), c.K, 1}, packed, one.data(), c.N, e);
          gemm_packed(2, MatView{a.data(), c.K, 1}, packed, two.data(), c.N, e);
          for (int64_t j = 0; j < c.N; ++j) {
            ASSERT_EQ(one[j], two[j]) << t->name << " " << c.N << "x" << c.K << " epilogue " << epilogue << " threads "
                                      << threads << " at column " << j;
          }
        }
      }
    }
  }
  set_num_threads(1);
}

TEST(GemmBlocked, UsesTheWidestSetTheCpuHas) {
  const TileSet& t = gemm_tiles();
  if (gemm_tiles_for(simd::Isa::Avx512)) EXPECT_EQ(t.isa, simd::Isa::Avx512);
  else if (gemm_tiles_for(simd::Isa::Avx2)) EXPECT_EQ(t.isa, simd::Isa::Avx2);
  else EXPECT_EQ(t.isa, simd::Isa::Scalar);
  EXPECT_NE(gemm_tiles_for(simd::Isa::Scalar), nullptr);  // the fallback is always there
  const TileSet& n = gemm_tiles_narrow();
  EXPECT_EQ(n.isa, t.isa);
  EXPECT_EQ(n.nr, t.isa == simd::Isa::Avx512 ? 16 : t.nr);
}

}  // namespace
}  // namespace lathe::kernels
