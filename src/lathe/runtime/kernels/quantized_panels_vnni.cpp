// The AVX-512 VNNI microkernel of quantized_panels.h: int8 activations
// (as u8 = q + 128) against an Int8VnniPanels weight. One vpdpbusd takes a
// 64-byte line (16 channels x 4 k) and the 4 activation bytes of those k,
// broadcast, and adds 16 four-term dot products to 16 int32 lanes; the sums
// are exact, so every path gives the same integers. Only called after
// simd::best_isa() reported avx512_vnni (function target attributes, as in
// quantized_panels_avx512.cpp).
#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <cstring>

#include "lathe/runtime/kernels/quantized_panels.h"

#define LATHE_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

// As in quantized_panels_avx512.cpp (GCC 12's pass-through operands).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace lathe::kernels::qpanels {

namespace {

LATHE_VNNI inline __m512i broadcast4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// MR rows x one panel; U accumulator sets take turns over the k steps
// (vpdpbusd's latency needs several independent sums in flight).
template <int MR, int U>
LATHE_VNNI void vnni_rows(const int8_t* w, int64_t k4, const uint8_t* x, int64_t ldx, const int32_t* offsets,
                          const float* row_scales, const float* scales, float* out, int64_t ldo, __mmask16 mask) {
  __m512i acc[U][MR];
#pragma GCC unroll 32
  for (int i = 0; i < U * MR; ++i) acc[i / MR][i % MR] = _mm512_setzero_si512();
  int64_t t = 0;
  for (; t + U <= k4; t += U) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      const __m512i wv = _mm512_load_si512(w + (t + u) * kPanel * 4);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) acc[u][r] = _mm512_dpbusd_epi32(acc[u][r], broadcast4(x + r * ldx + (t + u) * 4), wv);
    }
  }
  for (; t < k4; ++t) {
    const __m512i wv = _mm512_load_si512(w + t * kPanel * 4);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) acc[0][r] = _mm512_dpbusd_epi32(acc[0][r], broadcast4(x + r * ldx + t * 4), wv);
  }
  const __m512i off = _mm512_maskz_loadu_epi32(mask, offsets);
  const __m512 s = _mm512_maskz_loadu_ps(mask, scales);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    __m512i a = acc[0][r];
#pragma GCC unroll 4
    for (int u = 1; u < U; ++u) a = _mm512_add_epi32(a, acc[u][r]);
    // float(acc - offsets) * row scale * scales, in that order (as torchao).
    const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(a, off)), _mm512_set1_ps(row_scales[r]));
    _mm512_mask_storeu_ps(out + r * ldo, mask, _mm512_mul_ps(f, s));
  }
}

}  // namespace

LATHE_VNNI void vnni_panel_avx512(const Int8VnniPanels& w, int64_t panel, const float* scales,
                                  const QuantizedRows& rows) {
  const int8_t* base = reinterpret_cast<const int8_t*>(w.data.data()) + panel * w.k4 * kPanel * 4;
  const int32_t* off = w.offsets.data() + panel * kPanel;
  const __mmask16 mask = static_cast<__mmask16>(rows.width >= 16 ? 0xFFFF : (1u << rows.width) - 1);
  const int64_t ldx = rows.ldx, ldo = rows.ldo, k4 = w.k4;
  int64_t r = 0;
  for (; r + 8 <= rows.m; r += 8) {
    vnni_rows<8, 1>(base, k4, rows.x + r * ldx, ldx, off, rows.row_scales + r, scales, rows.out + r * ldo, ldo, mask);
  }
  const uint8_t* x = rows.x + r * ldx;
  const float* rs = rows.row_scales + r;
  float* out = rows.out + r * ldo;
  switch (rows.m - r) {
    case 1: vnni_rows<1, 4>(base, k4, x, ldx, off, rs, scales, out, ldo, mask); break;
    case 2: vnni_rows<2, 2>(base, k4, x, ldx, off, rs, scales, out, ldo, mask); break;
    case 3: vnni_rows<3, 2>(base, k4, x, ldx, off, rs, scales, out, ldo, mask); break;
    case 4: vnni_rows<4, 1>(base, k4, x, ldx, off, rs, scales, out, ldo, mask); break;
    case 5: vnni_rows<5, 1>(base, k4, x, ldx, off, rs, scales, out, ldo, mask); break;
    case 6: vnni_rows<6, 1>(base, k4, x, ldx, off, rs, scales, out, ldo, mask); break;
    case 7: vnni_rows<7, 1>(base, k4, x, ldx, off, rs, scales, out, ldo, mask); break;
    default: break;
  }
}

}  // namespace lathe::kernels::qpanels

#endif  // x86-64
