#version 450
#extension GL_GOOGLE_include_directive : require
// A strided copy, up to rank 6: element c (a coordinate over `size`) goes
// from in_off + c . sin to out_off + c . sout. permute, cat (one copy per
// input, into its slice of the output) and slice are all this.
#include "common.glsl"
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 3) buffer Y { float y[]; };
layout(push_constant, std430) uniform P {
  uint total, rank, in_off, out_off;
  uint size[6];
  uint sin_[6];
  uint sout[6];
} p;

void main() {
  FOR_EACH(i, p.total) {
    uint rest = i, src = p.in_off, dst = p.out_off;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      const uint c = rest % p.size[d];
      rest /= p.size[d];
      src += c * p.sin_[d];
      dst += c * p.sout[d];
    }
    y[dst] = x[src];
  }
}
