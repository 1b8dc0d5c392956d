#version 450
#extension GL_GOOGLE_include_directive : require
// Layer norm over the last D elements of each row: mean first, then the
// variance as the mean of squared deviations (two passes, no cancellation).
#include "common.glsl"
#include "reduce.glsl"
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer W { float w[]; };
layout(set = 0, binding = 2) readonly buffer B { float b[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant, std430) uniform P { uint rows, D, has_weight, has_bias; float eps; } p;

void main() {
  const uint t = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    const uint base = row * p.D;
    float s = 0.0;
    for (uint c = t; c < p.D; c += WG) s += x[base + c];
    const float mean = workgroup_sum(s) / float(p.D);
    float q = 0.0;
    for (uint c = t; c < p.D; c += WG) {
      const float d = x[base + c] - mean;
      q += d * d;
    }
    const float rstd = 1.0 / sqrt(workgroup_sum(q) / float(p.D) + p.eps);
    for (uint c = t; c < p.D; c += WG) {
      float v = (x[base + c] - mean) * rstd;
      if (p.has_weight != 0u) v *= w[c];
      if (p.has_bias != 0u) v += b[c];
      y[base + c] = v;
    }
  }
}
