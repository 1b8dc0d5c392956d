#include "lathe/runtime/kernels/vector_math.h"

#include <cstring>

// AVX-512, AVX2 + FMA and baseline clones of each array loop, chosen when
// the library is loaded. Sanitizer builds (no ifunc) run the baseline.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define LATHE_MATH_CLONES __attribute__((target_clones("avx512f", "arch=haswell", "default")))
#else
#define LATHE_MATH_CLONES
#endif

// 64-byte vectors pass through always_inline helpers only; no such value
// crosses a call boundary in the clones that lack 64-byte registers.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace lathe::kernels {

namespace {

typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
constexpr int kLanes = 16;

[[gnu::always_inline]] inline vf splat(float v) { return vf{} + v; }

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

enum class Fn { Exp, Tanh };

template <Fn F>
[[gnu::always_inline]] inline vf f16(const vf& v) {
  if constexpr (F == Fn::Exp) return exp16(v);
  else return tanh16(v);
}

// Applies F to n floats, 16 at a time; the tail goes through a zero-padded
// block so every element is computed the same way. Everything is inlined
// into the caller's clone (a lambda here would be a baseline function).
template <Fn F>
[[gnu::always_inline]] inline void map16(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    vf v;
    std::memcpy(&v, x + i, sizeof(v));
    v = f16<F>(v);
    std::memcpy(y + i, &v, sizeof(v));
  }
  if (i < n) {
    float block[kLanes] = {};
    const size_t rest = static_cast<size_t>(n - i);
    std::memcpy(block, x + i, rest * sizeof(float));
    vf v;
    std::memcpy(&v, block, sizeof(v));
    v = f16<F>(v);
    std::memcpy(block, &v, sizeof(v));
    std::memcpy(y + i, block, rest * sizeof(float));
  }
}

}  // namespace

LATHE_MATH_CLONES
void exp_f32(const float* x, float* y, int64_t n) {
  map16<Fn::Exp>(x, y, n);
}

LATHE_MATH_CLONES
void tanh_f32(const float* x, float* y, int64_t n) {
  map16<Fn::Tanh>(x, y, n);
}

}  // namespace lathe::kernels
