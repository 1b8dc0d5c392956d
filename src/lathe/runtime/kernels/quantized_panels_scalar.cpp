// The reference microkernels of quantized_panels.h: plain loops, one output
// at a time, summing k in order. Every machine runs them; the vector paths
// are tested against them.
#include <cstring>

#include "lathe/runtime/kernels/quantized_panels.h"

namespace lathe::kernels::qpanels {

AlignedBytes::AlignedBytes(size_t n) : n_(n) {
  const size_t rounded = (n + 63) / 64 * 64;
  p_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, rounded == 0 ? 64 : rounded)));
  if (!p_) throw std::bad_alloc();
  std::memset(p_.get(), 0, rounded == 0 ? 64 : rounded);
}

void int8_panel_scalar(const Int8Panels& w, int64_t panel, int64_t count, const float* scales, const PanelRows& rows) {
  for (int64_t c = 0; c < count; ++c) {
    const int8_t* base = reinterpret_cast<const int8_t*>(w.data.data()) + (panel + c) * w.k * kPanel;
    const int64_t width = c + 1 == count ? rows.width : kPanel;
    for (int64_t r = 0; r < rows.m; ++r) {
      const float* x = rows.x + r * rows.ldx;
      for (int64_t i = 0; i < width; ++i) {
        float acc = 0;
        for (int64_t k = 0; k < w.k; ++k) acc += x[k] * static_cast<float>(base[k * kPanel + i]);
        rows.out[r * rows.ldo + c * kPanel + i] = acc * scales[c * kPanel + i];
      }
    }
  }
}

void int4_panel_scalar(const Int4Panels& w, int64_t panel, int64_t count, const float* xsum, const PanelRows& rows) {
  const int64_t groups = w.groups();
  for (int64_t c = 0; c < count; ++c) {
    const uint32_t* base = reinterpret_cast<const uint32_t*>(w.data.data()) + (panel + c) * (w.k / 8) * kPanel;
    const float* scales = w.scales.data() + (panel + c) * groups * kPanel;
    const float* zeros = w.zeros.data() + (panel + c) * groups * kPanel;
    const int64_t width = c + 1 == count ? rows.width : kPanel;
    for (int64_t r = 0; r < rows.m; ++r) {
      const float* x = rows.x + r * rows.ldx;
      for (int64_t i = 0; i < width; ++i) {
        float total = 0;
        for (int64_t g = 0; g < groups; ++g) {
          float acc = 0;
          for (int64_t k = g * w.group; k < (g + 1) * w.group; ++k) {
            const uint32_t u = (base[(k / 8) * kPanel + i] >> (4 * (k % 8))) & 0xF;
            acc += x[k] * static_cast<float>(static_cast<int>(u) - 8);
          }
          total += acc * scales[g * kPanel + i] + xsum[r * groups + g] * zeros[g * kPanel + i];
        }
        rows.out[r * rows.ldo + c * kPanel + i] = total;
      }
    }
  }
}

void vnni_panel_scalar(const Int8VnniPanels& w, int64_t panel, int64_t count, const float* scales,
                       const QuantizedRows& rows) {
  for (int64_t c = 0; c < count; ++c) {
    const int8_t* base = reinterpret_cast<const int8_t*>(w.data.data()) + (panel + c) * w.k4 * kPanel * 4;
    const int32_t* off = w.offsets.data() + (panel + c) * kPanel;
    const int64_t width = c + 1 == count ? rows.width : kPanel;
    for (int64_t r = 0; r < rows.m; ++r) {
      const uint8_t* x = rows.x + r * rows.ldx;
      for (int64_t i = 0; i < width; ++i) {
        int32_t acc = 0;
        for (int64_t t = 0; t < w.k4; ++t) {
          for (int64_t j = 0; j < 4; ++j) acc += int32_t{x[t * 4 + j]} * base[(t * kPanel + i) * 4 + j];
        }
        rows.out[r * rows.ldo + c * kPanel + i] =
            static_cast<float>(acc - off[i]) * rows.row_scales[r] * scales[c * kPanel + i];
      }
    }
  }
}

Int8PanelFn int8_panel_fn(simd::Isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa >= simd::Isa::Avx512) return int8_panel_avx512;
  if (isa == simd::Isa::Avx2) return int8_panel_avx2;
#endif
  (void)isa;
  return int8_panel_scalar;
}

Int4PanelFn int4_panel_fn(simd::Isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa >= simd::Isa::Avx512) return int4_panel_avx512;
  if (isa == simd::Isa::Avx2) return int4_panel_avx2;
#endif
  (void)isa;
  return int4_panel_scalar;
}

Int4LimbsPanelFn int4_limbs_panel_fn(simd::Isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == simd::Isa::Avx512Vnni) return int4_limbs_panel_vnni;
#endif
  (void)isa;
  return nullptr;
}

VnniPanelFn vnni_panel_fn(simd::Isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == simd::Isa::Avx512Vnni) return vnni_panel_avx512;
#endif
  (void)isa;
  return vnni_panel_scalar;
}

}  // namespace lathe::kernels::qpanels
