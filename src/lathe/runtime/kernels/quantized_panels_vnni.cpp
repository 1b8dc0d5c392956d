// The AVX-512 VNNI microkernel of quantized_panels.h: int8 activations
// (as u8 = q + 128) against an Int8VnniPanels weight. One vpdpbusd takes a
// 64-byte line (16 channels x 4 k) and the 4 activation bytes of those k,
// broadcast, and adds 16 four-term dot products to 16 int32 lanes; the sums
// are exact, so every path gives the same integers. Panels go two at a
// time, rows in blocks of 8. Only called after
// simd::best_isa() reported avx512_vnni (function target attributes, as in
// quantized_panels_avx512.cpp).
#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <cstring>

#include "lathe/runtime/kernels/quantized_panels.h"

#define LATHE_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

// As in quantized_panels_avx512.cpp (GCC 12's pass-through operands).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace lathe::kernels::qpanels {

namespace {

LATHE_VNNI inline __m512i broadcast4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// acc += u8 x s8 dot products of 4. An asm statement, not the intrinsic:
// GCC 12 copies every accumulator to a new register around each
// _mm512_dpbusd_epi32 in a loop (twice the instructions); tied in place
// here, the accumulators stay put.
[[gnu::always_inline]] LATHE_VNNI inline void dpbusd(__m512i& acc, __m512i a, __m512i b) {
#if defined(__clang__)
  acc = _mm512_dpbusd_epi32(acc, a, b);
#else
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
#endif
}

// MR rows x NP panels; U accumulator sets take turns over the k steps
// (vpdpbusd's latency needs several independent sums in flight; with a
// single row and panel, U = 4). Each broadcast of 4 activation bytes feeds
// the NP panels.
template <int MR, int NP, int U>
LATHE_VNNI void vnni_tile(const int8_t* w, int64_t panel_stride, int64_t k4, const uint8_t* x, int64_t ldx,
                          const int32_t* offsets, const float* row_scales, const float* scales, float* out,
                          int64_t ldo, __mmask16 last) {
  constexpr int A = MR * NP;
  __m512i acc[U * A];
#pragma GCC unroll 32
  for (int i = 0; i < U * A; ++i) acc[i] = _mm512_setzero_si512();
  int64_t t = 0;
  for (; t + U <= k4; t += U) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      __m512i wv[NP];
#pragma GCC unroll 2
      for (int p = 0; p < NP; ++p) wv[p] = _mm512_load_si512(w + p * panel_stride + (t + u) * kPanel * 4);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m512i xb = broadcast4(x + r * ldx + (t + u) * 4);
#pragma GCC unroll 2
        for (int p = 0; p < NP; ++p) dpbusd(acc[u * A + r * NP + p], xb, wv[p]);
      }
    }
  }
  for (; t < k4; ++t) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512i xb = broadcast4(x + r * ldx + t * 4);
#pragma GCC unroll 2
      for (int p = 0; p < NP; ++p) {
        dpbusd(acc[r * NP + p], xb, _mm512_load_si512(w + p * panel_stride + t * kPanel * 4));
      }
    }
  }
#pragma GCC unroll 2
  for (int p = 0; p < NP; ++p) {
    const __mmask16 mask = p + 1 == NP ? last : static_cast<__mmask16>(0xFFFF);
    const __m512i off = _mm512_maskz_loadu_epi32(mask, offsets + p * kPanel);
    const __m512 s = _mm512_maskz_loadu_ps(mask, scales + p * kPanel);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      __m512i a = acc[r * NP + p];
#pragma GCC unroll 4
      for (int v = 1; v < U; ++v) a = _mm512_add_epi32(a, acc[v * A + r * NP + p]);
      // float(acc - offsets) * row scale * scales, in that order (as torchao).
      const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(a, off)), _mm512_set1_ps(row_scales[r]));
      _mm512_mask_storeu_ps(out + r * ldo + p * kPanel, mask, _mm512_mul_ps(f, s));
    }
  }
}

// Every row against NP (1 or 2) panels, in blocks of 8 rows (16
// accumulators, 2 weight vectors, a broadcast).
template <int NP>
LATHE_VNNI void vnni_panels(const Int8VnniPanels& w, int64_t panel, const float* scales, const QuantizedRows& rows,
                            __mmask16 last) {
  const int8_t* base = reinterpret_cast<const int8_t*>(w.data.data()) + panel * w.k4 * kPanel * 4;
  const int32_t* off = w.offsets.data() + panel * kPanel;
  for_row_blocks<8>(rows.m, [&](auto mr, int64_t r) {
    constexpr int MR = decltype(mr)::value;
    constexpr int U = MR * NP == 1 ? 4 : MR * NP <= 3 ? 2 : 1;
    vnni_tile<MR, NP, U>(base, w.k4 * kPanel * 4, w.k4, rows.x + r * rows.ldx, rows.ldx, off, rows.row_scales + r,
                         scales, rows.out + r * rows.ldo, rows.ldo, last);
  });
}

}  // namespace

LATHE_VNNI void vnni_panel_avx512(const Int8VnniPanels& w, int64_t panel, int64_t count, const float* scales,
                                  const QuantizedRows& rows) {
  const __mmask16 last = static_cast<__mmask16>(rows.width >= 16 ? 0xFFFF : (1u << rows.width) - 1);
  for (int64_t c = 0; c < count; c += 2) {
    QuantizedRows pair = rows;
    pair.out = rows.out + c * kPanel;
    const bool final_pair = c + 2 >= count;
    if (count - c >= 2) {
      vnni_panels<2>(w, panel + c, scales + c * kPanel, pair, final_pair ? last : static_cast<__mmask16>(0xFFFF));
    } else {
      vnni_panels<1>(w, panel + c, scales + c * kPanel, pair, last);
    }
  }
}

}  // namespace lathe::kernels::qpanels

#endif  // x86-64
