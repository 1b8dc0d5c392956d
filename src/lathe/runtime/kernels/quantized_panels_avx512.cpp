// The AVX-512 microkernels of quantized_panels.h. Compiled with a target
// attribute per function (not a per-file -mavx512f, which would let the
// compiler put AVX-512 code into inline functions the rest of the library
// shares); only called after simd::best_isa() saw the CPU support it.
//
// One zmm holds the 16 outputs of a panel for one row of x. Weights are
// widened to float once per k and used by every row of the block. Panels
// go four at a time where the registers allow (four weight streams, one
// load of x for 64 outputs): int8 always, rows in blocks of 6; 4-bit for up
// to 3 rows, else one panel at a time with rows in blocks of 8.
#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include "lathe/runtime/kernels/quantized_panels.h"

#define LATHE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

// GCC 12 reports the undefined pass-through operand its own avx512 headers
// give the unmasked intrinsics as "may be used uninitialized".
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

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

// One k of int8_tile: NP widened weight vectors, MR broadcasts of x.
template <int MR, int NP>
LATHE_AVX512 inline void int8_step(const int8_t* w, int64_t panel_stride, int64_t k, const float* x, int64_t ldx,
                                   __m512 (&acc)[MR][NP]) {
  __m512 wv[NP];
#pragma GCC unroll 4
  for (int p = 0; p < NP; ++p) wv[p] = int8_weights(w + p * panel_stride + k * kPanel);
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    const __m512 xb = _mm512_set1_ps(x[r * ldx + k]);
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) acc[r][p] = _mm512_fmadd_ps(xb, wv[p], acc[r][p]);
  }
}

// How far ahead (64-byte lines, 4 k each) a GEMV's panel streams are
// prefetched: with one or two rows the tile does too little per line for
// the hardware prefetcher alone to keep four streams in flight (1x4096x4096
// ran at 73-79% of the read bandwidth without it; TinyLlama int8 decode
// 50.5-55.4 -> 49.4-50.4 ms at 1 thread, 30.8-39.7 -> 27.6-35.2 at 2 with 8
// lines, 4 in between).
constexpr int64_t kInt8PrefetchLines = 8;

// MR rows x NP panels (a group): one widened weight vector per panel and
// one broadcast of x per row for each k, MR * NP independent sums.
template <int MR, int NP>
LATHE_AVX512 void int8_tile(const int8_t* w, int64_t panel_stride, int64_t K, const float* x, int64_t ldx,
                            const float* scales, float* out, int64_t ldo, __mmask16 last) {
  __m512 acc[MR][NP];
#pragma GCC unroll 24
  for (int i = 0; i < MR * NP; ++i) acc[i / NP][i % NP] = _mm512_setzero_ps();
  int64_t k = 0;
  if constexpr (MR <= 2 && kInt8PrefetchLines > 0) {
    constexpr int64_t kPerLine = 64 / kPanel;
    for (; k + kPerLine <= K; k += kPerLine) {
#pragma GCC unroll 4
      for (int p = 0; p < NP; ++p) {
        _mm_prefetch(reinterpret_cast<const char*>(w + p * panel_stride + (k + kInt8PrefetchLines * kPerLine) * kPanel),
                     _MM_HINT_T0);
      }
#pragma GCC unroll 4
      for (int64_t j = 0; j < kPerLine; ++j) int8_step<MR, NP>(w, panel_stride, k + j, x, ldx, acc);
    }
  }
  for (; k < K; ++k) int8_step<MR, NP>(w, panel_stride, k, x, ldx, acc);
#pragma GCC unroll 4
  for (int p = 0; p < NP; ++p) {
    const __mmask16 mask = p + 1 == NP ? last : static_cast<__mmask16>(0xFFFF);
    const __m512 s = _mm512_maskz_loadu_ps(mask, scales + p * kPanel);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) _mm512_mask_storeu_ps(out + r * ldo + p * kPanel, mask, _mm512_mul_ps(acc[r][p], s));
  }
}

