#version 450
#extension GL_GOOGLE_include_directive : require
// y[m, n] = clamp(bias[n] + sum_k x[m, k] * w[k, n], lo, hi). The weight was
// repacked at load to [K, N], so neighbouring invocations (neighbouring n)
// read neighbouring weights.
#include "common.glsl"
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer W { float w[]; };
layout(set = 0, binding = 2) readonly buffer B { float b[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant, std430) uniform P { uint M, K, N, has_bias; float lo, hi; } p;

void main() {
  FOR_EACH(i, p.M * p.N) {
    const uint m = i / p.N, n = i % p.N;
    float acc = p.has_bias != 0u ? b[n] : 0.0;
    for (uint k = 0u; k < p.K; ++k) acc += x[m * p.K + k] * w[k * p.N + n];
    y[i] = min(max(acc, p.lo), p.hi);
  }
}
