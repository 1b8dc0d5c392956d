// Workgroup-wide sum and max over one value per invocation (shared-memory
// tree; WG is a power of two). Every invocation gets the result. Called in
// uniform control flow only (they contain barriers).
shared float red_[WG];

float workgroup_sum(float v) {
  const uint t = gl_LocalInvocationID.x;
  red_[t] = v;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) red_[t] += red_[t + s];
    barrier();
  }
  const float r = red_[0];
  barrier();
  return r;
}

float workgroup_max(float v) {
  const uint t = gl_LocalInvocationID.x;
  red_[t] = v;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) red_[t] = max(red_[t], red_[t + s]);
    barrier();
  }
  const float r = red_[0];
  barrier();
  return r;
}
