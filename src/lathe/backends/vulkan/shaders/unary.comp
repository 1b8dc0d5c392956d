#version 450
#extension GL_GOOGLE_include_directive : require
// Elementwise activations, chosen by `op`:
//   0 clamp(lo, hi) (relu, relu6, hardtanh, clamp)   1 hardswish   2 sigmoid
//   3 tanh   4 gelu (erf)   5 gelu (tanh approximation)   6 silu   7 hardsigmoid
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
    float r;
    if (p.op == 0u) r = min(max(v, p.lo), p.hi);
    else if (p.op == 1u) r = v * clamp(v + 3.0, 0.0, 6.0) / 6.0;
    else if (p.op == 2u) r = sigmoid(v);
    else if (p.op == 3u) r = tanh_safe(v);
    else if (p.op == 4u) r = 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
    else if (p.op == 5u) r = 0.5 * v * (1.0 + tanh_safe(0.79788456080286536 * (v + 0.044715 * v * v * v)));
    else if (p.op == 6u) r = v * sigmoid(v);
    else r = clamp(v / 6.0 + 0.5, 0.0, 1.0);
    y[i] = r;
  }
}
