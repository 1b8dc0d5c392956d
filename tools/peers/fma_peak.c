/* Peak single-core FP32 FMA throughput, measured: independent chains of
 * fused multiply-adds on full vector registers, nothing else in the loop.
 * Built and run by tools/peers/machine.py (cc -O3 -march=native; the
 * accumulators must stay in registers, which the unrolled loop lets -O3 do).
 *
 *   fma_peak [seconds]   ->  lines "avx512|avx2 <GFLOP/s per CPU second> <GFLOP/s wall>"
 *
 * CHAINS independent accumulators cover the FMA latency (4 cycles) times
 * the FMA ports (up to 2): 8 would do, 16 leave slack. Each FMA is
 * 2 x lanes floating-point operations. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHAINS 16
#define INNER 1000

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* CPU time of this thread: on a shared machine the core is not always
 * ours, and the rate per second of CPU time is what the core does while
 * it runs us (the physical limit); the wall-clock rate also counts the
 * time neighbours held it. */
static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void report(const char* isa, double flops, double wall, double cpu) {
  printf("%s %.2f %.2f\n", isa, flops / cpu / 1e9, flops / wall / 1e9);
}

#ifdef __AVX512F__
static void run512(double seconds) {
  __m512 acc[CHAINS];
  for (int i = 0; i < CHAINS; ++i) acc[i] = _mm512_set1_ps(1.0f + 1e-3f * i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  long iters = 0;
  double c0 = cpu_now(), t0 = now(), t;
  do {
    for (int k = 0; k < INNER; ++k) {
#pragma GCC unroll 16
      for (int i = 0; i < CHAINS; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    }
    iters += INNER;
  } while ((t = now()) - t0 < seconds);
  float sink = 0;
  for (int i = 0; i < CHAINS; ++i) sink += _mm512_reduce_add_ps(acc[i]);
  if (sink == 42.0f) puts("");
  report("avx512", (double)iters * CHAINS * 16 * 2, t - t0, cpu_now() - c0);
}
#endif

#ifdef __AVX2__
static void run256(double seconds) {
  __m256 acc[CHAINS];
  for (int i = 0; i < CHAINS; ++i) acc[i] = _mm256_set1_ps(1.0f + 1e-3f * i);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  long iters = 0;
  double c0 = cpu_now(), t0 = now(), t;
  do {
    for (int k = 0; k < INNER; ++k) {
#pragma GCC unroll 16
      for (int i = 0; i < CHAINS; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    }
    iters += INNER;
  } while ((t = now()) - t0 < seconds);
  float sink = 0;
  float lanes[8];
  for (int i = 0; i < CHAINS; ++i) {
    _mm256_storeu_ps(lanes, acc[i]);
    for (int j = 0; j < 8; ++j) sink += lanes[j];
  }
  if (sink == 42.0f) puts("");
  report("avx2", (double)iters * CHAINS * 8 * 2, t - t0, cpu_now() - c0);
}
#endif

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 0.2;
#ifdef __AVX512F__
  run512(seconds);
#endif
#ifdef __AVX2__
  run256(seconds);
#endif
  return 0;
}
