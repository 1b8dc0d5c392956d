#version 450
#extension GL_GOOGLE_include_directive : require
// max_pool2d / avg_pool2d over NCHW planes, as PyTorch defines them: a max
// window lying wholly in the padding gives -inf; an average divides by the
// window clipped to the padded input (count_include_pad) or to the input,
// or by divisor_override when it is not 0. Output sizes (ceil_mode
// included) come from the graph.
#include "common.glsl"
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant, std430) uniform P {
  uint is_max, planes, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, count_include_pad, divisor;
} p;

void main() {
  FOR_EACH(i, p.planes * p.OH * p.OW) {
    const uint ox = i % p.OW, oy = (i / p.OW) % p.OH, plane = i / (p.OW * p.OH);
    const uint base = plane * p.H * p.W;
    const int y0 = int(oy * p.SH) - int(p.PH), x0 = int(ox * p.SW) - int(p.PW);
    if (p.is_max != 0u) {
      float m = -kInf;
      for (uint ky = 0u; ky < p.KH; ++ky) {
        const int iy = y0 + int(ky * p.DH);
        if (iy < 0 || iy >= int(p.H)) continue;
        for (uint kx = 0u; kx < p.KW; ++kx) {
          const int ix = x0 + int(kx * p.DW);
          if (ix < 0 || ix >= int(p.W)) continue;
          const float v = x[base + uint(iy) * p.W + uint(ix)];
          m = (v > m || isnan(v)) ? v : m;
        }
      }
      y[i] = m;
    } else {
      const int y1 = min(y0 + int(p.KH), int(p.H + p.PH)), x1 = min(x0 + int(p.KW), int(p.W + p.PW));
      const int padded = (y1 - y0) * (x1 - x0);
      const int ya = max(y0, 0), xa = max(x0, 0), yb = min(y1, int(p.H)), xb = min(x1, int(p.W));
      float s = 0.0;
      for (int iy = ya; iy < yb; ++iy)
        for (int ix = xa; ix < xb; ++ix) s += x[base + uint(iy) * p.W + uint(ix)];
      const int count = p.divisor != 0u ? int(p.divisor) : (p.count_include_pad != 0u ? padded : (yb - ya) * (xb - xa));
      y[i] = s / float(count);
    }
  }
}
