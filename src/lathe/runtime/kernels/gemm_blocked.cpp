#include "lathe/runtime/kernels/gemm_blocked.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "lathe/runtime/parallel.h"

namespace lathe::kernels {

namespace {

// Block sizes (floats). KC x 32 columns is 32 KiB: one AVX-512 panel block
// in a 48 KiB L1. MC x KC of A is 144 KiB and MC x NC of C 288 KiB, both
// well inside a 1-2 MiB L2; so is the per-call pack buffer, KC x NC
// (512 KiB), reused across the row blocks.
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 144;  // a multiple of every set's mr (8, 6, 4)
constexpr int64_t kNcPacked = 512;

// simd::best_isa() orders the sets narrowest first.
bool cpu_has(simd::Isa isa) { return static_cast<int>(simd::best_isa()) >= static_cast<int>(isa); }

const TileSet& choose_tiles() {
  const char* env = std::getenv("LATHE_GEMM_ISA");
  const std::string_view want = env ? env : "";
  for (simd::Isa isa : {simd::Isa::Avx512, simd::Isa::Avx2}) {
    const TileSet* t = gemm_tiles_for(isa);
    if (t && (want.empty() || want == t->name)) return *t;
  }
  return tiles_scalar();
}

// Columns [n0, n1) x rows [k0, k1) of B as panels of nr (zero past n1):
// panel p at dst + p * (k1 - k0) * nr.
void pack_panels(const MatView& B, int64_t k0, int64_t k1, int64_t n0, int64_t n1, int nr, float* dst) {
  const float* b = static_cast<const float*>(B.data);
  const int64_t kc = k1 - k0;
  for (int64_t j0 = n0; j0 < n1; j0 += nr, dst += kc * nr) {
    const int cols = static_cast<int>(std::min<int64_t>(nr, n1 - j0));
    if (B.col_stride == 1) {  // rows contiguous: one copy per k
      for (int64_t k = 0; k < kc; ++k) {
        std::memcpy(dst + k * nr, b + (k0 + k) * B.row_stride + j0, sizeof(float) * cols);
        std::fill(dst + k * nr + cols, dst + (k + 1) * nr, 0.0f);
      }
      continue;
    }
    // Columns contiguous (a transposed weight) or strided: a transpose, 64
    // k at a time so the destination block stays in L1.
    for (int64_t kb = 0; kb < kc; kb += 64) {
      const int64_t ke = std::min(kc, kb + 64);
      for (int c = 0; c < nr; ++c) {
        if (c >= cols) {
          for (int64_t k = kb; k < ke; ++k) dst[k * nr + c] = 0.0f;
          continue;
        }
        const float* src = b + (j0 + c) * B.col_stride + k0 * B.row_stride;
        for (int64_t k = kb; k < ke; ++k) dst[k * nr + c] = src[k * B.row_stride];
      }
    }
  }
}

// Packed panels for columns from n0 and k rows from k0: panel p's row k is
// at base + p * stride + (k - k0) * nr.
struct Panels {
  const float* base;
  int64_t stride;
  int64_t n0, k0;
};

// Rows [m0, m1) x columns [n0, n1) of C over k rows [kb, ke) of the
// product of K (the first k block starts C, the last one clamps it).
struct Block {
  int64_t m0, m1, n0, n1, kb, ke;
};

void run_block(const TileSet& t, const Block& blk, int64_t K, const float* A, int64_t lda, Panels bp, float* C, int64_t ldc,
               const GemmEpilogue& e) {
  for (int64_t i0 = blk.m0; i0 < blk.m1; i0 += kMc) {
    const int64_t i1 = std::min(blk.m1, i0 + kMc);
    for (int64_t k0 = blk.kb; k0 < blk.ke; k0 += kKc) {
      const int64_t kc = std::min(kKc, blk.ke - k0);
      const bool first = k0 == 0, last = k0 + kc == K;
      for (int64_t j = blk.n0; j < blk.n1; j += t.nr) {
        const float* panel = bp.base + ((j - bp.n0) / t.nr) * bp.stride + (k0 - bp.k0) * t.nr;
        TileArgs a{kc, nullptr, lda, panel, nullptr, ldc, static_cast<int>(std::min<int64_t>(t.nr, blk.n1 - j)),
                   !first, first && e.bias ? e.bias + j : nullptr, last && e.clamp, e.lo, e.hi, panel};
        // The first row tile fetches the next panel's block into cache
        // while it computes; the rest find this one there.
        const bool more = j + t.nr < blk.n1;
        for (int64_t i = i0; i < i1; i += t.mr) {
          a.a = A + i * lda + k0;
          a.c = C + i * ldc + j;
          a.prefetch = i == i0 && more ? panel + bp.stride : panel;
          t.rows[std::min<int64_t>(t.mr, i1 - i)](a);
        }
      }
    }
  }
}

// Splits C's columns (in whole panels) or, when there are too few panels,
// its rows across the pool; fn(m0, m1, n0, n1) computes one part.
template <typename Fn>
void split(const TileSet& t, int64_t M, int64_t N, int64_t K, Fn&& fn) {
  const int64_t threads = M * N * K < (int64_t{1} << 18) ? 1 : num_threads();
  const int64_t panels = (N + t.nr - 1) / t.nr;
  if (threads <= 1) {
    fn(0, M, 0, N);
  } else if (panels >= 2 * threads || M < 2 * t.mr * threads) {
    parallel_for(0, panels, 1, [&](int64_t p0, int64_t p1) { fn(0, M, p0 * t.nr, std::min(N, p1 * t.nr)); });
  } else {
    const int64_t tiles = (M + t.mr - 1) / t.mr;
    parallel_for(0, tiles, 1, [&](int64_t r0, int64_t r1) { fn(r0 * t.mr, std::min(M, r1 * t.mr), 0, N); });
  }
}

// A with contiguous rows: in place, else a contiguous copy in `keep`.
const float* rows_of(const MatView& A, int64_t M, int64_t K, int64_t& lda, std::vector<float>& keep) {
  const float* a = static_cast<const float*>(A.data);
  lda = A.row_stride;
  if (A.col_stride == 1 || K <= 1) return a;
  keep.resize(static_cast<size_t>(M * K));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) keep[i * K + k] = a[i * A.row_stride + k * A.col_stride];
  lda = K;
  return keep.data();
}

// K == 0: C is the bias (or zero), clamped.
void epilogue_only(int64_t M, int64_t N, float* C, int64_t ldc, const GemmEpilogue& e) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      const float v = e.bias ? e.bias[j] : 0.0f;
      C[i * ldc + j] = e.clamp ? std::min(std::max(v, e.lo), e.hi) : v;
    }
  }
}

}  // namespace

