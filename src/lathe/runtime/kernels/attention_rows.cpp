#include "lathe/runtime/kernels/attention_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "lathe/runtime/kernels/vector_math_inl.h"

namespace lathe::kernels {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float numerators_scalar(float* row, int64_t n, float scale, const float* mask, float* max_out) {
  float m = -kInf;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = row[j] * scale + (mask ? mask[j] : 0.0f);
    m = std::max(m, row[j]);
  }
  if (m == -kInf) m = 0.0f;
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - m);
    sum += row[j];
  }
  *max_out = m;
  return sum;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

using vmath::kLanes;
using vmath::vf;

// `rest` (< 16) values from p, zero past them.
[[gnu::always_inline]] inline vf load_tail(const float* p, int64_t rest) {
  float block[kLanes] = {};
  std::memcpy(block, p, static_cast<size_t>(rest) * sizeof(float));
  return vmath::load(block);
}
[[gnu::always_inline]] inline void store_tail(float* p, int64_t rest, const vf& v) {
  float block[kLanes];
  vmath::store(block, v);
  std::memcpy(p, block, static_cast<size_t>(rest) * sizeof(float));
}

// The vector body, inlined into each target function below. Lanes past
// the row's end hold -inf scores: no effect on the max, numerators 0.
[[gnu::always_inline]] inline float numerators16(float* row, int64_t n, float scale, const float* mask, float* max_out) {
  const vf vscale = vmath::splat(scale);
  const int64_t full = n / kLanes * kLanes, rest = n - full;
  vf vmax = vmath::splat(-kInf);
  for (int64_t j = 0; j < full; j += kLanes) {
    vf s = vmath::load(row + j) * vscale;
    if (mask) s += vmath::load(mask + j);
    vmath::store(row + j, s);
    vmax = vmath::vmax(vmax, s);
  }
  vf tail = vmath::splat(-kInf);
  if (rest) {
    vf s = load_tail(row + full, rest) * vscale;
    if (mask) s += load_tail(mask + full, rest);
    const vmath::vi lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    tail = lane < static_cast<int32_t>(rest) ? s : tail;
    vmax = vmath::vmax(vmax, tail);
  }
  float m = vmath::hmax(vmax);
  if (m == -kInf) m = 0.0f;
  const vf vm = vmath::splat(m);
  vf sum = {}, sum2 = {};
  int64_t j = 0;
  // Two vectors a step: exp is a long chain of dependent operations, and
  // two independent ones side by side keep the FMA units busier.
  for (; j + 2 * kLanes <= full; j += 2 * kLanes) {
    const vf e = vmath::exp16(vmath::load(row + j) - vm);
    const vf e2 = vmath::exp16(vmath::load(row + j + kLanes) - vm);
    vmath::store(row + j, e);
    vmath::store(row + j + kLanes, e2);
    sum += e;
    sum2 += e2;
  }
  for (; j < full; j += kLanes) {
    const vf e = vmath::exp16(vmath::load(row + j) - vm);
    vmath::store(row + j, e);
    sum += e;
  }
  sum += sum2;
  if (rest) {
    const vf e = vmath::exp16(tail - vm);
    store_tail(row + full, rest, e);
    sum += e;
  }
  *max_out = m;
  return vmath::hsum(sum);
}

__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"))) float numerators_avx512(
    float* row, int64_t n, float scale, const float* mask, float* max_out) {
  return numerators16(row, n, scale, mask, max_out);
}

__attribute__((target("avx2,fma"))) float numerators_avx2(float* row, int64_t n, float scale, const float* mask,
                                                           float* max_out) {
  return numerators16(row, n, scale, mask, max_out);
}

const SoftmaxRows kAvx512{simd::Isa::Avx512, "avx512", numerators_avx512};
const SoftmaxRows kAvx2{simd::Isa::Avx2, "avx2", numerators_avx2};

#endif

const SoftmaxRows kScalar{simd::Isa::Scalar, "scalar", numerators_scalar};

}  // namespace

const SoftmaxRows* softmax_rows_for(simd::Isa isa) {
  if (static_cast<int>(simd::best_isa()) < static_cast<int>(isa)) return nullptr;
  switch (isa) {
    case simd::Isa::Scalar: return &kScalar;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    case simd::Isa::Avx2: return &kAvx2;
    case simd::Isa::Avx512:
    case simd::Isa::Avx512Vnni: return &kAvx512;
#endif
    default: return nullptr;
  }
}

const SoftmaxRows& softmax_rows() {
  static const SoftmaxRows& best = *softmax_rows_for(simd::best_isa());
  return best;
}

}  // namespace lathe::kernels
