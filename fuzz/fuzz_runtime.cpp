// Fuzzes the executor and the portable kernels with programs that verify
// but ask for the absurd: extreme integers, sizes and indices. The input's
// first byte picks one of two builders, the rest drives it
// (FuzzedDataProvider):
//
//   sweep     a random valid program from the sweep's generator
//             (tests/sweep/program_generator.h; the seed and the size limits
//             come from the input), then up to eight edits of the built
//             graph: an integer argument (a dim, a slice bound, a stride, a
//             permutation, a size) becomes an extreme value, a value's
//             metadata gets an extreme or zero size, an operand is swapped
//             for another value defined before it
//   registry  one to three nodes calling any op the portable kernels
//             register, its arguments named from torch's schema
//             (ir/aten_schemas.h) and typed from how kernels read that name,
//             with extreme integers and integer lists, odd floats, tensors
//             of every storable dtype and shapes with zero dims as user
//             inputs or lifted constants, and index tensors holding -1,
//             2^62, INT64_MIN...
//
// Then, if the program verifies, it runs twice on inputs made from its
// metadata (integer inputs partly extreme) under small work limits
// (fuzz_run_util.h: tensors at most 64 MiB, nodes touching at most 2^24
// elements, while_loop at most 256 iterations). Errors are fine and must be non-empty; crashes, sanitizer
// reports, hangs and out-of-memory are the findings.
#include <fuzzer/FuzzedDataProvider.h>

#include <map>
#include <string>
#include <vector>

#include "fuzz_run_util.h"
#include "fuzz_util.h"
#include "lathe/ir/aten_schemas.h"
#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/kernel_registry.h"
#include "sweep/program_builder.h"
#include "sweep/program_generator.h"

using namespace lathe;

