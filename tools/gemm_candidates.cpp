// The measurement that chose Lathe's fp32 GEMM (issue 17, part 3;
// docs/benchmarks.md, "Which GEMM"): one linear, C = X W^T + b, through each
// candidate, one thread, in one process, the candidates taking turns.
//
//   Lathe's blocked GEMM, per tile set (avx512 8x32, avx2 6x16, scalar
//     4x16), with W packed once (what the XNNPACK delegate does) and packed
//     per call (what the portable kernels do);
//   oneDNN 2.6 (Debian's libdnnl-dev): dnnl_sgemm, and the inner-product
//     primitive on weights reordered once into its preferred layout;
//   the February 2022 XNNPACK's fully-connected operator.
//
// Not part of the build (oneDNN is not a dependency). With the project
// built in build/ and `apt-get install libdnnl-dev`:
//
//   g++ -O2 -std=c++20 -Isrc tools/gemm_candidates.cpp build/liblathe_runtime.a build/liblathe_serde.a \
//       build/liblathe_ir.a build/liblathe_archive.a build/liblathe_core.a -ldnnl -lXNNPACK -lpthreadpool \
//       -lpthread -o /tmp/gemm_candidates
//   OMP_NUM_THREADS=1 /tmp/gemm_candidates [M K N] [repeat]      default 64 4096 4096, 10
//
// Each line: the median wall time, GFLOP/s of wall time, and GFLOP/s per
// second of this thread's CPU time (on a shared machine the CPU-time rate
// is what the core did while it ran us; compare it with fma_peak's).
#include <dnnl.h>
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "lathe/runtime/kernels/gemm_blocked.h"

using namespace lathe::kernels;

