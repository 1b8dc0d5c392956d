#version 450
#extension GL_GOOGLE_include_directive : require
// An eval batch norm with no convolution to fold into: y = x * scale[c] +
// shift[c], scale and shift computed from the statistics at load
// (ss = [scale[0..C), shift[0..C)]), then an optional clamp (a fused relu).
#include "common.glsl"
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer S { float ss[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant, std430) uniform P { uint total, C, inner; float lo, hi; } p;

void main() {
  FOR_EACH(i, p.total) {
    const uint c = (i / p.inner) % p.C;
    y[i] = min(max(x[i] * ss[c] + ss[p.C + c], p.lo), p.hi);
  }
}
