#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax over the last dimension: one workgroup per row (rows striding by
// the workgroup count), max and sum reduced across the workgroup.
#include "common.glsl"
#include "reduce.glsl"
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant, std430) uniform P { uint rows, C; } p;

void main() {
  const uint t = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    const uint base = row * p.C;
    float m = -kInf;
    for (uint c = t; c < p.C; c += WG) m = max(m, x[base + c]);
    m = workgroup_max(m);
    float s = 0.0;
    for (uint c = t; c < p.C; c += WG) s += exp(x[base + c] - m);
    s = workgroup_sum(s);
    for (uint c = t; c < p.C; c += WG) y[base + c] = exp(x[base + c] - m) / s;
  }
}
