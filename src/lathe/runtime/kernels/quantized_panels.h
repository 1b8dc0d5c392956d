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

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "lathe/runtime/kernels/simd.h"
#include "lathe/runtime/parallel.h"

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

// An int8 weight w[N, K] for int8 activations (VNNI vpdpbusd: 4 u8 x s8
// products per int32 lane). Per panel p and step t of 4 k:
//   data[((p * K4 + t) * 16 + i) * 4 + j] = w[p * 16 + i, 4 t + j]   (0 past N or K)
// so one 64-byte line is 16 channels x 4 k. Activations go in as u8 = q + 128;
// offsets[n] = 128 * sum_k w[n, k] takes the 128 back out of each sum.
struct Int8VnniPanels {
  int64_t n = 0, k = 0, k4 = 0;  // k4 = ceil(k / 4)
  AlignedBytes data;
  std::vector<int32_t> offsets;  // panels * 16
};

// Rows of activations quantized to u8 (q + 128, padded with 128 to 4 * k4)
// against one VNNI panel: out[r * ldo + i] = float(acc - offsets) * row_scales[r] * scales[i].
struct QuantizedRows {
  const uint8_t* x = nullptr;
  int64_t ldx = 0;  // bytes, a multiple of 4
  const float* row_scales = nullptr;
  int64_t m = 0;
  float* out = nullptr;
  int64_t ldo = 0;
  int64_t width = kPanel;
};
using VnniPanelFn = void (*)(const Int8VnniPanels& w, int64_t panel, const float* scales, const QuantizedRows& rows);
void vnni_panel_scalar(const Int8VnniPanels& w, int64_t panel, const float* scales, const QuantizedRows& rows);
void vnni_panel_avx512(const Int8VnniPanels& w, int64_t panel, const float* scales, const QuantizedRows& rows);
// Avx512Vnni: the vpdpbusd kernel; anything else: scalar.
VnniPanelFn vnni_panel_fn(simd::Isa isa);

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

// Calls run(m0, m1, p0, p1) over chunks of rows [m0, m1) (a chunk of
// activations, about 1 MiB, stays in L2 while every panel streams past it)
// and, within a chunk, over panel ranges [p0, p1) split across threads.
template <typename Run>
void for_row_chunks(int64_t M, int64_t N, int64_t K, int64_t row_bytes_per_k, Run run) {
  const int64_t per_row = std::max<int64_t>(K, 1) * row_bytes_per_k;
  const int64_t chunk = std::max<int64_t>(8, (int64_t{1} << 20) / per_row / 8 * 8);
  const int64_t panels = panels_of(N);
  const bool parallel = num_threads() > 1 && M * N * K >= 32768;
  for (int64_t m0 = 0; m0 < M; m0 += chunk) {
    const int64_t m1 = std::min(M, m0 + chunk);
    auto body = [&](int64_t p0, int64_t p1) { run(m0, m1, p0, p1); };
    if (parallel) parallel_for(0, panels, 1, body);
    else body(0, panels);
  }
}

}  // namespace lathe::kernels::qpanels