namespace {

int64_t pick_int(FuzzedDataProvider& f) {
  switch (f.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return f.ConsumeIntegralInRange<int64_t>(-4, 8);
    case 1: return f.ConsumeIntegral<int64_t>();
    default: return fuzz::kExtremeInts[f.ConsumeIntegralInRange<size_t>(0, std::size(fuzz::kExtremeInts) - 1)];
  }
}

std::vector<int64_t> pick_ints(FuzzedDataProvider& f) {
  std::vector<int64_t> v(f.ConsumeIntegralInRange<size_t>(0, 5));
  for (int64_t& x : v) x = pick_int(f);
  return v;
}

double pick_double(FuzzedDataProvider& f) {
  if (f.ConsumeBool()) return f.ConsumeIntegralInRange<int>(-8, 8) * 0.5;
  fuzz::Rng r{f.ConsumeIntegral<uint64_t>()};
  return fuzz::extreme_double(r);
}

const DType kDTypes[] = {DType::Float32, DType::Float32, DType::Float32, DType::Int64, DType::Int64, DType::Bool,
                         DType::Int32,   DType::UInt8,   DType::Int8,    DType::Int16, DType::Float16, DType::BFloat16,
                         DType::Float64};

DType pick_dtype(FuzzedDataProvider& f) { return kDTypes[f.ConsumeIntegralInRange<size_t>(0, std::size(kDTypes) - 1)]; }

std::vector<int64_t> pick_shape(FuzzedDataProvider& f) {
  static const int64_t dims[] = {1, 2, 3, 4, 5, 8, 0, 16};
  std::vector<int64_t> s(f.ConsumeIntegralInRange<size_t>(0, 4));
  for (int64_t& d : s) d = dims[f.ConsumeIntegralInRange<size_t>(0, std::size(dims) - 1)];
  return s;
}

// ---- sweep programs, edited ----------------------------------------------

// Values defined before `n` (placeholders, earlier nodes' outputs).
std::vector<Value*> defined_before(const Graph& g, const Node* n) {
  std::vector<Value*> out;
  for (const Argument& a : g.inputs()) a.for_each_value([&](Value* v) { out.push_back(v); });
  for (const Node* m : g.nodes()) {
    if (m == n) break;
    for (Value* v : m->defined_values()) out.push_back(v);
  }
  return out;
}

void edit_graph(ExportedProgram& ep, FuzzedDataProvider& f) {
  Graph& g = ep.graph();
  GraphAssembler edit(g);
  const int edits = f.ConsumeIntegralInRange<int>(0, 8);
  for (int e = 0; e < edits && f.remaining_bytes() > 0; ++e) {
    std::vector<Node*> nodes = g.nodes_snapshot();
    if (nodes.empty()) return;
    Node* n = nodes[f.ConsumeIntegralInRange<size_t>(0, nodes.size() - 1)];
    switch (f.ConsumeIntegralInRange<int>(0, 3)) {
      case 0:
      case 1: {  // an integer argument
        std::vector<size_t> ints;
        for (size_t i = 0; i < n->inputs().size(); ++i) {
          const Argument& a = n->inputs()[i].arg;
          if (a.is<int64_t>() || a.is<IntList>() || a.is<SymIntArg>() || a.is<SymIntList>()) ints.push_back(i);
        }
        if (ints.empty()) break;
        const size_t i = ints[f.ConsumeIntegralInRange<size_t>(0, ints.size() - 1)];
        const Argument& a = n->inputs()[i].arg;
        if (a.is<IntList>() && !a.as<IntList>().items.empty() && f.ConsumeBool()) {
          IntList l = a.as<IntList>();
          l.items[f.ConsumeIntegralInRange<size_t>(0, l.items.size() - 1)] = pick_int(f);
          edit.set_input(n, i, Argument(std::move(l)));
        } else if (a.is<IntList>() || a.is<SymIntList>()) {
          edit.set_input(n, i, Argument(IntList{pick_ints(f)}));
        } else {
          edit.set_input(n, i, Argument(pick_int(f)));
        }
        break;
      }
      case 2: {  // a value's metadata: an extreme or zero size
        if (n->defined_values().empty()) break;
        Value* v = n->defined_values()[0];
        if (!v->meta()) break;
        TensorMeta m = *v->meta();
        if (m.sizes.empty() || f.ConsumeBool()) {
          m.dtype = pick_dtype(f);
        } else {
          m.sizes[f.ConsumeIntegralInRange<size_t>(0, m.sizes.size() - 1)] = SymDim(f.ConsumeBool() ? 0 : pick_int(f));
        }
        v->set_meta(m);
        break;
      }
      default: {  // an operand swapped for another value defined before the node
        std::vector<size_t> refs;
        for (size_t i = 0; i < n->inputs().size(); ++i) {
          if (n->inputs()[i].arg.tensor()) refs.push_back(i);
        }
        std::vector<Value*> before = defined_before(g, n);
        if (refs.empty() || before.empty()) break;
        Value* v = before[f.ConsumeIntegralInRange<size_t>(0, before.size() - 1)];
        edit.set_input(n, refs[f.ConsumeIntegralInRange<size_t>(0, refs.size() - 1)], value_argument(v));
        break;
      }
    }
  }
}

void run_sweep(FuzzedDataProvider& f) {
  sweep::GeneratorOptions o;
  o.max_ops = f.ConsumeIntegralInRange<int>(1, 8);
  o.max_numel = f.ConsumeBool() ? 64 : 1024;
  o.second_method_percent = 0;
  sweep::ProgramSpec spec = sweep::generate_program(f.ConsumeIntegral<uint64_t>(), o);
  auto program = sweep::build_program(spec);
  fuzz::check_error(program, nullptr);
  if (!program.ok()) return;
  for (Method& m : program->methods) {
    edit_graph(*m.program, f);
    fuzz::Rng r{f.ConsumeIntegral<uint64_t>()};
    fuzz::run_if_verified(*m.program, r, f.ConsumeBool() ? 0 : f.ConsumeIntegralInRange<unsigned>(1, 50));
  }
}

// ---- registry calls --------------------------------------------------------

// How kernels read an argument of this name (runtime/kernel_call.h getters).
enum class Kind { Tensor, TensorList, Int, IntList, Double, Bool, DType, String, None };

Kind preferred_kind(const std::string& name) {
  static const std::map<std::string, Kind, std::less<>> table = [] {
    std::map<std::string, Kind, std::less<>> t;
    for (const char* n : {"self", "input", "other", "weight", "bias", "index", "src", "source", "mask", "mat1",
                          "mat2", "vec", "vec2", "batch1", "batch2", "values", "running_mean", "running_var",
                          "query", "key", "value", "attn_mask", "condition", "offsets", "grid", "x", "x1", "x2",
                          "tensor1", "tensor2", "input1", "input2", "scales", "zero_points", "scale", "zero_point",
                          "per_sample_weights", "prepend", "append", "end", "boundaries", "sorted_sequence",
                          "target", "indices", "w_ih", "w_hh", "b_ih", "b_hh", "hx", "g", "v", "acc", "min", "max"})
      t[n] = Kind::Tensor;
    for (const char* n : {"tensors", "inputs", "params"}) t[n] = Kind::TensorList;
    for (const char* n : {"dim", "dim0", "dim1", "dim2", "start", "step", "k", "groups", "chunks", "split_size",
                          "diagonal", "offset", "length", "n", "num_classes", "upscale_factor", "downscale_factor",
                          "start_dim", "end_dim", "axis", "group_size", "num_groups", "padding_idx", "low", "high",
                          "quant_min", "quant_max", "divisor_override", "storage_offset", "group", "num_layers",
                          "interpolation_mode", "padding_mode", "compute_mode", "repeats", "sections"})
      t[n] = Kind::Int;
    for (const char* n : {"dims", "size", "sizes", "shape", "stride", "padding", "dilation", "kernel_size",
                          "output_size", "output_padding", "pad", "shifts", "split_sizes", "normalized_shape",
                          "block_size", "sumdim", "expand1", "expand2", "expand3", "indices_or_sections"})
      t[n] = Kind::IntList;
    for (const char* n : {"alpha", "beta", "eps", "momentum", "p", "negative_slope", "lambd", "threshold",
                          "fill_value", "min_val", "max_val", "dropout", "dropout_p", "correction", "nan", "posinf",
                          "neginf", "input_scale", "s", "exponent", "margin", "reduction"})
      t[n] = Kind::Double;
    for (const char* n : {"keepdim", "ceil_mode", "count_include_pad", "largest", "sorted", "stable", "descending",
                          "transposed", "training", "train", "accumulate", "unbiased", "half_to_float",
                          "align_corners", "include_self", "is_causal", "enable_gqa", "batch_first",
                          "bidirectional", "has_biases", "copy", "include_last_offset", "use_input_stats",
                          "non_blocking", "right", "out_int32", "return_inverse", "return_counts"})
      t[n] = Kind::Bool;
    for (const char* n : {"dtype", "output_dtype", "scale_dtype", "zero_point_dtype"}) t[n] = Kind::DType;
    for (const char* n : {"approximate", "reduce", "rounding_mode", "mode", "equation", "mapping_type", "side",
                          "assert_msg"})
      t[n] = Kind::String;
    return t;
  }();
  auto it = table.find(name);
  return it == table.end() ? Kind::Double : it->second;
}

struct CallBuilder {
  ExportedProgram ep;
  GraphBuilder b{ep};
  FuzzedDataProvider& f;
  std::vector<Value*> tensors;  // every tensor value so far
  std::vector<std::pair<std::string, unsigned>> constants;  // name, extreme percent
  int inputs = 0;

