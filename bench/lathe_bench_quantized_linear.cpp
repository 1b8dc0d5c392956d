// Quantized linears against Lathe's best float32 linear, and the memory
// bandwidth they are bound by.
//
//   lathe_bench_quantized_linear [--threads T] [--repeat R] [--dump DIR]
//
// Every kernel runs the way a loaded program runs it: a one-node program
// (weights as parameters) through Executor::run, so the quantized weights
// are repacked once when the executor is created, as for a real model.
// For each shape x[M, K] @ W[N, K]^T:
//   fp32        linear on the portable kernels
//   fp32-xnn    linear lowered to XNNPACK (when built with it)
//   int8        _weight_int8pack_mm(x, Wq int8, scales[N])
//   int4g32     lathe.weight_int4_group_mm(x, Wq in [-8, 7], scales[N, K/32], 32)
//   int4g128    the same with groups of 128
//   dyn8        lathe.dynamic_int8_mm(x, Wq, scales[N], eps): x quantized to
//               int8 per row (torchao's dynamic scheme), VNNI int8 GEMM
// Each figure is the median of R calls after one warm-up: CPU time of the
// calling thread (threads = 1: all the work; wall time on a shared machine
// also counts other processes) and wall time. "GB/s" is weight bytes the
// kernel streams per call (int8: N*K + scales; int4: N*K/2 + scales) over the
// CPU median, beside "read GB/s": a plain vector sum over a buffer of the
// same size, the machine's streaming-read bandwidth at that size (the
// physical limit of a GEMV). "vs fp32" = best fp32 CPU median / this one.
//
// --dump DIR writes each shape's x, int8 and int4 weights, scales, Lathe's
// outputs (raw little-endian files) and CPU medians (times.txt) for
// bench/torch_quantized_linear.py, which times PyTorch's own kernels on the
// same weights.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/simd.h"
#include "lathe/runtime/parallel.h"
#ifdef LATHE_WITH_XNNPACK
#include "lathe/backends/lower.h"
#include "lathe/backends/partitioner.h"
#include "lathe/backends/xnnpack_backend.h"
#endif

using namespace lathe;

