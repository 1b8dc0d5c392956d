// Large fp32 linear through Lathe's XNNPACK delegate (whose fully-connected
// runs Lathe's blocked GEMM on weights packed at init) vs the February 2022
// XNNPACK's fully-connected operator called directly, in GFLOP/s: the
// measurement that decided which GEMM the delegate uses (README, Benchmarks).
//
//   lathe_bench_xnnpack [M K N] [--threads T] [--repeat R]   default 256 1024 1024, 1 thread, 50
//
// Lathe side: a program `linear(x[M,K], W[N,K], b[N])` (weights as
// parameters), lowered by the partitioner, run by an Executor with the
// delegate registry: every call goes through Executor::run (input checks,
// slot binding, the delegate's execute, output allocation). Direct side:
// xnn_create_fully_connected_nc_f32 on the same weights and
// xnn_setup + xnn_run_operator on a pthreadpool of the same size. Both warm
// up once; calls alternate (Lathe, direct, Lathe, ...) so machine load
// falls on both alike; each reports the median of R calls. FLOPs = 2*M*K*N.
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "lathe/backends/lower.h"
#include "lathe/backends/partitioner.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/gemm_blocked.h"
#include "lathe/runtime/parallel.h"

using namespace lathe;

namespace {

// Calls a() and b() alternately (so load from other processes on a shared
// machine falls on both alike), one warm-up each; medians in ms.
template <typename A, typename B>
std::pair<double, double> interleaved_median_ms(int repeat, A&& a, B&& b) {
  a();
  b();
  std::vector<double> ta, tb;
  auto time = [](auto& f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  for (int r = 0; r < repeat; ++r) {
    ta.push_back(time(a));
    tb.push_back(time(b));
  }
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  return {ta[ta.size() / 2], tb[tb.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t M = 256, K = 1024, N = 1024;
  int threads = 1, repeat = 50;
  std::vector<int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else dims.push_back(std::atoll(a.c_str()));
  }
  if (dims.size() == 3) M = dims[0], K = dims[1], N = dims[2];
  set_xnnpack_threads(threads);
  set_num_threads(threads);  // Lathe's GEMM splits over the intra-op pool

  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("fc.weight", {N, K});
  Value* bias = b.parameter("fc.bias", {N});
  Value* x = b.user_input("x", {M, K});
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}, {"bias", bias}}, {M, N}));
  auto rep = partition(ep, xnnpack_backend());
  if (!rep.ok() || rep->delegates != 1) {
    std::fprintf(stderr, "partition failed: %s\n", rep.ok() ? "not claimed" : rep.error().message().c_str());
    return 1;
  }
  ExecutorOptions opts;
  opts.delegates = &builtin_delegates();
  auto ex = Executor::create(ep, opts);
  if (!ex.ok()) {
    std::fprintf(stderr, "%s\n", ex.error().message().c_str());
    return 1;
  }
  Tensor in = Tensor::empty(DType::Float32, {M, K});
  float* xp = reinterpret_cast<float*>(in.storage->mutable_data());
  for (int64_t i = 0; i < M * K; ++i) xp[i] = std::sin(static_cast<float>(i) * 0.01f);
  const std::vector<Tensor> inputs{in};
  Tensor lathe_out;
  auto lathe_call = [&] {
    auto r = (*ex)->run(inputs);
    if (!r.ok()) std::abort();
    lathe_out = (*r)[0];
  };

  // Direct: the same weights, the same operator, a pool of the same size.
  xnn_initialize(nullptr);
  const float* wp = reinterpret_cast<const float*>(ep.parameters.find("fc.weight")->data());
  const float* bp = reinterpret_cast<const float*>(ep.parameters.find("fc.bias")->data());
  xnn_operator_t op = nullptr;
  if (xnn_create_fully_connected_nc_f32(K, N, K, N, wp, bp, -INFINITY, INFINITY, 0, &op) != xnn_status_success) return 1;
  pthreadpool_t pool = threads > 1 ? pthreadpool_create(static_cast<size_t>(threads)) : nullptr;
  std::vector<float> out(static_cast<size_t>(M * N));
  auto direct_call = [&] {
    if (xnn_setup_fully_connected_nc_f32(op, M, xp, out.data(), pool) != xnn_status_success ||
        xnn_run_operator(op, pool) != xnn_status_success) {
      std::abort();
    }
  };
  const auto [lathe_ms, direct_ms] = interleaved_median_ms(repeat, lathe_call, direct_call);
  // Both sum k in order with FMAs from the bias, so they usually agree to
  // the bit; the check allows what a different summation order would cost.
  const float* lp = reinterpret_cast<const float*>(lathe_out.data());
  double worst = 0, scale = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(out[i] - lp[i])));
    scale = std::max(scale, static_cast<double>(std::abs(out[i])));
  }
  const bool same = worst <= 1e-5 * std::max(scale, 1.0);
  xnn_delete_operator(op);
  if (pool) pthreadpool_destroy(pool);

  const double gflop = 2.0 * static_cast<double>(M * K * N) * 1e-9;
  std::printf("linear %lldx%lldx%lld fp32, %d thread(s), median of %d\n", static_cast<long long>(M), static_cast<long long>(K),
              static_cast<long long>(N), threads, repeat);
  std::printf("  lathe (lowered, Executor::run, %s GEMM) %9.3f ms  %7.2f GFLOP/s\n", kernels::gemm_tiles().name, lathe_ms,
              gflop / (lathe_ms * 1e-3));
  std::printf("  xnnpack 2022 operator called directly  %9.3f ms  %7.2f GFLOP/s\n", direct_ms, gflop / (direct_ms * 1e-3));
  std::printf("  lathe / xnnpack: %.1f%% of the direct GFLOP/s; outputs %s (max |diff| %.3g, max |y| %.3g)\n",
              100.0 * direct_ms / lathe_ms, worst == 0 ? "bit-identical" : same ? "agree" : "DIFFER", worst, scale);
  std::printf("RATE lathe %.3f direct %.3f\n", gflop / (lathe_ms * 1e-3), gflop / (direct_ms * 1e-3));
  return same ? 0 : 1;
}
