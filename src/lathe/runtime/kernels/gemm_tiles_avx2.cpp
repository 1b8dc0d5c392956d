// AVX2 + FMA tiles: 6 rows x 16 columns (two ymm per row), 12 accumulators
// plus 2 panel registers and a broadcast: 15 of the 16 ymm registers. Per
// k step, 2 loads and 6 broadcasts for 12 FMAs. A 256-step panel is 16 KiB.
// Columns past the matrix edge go through a scratch tile (no masked store).
#include "lathe/runtime/kernels/gemm_tiles.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define LATHE_AVX2 __attribute__((target("avx2,fma")))

namespace lathe::kernels {

namespace {

constexpr int kNv = 2;
constexpr int kNr = 8 * kNv;

template <int MR>
LATHE_AVX2 void full_tile(const TileArgs& p) {
  __m256 acc[MR][kNv];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) {
      if (p.accumulate) acc[r][v] = _mm256_loadu_ps(p.c + r * p.ldc + 8 * v);
      else if (p.bias) acc[r][v] = _mm256_loadu_ps(p.bias + 8 * v);
      else acc[r][v] = _mm256_setzero_ps();
    }
  }
  const float* a[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) a[r] = p.a + r * p.lda;
  const float* b = p.b;
#pragma GCC unroll 2
  for (int64_t k = 0; k < p.kc; ++k) {
    __m256 bv[kNv];
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) bv[v] = _mm256_load_ps(b + 8 * v);
    // One 64-byte line of the next panel per k step (as the AVX-512 tiles).
    _mm_prefetch(reinterpret_cast<const char*>(p.prefetch + k * kNr), _MM_HINT_T1);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 x = _mm256_broadcast_ss(a[r] + k);
#pragma GCC unroll 4
      for (int v = 0; v < kNv; ++v) acc[r][v] = _mm256_fmadd_ps(x, bv[v], acc[r][v]);
    }
    b += kNr;
  }
  if (p.clamp) {
    const __m256 lo = _mm256_set1_ps(p.lo), hi = _mm256_set1_ps(p.hi);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < kNv; ++v) acc[r][v] = _mm256_min_ps(_mm256_max_ps(acc[r][v], lo), hi);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) _mm256_storeu_ps(p.c + r * p.ldc + 8 * v, acc[r][v]);
  }
}

template <int MR>
void tile(const TileArgs& p) {
  tile_via_scratch<MR, kNr, full_tile<MR>>(p);
}

const TileSet kSet = {simd::Isa::Avx2, "avx2", 6, kNr, {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>, nullptr, nullptr}};

}  // namespace

const TileSet* tiles_avx2() { return &kSet; }

}  // namespace lathe::kernels

#else
namespace lathe::kernels {
const TileSet* tiles_avx2() { return nullptr; }
}  // namespace lathe::kernels
#endif
