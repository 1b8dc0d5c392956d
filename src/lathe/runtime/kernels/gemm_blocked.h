// Cache-blocked fp32 GEMM on packed panels of B, with register tiles per
// instruction set (gemm_tiles.h):
//
//   C[M, N] = A[M, K] @ B[K, N] (+ bias[N]) (clamped to [lo, hi])
//
// B is repacked into panels of nr columns, each K rows of nr consecutive
// floats, so the tiles read it with whole aligned vector loads. Two ways:
//   * PackedB::pack, once, for a constant weight known when a program is
//     loaded (the XNNPACK delegate's fully-connected prepacks this way);
//   * gemm_blocked, per call, a block of columns at a time into a small
//     per-thread buffer, for any B (runtime operands are never packed ahead).
// A is read in place when its rows are contiguous (else copied once).
//
// Loop nests. Prepacked: column blocks (NC) -> row blocks (MC) -> k blocks
// (KC) -> panels -> tiles, so the C block (MC x NC) stays in L2 over the k
// blocks while B streams past once. Per call: column blocks -> k blocks
// (pack KC x NC of B) -> row blocks -> panels -> tiles, so the pack buffer
// stays small and in L2. Either way a panel's k block (KC x nr, at most
// 32 KiB) stays in L1 while the row tiles of A pass it, and the first tile
// prefetches the next panel. Threads (runtime/parallel.h) take disjoint
// column ranges, or row ranges when there are too few panels.
#pragma once

#include <cstdint>
#include <memory>

#include "lathe/runtime/kernels/gemm.h"
#include "lathe/runtime/kernels/gemm_tiles.h"

namespace lathe::kernels {

// The tile set this process uses: the widest the CPU has. LATHE_GEMM_ISA=
// scalar|avx2|avx512 in the environment narrows it (benchmarks), never
// beyond what the CPU has.
const TileSet& gemm_tiles();
// A given set, or nullptr where this CPU or build lacks it (tests).
const TileSet* gemm_tiles_for(simd::Isa isa);
// The set for products of at most 16 columns: AVX-512's 16-wide tiles
// when gemm_tiles() is AVX-512's (its 32-wide ones would compute half
// padding there), else gemm_tiles().
const TileSet& gemm_tiles_narrow();

struct GemmEpilogue {
  const float* bias = nullptr;  // N values, or nullptr
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
};

struct FreeAligned {
  void operator()(float* p) const;
};
using AlignedFloats = std::unique_ptr<float[], FreeAligned>;
AlignedFloats aligned_floats(int64_t count);  // 64-byte aligned, uninitialised

// A [K, N] matrix packed once for one tile set.
class PackedB {
 public:
  static PackedB pack(const TileSet& tiles, int64_t K, int64_t N, MatView B);
  int64_t k() const { return K_; }
  int64_t n() const { return N_; }
  const TileSet& tiles() const { return *tiles_; }
  const float* panels() const { return data_.get(); }

 private:
  const TileSet* tiles_ = nullptr;
  int64_t K_ = 0, N_ = 0;
  AlignedFloats data_;
};

// C = A @ B for a prepacked B; A is [M, B.k()].
void gemm_packed(int64_t M, MatView A, const PackedB& B, float* C, int64_t ldc, const GemmEpilogue& e = {});

// C = A @ B, packing B per call.
void gemm_blocked(const TileSet& tiles, int64_t M, int64_t N, int64_t K, MatView A, MatView B, float* C, int64_t ldc,
                  const GemmEpilogue& e = {});

}  // namespace lathe::kernels