namespace {

struct Timing {
  double cpu_ms = 0, wall_ms = 0;  // medians
};

double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

Timing time_calls(int repeat, const std::function<void()>& call) {
  call();
  std::vector<double> wall, cpu;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_ms();
    call();
    cpu.push_back(thread_cpu_ms() - c0);
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  return Timing{cpu[cpu.size() / 2], wall[wall.size() / 2]};
}

// Streaming read of `bytes` (a vector sum nothing can skip); GB/s, median.
LATHE_SIMD_CLONES
float sum_bytes(const float* p, size_t n) {
  kernels::simd::v8 a = {}, b = {}, c = {}, d = {};
  for (size_t i = 0; i + 32 <= n; i += 32) {
    a += kernels::simd::load8(p + i);
    b += kernels::simd::load8(p + i + 8);
    c += kernels::simd::load8(p + i + 16);
    d += kernels::simd::load8(p + i + 24);
  }
  const kernels::simd::v8 t = a + b + c + d;
  float r = 0;
  for (int l = 0; l < 8; ++l) r += t[l];
  return r;
}

double read_gbps(size_t bytes, int repeat) {
  std::vector<float> buf(bytes / 4, 1.0f);
  volatile float sink = 0;
  const Timing t = time_calls(repeat, [&] { sink = sink + sum_bytes(buf.data(), buf.size()); });
  return static_cast<double>(bytes) / (t.cpu_ms * 1e-3) * 1e-9;
}

// Deterministic values without a PRNG dependency: floats in [-1, 1), int8
// in [lo, hi].
uint32_t next(uint32_t& s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}
void fill_float(const Tensor& t, uint32_t seed, float scale = 1.0f) {
  uint32_t s = seed * 2654435761u + 1;
  float* p = reinterpret_cast<float*>(t.storage->mutable_data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = (static_cast<float>(next(s) % 20000) / 10000.0f - 1.0f) * scale;
}
void fill_int8(const Tensor& t, uint32_t seed, int lo, int hi) {
  uint32_t s = seed * 2654435761u + 1;
  int8_t* p = reinterpret_cast<int8_t*>(t.storage->mutable_data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<int8_t>(lo + static_cast<int>(next(s) % (hi - lo + 1)));
}

struct Shape {
  int64_t M, N, K;
};

// The weights of one shape, shared by every kernel.
struct Weights {
  Tensor x, w_fp32, q8, s8, q4, s4g32, s4g128;
};

Weights make_weights(const Shape& s) {
  Weights w;
  w.x = Tensor::empty(DType::Float32, {s.M, s.K});
  w.w_fp32 = Tensor::empty(DType::Float32, {s.N, s.K});
  w.q8 = Tensor::empty(DType::Int8, {s.N, s.K});
  w.s8 = Tensor::empty(DType::Float32, {s.N});
  w.q4 = Tensor::empty(DType::Int8, {s.N, s.K});
  w.s4g32 = Tensor::empty(DType::Float32, {s.N, s.K / 32});
  w.s4g128 = Tensor::empty(DType::Float32, {s.N, s.K / 128});
  fill_float(w.x, 1);
  fill_float(w.w_fp32, 2, 0.05f);
  fill_int8(w.q8, 3, -128, 127);
  fill_float(w.s8, 4, 0.01f);
  fill_int8(w.q4, 5, -8, 7);
  fill_float(w.s4g32, 6, 0.01f);
  fill_float(w.s4g128, 7, 0.01f);
  return w;
}

// A one-node program: `op` on x and the given parameters, all named.
std::unique_ptr<ExportedProgram> program(const Shape& s, const std::string& op,
                                         const std::vector<std::pair<std::string, Tensor>>& params,
                                         const std::vector<std::pair<std::string, Argument>>& literals,
                                         const char* input_name) {
  auto ep = std::make_unique<ExportedProgram>();
  GraphBuilder b(*ep);
  std::vector<GraphBuilder::Arg> args;
  args.push_back({input_name, b.user_input("x", {s.M, s.K})});
  for (const auto& [name, t] : params) {
    args.push_back({name, b.parameter("p_" + name, t.sizes, t.dtype)});
    ep->parameters.set("p_" + name, t);
  }
  for (const auto& [name, v] : literals) args.push_back({name, v});
  b.user_output(b.call(op, args, {s.M, s.N}));
  return ep;
}

struct Row {
  const char* kernel;
  Timing t;
  double weight_bytes;
  Tensor out;
};

Row run_program(const char* kernel, const ExportedProgram& ep, const Tensor& x, double weight_bytes, int repeat,
                bool xnnpack = false) {
  ExecutorOptions opts;
#ifdef LATHE_WITH_XNNPACK
  if (xnnpack) opts.delegates = &builtin_delegates();
#endif
  auto ex = Executor::create(ep, opts);
  if (!ex.ok()) {
    std::fprintf(stderr, "%s: %s\n", kernel, ex.error().message().c_str());
    std::exit(1);
  }
  const std::vector<Tensor> in{x};
  Tensor out;
  const Timing t = time_calls(repeat, [&] {
    auto r = (*ex)->run(in);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", kernel, r.error().message().c_str());
      std::exit(1);
    }
    out = (*r)[0];
  });
  return Row{kernel, t, weight_bytes, out};
}

void dump(const std::string& dir, const Shape& s, const std::string& what, const Tensor& t) {
  const std::string path = dir + "/" + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) +
                           "_" + what + ".bin";
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(t.data()), static_cast<std::streamsize>(t.nbytes()));
}

