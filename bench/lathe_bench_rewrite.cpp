// Rewrite benchmark: addmm_mm_to_linear + remove_dead_code over a generated
// program, in nodes per second (compared with torch.fx by scripts/bench.sh,
// through tools/bench_fx_rewrite.py, which builds the same shape).
//
//   lathe_bench_rewrite [LAYERS] [--verify]   default 500000 -> 1,000,000 nodes
//
// The program is what torch.export gives for a stack of nn.Linear layers:
// per layer a weight and a bias parameter, then
//   t_i = aten.t.default(p_layers_i_weight)
//   h   = aten.addmm.default(p_layers_i_bias, h, t_i)
// Weights are tiny and share one storage: the point is node throughput.
// Only the two passes are timed (as the CLI runs them: no --explain, no
// --verify); the result is then checked untimed: op counts, the output is a
// linear, no candidate was refused, and with --verify the full verify()
// (slow at this size: it is not part of the figure).
//
// To profile only the timed part, start the bench under
//   perf record -D -1 --control fifo:CTL ...  with LATHE_PERF_CTL=CTL
// (a named pipe): the bench writes "enable" to it when the passes start.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/verify.h"
#include "lathe/passes/addmm_mm_to_linear.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/remove_dead_code.h"

using namespace lathe;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU time of this process: on a shared, busy machine wall time also counts
// other people's work.
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

TensorMeta meta(std::vector<int64_t> sizes, bool requires_grad = false) {
  TensorMeta m;
  m.dtype = DType::Float32;
  for (int64_t s : sizes) m.sizes.emplace_back(s);
  for (int64_t s : Tensor::contiguous_strides(sizes)) m.strides.emplace_back(s);
  m.requires_grad = requires_grad;
  return m;
}

void build(ExportedProgram& ep, int64_t layers, int64_t dim) {
  GraphAssembler g(ep.graph());
  auto storage = Storage::allocate(static_cast<size_t>(dim * dim) * sizeof(float));
  auto state = [&](std::vector<int64_t> sizes) {
    Tensor t;
    t.storage = storage;
    t.dtype = DType::Float32;
    t.strides = Tensor::contiguous_strides(sizes);
    t.sizes = std::move(sizes);
    t.requires_grad = true;
    return t;
  };
  std::vector<Value*> weights, biases;
  weights.reserve(layers);
  biases.reserve(layers);
  for (int64_t i = 0; i < layers; ++i) {
    for (bool is_bias : {false, true}) {
      std::string suffix = is_bias ? "bias" : "weight";
      std::vector<int64_t> sizes = is_bias ? std::vector<int64_t>{dim} : std::vector<int64_t>{dim, dim};
      Value* p = g.insert_placeholder(ValueKind::Tensor, "p_layers_" + std::to_string(i) + "_" + suffix);
      p->set_meta(meta(sizes, true));
      std::string fqn = "layers." + std::to_string(i) + "." + suffix;
      ep.input_specs.push_back(InputSpec{InputKind::Parameter, fqn, true, {}});
      ep.parameters.set(fqn, state(sizes));
      (is_bias ? biases : weights).push_back(p);
    }
  }
  Value* h = g.insert_placeholder(ValueKind::Tensor, "x");
  h->set_meta(meta({1, dim}));
  ep.input_specs.push_back(InputSpec{InputKind::UserInput, "", true, {}});
  TensorMeta tmeta = meta({dim, dim}), hmeta = meta({1, dim});
  for (int64_t i = 0; i < layers; ++i) {
    Node* t = g.create_node("torch.ops.aten.t.default", {NamedArgument{"self", TensorRef{weights[i]}, ArgKind::Positional}});
    Value* tv = g.add_node_output(t, ValueKind::Tensor, "t");
    tv->set_meta(tmeta);
    Node* mm = g.create_node("torch.ops.aten.addmm.default",
                             {NamedArgument{"self", TensorRef{biases[i]}, ArgKind::Positional},
                              NamedArgument{"mat1", TensorRef{h}, ArgKind::Positional},
                              NamedArgument{"mat2", TensorRef{tv}, ArgKind::Positional}});
    h = g.add_node_output(mm, ValueKind::Tensor, "addmm");
    h->set_meta(hmeta);
  }
  g.insert_output(TensorRef{h});
  ep.output_specs.push_back(OutputSpec{OutputKind::UserOutput, ""});
}

}  // namespace

