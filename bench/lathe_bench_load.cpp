// Load benchmark: a generated program of >= 100,000 nodes and >= 1 GB of
// weights (made at bench time, never committed).
//
//   lathe_bench_load generate OUT.pt2 [LAYERS] [DIM] [modules|mlp]   write the program
//     (`modules`: every node also gets an nn_module_stack, blocks of 100
//     layers, as an exported model's nodes have; `make bench` views it.
//     `mlp`: each layer is followed by a relu, as in nn.Sequential(Linear,
//     ReLU, ...): 3 nodes per layer, the MLP `make bench` transforms)
//   lathe_bench_load load FILE.pt2 [SAVE.pt2]         load it (and save it) and report
//   lathe_bench_load decode FILE.pt2 N                decode its graph JSON N times (for a profiler)
//   lathe_bench_load time CMD [ARGS...]               run a command, report its wall and
//     CPU time and peak RSS:  RATE time <wall s> <user s> <sys s> <peak RSS KiB>
//
// `load` runs in its own process so its peak RSS is the loader's alone. The
// weights are memory-mapped and never touched, so peak RSS should stay far
// below the weight bytes; graph JSON decode speed is timed separately.
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <simdjson.h>

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

int generate(const std::string& path, int64_t layers, int64_t dim, bool modules, bool relu) {
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
    if (relu) {
      Node* r = g.create_node("torch.ops.aten.relu.default", {NamedArgument{"self", TensorRef{h}, ArgKind::Positional}});
      h = g.add_node_output(r, ValueKind::Tensor, "relu");
      h->set_meta(meta({1, dim}));
    }
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

// "RssAnon:" etc. from /proc/self/status, in MiB (-1 if absent).
double status_mib(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double kib = -1;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, field, n) == 0) kib = std::atof(line + n);
  }
  std::fclose(f);
  return kib / 1024.0;
}

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Best of three runs of fn(), in seconds of wall clock; `cpu` (if given)
// gets the CPU time of that run (on a shared machine, wall time also counts
// other people's work).
// `untimed()` runs before each timed run.
template <typename Setup, typename Fn>
double best_of_3_after(Setup&& untimed, Fn&& fn, double* cpu = nullptr) {
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    if (!untimed()) return -1;
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    if (!fn()) return -1;
    const double wall = seconds_since(t0);
    if (wall < best && cpu) *cpu = thread_cpu_seconds() - c0;
    best = std::min(best, wall);
  }
  return best;
}
template <typename Fn>
double best_of_3(Fn&& fn, double* cpu = nullptr) {
  return best_of_3_after([] { return true; }, fn, cpu);
}

// memcpy bandwidth (bytes copied per second) over buffers far larger than
// the caches: the physical limit for reading or writing text in memory.
double memcpy_bytes_per_second(size_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  double s = best_of_3([&] {
    std::memcpy(b.data(), a.data(), bytes);
    return b[bytes / 2] == 1;
  });
  return static_cast<double>(bytes) / s;
}

// What simdjson On-Demand itself costs to visit every value of a text
// (every string unescaped, every number parsed) while building nothing: a
// decoder reading the same text through it cannot be faster.
size_t visit_every_value(simdjson::ondemand::value v) {
  size_t n = 1;
  simdjson::ondemand::json_type t;
  if (v.type().get(t)) return 0;
  switch (t) {
    case simdjson::ondemand::json_type::object:
      for (auto field : v.get_object()) {
        std::string_view key;
        if (field.unescaped_key().get(key)) return 0;
        simdjson::ondemand::value x;
        if (field.value().get(x)) return 0;
        n += visit_every_value(x);
      }
      break;
    case simdjson::ondemand::json_type::array:
      for (auto element : v.get_array()) {
        simdjson::ondemand::value x;
        if (element.get(x)) return 0;
        n += visit_every_value(x);
      }
      break;
    case simdjson::ondemand::json_type::string: {
      std::string_view str;
      if (v.get_string().get(str)) return 0;
      break;
    }
    case simdjson::ondemand::json_type::number: {
      double d;
      if (v.get_double().get(d)) return 0;
      break;
    }
    default: {
      bool null;
      if (v.is_null().get(null)) return 0;
    }
  }
  return n;
}

