// Float activations as three int8 limbs per group, so that a 4-bit weight
// can meet them in VNNI integer dot products (quantized_panels_vnni.cpp)
// and still give float32's numbers.
//
// For each row r and group g of `group` consecutive k, with m the largest
// |x| of the group:
//   s0 = m / 127,  s1 = s0 / 254,  s2 = s1 / 254
//   q0 = round(x / s0),  q1 = round((x - s0 q0) / s1),  q2 = round((x - s0 q0 - s1 q1) / s2)
// each q in [-127, 127], and x - (s0 q0 + s1 q1 + s2 q2) is at most s2 / 2
// = m / (2 * 127 * 254^2) ~ 6.1e-8 m: within float32's own rounding of the
// group's largest value. A product then comes out of three exact integer
// sums (u8 weight x s8 limb) scaled once per group, instead of one float
// FMA per weight: a third of the vector instructions (issue 32).
//
// Why not plain dynamic int8 activations (one limb): that changes the
// program's numbers by ~1/254 of m; the op is weight-only, its
// activations are float.
#pragma once

#include <cstdint>
#include <vector>

namespace lathe::kernels::qpanels {

constexpr int kLimbs = 3;

struct ActivationLimbs {
  int64_t m = 0, k = 0, group = 0;
  // Per row r, step s of 8 k and limb l, two 4-byte words: the even k of
  // the step, then the odd ones (the order in which an Int4Panels word's
  // low and high nibbles come out under a 0x0F mask):
  //   bytes[((r * k / 8 + s) * kLimbs + l) * 8 + e * 4 + j] = q_l of x[r, 8 s + 2 j + e]
  std::vector<int8_t> bytes;
  // [(r * groups + g) * kLimbs + l]: s_l, and -8 * (the sum of q_l over the
  // group), which takes the 4-bit weights' offset of 8 back out of an
  // integer sum before it becomes a float.
  std::vector<float> scales;
  std::vector<int32_t> offsets;
  int64_t groups() const { return k / group; }
  int64_t row_bytes() const { return k * kLimbs; }
};

// Splits x[m, k] (row-major; k and group multiples of 8, group divides k).
// False where some group cannot be split (a value that is not finite, or a
// largest |x| below 1e-30, whose s2 would be subnormal): the caller then
// runs the float kernels.
bool split_into_limbs(const float* x, int64_t m, int64_t k, int64_t group, ActivationLimbs& out);

}  // namespace lathe::kernels::qpanels
