#include "lathe/runtime/kernels/vector_math.h"

#include <cmath>
#include <cstring>

#include "lathe/runtime/kernels/simd.h"
#include "lathe/runtime/kernels/vector_math_inl.h"

// AVX-512, AVX2 + FMA and baseline clones of each array loop, chosen when
// the library is loaded (simd.h).
#define LATHE_MATH_CLONES LATHE_WIDE_CLONES

namespace lathe::kernels {

namespace {

using vmath::kLanes;
using vmath::vf;

enum class Fn { Exp, Tanh, Erf, Gelu };

template <Fn F>
[[gnu::always_inline]] inline vf f16(const vf& v) {
  if constexpr (F == Fn::Exp) return vmath::exp16(v);
  else if constexpr (F == Fn::Tanh) return vmath::tanh16(v);
  else if constexpr (F == Fn::Erf) return vmath::erf16(v);
  // ATen's formula and order of operations, in float.
  else return v * 0.5f * (1.0f + vmath::erf16(v * static_cast<float>(M_SQRT1_2)));
}

// Applies F to n floats, 16 at a time; the tail goes through a zero-padded
// block so every element is computed the same way. Everything is inlined
// into the caller's clone (a lambda here would be a baseline function).
template <Fn F>
[[gnu::always_inline]] inline void map16(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) vmath::store(y + i, f16<F>(vmath::load(x + i)));
  if (i < n) {
    float block[kLanes] = {};
    const size_t rest = static_cast<size_t>(n - i);
    std::memcpy(block, x + i, rest * sizeof(float));
    vmath::store(block, f16<F>(vmath::load(block)));
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

LATHE_MATH_CLONES
void erf_f32(const float* x, float* y, int64_t n) {
  map16<Fn::Erf>(x, y, n);
}

LATHE_MATH_CLONES
void gelu_f32(const float* x, float* y, int64_t n) {
  map16<Fn::Gelu>(x, y, n);
}

}  // namespace lathe::kernels
