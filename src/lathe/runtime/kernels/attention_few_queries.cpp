#include "lathe/runtime/kernels/attention_few_queries.h"

#include "lathe/runtime/kernels/simd.h"

namespace lathe::kernels {

// Four keys at a time: each load of q feeds four dot products.
LATHE_SIMD_CLONES void query_key_scores(const float* q, const float* k, int64_t k_rs, int64_t n, int64_t E,
                                        float* scores) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    simd::dot4(q, k + j * k_rs, k + (j + 1) * k_rs, k + (j + 2) * k_rs, k + (j + 3) * k_rs, 0, E, scores + j);
  }
  for (; j < n; ++j) {
    const float* kj = k + j * k_rs;
    float s = 0;
    for (int64_t e = 0; e < E; ++e) s += q[e] * kj[e];
    scores[j] = s;
  }
}

// 64 output columns (eight vectors) stay in registers while the value
// rows pass once, front to back; then 8 at a time, then one.
LATHE_SIMD_CLONES void weighted_value_rows(const float* weights, const float* v, int64_t v_rs, int64_t n, int64_t Ev,
                                           float* out) {
  int64_t e0 = 0;
  for (; e0 + 64 <= Ev; e0 += 64) {
    simd::v8 a0 = {}, a1 = {}, a2 = {}, a3 = {}, a4 = {}, a5 = {}, a6 = {}, a7 = {};
    for (int64_t j = 0; j < n; ++j) {
      const float w = weights[j];
      const float* row = v + j * v_rs + e0;
      a0 += w * simd::load8(row);
      a1 += w * simd::load8(row + 8);
      a2 += w * simd::load8(row + 16);
      a3 += w * simd::load8(row + 24);
      a4 += w * simd::load8(row + 32);
      a5 += w * simd::load8(row + 40);
      a6 += w * simd::load8(row + 48);
      a7 += w * simd::load8(row + 56);
    }
    float* o = out + e0;
    simd::store8(o, a0), simd::store8(o + 8, a1), simd::store8(o + 16, a2), simd::store8(o + 24, a3);
    simd::store8(o + 32, a4), simd::store8(o + 40, a5), simd::store8(o + 48, a6), simd::store8(o + 56, a7);
  }
  for (; e0 + 8 <= Ev; e0 += 8) {
    simd::v8 acc = {};
    for (int64_t j = 0; j < n; ++j) acc += weights[j] * simd::load8(v + j * v_rs + e0);
    simd::store8(out + e0, acc);
  }
  for (int64_t e = e0; e < Ev; ++e) {
    float s = 0;
    for (int64_t j = 0; j < n; ++j) s += weights[j] * v[j * v_rs + e];
    out[e] = s;
  }
}

}  // namespace lathe::kernels