int main(int argc, char** argv) {
  int64_t layers = argc > 1 ? std::atoll(argv[1]) : 500000;
  bool check = argc > 2 && std::string(argv[2]) == "--verify";
  if (layers <= 0) {
    std::fprintf(stderr, "usage: lathe_bench_rewrite [LAYERS]\n");
    return 2;
  }
  ExportedProgram ep;
  auto t0 = std::chrono::steady_clock::now();
  build(ep, layers, 4);
  size_t nodes = ep.graph().node_count();
  std::printf("lathe: %zu nodes (%lld x t + addmm, %zu parameters), built in %.1f s\n", nodes,
              static_cast<long long>(layers), ep.parameters.size(), seconds_since(t0));

  PassManager pm;  // what `lathe transform` runs by default, without --verify
  pm.add(std::make_unique<AddmmMmToLinear>());
  pm.add(std::make_unique<RemoveDeadCode>());
  PassContext ctx;
  ctx.set_record_rewrites(false);  // as without --explain
  if (const char* ctl = std::getenv("LATHE_PERF_CTL")) {
    if (FILE* f = std::fopen(ctl, "w")) {
      std::fputs("enable\n", f);
      std::fclose(f);
    }
  }
  t0 = std::chrono::steady_clock::now();
  double c0 = cpu_seconds();
  Result<bool> r = pm.run(ep, "forward", ctx);
  double seconds = seconds_since(t0);
  double cpu = cpu_seconds() - c0;
  if (!r.ok()) {
    std::fprintf(stderr, "lathe: %s\n", r.error().message().c_str());
    return 1;
  }
  double rate = static_cast<double>(nodes) / seconds;
  double cpu_rate = static_cast<double>(nodes) / cpu;
  std::printf("lathe: %s %.3f s + %s %.3f s = %.3f s wall -> %.0f nodes/s (CPU %.3f s -> %.0f nodes/s)\n",
              pm.timings()[0].pass.c_str(), pm.timings()[0].seconds, pm.timings()[1].pass.c_str(),
              pm.timings()[1].seconds, seconds, rate, cpu, cpu_rate);

  // Untimed: the result must be right.
  std::map<std::string, int64_t> ops;
  for (const Node* n : ep.graph().nodes()) ops[n->op_name()]++;
  t0 = std::chrono::steady_clock::now();
  Status ok = check ? verify(ep, "forward") : Status::Ok();
  double verify_s = seconds_since(t0);
  const Value* out = ep.graph().outputs().at(0).tensor();
  bool returns_linear = out && out->producer() && out->producer()->target() == "torch.ops.aten.linear.default";
  bool right = ops.size() == 1 && ops["aten.linear.default"] == layers && ok.ok() && ctx.records().empty() &&
               returns_linear;
  char verdict[64];
  std::snprintf(verdict, sizeof verdict, "ok (%.1f s, untimed)", verify_s);
  std::printf("lathe: after: %zu nodes, linear=%lld, output is a linear: %s; verify %s\n", ep.graph().node_count(),
              static_cast<long long>(ops["aten.linear.default"]), returns_linear ? "yes" : "NO",
              !check ? "skipped (pass --verify)" : ok.ok() ? verdict : ok.error().message().c_str());
  if (!right) {
    std::fprintf(stderr, "lathe: wrong result\n");
    return 1;
  }
  std::printf("RATE lathe %.0f %.0f\n", rate, cpu_rate);
  // Tearing down a million nodes one free() at a time takes seconds and
  // measures nothing: leave that to the OS.
  std::fflush(stdout);
  std::_Exit(0);
}
