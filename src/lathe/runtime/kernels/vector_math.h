// exp, tanh, erf and exact GELU over contiguous float arrays, vectorised:
// 16 lanes at a time, compiled for AVX-512, for AVX2 and for baseline
// x86-64, the clone picked when the library is loaded (as the GEMM's row
// kernels, simd.h).
// The method of each is described beside its body (vector_math_inl.h).
// libm is the reference they are tested against (vector_math_test.cpp:
// within 2 or 3 ulp, over the whole float range, subnormals, infinities
// and NaN included).
#pragma once

#include <cstdint>

namespace lathe::kernels {

void exp_f32(const float* x, float* y, int64_t n);   // y may be x
void tanh_f32(const float* x, float* y, int64_t n);  // y may be x
void erf_f32(const float* x, float* y, int64_t n);   // y may be x
// Exact GELU, x / 2 (1 + erf(x / sqrt 2)), as ATen computes it in float.
void gelu_f32(const float* x, float* y, int64_t n);  // y may be x

}  // namespace lathe::kernels
