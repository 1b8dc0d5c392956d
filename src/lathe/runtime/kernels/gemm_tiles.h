// The register tiles of the blocked fp32 GEMM (gemm_blocked.h), one set per
// instruction set, chosen at run time from what the CPU reports.
//
// A tile computes C[mr, nr] (+)= A[mr, kc] @ Bp[kc, nr] where
//   A  is read in place: row r of the tile is a + r * lda, contiguous in k;
//   Bp is a packed panel: for each k, nr_max consecutive columns (zero past
//      the matrix edge), so every k step is whole vector loads;
//   C  rows have stride ldc; only the first nr columns are written.
// The first k block of a product starts from zero (or the bias), later
// ones add to C; the last one applies the fused clamp. Rows come from the
// template instance for that row count, columns past nr are masked.
//
// Each instruction set lives in its own file (gemm_tiles_<isa>.cpp), its
// functions compiled for that set only (target attributes, so the rest of
// the library stays baseline x86-64); the scalar set is plain C++ and runs
// anywhere. Tests run every set the CPU has against the reference GEMM.
#pragma once

#include <cstdint>

#include "lathe/runtime/kernels/simd.h"

namespace lathe::kernels {

struct TileArgs {
  int64_t kc;        // k steps in this block
  const float* a;    // tile row 0 at column k0
  int64_t lda;
  const float* b;    // packed panel at row k0: kc x nr_max
  float* c;
  int64_t ldc;
  int nr;            // valid columns (1..nr_max)
  bool accumulate;   // C += A@B (a later k block), else C = A@B [+ bias]
  const float* bias; // first block only: nr values added to every row, or nullptr
  bool clamp;        // last block only: C = min(max(C, lo), hi)
  float lo, hi;
  const float* prefetch;  // kc x nr_max floats to prefetch while computing (the next panel's block, or b itself)
};

using TileFn = void (*)(const TileArgs&);

// One row of A against whole packed panels (a GEMV on a prepacked weight):
// C[0, n0:n1] = a @ B over all K, where B's panels for those columns start
// at `panels`, one every panel_stride floats. The same sums in the same
// order as the 1-row tile over successive k blocks (from zero or the bias,
// k ascending, then the clamp), so the result is the tile path's, bit for
// bit; only the memory access differs (several panel streams at once,
// prefetched ahead), which is what a GEMV's speed is made of.
struct GemvArgs {
  int64_t K;
  const float* a;
  const float* panels;
  int64_t panel_stride;
  int64_t n;          // columns, from the first panel's first
  float* c;
  const float* bias;  // n values, or nullptr
  bool clamp;
  float lo, hi;
};

using GemvFn = void (*)(const GemvArgs&);

inline constexpr int kMaxTileRows = 8;

struct TileSet {
  simd::Isa isa;
  const char* name;
  int mr;                            // rows of a full tile
  int nr;                            // columns of a full tile (the packed panel width)
  TileFn rows[kMaxTileRows + 1];     // rows[m]: a tile of m rows, 1 <= m <= mr
  GemvFn gemv = nullptr;             // one row on prepacked panels, where the set has one
};

const TileSet& tiles_scalar();
const TileSet* tiles_avx2();    // nullptr where not compiled (not x86-64 GCC/Clang)
const TileSet* tiles_avx512();
const TileSet* tiles_avx512_narrow();  // 16 columns wide



// For sets without masked stores: a tile narrower than the panel runs the
// full-width tile on a scratch block and copies its nr columns back.
template <int MR, int NR, TileFn Full>
void tile_via_scratch(const TileArgs& p) {
  if (p.nr == NR) return Full(p);
  alignas(64) float scratch[MR * NR];
  float bias[NR] = {};
  TileArgs q = p;
  q.c = scratch;
  q.ldc = NR;
  if (p.accumulate) {
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) scratch[r * NR + j] = j < p.nr ? p.c[r * p.ldc + j] : 0.0f;
  } else if (p.bias) {
    for (int j = 0; j < p.nr; ++j) bias[j] = p.bias[j];
    q.bias = bias;
  }
  Full(q);
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < p.nr; ++j) p.c[r * p.ldc + j] = scratch[r * NR + j];
}

}  // namespace lathe::kernels