// Bytes per second of that visit, a fresh parser each time (as a decode has).
double simdjson_walk_bytes_per_second(std::string_view text, size_t readable_after) {
  simdjson::padded_string copy;
  simdjson::padded_string_view view(text.data(), text.size(), text.size() + readable_after);
  if (readable_after < simdjson::SIMDJSON_PADDING) {
    copy = simdjson::padded_string(text);
    view = simdjson::padded_string_view(copy);
  }
  double s = best_of_3([&] {
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    simdjson::ondemand::value root;
    if (parser.iterate(view).get(doc) || doc.get_value().get(root)) return false;
    return visit_every_value(root) > 0;
  });
  return s > 0 ? static_cast<double>(text.size()) / s : 0;
}

// The archive's graph JSON record (models/<name>.json), or nullptr.
const ZipEntry* model_entry(const ZipReader& zip) {
  const ZipEntry* found = nullptr;
  for (const auto& e : zip.entries())
    if (e.name.find("/models/") != std::string::npos && e.name.size() > 5 &&
        e.name.compare(e.name.size() - 5, 5, ".json") == 0)
      found = &e;
  return found;
}

// The graph JSON record where it lies in the mapped archive, with the
// decode options that let simdjson parse it there (the archive's bytes after
// it serve as padding); nullptr if the archive has none.
struct ModelJson {
  ZipReader zip;  // keeps the mapping `text` views
  std::string_view text;
  JsonDecodeOptions options;
};
std::unique_ptr<ModelJson> open_model_json(const std::string& path) {
  auto zip = ZipReader::open(path);
  if (!zip.ok()) return nullptr;
  auto model = std::make_unique<ModelJson>(ModelJson{std::move(zip).value(), {}, {}});
  const ZipEntry* entry = model_entry(model->zip);
  if (!entry) return nullptr;
  auto bytes = model->zip.view(*entry);
  if (!bytes.ok()) return nullptr;
  model->text = std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  model->options.readable_after = model->zip.total_size() - (entry->data_offset + entry->size);
  return model;
}

// The graph JSON record on its own: decoded three times, then the decoded
// program encoded three times; rates against memcpy's and against
// simdjson's own walk of the same text.
int json_rates(const std::string& path) {
  auto model = open_model_json(path);
  if (!model) return 1;
  const std::string_view text = model->text;
  const JsonDecodeOptions& options = model->options;
  std::unique_ptr<ExportedProgram> decoded;
  double read_cpu = 0, write_cpu = 0;
  // Only the decode is timed: the previous run's program is freed before
  // the clock starts (freeing 30,000 nodes is not reading JSON).
  double read_s = best_of_3_after([&] {
    decoded.reset();
    return true;
  }, [&] {
    auto d = decode_program_json(text, options);
    if (!d.ok()) return false;
    decoded = std::move(d).value();
    return true;
  }, &read_cpu);
  std::string written;
  double write_s = best_of_3([&] {
    written = encode_program_json(*decoded);
    return !written.empty();
  }, &write_cpu);
  if (read_s < 0 || write_s < 0) return 1;
  const double mb = text.size() / 1e6, out_mb = written.size() / 1e6;
  const double copy = memcpy_bytes_per_second(std::max<size_t>(text.size(), 256u << 20)) / 1e6;
  std::printf("graph JSON read       %.1f MB decoded in %.3f s = %.0f MB/s (%.1f%% of memcpy; CPU %.3f s)\n", mb,
              read_s, mb / read_s, 100 * mb / read_s / copy, read_cpu);
  std::printf("graph JSON write      %.1f MB encoded in %.3f s = %.0f MB/s (%.1f%% of memcpy; CPU %.3f s)\n", out_mb,
              write_s, out_mb / write_s, 100 * out_mb / write_s / copy, write_cpu);
  const double walk = simdjson_walk_bytes_per_second(text, options.readable_after) / 1e6;
  std::printf("memcpy                %.0f MB/s (the physical limit: copying text already in memory)\n", copy);
  std::printf("simdjson walk         %.0f MB/s (simdjson On-Demand visiting every value, building nothing: the\n"
              "                      most any decoder through it can read; Lathe's read is %.0f%% of it)\n",
              walk, walk > 0 ? 100 * mb / read_s / walk : 0.0);
  std::printf("RATE json %.0f %.0f %.0f %.0f\n", mb / read_s, out_mb / write_s, copy, walk);
  return written == text ? 0 : (std::fprintf(stderr, "graph JSON: write differs from what was read\n"), 1);
}

