// The AVX2 + FMA microkernels of quantized_panels.h (function target
// attributes, as in the AVX-512 file). A panel's 16 outputs are two ymm per
// row of x; rows come in blocks of up to 6 (12 accumulators of 16
// registers), and a single row alternates accumulator sets over k.
#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <algorithm>

#include "lathe/runtime/kernels/quantized_panels.h"

#define LATHE_AVX2 __attribute__((target("avx2,fma")))

namespace lathe::kernels::qpanels {

namespace {

// The outputs of one row: all 16 lanes, or the first `width` through a copy.
LATHE_AVX2 inline void store_row(float* out, int64_t width, __m256 lo, __m256 hi) {
  if (width >= kPanel) {
    _mm256_storeu_ps(out, lo);
    _mm256_storeu_ps(out + 8, hi);
    return;
  }
  alignas(32) float tmp[kPanel];
  _mm256_store_ps(tmp, lo);
  _mm256_store_ps(tmp + 8, hi);
  std::copy(tmp, tmp + width, out);
}

LATHE_AVX2 inline __m256 int8_weights(const int8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

template <int MR, int U>
LATHE_AVX2 void int8_rows(const int8_t* w, int64_t K, const float* x, int64_t ldx, const float* scales, float* out,
                          int64_t ldo, int64_t width) {
  __m256 acc[U][MR][2];
#pragma GCC unroll 24
  for (int i = 0; i < U * MR * 2; ++i) acc[i / (2 * MR)][(i / 2) % MR][i % 2] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + U <= K; k += U) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      const __m256 lo = int8_weights(w + (k + u) * kPanel), hi = int8_weights(w + (k + u) * kPanel + 8);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m256 xv = _mm256_broadcast_ss(x + r * ldx + k + u);
        acc[u][r][0] = _mm256_fmadd_ps(xv, lo, acc[u][r][0]);
        acc[u][r][1] = _mm256_fmadd_ps(xv, hi, acc[u][r][1]);
      }
    }
  }
  for (; k < K; ++k) {
    const __m256 lo = int8_weights(w + k * kPanel), hi = int8_weights(w + k * kPanel + 8);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 xv = _mm256_broadcast_ss(x + r * ldx + k);
      acc[0][r][0] = _mm256_fmadd_ps(xv, lo, acc[0][r][0]);
      acc[0][r][1] = _mm256_fmadd_ps(xv, hi, acc[0][r][1]);
    }
  }
  alignas(32) float s[kPanel] = {};
  std::copy(scales, scales + std::min<int64_t>(width, kPanel), s);
  const __m256 s_lo = _mm256_load_ps(s), s_hi = _mm256_load_ps(s + 8);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    __m256 lo = acc[0][r][0], hi = acc[0][r][1];
#pragma GCC unroll 4
    for (int u = 1; u < U; ++u) {
      lo = _mm256_add_ps(lo, acc[u][r][0]);
      hi = _mm256_add_ps(hi, acc[u][r][1]);
    }
    store_row(out + r * ldo, width, _mm256_mul_ps(lo, s_lo), _mm256_mul_ps(hi, s_hi));
  }
}

// 8 channels' nibble words -> the float (u - 8) of the current k; then
// advances the words to the next k.
LATHE_AVX2 inline __m256 next_int4(__m256i& v) {
  const __m256 u = _mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(0xF)));
  v = _mm256_srli_epi32(v, 4);
  return _mm256_sub_ps(u, _mm256_set1_ps(8.0f));
}

template <int MR>
LATHE_AVX2 void int4_rows(const Int4Panels& w, const uint32_t* data, const float* scales, const float* zeros,
                          const float* x, int64_t ldx, const float* xsum, float* out, int64_t ldo, int64_t width) {
  const int64_t groups = w.groups(), steps = w.group / 8;
  __m256 total[MR][2];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) total[r][0] = total[r][1] = _mm256_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    __m256 acc[MR][2];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t s = g * steps; s < (g + 1) * steps; ++s) {
      __m256i lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(data + s * kPanel));
      __m256i hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(data + s * kPanel + 8));
      const float* xk = x + s * 8;
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const __m256 wl = next_int4(lo), wh = next_int4(hi);
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          const __m256 xv = _mm256_broadcast_ss(xk + r * ldx + j);
          acc[r][0] = _mm256_fmadd_ps(xv, wl, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(xv, wh, acc[r][1]);
        }
      }
    }
    const float* sc = scales + g * kPanel;
    const float* z = zeros + g * kPanel;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 xs = _mm256_broadcast_ss(xsum + r * groups + g);
      for (int h = 0; h < 2; ++h) {
        total[r][h] = _mm256_fmadd_ps(acc[r][h], _mm256_loadu_ps(sc + 8 * h), total[r][h]);
        total[r][h] = _mm256_fmadd_ps(xs, _mm256_loadu_ps(z + 8 * h), total[r][h]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) store_row(out + r * ldo, width, total[r][0], total[r][1]);
}

}  // namespace

LATHE_AVX2 void int8_panel_avx2(const Int8Panels& w, int64_t panel, const float* scales, const PanelRows& rows) {
  const int8_t* base = reinterpret_cast<const int8_t*>(w.data.data()) + panel * w.k * kPanel;
  const int64_t K = w.k, ldx = rows.ldx, ldo = rows.ldo, width = rows.width;
  int64_t r = 0;
  for (; r + 6 <= rows.m; r += 6) int8_rows<6, 1>(base, K, rows.x + r * ldx, ldx, scales, rows.out + r * ldo, ldo, width);
  const float* x = rows.x + r * ldx;
  float* out = rows.out + r * ldo;
  switch (rows.m - r) {
    case 1: int8_rows<1, 3>(base, K, x, ldx, scales, out, ldo, width); break;
    case 2: int8_rows<2, 2>(base, K, x, ldx, scales, out, ldo, width); break;
    case 3: int8_rows<3, 1>(base, K, x, ldx, scales, out, ldo, width); break;
    case 4: int8_rows<4, 1>(base, K, x, ldx, scales, out, ldo, width); break;
    case 5: int8_rows<5, 1>(base, K, x, ldx, scales, out, ldo, width); break;
    default: break;
  }
}

LATHE_AVX2 void int4_panel_avx2(const Int4Panels& w, int64_t panel, const float* xsum, const PanelRows& rows) {
  const int64_t groups = w.groups();
  const uint32_t* data = reinterpret_cast<const uint32_t*>(w.data.data()) + panel * (w.k / 8) * kPanel;
  const float* sc = w.scales.data() + panel * groups * kPanel;
  const float* z = w.zeros.data() + panel * groups * kPanel;
  const int64_t ldx = rows.ldx, ldo = rows.ldo, width = rows.width;
  int64_t r = 0;
  for (; r + 4 <= rows.m; r += 4) {
    int4_rows<4>(w, data, sc, z, rows.x + r * ldx, ldx, xsum + r * groups, rows.out + r * ldo, ldo, width);
  }
  const float* x = rows.x + r * ldx;
  const float* xs = xsum + r * groups;
  float* out = rows.out + r * ldo;
  switch (rows.m - r) {
    case 1: int4_rows<1>(w, data, sc, z, x, ldx, xs, out, ldo, width); break;
    case 2: int4_rows<2>(w, data, sc, z, x, ldx, xs, out, ldo, width); break;
    case 3: int4_rows<3>(w, data, sc, z, x, ldx, xs, out, ldo, width); break;
    default: break;
  }
}

}  // namespace lathe::kernels::qpanels

#endif  // x86-64
