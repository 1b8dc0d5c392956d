#version 450
#extension GL_GOOGLE_include_directive : require
// add / sub / mul / div with broadcasting: the output's sizes, and each
// operand's strides over them (0 along a broadcast dimension), up to rank 6.
// b_scalar: `other` is the number `scalar`, not a tensor. add/sub scale
// the second operand by alpha, as PyTorch does.
#include "common.glsl"
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant, std430) uniform P {
  uint op, rank, total, b_scalar;
  uint size[6];
  uint sa[6];
  uint sb[6];
  float alpha, scalar, lo, hi;
} p;

void main() {
  FOR_EACH(i, p.total) {
    uint rest = i, ia = 0u, ib = 0u;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      const uint c = rest % p.size[d];
      rest /= p.size[d];
      ia += c * p.sa[d];
      ib += c * p.sb[d];
    }
    const float u = a[ia];
    const float v = p.b_scalar != 0u ? p.scalar : b[ib];
    float r;
    if (p.op == 0u) r = u + p.alpha * v;
    else if (p.op == 1u) r = u - p.alpha * v;
    else if (p.op == 2u) r = u * v;
    else r = u / v;
    y[i] = min(max(r, p.lo), p.hi);
  }
}
