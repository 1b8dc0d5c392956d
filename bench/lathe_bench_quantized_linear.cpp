// Weight-only quantized linear vs float32 linear on the portable kernels:
// latency and weight bytes read per call.
//
//   lathe_bench_quantized_linear [--threads T] [--repeat R]
//
// For each shape x[M, K] @ W[N, K]^T it times
//   fp32     linear(x, W)                             (kernels::linear_out)
//   int8     _weight_int8pack_mm(x, Wq, scales[N])     (what fuse_weight_only_quantized_linear makes)
//   int4g32  lathe.weight_int4_group_mm(x, Wq, scales[N, K/32], 32)
// and prints the median and p90 of R calls after one warm-up call, the
// weight bytes each call reads (weight + scales; the int4 values are stored
// one per byte), and the int8 speedup over fp32. M = 1 is the memory-bound
// decode case, where reading 4x fewer weight bytes matters most.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "lathe/runtime/kernels/matmul.h"
#include "lathe/runtime/kernels/quantized.h"
#include "lathe/runtime/parallel.h"

using namespace lathe;

namespace {

struct Timing {
  double median_ms = 0, p90_ms = 0;  // wall clock
  double cpu_median_ms = 0;          // CPU time of this thread (threads = 1: all the work)
};

double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

Timing time_calls(int repeat, const std::function<Status()>& call) {
  if (!call().ok()) {
    std::fprintf(stderr, "kernel failed\n");
    std::exit(1);
  }
  std::vector<double> ms, cpu;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_ms();
    (void)call();
    cpu.push_back(thread_cpu_ms() - c0);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  return Timing{ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)], cpu[cpu.size() / 2]};
}

// Deterministic values in [-1, 1) without a PRNG dependency.
void fill(Tensor& t, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1;
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  };
  std::byte* p = t.storage->mutable_data();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (t.dtype == DType::Float32) {
      reinterpret_cast<float*>(p)[i] = static_cast<float>(next() % 20000) / 10000.0f - 1.0f;
    } else {
      reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(static_cast<int>(next() % 16) - 8);
    }
  }
}

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, repeat = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
  }
  set_num_threads(std::max(1, threads));
  struct Shape {
    int64_t M, N, K;
  };
  const Shape shapes[] = {{1, 1024, 1024}, {1, 4096, 4096}, {8, 4096, 4096}, {64, 1024, 1024}};
  std::printf("%-16s %-8s %10s %10s %12s %14s %9s\n", "shape MxNxK", "kernel", "median ms", "p90 ms", "CPU med ms",
              "weight read", "vs fp32");
  for (const Shape& s : shapes) {
    Tensor x = Tensor::empty(DType::Float32, {s.M, s.K});
    Tensor w = Tensor::empty(DType::Float32, {s.N, s.K});
    Tensor q = Tensor::empty(DType::Int8, {s.N, s.K});
    Tensor sc = Tensor::empty(DType::Float32, {s.N});
    Tensor sg = Tensor::empty(DType::Float32, {s.N, s.K / 32});
    fill(x, 1);
    fill(w, 2);
    fill(q, 3);
    fill(sc, 4);
    fill(sg, 5);
    Tensor out = Tensor::empty(DType::Float32, {s.M, s.N});
    const Timing f = time_calls(repeat, [&] { return kernels::linear_out(x, w, nullptr, out); });
    const Timing i8 = time_calls(repeat, [&] { return kernels::weight_int8pack_mm_out(x, q, sc, out); });
    const Timing i4 = time_calls(repeat, [&] { return kernels::weight_int4_group_mm_out(x, q, sg, 32, out); });
    char shape[32];
    std::snprintf(shape, sizeof shape, "%ldx%ldx%ld", static_cast<long>(s.M), static_cast<long>(s.N),
                  static_cast<long>(s.K));
    const double nk = static_cast<double>(s.N * s.K);
    auto row = [&](const char* kernel, const Timing& t, double bytes) {
      std::printf("%-16s %-8s %10.3f %10.3f %12.3f %14s %8.2fx\n", shape, kernel, t.median_ms, t.p90_ms, t.cpu_median_ms,
                  mib(bytes).c_str(), f.cpu_median_ms / t.cpu_median_ms);
    };
    row("fp32", f, nk * 4);
    row("int8", i8, nk + s.N * 4.0);
    row("int4g32", i4, nk + nk / 32 * 4);
  }
  std::printf("(threads: %d, %d calls after one warm-up; vs fp32 = fp32 CPU median / this CPU median (wall time on a shared "
              "machine counts other people's work); weight read = weight + scales bytes per call; int4 values are "
              "stored one per byte)\n",
              threads, repeat);
  return 0;
}
