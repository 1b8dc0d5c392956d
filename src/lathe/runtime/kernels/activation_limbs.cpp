#include "lathe/runtime/kernels/activation_limbs.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace lathe::kernels::qpanels {

#if defined(__x86_64__) && defined(__GNUC__)

// Only the VNNI kernel reads limbs, so the split runs only where AVX-512
// does, and is written for it: a decode step splits a row before each
// linear, and a scalar loop (about 2 ns a value) took a third of the time
// of a 2048 x 2048 GEMV.
#define LATHE_LIMBS __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

// As in quantized_panels_avx512.cpp (GCC 12's pass-through operands).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace {

// Bytes of 16 consecutive k (two steps of 8) reordered so each step's 8
// are its even k, then its odd k (activation_limbs.h).
LATHE_LIMBS inline __m128i even_then_odd(__m128i q) {
  const __m128i order = _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  return _mm_shuffle_epi8(q, order);
}

// One group of row r: false where it cannot be split.
LATHE_LIMBS bool split_group(const float* xg, int64_t group, int8_t* row_bytes, int64_t k0, float* scales,
                             int32_t* offsets) {
  const __m512 sign = _mm512_set1_ps(-0.0f), inf = _mm512_set1_ps(__builtin_inff());
  __m512 largest = _mm512_setzero_ps();
  for (int64_t k = 0; k < group; k += 16) {
    const __mmask16 m = group - k >= 16 ? 0xFFFF : 0x00FF;
    const __m512 a = _mm512_andnot_ps(sign, _mm512_maskz_loadu_ps(m, xg + k));
    if (_mm512_cmp_ps_mask(a, inf, _CMP_LT_OQ) != 0xFFFF) return false;  // inf or NaN
    largest = _mm512_max_ps(largest, a);
  }
  const float top = _mm512_reduce_max_ps(largest);
  if (top == 0.0f) {
    for (int l = 0; l < kLimbs; ++l) scales[l] = 0.0f, offsets[l] = 0;
    std::memset(row_bytes + (k0 / 8) * kLimbs * 8, 0, static_cast<size_t>(group / 8 * kLimbs * 8));
    return true;
  }
  if (top < 1e-30f) return false;  // s2 would be subnormal
  float scale[kLimbs] = {top / 127.0f, top / 127.0f / 254.0f, top / 127.0f / 254.0f / 254.0f};
  __m512i sums[kLimbs] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  for (int64_t k = 0; k < group; k += 16) {
    const __mmask16 m = group - k >= 16 ? 0xFFFF : 0x00FF;
    __m512 residual = _mm512_maskz_loadu_ps(m, xg + k);
    for (int l = 0; l < kLimbs; ++l) {
      // q from the reciprocal (a q off by one is fine: the residual is
      // exact, and the clamp keeps q a byte); the residual by FMA.
      const __m512 s = _mm512_set1_ps(scale[l]);
      const __m512 q = _mm512_min_ps(hi, _mm512_max_ps(lo, _mm512_roundscale_ps(
                                                            _mm512_mul_ps(residual, _mm512_set1_ps(1.0f / scale[l])),
                                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
      residual = _mm512_fnmadd_ps(q, s, residual);
      const __m512i qi = _mm512_cvtps_epi32(q);
      sums[l] = _mm512_add_epi32(sums[l], qi);
      const __m128i bytes = even_then_odd(_mm512_cvtsepi32_epi8(qi));
      const int64_t step = (k0 + k) / 8;
      _mm_storel_epi64(reinterpret_cast<__m128i*>(row_bytes + (step * kLimbs + l) * 8), bytes);
      if (m == 0xFFFF)
        _mm_storeh_pd(reinterpret_cast<double*>(row_bytes + ((step + 1) * kLimbs + l) * 8), _mm_castsi128_pd(bytes));
    }
  }
  for (int l = 0; l < kLimbs; ++l) {
    scales[l] = scale[l];
    offsets[l] = -8 * _mm512_reduce_add_epi32(sums[l]);
  }
  return true;
}

}  // namespace

LATHE_LIMBS bool split_into_limbs(const float* x, int64_t M, int64_t K, int64_t group, ActivationLimbs& a) {
  a.m = M;
  a.k = K;
  a.group = group;
  const int64_t groups = K / group;
  // Every byte is written (a group of zeros too, below), so no clearing.
  a.bytes.resize(static_cast<size_t>(M * K * kLimbs));
  a.scales.resize(static_cast<size_t>(M * groups * kLimbs));
  a.offsets.resize(static_cast<size_t>(M * groups * kLimbs));
  for (int64_t r = 0; r < M; ++r) {
    int8_t* row = a.bytes.data() + r * a.row_bytes();
    for (int64_t g = 0; g < groups; ++g) {
      float* s = a.scales.data() + (r * groups + g) * kLimbs;
      int32_t* off = a.offsets.data() + (r * groups + g) * kLimbs;
      if (!split_group(x + r * K + g * group, group, row, g * group, s, off)) return false;
    }
  }
  return true;
}

#else

// Elsewhere no kernel reads limbs: the float kernels run.
bool split_into_limbs(const float*, int64_t, int64_t, int64_t, ActivationLimbs&) { return false; }

#endif

}  // namespace lathe::kernels::qpanels
