#version 450
#extension GL_GOOGLE_include_directive : require
// NCHW convolution, any groups (depthwise when groups == C), one output per
// invocation. Weights [Cout, C/G, KH, KW] and bias [Cout] come with any
// eval batch norm already folded in (at load).
#include "common.glsl"
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer W { float w[]; };
layout(set = 0, binding = 2) readonly buffer B { float b[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant, std430) uniform P {
  uint N, C, H, W, CO, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G;
  float lo, hi;
} p;

void main() {
  const uint cpg = p.C / p.G, opg = p.CO / p.G;
  FOR_EACH(i, p.N * p.CO * p.OH * p.OW) {
    const uint ox = i % p.OW;
    uint t = i / p.OW;
    const uint oy = t % p.OH;
    t /= p.OH;
    const uint co = t % p.CO, n = t / p.CO;
    const uint g = co / opg;
    float acc = b[co];
    for (uint ci = 0u; ci < cpg; ++ci) {
      const uint xc = ((n * p.C + g * cpg + ci) * p.H) * p.W;
      const uint wc = ((co * cpg + ci) * p.KH) * p.KW;
      for (uint ky = 0u; ky < p.KH; ++ky) {
        const int iy = int(oy * p.SH + ky * p.DH) - int(p.PH);
        if (iy < 0 || iy >= int(p.H)) continue;
        for (uint kx = 0u; kx < p.KW; ++kx) {
          const int ix = int(ox * p.SW + kx * p.DW) - int(p.PW);
          if (ix < 0 || ix >= int(p.W)) continue;
          acc += x[xc + uint(iy) * p.W + uint(ix)] * w[wc + ky * p.KW + kx];
        }
      }
    }
    y[i] = min(max(acc, p.lo), p.hi);
  }
}
