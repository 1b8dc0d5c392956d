// The AVX-512 VNNI microkernel of quantized_panels.h: int8 activations
// (as u8 = q + 128) against an Int8VnniPanels weight. One vpdpbusd takes a
// 64-byte line (16 channels x 4 k) and the 4 activation bytes of those k,
// broadcast, and adds 16 four-term dot products to 16 int32 lanes; the sums
// are exact, so every path gives the same integers. Panels go two at a
// time, rows in blocks of 8.
//
// And the 4-bit weight-only kernel with float activations split into three
// int8 limbs (activation_limbs.h). A 64-byte line of Int4Panels (16
// channels x 8 k, one nibble each) gives two u8 vectors under a 0x0F mask,
// the even k and (shifted by 4) the odd k, each met by a broadcast of 4
// limb bytes: 3 + 2 * 3 instructions per 128 products where the float
// kernel spends 24 (a permute, a shift and an FMA per 16). Integer sums
// start at the limbs' offsets (-8 * their sum over the group: the weights
// are u - 8) and become floats once per group.
//
// Only called after simd::best_isa() reported avx512_vnni (function target
// attributes, as in quantized_panels_avx512.cpp).
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



// How far ahead (in 64-byte lines of each panel) the 4-bit kernel asks for
// weights: 4 measured best of 0/4/8/16/32 (GEMVs of 5632x2048, 4096x4096
// and 11008x4096, 7-10% over none).
constexpr int64_t kLimbPrefetchSteps = 4;

// MR rows x NP 4-bit panels from row r0 of `rows`: per group, kLimbs
// integer sums per row and panel, combined as sum_l s_l * float(sum_l),
// times the group's scale, plus its zero times the group's sum of x.
template <int MR, int NP, bool Zeros>
LATHE_VNNI void int4_limb_tile(const Int4Panels& w, int64_t panel, const LimbRows& rows, int64_t r0, __mmask16 last) {
  const ActivationLimbs& a = *rows.limbs;
  const int64_t groups = w.groups(), steps = w.group / 8, stride = (w.k / 8) * kPanel;
  const uint32_t* data = reinterpret_cast<const uint32_t*>(w.data.data()) + panel * stride;
  const float* sc = w.scales.data() + panel * groups * kPanel;
  const float* zr = w.zeros.data() + panel * groups * kPanel;
  const __m512i nibbles = _mm512_set1_epi32(0x0F0F0F0F);
  const int8_t* xr[MR];
  const float* ls[MR];
  const int32_t* lo_off[MR];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    const int64_t row = rows.row0 + r0 + r;
    xr[r] = a.bytes.data() + row * a.row_bytes();
    ls[r] = a.scales.data() + row * groups * kLimbs;
    lo_off[r] = a.offsets.data() + row * groups * kLimbs;
  }
  __m512 total[MR][NP];
