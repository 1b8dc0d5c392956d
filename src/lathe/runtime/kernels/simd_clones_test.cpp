// The loader picks the widest clone of a LATHE_SIMD_CLONES / LATHE_WIDE_CLONES
// loop that the CPU runs. GCC names an "arch=" clone by processor, and an
// "arch=haswell" clone was chosen only on CPUs GCC identifies as Haswell:
// every AMD and later Intel CPU ran the SSE2 baseline, which no numeric test
// could see. Here two probes are cloned with the same macros and each
// resolver (what the loader runs) is asked which clone it gives this CPU.
#include <gtest/gtest.h>

#include "lathe/runtime/kernels/simd.h"

#if LATHE_HAS_SIMD_CLONES

extern "C" {
LATHE_SIMD_CLONES int lathe_simd_clone_probe(int x) { return x + 1; }
LATHE_WIDE_CLONES int lathe_wide_clone_probe(int x) { return x + 2; }

// GCC's resolvers of the probes and the clones whose names do not depend on
// how the AVX2 clone is spelled, by their assembler names.
using Probe = int (*)(int);
void* lathe_simd_probe_resolver() __asm__("lathe_simd_clone_probe.resolver");
int lathe_simd_probe_default(int) __asm__("lathe_simd_clone_probe.default");
void* lathe_wide_probe_resolver() __asm__("lathe_wide_clone_probe.resolver");
int lathe_wide_probe_avx512(int) __asm__("lathe_wide_clone_probe.avx512f");
int lathe_wide_probe_default(int) __asm__("lathe_wide_clone_probe.default");
}

namespace {

bool has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

TEST(SimdClones, AnAvx2CpuRunsTheAvx2Clone) {
  __builtin_cpu_init();
  const auto chosen = reinterpret_cast<Probe>(lathe_simd_probe_resolver());
  if (has_avx2_fma()) {
    EXPECT_NE(chosen, &lathe_simd_probe_default) << "a CPU with AVX2 and FMA runs the baseline clone";
  } else {
    EXPECT_EQ(chosen, &lathe_simd_probe_default);
  }
  EXPECT_EQ(lathe_simd_clone_probe(1), 2);
}

TEST(SimdClones, AnAvx512CpuRunsTheAvx512Clone) {
  __builtin_cpu_init();
  const auto chosen = reinterpret_cast<Probe>(lathe_wide_probe_resolver());
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(chosen, &lathe_wide_probe_avx512);
  } else if (has_avx2_fma()) {
    EXPECT_TRUE(chosen != &lathe_wide_probe_default && chosen != &lathe_wide_probe_avx512);
  } else {
    EXPECT_EQ(chosen, &lathe_wide_probe_default);
  }
  EXPECT_EQ(lathe_wide_clone_probe(1), 3);
}

}  // namespace

#endif  // LATHE_HAS_SIMD_CLONES