  explicit CallBuilder(FuzzedDataProvider& fdp) : f(fdp) {}

  Value* new_tensor() {
    const DType dt = pick_dtype(f);
    const std::vector<int64_t> shape = pick_shape(f);
    const std::string name = "t" + std::to_string(inputs++);
    Value* v = nullptr;
    if (f.ConsumeBool()) {
      v = b.user_input(name, shape, dt);
    } else {
      v = b.constant(name, shape, dt);
      constants.emplace_back(name, f.ConsumeIntegralInRange<unsigned>(0, 60));
    }
    tensors.push_back(v);
    return v;
  }

  Value* tensor() {
    if (!tensors.empty() && f.ConsumeIntegralInRange<int>(0, 2) != 0) {
      return tensors[f.ConsumeIntegralInRange<size_t>(0, tensors.size() - 1)];
    }
    return new_tensor();
  }

  Argument argument(const std::string& name) {
    Kind k = preferred_kind(name);
    if (f.ConsumeIntegralInRange<int>(0, 9) == 0) k = static_cast<Kind>(f.ConsumeIntegralInRange<int>(0, 8));
    switch (k) {
      case Kind::Tensor:
        if (f.ConsumeIntegralInRange<int>(0, 7) == 0) return Argument(OptionalTensor{nullptr});
        return value_argument(tensor());
      case Kind::TensorList: {
        TensorList l;
        const size_t n = f.ConsumeIntegralInRange<size_t>(0, 3);
        for (size_t i = 0; i < n; ++i) l.items.push_back(tensor());
        if (name == "indices" || f.ConsumeIntegralInRange<int>(0, 5) == 0) {
          OptionalTensorList o;
          for (Value* v : l.items) o.items.push_back(f.ConsumeBool() ? v : nullptr);
          return Argument(std::move(o));
        }
        return Argument(std::move(l));
      }
      case Kind::Int: return Argument(pick_int(f));
      case Kind::IntList: return Argument(IntList{pick_ints(f)});
      case Kind::Double: return f.ConsumeBool() ? Argument(pick_double(f)) : Argument(pick_int(f));
      case Kind::Bool: return Argument(f.ConsumeBool());
      case Kind::DType: return Argument(ScalarTypeArg{pick_dtype(f)});
      case Kind::String: {
        static const char* const words[] = {"", "none", "tanh", "sum", "prod", "mean", "amax", "amin", "trunc",
                                            "floor", "same", "valid", "ij,jk->ik", "i,i->", "...ij->...ji",
                                            "ii->i", "bilinear", "nearest", "left", "right", "ASYMMETRIC",
                                            "SYMMETRIC", "->", "i->ii"};
        return Argument(std::string(words[f.ConsumeIntegralInRange<size_t>(0, std::size(words) - 1)]));
      }
      case Kind::None: return Argument();
    }
    return Argument();
  }