std::vector<Row> bench_shape(const Shape& s, const Weights& w, int repeat) {
  const double nk = static_cast<double>(s.N * s.K);
  std::vector<Row> rows;
  auto fp32 = program(s, "aten.linear.default", {{"weight", w.w_fp32}}, {}, "input");
  rows.push_back(run_program("fp32", *fp32, w.x, nk * 4, repeat));
#ifdef LATHE_WITH_XNNPACK
  auto lowered = program(s, "aten.linear.default", {{"weight", w.w_fp32}}, {}, "input");
  if (partition(*lowered, xnnpack_backend()).ok()) {
    rows.push_back(run_program("fp32-xnn", *lowered, w.x, nk * 4, repeat, true));
  }
#endif
  auto i8 = program(s, "aten._weight_int8pack_mm.default", {{"mat2", w.q8}, {"scales", w.s8}}, {}, "self");
  rows.push_back(run_program("int8", *i8, w.x, nk + s.N * 4.0, repeat));
  auto g32 = program(s, "lathe.weight_int4_group_mm.default", {{"mat2", w.q4}, {"scales", w.s4g32}},
                     {{"group_size", Argument(int64_t{32})}}, "self");
  rows.push_back(run_program("int4g32", *g32, w.x, nk / 2 + nk / 32 * 8, repeat));
  auto g128 = program(s, "lathe.weight_int4_group_mm.default", {{"mat2", w.q4}, {"scales", w.s4g128}},
                      {{"group_size", Argument(int64_t{128})}}, "self");
  rows.push_back(run_program("int4g128", *g128, w.x, nk / 2 + nk / 128 * 8, repeat));
  auto dyn = program(s, "lathe.dynamic_int8_mm.default", {{"mat2", w.q8}, {"scales", w.s8}},
                     {{"eps", Argument(1.1920928955078125e-07)}}, "self");
  rows.push_back(run_program("dyn8", *dyn, w.x, nk + s.N * 4.0, repeat));
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, repeat = 30;
  std::string dump_dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dump")) dump_dir = argv[i + 1];
  }
  set_num_threads(std::max(1, threads));
#ifdef LATHE_WITH_XNNPACK
  set_xnnpack_threads(threads);
#endif
  std::printf("microkernels: %s; threads: %d; median of %d calls after one warm-up\n",
              kernels::simd::isa_name(kernels::simd::best_isa()), threads, repeat);
  std::printf("%-16s %-9s %9s %9s %11s %8s %11s %8s %8s\n", "shape MxNxK", "kernel", "CPU ms", "wall ms", "weights MiB",
              "GB/s", "read GB/s", "of read", "vs fp32");
  const Shape shapes[] = {{1, 4096, 4096}, {1, 11008, 4096}, {32, 4096, 4096}};
  for (const Shape& s : shapes) {
    const Weights w = make_weights(s);
    const std::vector<Row> rows = bench_shape(s, w, repeat);
    double best_fp32 = 1e300;
    for (const Row& r : rows) {
      if (std::string(r.kernel).rfind("fp32", 0) == 0) best_fp32 = std::min(best_fp32, r.t.cpu_ms);
    }
    char shape[40];
    std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", static_cast<long long>(s.M), static_cast<long long>(s.N),
                  static_cast<long long>(s.K));
    for (const Row& r : rows) {
      const double gbps = r.weight_bytes / (r.t.cpu_ms * 1e-3) * 1e-9;
      const double read = read_gbps(static_cast<size_t>(r.weight_bytes) / 64 * 64, std::max(5, repeat / 3));
      std::printf("%-16s %-9s %9.3f %9.3f %11.2f %8.1f %11.1f %7.0f%% %7.2fx\n", shape, r.kernel, r.t.cpu_ms,
                  r.t.wall_ms, r.weight_bytes / (1024.0 * 1024.0), gbps, read, 100.0 * gbps / read,
                  best_fp32 / r.t.cpu_ms);
    }
    if (!dump_dir.empty()) {
      dump(dump_dir, s, "x", w.x);
      dump(dump_dir, s, "q8", w.q8);
      dump(dump_dir, s, "s8", w.s8);
      dump(dump_dir, s, "q4", w.q4);
      dump(dump_dir, s, "s4g32", w.s4g32);
      dump(dump_dir, s, "s4g128", w.s4g128);
      std::ofstream times(dump_dir + "/times.txt", std::ios::app);
      for (const Row& r : rows) {
        dump(dump_dir, s, std::string("out_") + r.kernel, r.out);
        times << shape << " " << r.kernel << " " << r.t.cpu_ms << "\n";
      }
    }
  }
  std::printf("(read GB/s at 1 GiB, beyond the last-level cache: %.1f)\n", read_gbps(size_t{1} << 30, 5));
  return 0;
}
