// AVX-512 tiles: 8 rows x 32 columns (two zmm per row), 16 accumulators;
// and 8 x 16 for narrow products.
//
// Why 8x32: per k step it is 2 panel loads and 8 broadcasts for 16 FMAs,
// which two FMA ports finish in 8 cycles, well inside what two load ports
// deliver; 16 independent accumulators cover the FMA latency (4 cycles x 2
// ports). A kc x 32 panel block of 256 k steps is 32 KiB, so it stays in
// L1 while the row tiles of A walk past it. A 6x64 tile (24 accumulators)
// measured slower on the 64 x 4096 x 4096 linear. Columns past the matrix
// edge are masked, so the edge costs no scratch copy.
#include "lathe/runtime/kernels/gemm_tiles.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <algorithm>

// GCC 12's _mm512_min_ps/_mm512_max_ps pass an "undefined" vector it then
// warns about; nothing is read from it.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define LATHE_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma")))

namespace lathe::kernels {

namespace {

LATHE_AVX512 inline __mmask16 column_mask(int nr, int v) {
  const int left = nr - 16 * v;
  if (left >= 16) return static_cast<__mmask16>(0xFFFF);
  if (left <= 0) return static_cast<__mmask16>(0);
  return static_cast<__mmask16>((1u << left) - 1);
}

// MR rows x 16 * kNv columns.
template <int MR, int kNv>
LATHE_AVX512 void tile(const TileArgs& p) {
  constexpr int kNr = 16 * kNv;
  __mmask16 mask[kNv];
  for (int v = 0; v < kNv; ++v) mask[v] = column_mask(p.nr, v);
  __m512 acc[MR][kNv];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) {
      if (p.accumulate) acc[r][v] = _mm512_mask_loadu_ps(_mm512_setzero_ps(), mask[v], p.c + r * p.ldc + 16 * v);
      else if (p.bias) acc[r][v] = _mm512_mask_loadu_ps(_mm512_setzero_ps(), mask[v], p.bias + 16 * v);
      else acc[r][v] = _mm512_setzero_ps();
    }
  }
  const float* a[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) a[r] = p.a + r * p.lda;
  const float* b = p.b;
#pragma GCC unroll 2
  for (int64_t k = 0; k < p.kc; ++k) {
    __m512 bv[kNv];
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
    // Into L2, not L1: the next panel's lines arrive while this tile and
    // the ones after it use the current panel (the best of none, into L1,
    // into L2, and two panels ahead, on the 64 x 4096 x 4096 linear).
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) _mm_prefetch(reinterpret_cast<const char*>(p.prefetch + k * kNr + 16 * v), _MM_HINT_T1);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(a[r][k]);
#pragma GCC unroll 4
      for (int v = 0; v < kNv; ++v) acc[r][v] = _mm512_fmadd_ps(x, bv[v], acc[r][v]);
    }
    b += kNr;
  }
  if (p.clamp) {
    const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < kNv; ++v) acc[r][v] = _mm512_min_ps(_mm512_max_ps(acc[r][v], lo), hi);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) _mm512_mask_storeu_ps(p.c + r * p.ldc + 16 * v, mask[v], acc[r][v]);
  }
}

// How far ahead (k steps) gemv prefetches each panel stream into L1.
constexpr int64_t kGemvPrefetchSteps = 8;

// NP panels of 16 * kNv columns at once over all K: NP * kNv accumulators,
// NP streams each prefetched kGemvPrefetchSteps rows ahead.
template <int NP, int kNv>
LATHE_AVX512 void gemv_panels(const GemvArgs& p, const float* panels, int64_t n, float* c) {
  constexpr int kNr = 16 * kNv;
  __mmask16 mask[NP][kNv];
  __m512 acc[NP][kNv];
#pragma GCC unroll 4
  for (int q = 0; q < NP; ++q) {
#pragma GCC unroll 2
    for (int v = 0; v < kNv; ++v) {
      mask[q][v] = column_mask(static_cast<int>(std::min<int64_t>(n - q * kNr, kNr)), v);
      acc[q][v] = p.bias ? _mm512_maskz_loadu_ps(mask[q][v], p.bias + (c - p.c) + q * kNr + 16 * v) : _mm512_setzero_ps();
    }
  }
  for (int64_t k = 0; k < p.K; ++k) {
    const __m512 x = _mm512_set1_ps(p.a[k]);
#pragma GCC unroll 4
    for (int q = 0; q < NP; ++q) {
      const float* b = panels + q * p.panel_stride + k * kNr;
#pragma GCC unroll 2
      for (int v = 0; v < kNv; ++v) {
        _mm_prefetch(reinterpret_cast<const char*>(b + kGemvPrefetchSteps * kNr + 16 * v), _MM_HINT_T0);
        acc[q][v] = _mm512_fmadd_ps(x, _mm512_load_ps(b + 16 * v), acc[q][v]);
      }
    }
  }
#pragma GCC unroll 4
  for (int q = 0; q < NP; ++q) {
#pragma GCC unroll 2
    for (int v = 0; v < kNv; ++v) {
      __m512 r = acc[q][v];
      if (p.clamp) r = _mm512_min_ps(_mm512_max_ps(r, _mm512_set1_ps(p.lo)), _mm512_set1_ps(p.hi));
      _mm512_mask_storeu_ps(c + q * kNr + 16 * v, mask[q][v], r);
    }
  }
}

// Panels four at a time (a GEMV needs several weight streams in flight to
// reach the memory bandwidth: one at a time, the tile path read the
// 4096 x 4096 weight at 69-84% of it), the last ones one by one.
template <int kNv>
LATHE_AVX512 void gemv(const GemvArgs& p) {
  constexpr int kNr = 16 * kNv;
  int64_t j = 0;
  for (; j + 4 * kNr <= p.n; j += 4 * kNr) gemv_panels<4, kNv>(p, p.panels + (j / kNr) * p.panel_stride, 4 * kNr, p.c + j);
  for (; j < p.n; j += kNr) {
    gemv_panels<1, kNv>(p, p.panels + (j / kNr) * p.panel_stride, std::min<int64_t>(kNr, p.n - j), p.c + j);
  }
}

const TileSet kSet = {simd::Isa::Avx512,
                      "avx512",
                      8,
                      32,
                      {nullptr, tile<1, 2>, tile<2, 2>, tile<3, 2>, tile<4, 2>, tile<5, 2>, tile<6, 2>, tile<7, 2>, tile<8, 2>},
                      gemv<2>};

// 8 x 16 for products of at most 16 columns (attention's P V with a head
// of 16), where a 32-wide tile would compute as much padding as result.
// 8 accumulators still cover the FMA latency of two ports.
const TileSet kNarrow = {simd::Isa::Avx512,
                         "avx512-n16",
                         8,
                         16,
                         {nullptr, tile<1, 1>, tile<2, 1>, tile<3, 1>, tile<4, 1>, tile<5, 1>, tile<6, 1>, tile<7, 1>, tile<8, 1>},
                         gemv<1>};

}  // namespace

const TileSet* tiles_avx512() { return &kSet; }
const TileSet* tiles_avx512_narrow() { return &kNarrow; }

}  // namespace lathe::kernels

#else
namespace lathe::kernels {
const TileSet* tiles_avx512() { return nullptr; }
const TileSet* tiles_avx512_narrow() { return nullptr; }
}  // namespace lathe::kernels
#endif
