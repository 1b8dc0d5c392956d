// Load benchmark: a generated program of >= 100,000 nodes and >= 1 GB of
// weights (made at bench time, never committed).
//
//   lathe_bench_load generate OUT.pt2 [LAYERS] [DIM] [modules]   write the program
//     (`modules`: every node also gets an nn_module_stack, blocks of 100
//     layers, as an exported model's nodes have; `make bench` views it)
//   lathe_bench_load load OUT.pt2                      load it and report
//
// `load` runs in its own process so its peak RSS is the loader's alone. The
// weights are memory-mapped and never touched, so peak RSS should stay far
// below the weight bytes; graph JSON decode speed is timed separately.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "lathe/archive/zip_reader.h"
#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/program_json.h"
#include "lathe/serde/pt2.h"

using namespace lathe;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TensorMeta meta(std::vector<int64_t> sizes) {
  TensorMeta m;
  m.dtype = DType::Float32;
  for (int64_t s : sizes) m.sizes.emplace_back(s);
  for (int64_t s : Tensor::contiguous_strides(sizes)) m.strides.emplace_back(s);
  return m;
}

int generate(const std::string& path, int64_t layers, int64_t dim, bool modules) {
  Program program;
  ExportedProgram& ep = program.add_method("model");
  GraphAssembler g(ep.graph());
  std::vector<Value*> weights, biases;
  for (int64_t i = 0; i < layers; ++i) {
    for (bool is_bias : {false, true}) {
      std::string fqn = "layers." + std::to_string(i) + (is_bias ? ".bias" : ".weight");
      std::vector<int64_t> sizes = is_bias ? std::vector<int64_t>{dim} : std::vector<int64_t>{dim, dim};
      Value* p = g.insert_placeholder(ValueKind::Tensor, "p_layers_" + std::to_string(i) + (is_bias ? "_bias" : "_weight"));
      p->set_meta(meta(sizes));
      ep.input_specs.push_back(InputSpec{InputKind::Parameter, fqn, true, {}});
      Tensor t = Tensor::empty(DType::Float32, sizes);
      // A cheap non-constant pattern; the values are never read by the bench.
      auto* f = reinterpret_cast<float*>(t.storage->mutable_data());
      for (int64_t k = 0; k < t.numel(); ++k) f[k] = static_cast<float>((k * 7 + i) % 13) * 0.01f;
      ep.parameters.set(fqn, std::move(t));
      (is_bias ? biases : weights).push_back(p);
    }
  }
  Value* x = g.insert_placeholder(ValueKind::Tensor, "x");
  x->set_meta(meta({1, dim}));
  ep.input_specs.push_back(InputSpec{InputKind::UserInput, "", true, {}});
  Value* h = x;
  for (int64_t i = 0; i < layers; ++i) {
    Node* t = g.create_node("torch.ops.aten.t.default", {NamedArgument{"self", TensorRef{weights[i]}, ArgKind::Positional}});
    Value* tv = g.add_node_output(t, ValueKind::Tensor, "t");
    tv->set_meta(meta({dim, dim}));
    Node* mm = g.create_node("torch.ops.aten.addmm.default",
                             {NamedArgument{"self", TensorRef{biases[i]}, ArgKind::Positional},
                              NamedArgument{"mat1", TensorRef{h}, ArgKind::Positional},
                              NamedArgument{"mat2", TensorRef{tv}, ArgKind::Positional}});
    h = g.add_node_output(mm, ValueKind::Tensor, "addmm");
    h->set_meta(meta({1, dim}));
    if (modules) {
      const std::string b = std::to_string(i / 100), l = std::to_string(i);
      const std::string stack = "L__self___blocks_" + b + ",blocks." + b + ",bench.Block;L__self___blocks_" + b +
                                "_layers_" + l + ",blocks." + b + ".layers." + l + ",torch.nn.modules.linear.Linear";
      for (Node* n : {t, mm}) n->mutable_metadata().emplace_back("nn_module_stack", stack);
    }
  }
  g.insert_output(TensorRef{h});
  ep.output_specs.push_back(OutputSpec{OutputKind::UserOutput, ""});
  ep.opset_version = {{"aten", 10}};
  auto t0 = std::chrono::steady_clock::now();
  Status s = write_pt2(program, path);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.error().message().c_str());
    return 1;
  }
  std::printf("generated %s: %zu nodes, %lld layers of %lldx%lld, written in %.2f s\n", path.c_str(),
              ep.graph().node_count(), static_cast<long long>(layers), static_cast<long long>(dim),
              static_cast<long long>(dim), seconds_since(t0));
  return 0;
}

int load(const std::string& path) {
  auto t0 = std::chrono::steady_clock::now();
  auto program = read_pt2(path);
  double load_s = seconds_since(t0);
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", program.error().message().c_str());
    return 1;
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  double peak_rss_mb = ru.ru_maxrss / 1024.0;

  const ExportedProgram& ep = *program->methods[0].program;
  uint64_t weight_bytes = 0;
  for (const auto& [n, t] : ep.parameters) weight_bytes += t.storage->nbytes();

  auto tv = std::chrono::steady_clock::now();
  Status v = verify(*program);
  double verify_s = seconds_since(tv);
  if (!v.ok()) {
    std::fprintf(stderr, "verify: %s\n", v.error().message().c_str());
    return 1;
  }

  // Graph JSON decode on its own: the record as bytes, decoded three times.
  auto zip = ZipReader::open(path);
  const ZipEntry* entry = nullptr;
  for (const auto& e : zip->entries())
    if (e.name.find("/models/model.json") != std::string::npos) entry = &e;
  auto bytes = zip->view(*entry);
  std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  JsonDecodeOptions options;
  options.readable_after = zip->total_size() - (entry->data_offset + entry->size);
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    auto td = std::chrono::steady_clock::now();
    auto decoded = decode_program_json(text, options);
    best = std::min(best, seconds_since(td));
    if (!decoded.ok()) return 1;
  }
  double mb = text.size() / 1e6;
  std::printf("nodes                 %zu\n", ep.graph().node_count());
  std::printf("weights               %.2f GB in %zu tensors\n", weight_bytes / 1e9, ep.parameters.size());
  std::printf("load (read_pt2)       %.3f s\n", load_s);
  std::printf("verify                %.3f s\n", verify_s);
  std::printf("peak RSS              %.1f MiB (%.1f%% of the weight bytes)\n", peak_rss_mb,
              100.0 * (ru.ru_maxrss * 1024.0) / static_cast<double>(weight_bytes));
  std::printf("graph JSON            %.1f MB decoded in %.3f s = %.0f MB/s\n", mb, best, mb / best);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "generate") == 0) {
    int64_t layers = argc > 3 ? std::stoll(argv[3]) : 50000;
    int64_t dim = argc > 4 ? std::stoll(argv[4]) : 72;
    bool modules = argc > 5 && std::strcmp(argv[5], "modules") == 0;
    return generate(argv[2], layers, dim, modules);
  }
  if (argc == 3 && std::strcmp(argv[1], "load") == 0) return load(argv[2]);
  std::fprintf(stderr, "usage: %s generate OUT.pt2 [LAYERS] [DIM] [modules] | load FILE.pt2\n", argv[0]);
  return 2;
}