#pragma GCC unroll 8
  for (int i = 0; i < MR * NP; ++i) total[i / NP][i % NP] = _mm512_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    __m512i acc[MR][NP][kLimbs];
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
      for (int l = 0; l < kLimbs; ++l) {
        const __m512i off = _mm512_set1_epi32(lo_off[r][g * kLimbs + l]);
#pragma GCC unroll 4
        for (int p = 0; p < NP; ++p) acc[r][p][l] = off;
      }
    }
    for (int64_t s = g * steps; s < (g + 1) * steps; ++s) {
      __m512i even[NP], odd[NP];
#pragma GCC unroll 4
      for (int p = 0; p < NP; ++p) {
        _mm_prefetch(reinterpret_cast<const char*>(data + p * stride + (s + kLimbPrefetchSteps) * kPanel), _MM_HINT_T0);
        const __m512i v = _mm512_load_si512(data + p * stride + s * kPanel);
        even[p] = _mm512_and_si512(v, nibbles);
        odd[p] = _mm512_and_si512(_mm512_srli_epi32(v, 4), nibbles);
      }
#pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        const int8_t* xs = xr[r] + s * kLimbs * 8;
#pragma GCC unroll 3
        for (int l = 0; l < kLimbs; ++l) {
          const __m512i xe = broadcast4(reinterpret_cast<const uint8_t*>(xs + l * 8));
          const __m512i xo = broadcast4(reinterpret_cast<const uint8_t*>(xs + l * 8 + 4));
#pragma GCC unroll 4
          for (int p = 0; p < NP; ++p) {
            dpbusd(acc[r][p][l], even[p], xe);
            dpbusd(acc[r][p][l], odd[p], xo);
          }
        }
      }
    }
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) {
      const __m512 scale = _mm512_loadu_ps(sc + (p * groups + g) * kPanel);
      const __m512 zero = Zeros ? _mm512_loadu_ps(zr + (p * groups + g) * kPanel) : _mm512_setzero_ps();
#pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        const float* s3 = ls[r] + g * kLimbs;
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][p][0]), _mm512_set1_ps(s3[0]));
        f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][p][1]), _mm512_set1_ps(s3[1]), f);
        f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][p][2]), _mm512_set1_ps(s3[2]), f);
        total[r][p] = _mm512_fmadd_ps(f, scale, total[r][p]);
        if constexpr (Zeros) total[r][p] = _mm512_fmadd_ps(_mm512_set1_ps(rows.xsum[(r0 + r) * groups + g]), zero, total[r][p]);
      }
    }
  }
#pragma GCC unroll 4
  for (int p = 0; p < NP; ++p) {
    const __mmask16 mask = p + 1 == NP ? last : static_cast<__mmask16>(0xFFFF);
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) _mm512_mask_storeu_ps(rows.out + (r0 + r) * rows.ldo + p * kPanel, mask, total[r][p]);
  }
}

// Every row against NP (1 or 2) panels, rows in pairs.
template <int NP, bool Zeros>
LATHE_VNNI void int4_limb_panels(const Int4Panels& w, int64_t panel, const LimbRows& rows, __mmask16 last) {
  for_row_blocks<2>(rows.m, [&](auto mr, int64_t r) {
    constexpr int MR = decltype(mr)::value;
    int4_limb_tile<MR, NP, Zeros>(w, panel, rows, r, last);
  });
}

// A single row (a decode step's GEMV) takes four panels at once: four
// weight streams in flight and each broadcast feeding 64 channels; more
// rows go two by two panels (3 * MR * NP accumulators fit the registers).
// Weights without zero points (Lathe's own op, symmetric schemes) skip the
// zeros: for groups of 32 they are a fifth of the bytes a GEMV streams.
template <bool Zeros>
LATHE_VNNI void int4_limbs(const Int4Panels& w, int64_t panel, int64_t count, const LimbRows& rows, __mmask16 last) {
  if (rows.m == 1 && count == kPanelGroup) {
    int4_limb_tile<1, kPanelGroup, Zeros>(w, panel, rows, 0, last);
    return;
  }
  for (int64_t c = 0; c < count; c += 2) {
    LimbRows pair = rows;
    pair.out = rows.out + c * kPanel;
    const __mmask16 mask = c + 2 >= count ? last : static_cast<__mmask16>(0xFFFF);
    if (count - c >= 2) int4_limb_panels<2, Zeros>(w, panel + c, pair, mask);
    else int4_limb_panels<1, Zeros>(w, panel + c, pair, mask);
  }
}

}  // namespace

LATHE_VNNI void int4_limbs_panel_vnni(const Int4Panels& w, int64_t panel, int64_t count, const LimbRows& rows) {
  const __mmask16 last = static_cast<__mmask16>(rows.width >= 16 ? 0xFFFF : (1u << rows.width) - 1);
  if (w.zero_points) int4_limbs<true>(w, panel, count, rows, last);
  else int4_limbs<false>(w, panel, count, rows, last);
}

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