// Every row of `rows` against a group of NP panels, in blocks of 6 rows
// (6 x 4 accumulators, 4 weight vectors and a broadcast: 29 of 32 registers).
template <int NP>
LATHE_AVX512 void int8_group(const int8_t* w, int64_t panel_stride, int64_t K, const float* scales,
                             const PanelRows& rows, __mmask16 last) {
  for_row_blocks<6>(rows.m, [&](auto mr, int64_t r) {
    constexpr int MR = decltype(mr)::value;
    int8_tile<MR, NP>(w, panel_stride, K, rows.x + r * rows.ldx, rows.ldx, scales, rows.out + r * rows.ldo, rows.ldo,
                      last);
  });
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

// MR (<= 3) rows x four panels: the few-row case (a GEMV), where four
// weight streams and one broadcast of x per k for 64 outputs matter more
// than the rows a block shares.
template <int MR>
LATHE_AVX512 void int4_group4(const Int4Panels& w, int64_t panel, const float* x, int64_t ldx, const float* xsum,
                              float* out, int64_t ldo, __mmask16 last) {
  constexpr int NP = 4;
  const __m512 lut = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  const int64_t groups = w.groups(), steps = w.group / 8, stride = (w.k / 8) * kPanel;
  const uint32_t* data = reinterpret_cast<const uint32_t*>(w.data.data()) + panel * stride;
  const float* sc = w.scales.data() + panel * groups * kPanel;
  const float* z = w.zeros.data() + panel * groups * kPanel;
  __m512 total[MR][NP];
#pragma GCC unroll 12
  for (int i = 0; i < MR * NP; ++i) total[i / NP][i % NP] = _mm512_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    __m512 acc[MR][NP];
#pragma GCC unroll 12
    for (int i = 0; i < MR * NP; ++i) acc[i / NP][i % NP] = _mm512_setzero_ps();
    for (int64_t s = g * steps; s < (g + 1) * steps; ++s) {
      __m512i v[NP];
#pragma GCC unroll 4
      for (int p = 0; p < NP; ++p) v[p] = _mm512_load_si512(data + p * stride + s * kPanel);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
#pragma GCC unroll 4
        for (int p = 0; p < NP; ++p) {
          const __m512 wj = _mm512_permutexvar_ps(v[p], lut);
          v[p] = _mm512_srli_epi32(v[p], 4);
#pragma GCC unroll 3
          for (int r = 0; r < MR; ++r) acc[r][p] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * ldx + s * 8 + j]), wj, acc[r][p]);
        }
      }
    }
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) {
      const __m512 scale = _mm512_loadu_ps(sc + (p * groups + g) * kPanel), zero = _mm512_loadu_ps(z + (p * groups + g) * kPanel);
#pragma GCC unroll 3
      for (int r = 0; r < MR; ++r) {
        total[r][p] = _mm512_fmadd_ps(acc[r][p], scale, total[r][p]);
        total[r][p] = _mm512_fmadd_ps(_mm512_set1_ps(xsum[r * groups + g]), zero, total[r][p]);
      }
    }
  }
#pragma GCC unroll 4
  for (int p = 0; p < NP; ++p) {
    const __mmask16 mask = p + 1 == NP ? last : static_cast<__mmask16>(0xFFFF);
#pragma GCC unroll 3
    for (int r = 0; r < MR; ++r) _mm512_mask_storeu_ps(out + r * ldo + p * kPanel, mask, total[r][p]);
  }
}

// Every row against one 4-bit panel, in blocks of 8 rows; a single row
// takes turns over 4 accumulator sets, 2 or 3 rows over 2.
LATHE_AVX512 void int4_panel(const Int4Panels& w, int64_t panel, const float* xsum, const PanelRows& rows,
                             __mmask16 mask) {
  const int64_t groups = w.groups();
  const uint32_t* data = reinterpret_cast<const uint32_t*>(w.data.data()) + panel * (w.k / 8) * kPanel;
  const float* sc = w.scales.data() + panel * groups * kPanel;
  const float* z = w.zeros.data() + panel * groups * kPanel;
  for_row_blocks<8>(rows.m, [&](auto mr, int64_t r) {
    constexpr int MR = decltype(mr)::value;
    constexpr int U = MR == 1 ? 4 : MR <= 3 ? 2 : 1;
    int4_rows<MR, U>(w, data, sc, z, rows.x + r * rows.ldx, rows.ldx, xsum + r * groups, rows.out + r * rows.ldo,
                     rows.ldo, mask);
  });
}

LATHE_AVX512 inline __mmask16 width_mask(int64_t width) {
  return static_cast<__mmask16>(width >= 16 ? 0xFFFF : (1u << width) - 1);
}

}  // namespace

LATHE_AVX512 void int8_panel_avx512(const Int8Panels& w, int64_t panel, int64_t count, const float* scales,
                                    const PanelRows& rows) {
  const int8_t* base = reinterpret_cast<const int8_t*>(w.data.data()) + panel * w.k * kPanel;
  const int64_t stride = w.k * kPanel;
  const __mmask16 last = width_mask(rows.width);
  switch (count) {
    case 1: int8_group<1>(base, stride, w.k, scales, rows, last); break;
    case 2: int8_group<2>(base, stride, w.k, scales, rows, last); break;
    case 3: int8_group<3>(base, stride, w.k, scales, rows, last); break;
    default: int8_group<4>(base, stride, w.k, scales, rows, last); break;
  }
}

LATHE_AVX512 void int4_panel_avx512(const Int4Panels& w, int64_t panel, int64_t count, const float* xsum,
                                    const PanelRows& rows) {
  const __mmask16 last = width_mask(rows.width);
  if (count == kPanelGroup && rows.m <= 3) {
    for_row_blocks<3>(rows.m, [&](auto mr, int64_t) {
      constexpr int MR = decltype(mr)::value;
      int4_group4<MR>(w, panel, rows.x, rows.ldx, xsum, rows.out, rows.ldo, last);
    });
    return;
  }
  for (int64_t c = 0; c < count; ++c) {
    PanelRows one = rows;
    one.out = rows.out + c * kPanel;
    int4_panel(w, panel + c, xsum, one, c + 1 == count ? last : static_cast<__mmask16>(0xFFFF));
  }
}

}  // namespace lathe::kernels::qpanels

#endif  // x86-64
