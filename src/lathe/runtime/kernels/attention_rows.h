// The per-row work of scaled_dot_product_attention (attention.cpp) between
// its two matrix products, one set per instruction set, chosen at run time
// from what the CPU reports (simd::best_isa(), as the GEMM tiles are):
//
//   s[j] = row[j] * scale (+ mask[j]),  m = max_j s[j],  row[j] = exp(s[j] - m)
//
// returning sum_j row[j] and m. The caller divides the product of these
// numerators with V by the sum, so no pass normalises the row itself.
// A row whose every score is -inf (masked out) gets m = 0 and numerators
// 0, as ATen's CPU flash attention has it (its output row is then 0).
//
// Avx512 and Avx2 run 16 lanes at a time (one zmm, two ymm) with the
// vectorised exp of vector_math_inl.h; the tail goes through a padded
// block, so every element is computed alike. Scalar is plain C++ with
// libm's exp and runs anywhere; tests hold the others to it.
#pragma once

#include <cstdint>

#include "lathe/runtime/kernels/simd.h"

namespace lathe::kernels {

// mask: n additive values, or nullptr. Writes m to *max_out.
using SoftmaxRowFn = float (*)(float* row, int64_t n, float scale, const float* mask, float* max_out);

struct SoftmaxRows {
  simd::Isa isa;
  const char* name;
  SoftmaxRowFn numerators;
};

// The set this process uses: the widest the CPU has.
const SoftmaxRows& softmax_rows();
// A given set, or nullptr where this CPU or build lacks it (tests).
const SoftmaxRows* softmax_rows_for(simd::Isa isa);

}  // namespace lathe::kernels
