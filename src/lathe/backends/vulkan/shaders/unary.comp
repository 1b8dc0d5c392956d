#version 450
#extension GL_GOOGLE_include_directive : require
// Elementwise activations, chosen by `op`: the codes and expressions are the
// rows of unary_ops.def (shared with the C++ side).
#include "common.glsl"
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant, std430) uniform P { uint op, total; float lo, hi; } p;

// erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7):
// GLSL has no erf.
float erf_approx(float v) {
  const float t = 1.0 / (1.0 + 0.3275911 * abs(v));
  const float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(v) * (1.0 - poly * exp(-v * v));
}

// tanh through exp, with |v| capped where tanh is 1 in float (the builtin
// may overflow to inf/inf for large |v| on some implementations).
float tanh_safe(float v) {
  const float c = clamp(v, -15.0, 15.0);
  const float e = exp(2.0 * c);
  return (e - 1.0) / (e + 1.0);
}

float sigmoid(float v) { return 1.0 / (1.0 + exp(-v)); }

void main() {
  FOR_EACH(i, p.total) {
    const float v = x[i];
    float r = v;  // init() refuses codes outside the table
#define LATHE_VULKAN_UNARY_CODE(name, code, expression) if (p.op == uint(code)) r = expression;
#define LATHE_VULKAN_UNARY(name, code, aten_op, expression) LATHE_VULKAN_UNARY_CODE(name, code, expression)
#include "unary_ops.def"
#undef LATHE_VULKAN_UNARY
#undef LATHE_VULKAN_UNARY_CODE
    y[i] = r;
  }
}