namespace {

double cpu_now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
double wall_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Candidate {
  std::string name;
  std::function<void()> call;
  std::vector<double> cpu, wall;
};

// Round-robin: every candidate once per round (so load from other
// processes on a shared machine falls on all alike), after one warm-up
// call each; medians per candidate.
void measure(std::vector<Candidate>& cs, double flops, int repeat) {
  for (Candidate& c : cs) c.call();
  for (int r = 0; r < repeat; ++r) {
    for (Candidate& c : cs) {
      const double c0 = cpu_now(), w0 = wall_now();
      c.call();
      c.cpu.push_back(cpu_now() - c0);
      c.wall.push_back(wall_now() - w0);
    }
  }
  for (Candidate& c : cs) {
    std::sort(c.cpu.begin(), c.cpu.end());
    std::sort(c.wall.begin(), c.wall.end());
    const double cpu = c.cpu[repeat / 2], w = c.wall[repeat / 2];
    std::printf("%-38s %9.3f ms wall %7.1f GFLOP/s | %7.1f GFLOP/s per CPU second\n", c.name.c_str(), w * 1e3,
                flops / w * 1e-9, flops / cpu * 1e-9);
  }
}

// oneDNN's inner product, weights reordered once into the layout it asks for.
std::function<void()> onednn_inner_product(int64_t M, int64_t K, int64_t N, float* x, float* w, float* b, float* y) {
  dnnl_engine_t eng;
  dnnl_engine_create(&eng, dnnl_cpu, 0);
  dnnl_stream_t st;
  dnnl_stream_create(&st, eng, dnnl_stream_default_flags);
  dnnl_memory_desc_t src, w_any, w_plain, dst, bias;
  dnnl_dims_t sd = {M, K}, wd = {N, K}, dd = {M, N}, bd = {N};
  dnnl_memory_desc_init_by_tag(&src, 2, sd, dnnl_f32, dnnl_nc);
  dnnl_memory_desc_init_by_tag(&w_any, 2, wd, dnnl_f32, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&w_plain, 2, wd, dnnl_f32, dnnl_oi);
  dnnl_memory_desc_init_by_tag(&dst, 2, dd, dnnl_f32, dnnl_nc);
  dnnl_memory_desc_init_by_tag(&bias, 1, bd, dnnl_f32, dnnl_x);
  dnnl_inner_product_desc_t ipd;
  dnnl_inner_product_forward_desc_init(&ipd, dnnl_forward_inference, &src, &w_any, &bias, &dst);
  dnnl_primitive_desc_t pd;
  if (dnnl_primitive_desc_create(&pd, &ipd, nullptr, eng, nullptr) != dnnl_success) std::abort();
  const char* impl = "?";
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  std::printf("(oneDNN inner product implementation: %s)\n", impl);
  const dnnl_memory_desc_t* w_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  dnnl_memory_t m_src, m_w, m_wp, m_dst, m_b;
  dnnl_memory_create(&m_src, &src, eng, x);
  dnnl_memory_create(&m_w, &w_plain, eng, w);
  dnnl_memory_create(&m_wp, w_md, eng, DNNL_MEMORY_ALLOCATE);
  dnnl_memory_create(&m_dst, &dst, eng, y);
  dnnl_memory_create(&m_b, &bias, eng, b);
  dnnl_primitive_desc_t rpd;
  dnnl_reorder_primitive_desc_create(&rpd, &w_plain, eng, w_md, eng, nullptr);
  dnnl_primitive_t reorder;
  dnnl_primitive_create(&reorder, rpd);
  dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, m_w}, {DNNL_ARG_TO, m_wp}};
  dnnl_primitive_execute(reorder, st, 2, ra);
  dnnl_stream_wait(st);
  dnnl_primitive_t ip;
  dnnl_primitive_create(&ip, pd);
  auto args = std::make_shared<std::vector<dnnl_exec_arg_t>>(std::vector<dnnl_exec_arg_t>{
      {DNNL_ARG_SRC, m_src}, {DNNL_ARG_WEIGHTS, m_wp}, {DNNL_ARG_BIAS, m_b}, {DNNL_ARG_DST, m_dst}});
  return [=] {
    dnnl_primitive_execute(ip, st, 4, args->data());
    dnnl_stream_wait(st);
  };
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t M = argc > 3 ? std::atoll(argv[1]) : 64, K = argc > 3 ? std::atoll(argv[2]) : 4096,
                N = argc > 3 ? std::atoll(argv[3]) : 4096;
  const int repeat = argc > 4 ? std::atoi(argv[4]) : 10;
  std::vector<float> x(M * K), w(N * K), y(M * N), bias(N, 0.1f);
  for (auto& v : x) v = static_cast<float>(std::rand() % 1000) / 1000.0f - 0.5f;
  for (auto& v : w) v = static_cast<float>(std::rand() % 1000) / 1000.0f - 0.5f;
  const double flops = 2.0 * M * N * K;
  std::printf("linear %lldx%lldx%lld fp32, 1 thread, median of %d\n", (long long)M, (long long)K, (long long)N, repeat);
  const MatView X{x.data(), K, 1}, Wt{w.data(), 1, K};  // B = W^T
  GemmEpilogue e;
  e.bias = bias.data();
  std::vector<Candidate> cs;
  std::vector<PackedB> packed;
  packed.reserve(3);
  for (simd::Isa isa : {simd::Isa::Avx512, simd::Isa::Avx2, simd::Isa::Scalar}) {
    const TileSet* t = gemm_tiles_for(isa);
    if (!t) continue;
    const PackedB& p = packed.emplace_back(PackedB::pack(*t, K, N, Wt));
    cs.push_back({std::string("lathe ") + t->name + ", packed once", [&, M, p = &p] { gemm_packed(M, X, *p, y.data(), N, e); }});
    cs.push_back({std::string("lathe ") + t->name + ", packed per call", [&, M, N, K, t] { gemm_blocked(*t, M, N, K, X, Wt, y.data(), N, e); }});
  }
  cs.push_back({"oneDNN 2.6 dnnl_sgemm",
                [&] { dnnl_sgemm('N', 'T', M, N, K, 1.0f, x.data(), K, w.data(), K, 0.0f, y.data(), N); }});
  cs.push_back({"oneDNN 2.6 inner product, prepacked", onednn_inner_product(M, K, N, x.data(), w.data(), bias.data(), y.data())});
  xnn_initialize(nullptr);
  xnn_operator_t op = nullptr;
  if (xnn_create_fully_connected_nc_f32(K, N, K, N, w.data(), bias.data(), -INFINITY, INFINITY, 0, &op) != xnn_status_success) return 1;
  cs.push_back({"XNNPACK 2022 fully-connected", [&] {
                  xnn_setup_fully_connected_nc_f32(op, M, x.data(), y.data(), nullptr);
                  xnn_run_operator(op, nullptr);
                }});
  measure(cs, flops, repeat);
  return 0;
}