void FreeAligned::operator()(float* p) const { std::free(p); }

AlignedFloats aligned_floats(int64_t count) {
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float) + 63) / 64 * 64;
  return AlignedFloats(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

const TileSet* gemm_tiles_for(simd::Isa isa) {
  if (!cpu_has(isa)) return nullptr;
  switch (isa) {
    case simd::Isa::Scalar: return &tiles_scalar();
    case simd::Isa::Avx2: return tiles_avx2();
    case simd::Isa::Avx512:
    case simd::Isa::Avx512Vnni: return tiles_avx512();  // VNNI adds nothing for fp32
  }
  return nullptr;
}

const TileSet& gemm_tiles() {
  static const TileSet& t = choose_tiles();
  return t;
}

const TileSet& gemm_tiles_narrow() {
  static const TileSet& t = gemm_tiles().isa == simd::Isa::Avx512 && tiles_avx512_narrow() ? *tiles_avx512_narrow() : gemm_tiles();
  return t;
}

PackedB PackedB::pack(const TileSet& tiles, int64_t K, int64_t N, MatView B) {
  PackedB p;
  p.tiles_ = &tiles;
  p.K_ = K;
  p.N_ = N;
  const int64_t panels = (N + tiles.nr - 1) / tiles.nr;
  p.data_ = aligned_floats(panels * K * tiles.nr);
  pack_panels(B, 0, K, 0, N, tiles.nr, p.data_.get());
  return p;
}

void gemm_packed(int64_t M, MatView A, const PackedB& B, float* C, int64_t ldc, const GemmEpilogue& e) {
  const TileSet& t = B.tiles();
  const int64_t N = B.n(), K = B.k();
  if (M == 0 || N == 0) return;
  if (K == 0) return epilogue_only(M, N, C, ldc, e);
  std::vector<float> keep;
  int64_t lda = 0;
  const float* a = rows_of(A, M, K, lda, keep);
  const Panels all{B.panels(), K * t.nr, 0, 0};
  if (M == 1 && t.gemv) {
    split(t, M, N, K, [&](int64_t, int64_t, int64_t n0, int64_t n1) {
      t.gemv(GemvArgs{K, a, all.base + (n0 / t.nr) * all.stride, all.stride, n1 - n0, C + n0, e.bias ? e.bias + n0 : nullptr,
                      e.clamp, e.lo, e.hi});
    });
    return;
  }
  split(t, M, N, K, [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    for (int64_t j = n0; j < n1; j += kNcPacked) {
      run_block(t, Block{m0, m1, j, std::min(n1, j + kNcPacked), 0, K}, K, a, lda, all, C, ldc, e);
    }
  });
}

void gemm_blocked(const TileSet& t, int64_t M, int64_t N, int64_t K, MatView A, MatView B, float* C, int64_t ldc,
                  const GemmEpilogue& e) {
  if (M == 0 || N == 0) return;
  if (K == 0) return epilogue_only(M, N, C, ldc, e);
  std::vector<float> keep;
  int64_t lda = 0;
  const float* a = rows_of(A, M, K, lda, keep);
  split(t, M, N, K, [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    thread_local AlignedFloats buffer;  // one KC x NC block per thread, kept between calls
    if (!buffer) buffer = aligned_floats(kKc * kNcPacked);
    for (int64_t j = n0; j < n1; j += kNcPacked) {
      const int64_t j1 = std::min(n1, j + kNcPacked);
      for (int64_t k0 = 0; k0 < K; k0 += kKc) {
        const int64_t k1 = std::min(K, k0 + kKc);
        pack_panels(B, k0, k1, j, j1, t.nr, buffer.get());
        run_block(t, Block{m0, m1, j, j1, k0, k1}, K, a, lda, Panels{buffer.get(), (k1 - k0) * t.nr, j, k0}, C, ldc, e);
      }
    }
  });
}

}  // namespace lathe::kernels
