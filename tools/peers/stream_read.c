/* Streaming read bandwidth of one core, measured: sums a buffer far larger
 * than the last-level cache with full-width vector loads, several passes,
 * the best pass reported. The physical limit of a batch-1 linear, which
 * must read every weight once per call (a 4096 x 4096 fp32 weight is
 * 64 MiB) and does two flops per weight.
 * Built and run by tools/peers/machine.py (cc -O3 -march=native).
 *
 *   stream_read [MiB] [passes]  ->  one line "<GB/s per CPU second> <GB/s wall>" */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_of(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 512;
  const int passes = argc > 2 ? atoi(argv[2]) : 5;
  const size_t n = mib * 1024 * 1024 / sizeof(float);
  float* buf = aligned_alloc(64, n * sizeof(float));
  if (!buf) return 1;
  for (size_t i = 0; i < n; ++i) buf[i] = (float)(i & 7); /* touch every page first */
  double best_cpu = 0, best_wall = 0;
  float sink = 0;
  for (int p = 0; p < passes; ++p) {
    const double c0 = clock_of(CLOCK_THREAD_CPUTIME_ID), t0 = clock_of(CLOCK_MONOTONIC);
#ifdef __AVX512F__
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i + 64 <= n; i += 64) {
      s0 = _mm512_add_ps(s0, _mm512_load_ps(buf + i));
      s1 = _mm512_add_ps(s1, _mm512_load_ps(buf + i + 16));
      s2 = _mm512_add_ps(s2, _mm512_load_ps(buf + i + 32));
      s3 = _mm512_add_ps(s3, _mm512_load_ps(buf + i + 48));
    }
    sink += _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
#else
    float s = 0;
    for (size_t i = 0; i < n; ++i) s += buf[i];
    sink += s;
#endif
    const double cpu = clock_of(CLOCK_THREAD_CPUTIME_ID) - c0, wall = clock_of(CLOCK_MONOTONIC) - t0;
    const double bytes = (double)n * sizeof(float);
    if (bytes / cpu > best_cpu) best_cpu = bytes / cpu;
    if (bytes / wall > best_wall) best_wall = bytes / wall;
  }
  if (sink == 42.0f) puts("");
  printf("%.2f %.2f\n", best_cpu / 1e9, best_wall / 1e9);
  free(buf);
  return 0;
}
