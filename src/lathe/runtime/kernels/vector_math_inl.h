// The 16-lane bodies of the vectorised math (vector_math.h), for kernels
// that inline them into their own loops: the array functions of
// vector_math.cpp, the attention score rows (attention_rows.cpp).
//
// Every function here is always_inline, so it is compiled for the target
// of the function it lands in: a 64-byte vector is one zmm register in an
// AVX-512 function, two ymm in an AVX2 one, four xmm in baseline x86-64.
// No such vector crosses a call boundary (hence -Wpsabi is silenced).
//
// exp: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two so r is exact),
// e^r by its Taylor series to r^7 (error under 1e-8 relative), times 2^n
// built in the exponent bits, in two halves so results down to the
// smallest subnormal come out right.
// tanh(x) = sign(x) e / (e + 2) with e = expm1(2|x|): no cancellation at
// any x; expm1(t) is its Taylor series to t^10 for t < 1.1 (error under
// 4e-8 relative), exp(t) - 1 above.
// erf, odd: for |x| < 1, x P(x^2) with P of degree 6; for 1 <= |x| < 4,
// 1 - exp(Q(|x| - 2.5)) with Q of degree 8 approximating log erfc; from 4
// on, erf rounds to 1 in float. Both polynomials are weighted least-squares
// (Lawson) fits to erf computed at 40 digits (mpmath), each coefficient
// rounded to float in turn and the rest refitted: P within 6e-8 relative,
// Q within 1.3e-7 absolute, i.e. erfc within 1.3e-7 relative, which is
// under half an ulp of erf(x) >= 0.84.
#pragma once

#include <cstdint>
#include <cstring>

#pragma GCC diagnostic ignored "-Wpsabi"