  TensorMeta output_meta(const std::vector<NamedArgument>& args) {
    const Value* first = nullptr;
    for (const NamedArgument& a : args) {
      if ((first = a.arg.tensor())) break;
    }
    if (first && first->meta() && f.ConsumeIntegralInRange<int>(0, 3) != 0) {
      TensorMeta m = *first->meta();
      if (f.ConsumeIntegralInRange<int>(0, 3) == 0) m.dtype = pick_dtype(f);
      return m;
    }
    return GraphBuilder::tensor_meta(pick_shape(f), pick_dtype(f));
  }

  // One call of `op`; false if nothing could be built.
  bool call(const std::string& op) {
    const AtenSchema* schema = find_aten_schema(op);
    std::vector<std::string> names;
    std::vector<bool> keyword;
    if (schema) {
      for (const AtenSchemaArg& a : schema->args) {
        names.emplace_back(a.name);
        keyword.push_back(a.keyword_only);
      }
    } else {
      names = {"self", "other"};
      keyword = {false, false};
    }
    std::vector<GraphBuilder::Arg> args;
    std::vector<NamedArgument> named;
    for (size_t i = 0; i < names.size(); ++i) {
      // Trailing arguments are often left to their defaults.
      if (i > 0 && f.ConsumeIntegralInRange<int>(0, 5) == 0) continue;
      Argument a = argument(names[i]);
      named.push_back({names[i], a, std::nullopt});
      args.emplace_back(names[i], std::move(a), keyword[i] ? ArgKind::Keyword : ArgKind::Positional);
    }
    const int returns = schema ? schema->returns : 1;
    std::vector<TensorMeta> outs;
    const int n_out = schema && schema->returns_list ? f.ConsumeIntegralInRange<int>(1, 3) : std::max(returns, 1);
    for (int i = 0; i < n_out && i < 4; ++i) outs.push_back(output_meta(named));
    std::vector<Value*> made;
    if (schema && schema->returns_list) {
      made = b.call_list(op, std::move(args), outs);
    } else if (outs.size() == 1) {
      made = {b.call(op, std::move(args), outs[0])};
    } else {
      made = b.call_multi(op, std::move(args), outs);
    }
    for (Value* v : made) tensors.push_back(v);
    return !made.empty();
  }

  void run() {
    const std::vector<std::string>& ops = registry_ops();
    const int calls = f.ConsumeIntegralInRange<int>(1, 3);
    Value* last = nullptr;
    for (int i = 0; i < calls && f.remaining_bytes() > 0; ++i) {
      if (!call(ops[f.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)])) return;
      last = tensors.back();
    }
    if (!last) return;
    b.user_output(last);
    if (tensors.size() > 1 && f.ConsumeBool()) b.user_output(tensors[f.ConsumeIntegralInRange<size_t>(0, tensors.size() - 1)]);
    fuzz::Rng r{f.ConsumeIntegral<uint64_t>()};
    for (const auto& [name, extreme] : constants) {
      const Tensor* old = ep.constants.find(name);
      if (!old) continue;
      Tensor t = Tensor::empty(old->dtype, old->sizes);
      if (!fuzz::fill_tensor(t, r, extreme).ok()) continue;
      ep.constants.set(name, std::move(t));
    }
    fuzz::run_if_verified(ep, r, f.ConsumeIntegralInRange<unsigned>(0, 60));
  }

  static const std::vector<std::string>& registry_ops() {
    static const std::vector<std::string> ops = portable_kernels().ops();
    return ops;
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_work();
  (void)CallBuilder::registry_ops();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider f(data, size);
  if (f.ConsumeIntegralInRange<int>(0, 2) == 0) {
    run_sweep(f);
  } else {
    CallBuilder c(f);
    c.run();
  }
  return 0;
}
