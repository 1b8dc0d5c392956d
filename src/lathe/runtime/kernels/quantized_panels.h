// The layouts the quantized linear kernels stream their weights in, and the
// microkernels that read them: one implementation per instruction set
// (quantized_panels_scalar.cpp, _avx2.cpp, _avx512.cpp), picked at run time
// (simd::best_isa()), each tested against the scalar one.
//
// Weights are repacked into these layouts once, when the executor plans the
// node (quantized_linear.cpp); the program's saved weights are untouched.
//
// Every layout cuts the output channels into panels of 16 (one AVX-512
// vector of float outputs, two AVX2 ones). Channels past N in the last
// panel have zero weights and scales; their outputs are never stored.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "lathe/runtime/kernels/simd.h"

namespace lathe::kernels::qpanels {

constexpr int64_t kPanel = 16;

inline int64_t panels_of(int64_t n) { return (n + kPanel - 1) / kPanel; }

// Zero-initialised bytes on a 64-byte (cache line) boundary.
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(size_t n);
  uint8_t* data() { return p_.get(); }
  const uint8_t* data() const { return p_.get(); }
  size_t size() const { return n_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> p_;
  size_t n_ = 0;
};

// An int8 weight w[N, K] (weight-only, float activations):
//   data[(p * K + k) * 16 + i] = w[p * 16 + i, k]
// so a panel is K rows of 16 bytes, read front to back, one load per k.
struct Int8Panels {
  int64_t n = 0, k = 0;
  AlignedBytes data;
};

// A 4-bit groupwise weight w[N, K] = (u - 8) * scale + zero, u in [0, 15],
// one (scale, zero) per output channel and group of `group` consecutive k.
// K and group are multiples of 8. Per panel p and step s of 8 k:
//   uint32 word[(p * K / 8 + s) * 16 + i], nibble j (bits 4j..4j+3) = u of w[p * 16 + i, 8 s + j]
// so one 64-byte line holds 16 channels x 8 k, and a vector of 16 words
// yields the 8 k one shift apart.
//   scales[(p * groups + g) * 16 + i], zeros[...]: per panel, group, channel.
struct Int4Panels {
  int64_t n = 0, k = 0, group = 0;
  AlignedBytes data;
  std::vector<float> scales, zeros;
  int64_t groups() const { return k / group; }
};

// Rows [0, m) of x (row stride ldx) against one panel: out[r * ldo + i] for
// the panel's first `width` (<= 16) channels.
struct PanelRows {
  const float* x = nullptr;
  int64_t ldx = 0;
  int64_t m = 0;
  float* out = nullptr;
  int64_t ldo = 0;
  int64_t width = kPanel;
};

// out = (x @ w[panel]^T) * scales, `scales` pointing at the panel's first
// channel (width entries).
using Int8PanelFn = void (*)(const Int8Panels& w, int64_t panel, const float* scales, const PanelRows& rows);
// out = sum over groups g of scale * (x[:, g] @ (u - 8)[g]) + zero * xsum[r * groups + g],
// xsum[r, g] the sum of row r of x over group g.
using Int4PanelFn = void (*)(const Int4Panels& w, int64_t panel, const float* xsum, const PanelRows& rows);

void int8_panel_scalar(const Int8Panels& w, int64_t panel, const float* scales, const PanelRows& rows);
void int8_panel_avx2(const Int8Panels& w, int64_t panel, const float* scales, const PanelRows& rows);
void int8_panel_avx512(const Int8Panels& w, int64_t panel, const float* scales, const PanelRows& rows);
void int4_panel_scalar(const Int4Panels& w, int64_t panel, const float* xsum, const PanelRows& rows);
void int4_panel_avx2(const Int4Panels& w, int64_t panel, const float* xsum, const PanelRows& rows);
void int4_panel_avx512(const Int4Panels& w, int64_t panel, const float* xsum, const PanelRows& rows);

// The microkernel for `isa` (Scalar where the build has no such path).
Int8PanelFn int8_panel_fn(simd::Isa isa);
Int4PanelFn int4_panel_fn(simd::Isa isa);

}  // namespace lathe::kernels::qpanels
