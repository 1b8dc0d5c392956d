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
#include <type_traits>
#include <vector>

#include "lathe/runtime/kernels/activation_limbs.h"
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
  bool zero_points = false;  // some zero is not 0 (the VNNI kernel reads zeros only then)
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
// `count` panels from `panel` (rows.width: the last one's), as Int8PanelFn.
using VnniPanelFn = void (*)(const Int8VnniPanels& w, int64_t panel, int64_t count, const float* scales,
                             const QuantizedRows& rows);
void vnni_panel_scalar(const Int8VnniPanels& w, int64_t panel, int64_t count, const float* scales,
                       const QuantizedRows& rows);
void vnni_panel_avx512(const Int8VnniPanels& w, int64_t panel, int64_t count, const float* scales,
                       const QuantizedRows& rows);
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

// out = (x @ w[panels]^T) * scales for `count` (1 to kInt8Group) consecutive
// panels from `panel`: out and `scales` point at the first panel's first
// channel; rows.width is the last panel's width (the others are full).
// Several panels at once share each load of x and keep several weight
// streams in flight, which a single row (a GEMV) needs to reach the memory
// bandwidth.
constexpr int64_t kPanelGroup = 4;
using Int8PanelFn = void (*)(const Int8Panels& w, int64_t panel, int64_t count, const float* scales,
                             const PanelRows& rows);
// out = sum over groups g of scale * (x[:, g] @ (u - 8)[g]) + zero * xsum[r * groups + g],
// xsum[r, g] the sum of row r of x over group g; `count` panels from
// `panel` as for Int8PanelFn.
using Int4PanelFn = void (*)(const Int4Panels& w, int64_t panel, int64_t count, const float* xsum,
                             const PanelRows& rows);

void int8_panel_scalar(const Int8Panels& w, int64_t panel, int64_t count, const float* scales, const PanelRows& rows);
void int8_panel_avx2(const Int8Panels& w, int64_t panel, int64_t count, const float* scales, const PanelRows& rows);
void int8_panel_avx512(const Int8Panels& w, int64_t panel, int64_t count, const float* scales, const PanelRows& rows);
void int4_panel_scalar(const Int4Panels& w, int64_t panel, int64_t count, const float* xsum, const PanelRows& rows);
void int4_panel_avx2(const Int4Panels& w, int64_t panel, int64_t count, const float* xsum, const PanelRows& rows);
void int4_panel_avx512(const Int4Panels& w, int64_t panel, int64_t count, const float* xsum, const PanelRows& rows);

// Rows of float activations split into int8 limbs (activation_limbs.h)
// against 4-bit panels, in VNNI integer dot products: the result of
// Int4PanelFn to within float32 rounding of each group's largest |x|.
// Rows [row0, row0 + m) of `limbs`; xsum as for Int4PanelFn, from row0.
struct LimbRows {
  const ActivationLimbs* limbs = nullptr;
  int64_t row0 = 0;
  int64_t m = 0;
  const float* xsum = nullptr;
  float* out = nullptr;
  int64_t ldo = 0;
  int64_t width = kPanel;
};
using Int4LimbsPanelFn = void (*)(const Int4Panels& w, int64_t panel, int64_t count, const LimbRows& rows);
void int4_limbs_panel_vnni(const Int4Panels& w, int64_t panel, int64_t count, const LimbRows& rows);
// The VNNI kernel where `isa` has it, else nullptr (the float kernels then).
Int4LimbsPanelFn int4_limbs_panel_fn(simd::Isa isa);

// The microkernel for `isa` (Scalar where the build has no such path).
Int8PanelFn int8_panel_fn(simd::Isa isa);
Int4PanelFn int4_panel_fn(simd::Isa isa);

// The remainder of for_row_blocks: f(N, r) for the one N equal to `rest`.
template <int N, typename F>
void row_tail(int64_t rest, int64_t r, F& f) {
  if constexpr (N > 0) {
    if (rest == N) f(std::integral_constant<int, N>{}, r);
    else row_tail<N - 1>(rest, r, f);
  }
}

// Splits m rows into the blocks a microkernel template handles: f(MR, r)
// for rows [r, r + MR), MR a std::integral_constant: Block while that many
// are left, then the remainder (1 to Block - 1) once.
template <int Block, typename F>
void for_row_blocks(int64_t m, F&& f) {
  int64_t r = 0;
  for (; r + Block <= m; r += Block) f(std::integral_constant<int, Block>{}, r);
  row_tail<Block - 1>(m - r, r, f);
}

// Calls run(m0, m1, p0, p1) over chunks of rows [m0, m1) (a chunk of
// activations, about 1 MiB, stays in L2 while every panel streams past it)
// and, within a chunk, over panel ranges [p0, p1) split across threads.
// `group` > 1: thread ranges are whole groups of that many panels.
template <typename Run>
void for_row_chunks(int64_t M, int64_t N, int64_t K, int64_t row_bytes_per_k, Run run, int64_t group = 1) {
  const int64_t per_row = std::max<int64_t>(K, 1) * row_bytes_per_k;
  const int64_t chunk = std::max<int64_t>(8, (int64_t{1} << 20) / per_row / 8 * 8);
  const int64_t panels = panels_of(N);
  const bool parallel = num_threads() > 1 && M * N * K >= 32768;
  for (int64_t m0 = 0; m0 < M; m0 += chunk) {
    const int64_t m1 = std::min(M, m0 + chunk);
    auto body = [&](int64_t g0, int64_t g1) { run(m0, m1, g0 * group, std::min(panels, g1 * group)); };
    const int64_t groups = (panels + group - 1) / group;
    if (parallel) parallel_for(0, groups, 1, body);
    else body(0, groups);
  }
}

}  // namespace lathe::kernels::qpanels
