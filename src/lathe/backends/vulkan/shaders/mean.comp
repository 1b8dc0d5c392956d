#version 450
#extension GL_GOOGLE_include_directive : require
// Mean over a set of dimensions: each output element (indexed over the
// kept dimensions) sums the R elements of the reduced ones. Sizes and
// input strides of both sets are given, up to 6 each.
#include "common.glsl"
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant, std430) uniform P {
  uint total, R, nk, nr;
  uint ksize[6];
  uint kstride[6];
  uint rsize[6];
  uint rstride[6];
} p;

void main() {
  FOR_EACH(o, p.total) {
    uint rest = o, base = 0u;
    for (int d = int(p.nk) - 1; d >= 0; --d) {
      base += (rest % p.ksize[d]) * p.kstride[d];
      rest /= p.ksize[d];
    }
    float s = 0.0;
    for (uint r = 0u; r < p.R; ++r) {
      uint rr = r, off = base;
      for (int d = int(p.nr) - 1; d >= 0; --d) {
        off += (rr % p.rsize[d]) * p.rstride[d];
        rr /= p.rsize[d];
      }
      s += x[off];
    }
    y[o] = s / float(p.R);
  }
}
