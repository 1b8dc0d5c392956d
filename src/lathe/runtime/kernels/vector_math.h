// exp and tanh over contiguous float arrays, vectorised: 16 lanes at a time,
// compiled for AVX-512, for AVX2 and for baseline x86-64, the clone picked
// when the library is loaded (as the GEMM's row kernels, simd.h). libm is
// the reference they are tested against (vector_math_test.cpp: within 2
// ulp, over the whole float range, infinities and NaN included).
//
// exp: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two so r is exact),
// e^r by its Taylor series to r^7 (error under 1e-8 relative), times 2^n
// built in the exponent bits, in two halves so results down to the
// smallest subnormal come out right.
// tanh(x) = sign(x) e / (e + 2) with e = expm1(2|x|): no cancellation at
// any x; expm1(t) is its Taylor series to t^10 for t < 1.1 (error under
// 4e-8 relative), exp(t) - 1 above.
#pragma once

#include <cstdint>

namespace lathe::kernels {

void exp_f32(const float* x, float* y, int64_t n);   // y may be x
void tanh_f32(const float* x, float* y, int64_t n);  // y may be x

}  // namespace lathe::kernels
