// The AVX-512 microkernels of quantized_panels.h. Compiled with a target
// attribute per function (not a per-file -mavx512f, which would let the
// compiler put AVX-512 code into inline functions the rest of the library
// shares); only called after simd::best_isa() saw the CPU support it.
//
// One zmm holds the 16 outputs of a panel for one row of x. Weights are
// widened to float once per k and used by every row of the block; rows come
// in blocks of up to 8 (8 accumulators); with fewer rows, several
// accumulator sets over k keep enough independent FMA chains in flight.
#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include "lathe/runtime/kernels/quantized_panels.h"

#define LATHE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

// GCC 12 reports the undefined pass-through operand its own avx512 headers
// give the unmasked intrinsics as "may be used uninitialized".
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace lathe::kernels::qpanels {

namespace {

// Sums the U accumulator sets of row r.
template <int U, int MR>
LATHE_AVX512 inline __m512 reduce_sets(const __m512 (&acc)[U][MR], int r) {
  __m512 s = acc[0][r];
#pragma GCC unroll 4
  for (int u = 1; u < U; ++u) s = _mm512_add_ps(s, acc[u][r]);
  return s;
}

// Widens the 16 int8 weights of one k.
LATHE_AVX512 inline __m512 int8_weights(const int8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

// MR rows x one int8 panel; U accumulator sets take turns over k.
template <int MR, int U>
LATHE_AVX512 void int8_rows(const int8_t* w, int64_t K, const float* x, int64_t ldx, const float* scales, float* out,
                            int64_t ldo, __mmask16 mask) {
  __m512 acc[U][MR];
#pragma GCC unroll 32
  for (int i = 0; i < U * MR; ++i) acc[i / MR][i % MR] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + U <= K; k += U) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      const __m512 wv = int8_weights(w + (k + u) * kPanel);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) acc[u][r] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * ldx + k + u]), wv, acc[u][r]);
    }
  }
  for (; k < K; ++k) {
    const __m512 wv = int8_weights(w + k * kPanel);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) acc[0][r] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * ldx + k]), wv, acc[0][r]);
  }
  const __m512 s = _mm512_maskz_loadu_ps(mask, scales);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) _mm512_mask_storeu_ps(out + r * ldo, mask, _mm512_mul_ps(reduce_sets(acc, r), s));
}

// MR rows x one 4-bit panel. A 16-word vector holds 8 k per channel, one
// nibble apart: each shift by 4 exposes the next k in the low bits, and
// vpermps (which reads only the low 4 bits of each index) maps u to u - 8.
template <int MR, int U>
LATHE_AVX512 void int4_rows(const Int4Panels& w, const uint32_t* data, const float* scales, const float* zeros,
                            const float* x, int64_t ldx, const float* xsum, float* out, int64_t ldo, __mmask16 mask) {
  const __m512 lut = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  const int64_t groups = w.groups(), steps = w.group / 8;
  __m512 total[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) total[r] = _mm512_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    __m512 acc[U][MR];
#pragma GCC unroll 32
    for (int i = 0; i < U * MR; ++i) acc[i / MR][i % MR] = _mm512_setzero_ps();
    for (int64_t s = g * steps; s < (g + 1) * steps; ++s) {
      __m512i v = _mm512_load_si512(data + s * kPanel);
      const float* xk = x + s * 8;
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const __m512 wj = _mm512_permutexvar_ps(v, lut);
        v = _mm512_srli_epi32(v, 4);
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) acc[j % U][r] = _mm512_fmadd_ps(_mm512_set1_ps(xk[r * ldx + j]), wj, acc[j % U][r]);
      }
    }
    const __m512 sc = _mm512_loadu_ps(scales + g * kPanel), z = _mm512_loadu_ps(zeros + g * kPanel);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      total[r] = _mm512_fmadd_ps(reduce_sets(acc, r), sc, total[r]);
      total[r] = _mm512_fmadd_ps(_mm512_set1_ps(xsum[r * groups + g]), z, total[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) _mm512_mask_storeu_ps(out + r * ldo, mask, total[r]);
}

LATHE_AVX512 inline __mmask16 width_mask(int64_t width) {
  return static_cast<__mmask16>(width >= 16 ? 0xFFFF : (1u << width) - 1);
}

}  // namespace

LATHE_AVX512 void int8_panel_avx512(const Int8Panels& w, int64_t panel, const float* scales, const PanelRows& rows) {
  const int8_t* base = reinterpret_cast<const int8_t*>(w.data.data()) + panel * w.k * kPanel;
  const __mmask16 mask = width_mask(rows.width);
  const int64_t K = w.k, ldx = rows.ldx, ldo = rows.ldo;
  int64_t r = 0;
  for (; r + 8 <= rows.m; r += 8) int8_rows<8, 1>(base, K, rows.x + r * ldx, ldx, scales, rows.out + r * ldo, ldo, mask);
  const float* x = rows.x + r * ldx;
  float* out = rows.out + r * ldo;
  switch (rows.m - r) {
    case 1: int8_rows<1, 4>(base, K, x, ldx, scales, out, ldo, mask); break;
    case 2: int8_rows<2, 2>(base, K, x, ldx, scales, out, ldo, mask); break;
    case 3: int8_rows<3, 2>(base, K, x, ldx, scales, out, ldo, mask); break;
    case 4: int8_rows<4, 1>(base, K, x, ldx, scales, out, ldo, mask); break;
    case 5: int8_rows<5, 1>(base, K, x, ldx, scales, out, ldo, mask); break;
    case 6: int8_rows<6, 1>(base, K, x, ldx, scales, out, ldo, mask); break;
    case 7: int8_rows<7, 1>(base, K, x, ldx, scales, out, ldo, mask); break;
    default: break;
  }
}

LATHE_AVX512 void int4_panel_avx512(const Int4Panels& w, int64_t panel, const float* xsum, const PanelRows& rows) {
  const int64_t groups = w.groups();
  const uint32_t* data = reinterpret_cast<const uint32_t*>(w.data.data()) + panel * (w.k / 8) * kPanel;
  const float* sc = w.scales.data() + panel * groups * kPanel;
  const float* z = w.zeros.data() + panel * groups * kPanel;
  const __mmask16 mask = width_mask(rows.width);
  const int64_t ldx = rows.ldx, ldo = rows.ldo;
  int64_t r = 0;
  for (; r + 8 <= rows.m; r += 8) {
    int4_rows<8, 1>(w, data, sc, z, rows.x + r * ldx, ldx, xsum + r * groups, rows.out + r * ldo, ldo, mask);
  }
  const float* x = rows.x + r * ldx;
  const float* xs = xsum + r * groups;
  float* out = rows.out + r * ldo;
  switch (rows.m - r) {
    case 1: int4_rows<1, 4>(w, data, sc, z, x, ldx, xs, out, ldo, mask); break;
    case 2: int4_rows<2, 2>(w, data, sc, z, x, ldx, xs, out, ldo, mask); break;
    case 3: int4_rows<3, 2>(w, data, sc, z, x, ldx, xs, out, ldo, mask); break;
    case 4: int4_rows<4, 1>(w, data, sc, z, x, ldx, xs, out, ldo, mask); break;
    case 5: int4_rows<5, 1>(w, data, sc, z, x, ldx, xs, out, ldo, mask); break;
    case 6: int4_rows<6, 1>(w, data, sc, z, x, ldx, xs, out, ldo, mask); break;
    case 7: int4_rows<7, 1>(w, data, sc, z, x, ldx, xs, out, ldo, mask); break;
    default: break;
  }
}

}  // namespace lathe::kernels::qpanels

#endif  // x86-64
