// Portable tiles, 4 rows x 16 columns in plain C++ (the compiler may
// vectorise them for the baseline instruction set). The fallback where the
// CPU has neither AVX2 nor AVX-512, and the reference the SIMD tiles are
// tested against alongside the plain triple loop.
#include "lathe/runtime/kernels/gemm_tiles.h"

#include <algorithm>

namespace lathe::kernels {

namespace {

constexpr int kNr = 16;

template <int MR>
void full_tile(const TileArgs& p) {
  float acc[MR][kNr];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < kNr; ++j) acc[r][j] = p.accumulate ? p.c[r * p.ldc + j] : p.bias ? p.bias[j] : 0.0f;
  const float* b = p.b;
  for (int64_t k = 0; k < p.kc; ++k, b += kNr) {
    for (int r = 0; r < MR; ++r) {
      const float x = p.a[r * p.lda + k];
      for (int j = 0; j < kNr; ++j) acc[r][j] += x * b[j];
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int j = 0; j < kNr; ++j) {
      const float v = p.clamp ? std::min(std::max(acc[r][j], p.lo), p.hi) : acc[r][j];
      p.c[r * p.ldc + j] = v;
    }
  }
}

template <int MR>
void tile(const TileArgs& p) {
  tile_via_scratch<MR, kNr, full_tile<MR>>(p);
}

const TileSet kSet = {simd::Isa::Scalar, "scalar", 4, kNr, {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

const TileSet& tiles_scalar() { return kSet; }

}  // namespace lathe::kernels
