// SIMD building blocks shared by the portable matmul kernels (gemm.cpp,
// quantized.cpp): GCC vector types, unaligned loads and stores, a horizontal
// sum, and the "4-row dot" inner kernel (one row of x against four
// contiguous weight rows), written once for float and int8 weights.
//
// Portability: the library targets baseline x86-64. A hot loop marked
// LATHE_SIMD_CLONES is compiled twice, for x86-64-v3 (AVX2 + FMA) and for
// the baseline, and the loader picks the clone the CPU runs (GCC ifunc).
// The clone is named by ISA level, never by processor: GCC's resolver
// picks an "arch=haswell" clone only on a CPU it identifies as Haswell, so
// every AMD and every later Intel CPU ran the baseline. The
// helpers below are always_inline, so they take the target of the loop they
// are inlined into and no 32-byte vector crosses a call boundary in the
// baseline clone (hence -Wpsabi is silenced for every includer).
//
// Kernels that need wider units than the clones (AVX-512, VNNI) select a
// path at run time with cpu_supports() instead.
#pragma once

#include <cstdint>
#include <cstring>

// LATHE_WIDE_CLONES adds an AVX-512 clone, for loops written so the compiler
// vectorises them at any width (vector_math.cpp, norm.cpp). Sanitizer builds
// (no ifunc) run the baseline. simd_clones_test checks the loader's choice.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define LATHE_HAS_SIMD_CLONES 1
#define LATHE_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define LATHE_WIDE_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define LATHE_HAS_SIMD_CLONES 0
#define LATHE_SIMD_CLONES
#define LATHE_WIDE_CLONES
#endif

#pragma GCC diagnostic ignored "-Wpsabi"

namespace lathe::kernels::simd {

typedef float v8 __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

[[gnu::always_inline]] inline v8 load8(const float* p) {
  v8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
// Written element by element: GCC turns this into one sign-extending load
// (vpmovsxbd) and a vcvtdq2ps; __builtin_convertvector of an 8-byte vector
// became scalar conversions and shuffles.
[[gnu::always_inline]] inline v8 load8(const int8_t* p) {
  const v8i w = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]};
  return __builtin_convertvector(w, v8);
}
[[gnu::always_inline]] inline void store8(float* p, v8 v) { std::memcpy(p, &v, sizeof(v)); }
[[gnu::always_inline]] inline float hsum(v8 v) {
  float s = 0;
  for (int l = 0; l < 8; ++l) s += v[l];
  return s;
}

// t[r] = sum over k in [k0, k1) of a[k] * w_r[k], for four weight rows W
// (float or int8, converted to float). Each load of `a` feeds four
// products; eight lanes at a time, then a scalar tail.
template <typename W>
[[gnu::always_inline]] inline void dot4(const float* a, const W* w0, const W* w1, const W* w2, const W* w3, int64_t k0,
                                        int64_t k1, float t[4]) {
  v8 s0 = {}, s1 = {}, s2 = {}, s3 = {};
  int64_t k = k0;
  for (; k + 8 <= k1; k += 8) {
    const v8 x = load8(a + k);
    s0 += x * load8(w0 + k);
    s1 += x * load8(w1 + k);
    s2 += x * load8(w2 + k);
    s3 += x * load8(w3 + k);
  }
  t[0] = hsum(s0);
  t[1] = hsum(s1);
  t[2] = hsum(s2);
  t[3] = hsum(s3);
  for (; k < k1; ++k) {
    t[0] += a[k] * static_cast<float>(w0[k]);
    t[1] += a[k] * static_cast<float>(w1[k]);
    t[2] += a[k] * static_cast<float>(w2[k]);
    t[3] += a[k] * static_cast<float>(w3[k]);
  }
}

// sum over k in [k0, k1) of a[k] * w[k]: the one-row tail of dot4.
template <typename W>
[[gnu::always_inline]] inline float dot1(const float* a, const W* w, int64_t k0, int64_t k1) {
  v8 s = {};
  int64_t k = k0;
  for (; k + 8 <= k1; k += 8) s += load8(a + k) * load8(w + k);
  float t = hsum(s);
  for (; k < k1; ++k) t += a[k] * static_cast<float>(w[k]);
  return t;
}

// ---- run-time selection of the wider paths ------------------------------

// The instruction sets a kernel may pick at run time, narrowest first.
// Avx2: AVX2 + FMA. Avx512: F, BW, DQ and VL. Avx512Vnni: that plus VNNI
// (vpdpbusd: u8 x s8 dot products accumulated in int32).
enum class Isa { Scalar, Avx2, Avx512, Avx512Vnni };

inline const char* isa_name(Isa i) {
  switch (i) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Avx512Vnni: return "avx512-vnni";
  }
  return "?";
}

// The widest Isa this CPU runs (Scalar off x86-64). Unlike the clones,
// these paths stay on in sanitizer builds: they are plain functions with a
// target attribute, instrumented like any other.
inline Isa best_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const Isa best = [] {
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (avx512 && __builtin_cpu_supports("avx512vnni")) return Isa::Avx512Vnni;
    if (avx512) return Isa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
    return Isa::Scalar;
  }();
  return best;
#else
  return Isa::Scalar;
#endif
}

}  // namespace lathe::kernels::simd