namespace lathe::kernels::vmath {

typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
constexpr int kLanes = 16;

[[gnu::always_inline]] inline vf splat(float v) { return vf{} + v; }

[[gnu::always_inline]] inline vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
[[gnu::always_inline]] inline void store(float* p, const vf& v) { std::memcpy(p, &v, sizeof(v)); }

[[gnu::always_inline]] inline vf as_float(const vi& v) {
  vf r;
  std::memcpy(&r, &v, sizeof(r));
  return r;
}
[[gnu::always_inline]] inline vi as_int(const vf& v) {
  vi r;
  std::memcpy(&r, &v, sizeof(r));
  return r;
}

[[gnu::always_inline]] inline vf vmax(const vf& a, const vf& b) { return a > b ? a : b; }

// Horizontal max and sum by halving (lanes l and l + 8, then l + 4, ...):
// four dependent steps where a lane-by-lane loop makes fifteen, which
// cost as much as the vector work on a row of 128. (A template, not a
// lambda: a lambda would be a separate function, compiled for baseline.)
template <bool Max>
[[gnu::always_inline]] inline vf combine(const vf& a, const vf& b) {
  if constexpr (Max) return vmax(a, b);
  else return a + b;
}
// (GCC spells a lane permutation __builtin_shuffle(x, mask), clang
// __builtin_shufflevector(x, x, lanes...); the fuzz build is clang's.)
#if defined(__clang__)
#define LATHE_VMATH_PERMUTE(x, ...) __builtin_shufflevector(x, x, __VA_ARGS__)
#else
#define LATHE_VMATH_PERMUTE(x, ...) __builtin_shuffle(x, vi{__VA_ARGS__})
#endif
template <bool Max>
[[gnu::always_inline]] inline float reduce(const vf& x) {
  vf v = combine<Max>(x, LATHE_VMATH_PERMUTE(x, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  v = combine<Max>(v, LATHE_VMATH_PERMUTE(v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
  v = combine<Max>(v, LATHE_VMATH_PERMUTE(v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
  v = combine<Max>(v, LATHE_VMATH_PERMUTE(v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
  return v[0];
}
#undef LATHE_VMATH_PERMUTE
[[gnu::always_inline]] inline float hmax(const vf& v) { return reduce<true>(v); }
[[gnu::always_inline]] inline float hsum(const vf& v) { return reduce<false>(v); }

// 2^n for integer n in [-126, 127], in the exponent bits.
[[gnu::always_inline]] inline vf pow2i(const vi& n) { return as_float((n + 127) << 23); }

[[gnu::always_inline]] inline vf exp16(const vf& x) {
  // exp(-104) rounds to 0 and exp(89) to inf; clamping keeps n in range.
  vf xc = x < splat(-104.0f) ? splat(-104.0f) : x;
  xc = xc > splat(89.0f) ? splat(89.0f) : xc;
  // n = round(x / ln2), by adding and taking away 1.5 * 2^23.
  const vf nf = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const vf r = (xc - nf * 0.693145751953125f) - nf * 1.42860682030941723212e-6f;  // ln2 = hi + lo, hi exact in 16 bits
  vf p = splat(1.0f / 5040);
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n as 2^(n/2) * 2^(n - n/2): both halves are normal numbers for every
  // n in [-150, 128], so subnormal results are rounded once, correctly.
  const vi n = __builtin_convertvector(nf, vi);
  const vi n1 = n >> 1;
  const vf y = p * pow2i(n1) * pow2i(n - n1);
  return x != x ? x : y;  // NaN stays NaN
}

[[gnu::always_inline]] inline vf tanh16(const vf& x) {
  const vi sign = as_int(x) & static_cast<int32_t>(0x80000000u);
  const vf ax = as_float(as_int(x) & 0x7fffffff);
  vf t = ax + ax;
  t = t > splat(40.0f) ? splat(40.0f) : t;  // tanh(20) is 1 in float
  // expm1(t) for t < 1.1: t + t^2/2! + ... + t^11/11!
  vf q = splat(1.0f / 39916800);
  q = q * t + 1.0f / 3628800;
  q = q * t + 1.0f / 362880;
  q = q * t + 1.0f / 40320;
  q = q * t + 1.0f / 5040;
  q = q * t + 1.0f / 720;
  q = q * t + 1.0f / 120;
  q = q * t + 1.0f / 24;
  q = q * t + 1.0f / 6;
  q = q * t + 0.5f;
  q = q * t + 1.0f;
  q = q * t;
  const vf e = t < splat(1.1f) ? q : exp16(t) - 1.0f;
  const vf y = as_float(as_int(e / (e + 2.0f)) | sign);
  return x != x ? x : y;
}

[[gnu::always_inline]] inline vf erf16(const vf& x) {
  const vi sign = as_int(x) & static_cast<int32_t>(0x80000000u);
  const vf ax = as_float(as_int(x) & 0x7fffffff);
  // |x| < 1: x P(x^2); the leading coefficient is 2/sqrt(pi).
  const vf t = ax * ax;
  vf p = splat(0.00018157958f);
  p = p * t - 0.0011145106f;
  p = p * t + 0.005547144f;
  p = p * t - 0.027043957f;
  p = p * t + 0.1128817f;
  p = p * t - 0.37613034f;
  p = p * t + 1.1283792f;
  const vf small = ax * p;
  // 1 <= |x| < 4: 1 - erfc, erfc = exp(Q(u)); |x| >= 4 (and inf) clamp to
  // 4, where 1 - erfc(4) rounds to 1.
  const vf u = (ax > splat(4.0f) ? splat(4.0f) : ax) - 2.5f;
  vf q = splat(2.1794212e-06f);
  q = q * u - 1.3271304e-05f;
  q = q * u + 7.478244e-05f;
  q = q * u - 0.00042025244f;
  q = q * u + 0.0021689413f;
  q = q * u - 0.010858448f;
  q = q * u - 0.9438954f;
  q = q * u - 5.3526807f;
  q = q * u - 7.806815f;
  const vf large = 1.0f - exp16(q);
  const vf y = as_float(as_int(ax < splat(1.0f) ? small : large) | sign);
  return x != x ? x : y;
}

}  // namespace lathe::kernels::vmath