// load [OUT.pt2]: read_pt2 (peak RSS is the loader's alone: this runs first,
// in its own process), verify, optionally write_pt2, then the JSON rates.
int load(const std::string& path, const std::string& out) {
  auto t0 = std::chrono::steady_clock::now();
  auto program = read_pt2(path);
  double load_s = seconds_since(t0);
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", program.error().message().c_str());
    return 1;
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  const double peak_rss_mb = ru.ru_maxrss / 1024.0, anon_mb = status_mib("RssAnon:"), file_mb = status_mib("RssFile:");

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
  double save_s = -1;
  if (!out.empty()) {
    auto ts = std::chrono::steady_clock::now();
    Status s = write_pt2(*program, out);
    save_s = seconds_since(ts);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.error().message().c_str());
      return 1;
    }
  }
  std::printf("nodes                 %zu\n", ep.graph().node_count());
  std::printf("weights               %.3f GB in %zu tensors\n", weight_bytes / 1e9, ep.parameters.size());
  std::printf("load (read_pt2)       %.3f s\n", load_s);
  std::printf("verify                %.3f s (%.2fx the load)\n", verify_s, verify_s / load_s);
  if (save_s >= 0) std::printf("save (write_pt2)      %.3f s\n", save_s);
  std::printf("peak RSS after load   %.1f MiB (%.1f%% of the weight bytes); now %.1f MiB anonymous, %.1f MiB file pages\n",
              peak_rss_mb, 100.0 * (ru.ru_maxrss * 1024.0) / static_cast<double>(weight_bytes), anon_mb, file_mb);
  return json_rates(path);
}

// decode FILE.pt2 N: the graph JSON record decoded N times and nothing
// else, for a profiler (`perf record lathe_bench_load decode ...`).
int decode_repeatedly(const std::string& path, int times) {
  auto model = open_model_json(path);
  if (!model) return 1;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < times; ++i)
    if (!decode_program_json(model->text, model->options).ok()) return 1;
  std::printf("decoded %.1f MB %d times: %.3f s each\n", model->text.size() / 1e6, times, seconds_since(t0) / times);
  return 0;
}

// A whole process, as a user runs it: wall clock from fork to exit, and
// what the kernel accounted to the child (wait4).
int time_command(char** argv) {
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    execvp(argv[0], argv);
    std::perror(argv[0]);
    std::_Exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (wait4(pid, &status, 0, &ru) != pid) return 1;
  const double wall = seconds_since(t0);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6; };
  std::printf("RATE time %.4f %.4f %.4f %ld\n", wall, secs(ru.ru_utime), secs(ru.ru_stime), ru.ru_maxrss);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "generate") == 0) {
    int64_t layers = argc > 3 ? std::stoll(argv[3]) : 50000;
    int64_t dim = argc > 4 ? std::stoll(argv[4]) : 72;
    bool modules = argc > 5 && std::strcmp(argv[5], "modules") == 0;
    bool mlp = argc > 5 && std::strcmp(argv[5], "mlp") == 0;
    return generate(argv[2], layers, dim, modules, mlp);
  }
  if (argc >= 3 && std::strcmp(argv[1], "time") == 0) return time_command(argv + 2);
  if (argc == 4 && std::strcmp(argv[1], "decode") == 0) return decode_repeatedly(argv[2], std::atoi(argv[3]));
  if ((argc == 3 || argc == 4) && std::strcmp(argv[1], "load") == 0) return load(argv[2], argc == 4 ? argv[3] : "");
  std::fprintf(stderr, "usage: %s generate OUT.pt2 [LAYERS] [DIM] [modules|mlp] | load FILE.pt2 [SAVE.pt2] | decode FILE.pt2 N | time CMD...\n", argv[0]);
  return 2;
}
