// Attention for a few query rows (a decode step: one new token against the
// KV cache), reading K and V in place. The blocked path packs K^T and V
// for the GEMM tiles on every call; for one query row that packing copies
// the whole cache to read it once (a fifth of a TinyLlama int4 decode step
// went there), where a dot product per key and a weighted sum of value
// rows read it once in place.
#pragma once

#include <cstdint>

namespace lathe::kernels {

// Rows below this many go the direct way (the GEMM tiles are 4-8 rows).
constexpr int64_t kFewQueryRows = 4;

// scores[j] = q . k_j for j < n: q contiguous [E], key j at k + j * k_rs
// (contiguous columns).
void query_key_scores(const float* q, const float* k, int64_t k_rs, int64_t n, int64_t E, float* scores);

// out[e] = sum over j < n of weights[j] * v_j[e]: value row j at
// v + j * v_rs (contiguous columns), out [Ev].
void weighted_value_rows(const float* weights, const float* v, int64_t v_rs, int64_t n, int64_t Ev, float* out);

}  // namespace lathe::kernels
