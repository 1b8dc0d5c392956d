#include "lathe/ir/graph_builder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lathe/core/int_arith.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/verify.h"

namespace lathe {

namespace {

// Builder misuse is a bug in the test that uses it: fail loudly at once.
[[noreturn]] void builder_fail(const std::string& what) {
  std::fprintf(stderr, "GraphBuilder: %s\n", what.c_str());
  std::abort();
}

// FNV-1a: stable across platforms and runs, unlike std::hash.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

template <typename T>
void store(std::byte* base, int64_t i, T v) {
  std::memcpy(base + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

// Float32 → binary16 for the values we generate (k/64, |k| <= 64): normal
// numbers with few mantissa bits, so the truncation is exact.
uint16_t to_half(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  if ((bits & 0x7fffffffu) == 0) return sign;
  int32_t exp = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint16_t mant = static_cast<uint16_t>((bits >> 13) & 0x3ffu);
  return static_cast<uint16_t>(sign | (exp << 10) | mant);
}

}  // namespace

GraphBuilder::GraphBuilder(ExportedProgram& ep) : ep_(&ep), graph_(&ep.graph()), assembler_(ep.graph()) {}
GraphBuilder::GraphBuilder(Graph& graph) : graph_(&graph), assembler_(graph) {}

ExportedProgram& GraphBuilder::program() {
  if (!ep_) builder_fail("program() on a builder of a bare graph");
  return *ep_;
}

Argument GraphBuilder::value_arg(Value* v) {
  if (!v) return OptionalTensor{nullptr};
  return value_argument(v);
}

TensorMeta GraphBuilder::tensor_meta(DType dtype, std::vector<SymDim> sizes) {
  TensorMeta m;
  m.dtype = dtype;
  m.strides.resize(sizes.size());
  // Walk from the innermost dim, multiplying; a symbolic factor turns the
  // running stride into a product expression ("s0*3").
  SymDim stride = int64_t{1};
  for (size_t i = sizes.size(); i-- > 0;) {
    m.strides[i] = stride;
    const SymDim& d = sizes[i];
    if (stride.is_concrete() && d.is_concrete()) {
      // Wrapping, never UB: a shape whose element count passes int64 (a
      // hostile-input test's broadcast view) is the runtime's to refuse.
      stride = wrapping_mul(stride.value(), std::max<int64_t>(d.value(), 1));
    } else {
      std::string lhs = d.is_concrete() ? std::to_string(d.value()) : d.expr().expr;
      if (stride.is_concrete() && stride.value() == 1) {
        stride = SymExpr{lhs, std::nullopt};
      } else {
        std::string rhs = stride.is_concrete() ? std::to_string(stride.value()) : stride.expr().expr;
        stride = SymExpr{lhs + "*" + rhs, std::nullopt};
      }
    }
  }
  m.sizes = std::move(sizes);
  return m;
}

TensorMeta GraphBuilder::tensor_meta(std::vector<int64_t> sizes, DType dtype) {
  return tensor_meta(dtype, std::vector<SymDim>(sizes.begin(), sizes.end()));
}

std::string GraphBuilder::op_base_name(const std::string& op) {
  // namespace.name.overload → name; namespace.name → name.
  const ops::TargetParts parts = ops::split_target(op);
  if (!parts.name.empty()) return std::string(parts.name);
  return parts.ns.empty() ? "node" : std::string(parts.ns);
}

std::string GraphBuilder::full_target(const std::string& op) { return ops::full_target(op); }

Tensor GraphBuilder::deterministic_tensor(const std::string& seed_name, DType dtype, std::vector<int64_t> sizes) {
  Tensor t = Tensor::empty(dtype, std::move(sizes));
  std::byte* base = t.storage->mutable_data();
  uint64_t state = fnv1a(seed_name) | 1;
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // PCG's LCG step
    int64_t k = static_cast<int64_t>((state >> 33) % 128);            // 0..127
    // Multiples of 1/64 in [-1, 1): exact in every float format we write.
    float f = static_cast<float>(k - 64) / 64.0f;
    int64_t small = k % 7 - 3;
    switch (dtype) {
      case DType::Float32: store(base, i, f); break;
      case DType::Float64: store(base, i, static_cast<double>(f)); break;
      case DType::Float16: store(base, i, to_half(f)); break;
      case DType::BFloat16: {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        store(base, i, static_cast<uint16_t>(bits >> 16));
        break;
      }
      case DType::Int64: store(base, i, small); break;
      case DType::Int32: store(base, i, static_cast<int32_t>(small)); break;
      case DType::Int16: store(base, i, static_cast<int16_t>(small)); break;
      case DType::Int8: store(base, i, static_cast<int8_t>(small)); break;
      case DType::UInt8: store(base, i, static_cast<uint8_t>(k % 7)); break;
      case DType::Bool: store(base, i, static_cast<uint8_t>(k & 1)); break;
      default: break;  // other dtypes stay zero-filled
    }
  }
  return t;
}

Value* GraphBuilder::add_input(InputSpec spec, ValueKind kind, const std::string& name,
                               std::optional<TensorMeta> meta) {
  // Insert after every input that torch.export orders before this kind.
  size_t pos = graph_->inputs().size();
  if (ep_) {
    pos = input_insert_position(*ep_, spec.kind);
  }
  Value* v = assembler_.insert_placeholder(kind, name, pos);
  if (meta) v->set_meta(std::move(*meta));
  if (ep_) ep_->input_specs.insert(ep_->input_specs.begin() + static_cast<std::ptrdiff_t>(pos), std::move(spec));
  return v;
}

Value* GraphBuilder::parameter(const std::string& fqn, std::vector<int64_t> sizes, DType dtype) {
  if (!ep_) builder_fail("parameter() on a builder of a bare graph");
  TensorMeta meta = tensor_meta(sizes, dtype);
  meta.requires_grad = true;  // as torch.export records parameters
  Tensor t = deterministic_tensor(fqn, dtype, sizes);
  t.requires_grad = true;
  ep_->parameters.set(fqn, std::move(t));
  return add_input(InputSpec{InputKind::Parameter, fqn, true, {}}, ValueKind::Tensor,
                   lifted_placeholder_name(InputKind::Parameter, fqn), std::move(meta));
}

Value* GraphBuilder::buffer(const std::string& fqn, std::vector<int64_t> sizes, bool persistent, DType dtype) {
  if (!ep_) builder_fail("buffer() on a builder of a bare graph");
  Tensor t = deterministic_tensor(fqn, dtype, sizes);
  (persistent ? ep_->buffers : ep_->constants).set(fqn, std::move(t));
  return add_input(InputSpec{InputKind::Buffer, fqn, persistent, {}}, ValueKind::Tensor,
                   lifted_placeholder_name(InputKind::Buffer, fqn), tensor_meta(sizes, dtype));
}

Value* GraphBuilder::constant(const std::string& name, std::vector<int64_t> sizes, DType dtype) {
  if (!ep_) builder_fail("constant() on a builder of a bare graph");
  ep_->constants.set(name, deterministic_tensor(name, dtype, sizes));
  return add_input(InputSpec{InputKind::TensorConstant, name, true, {}}, ValueKind::Tensor,
                   lifted_placeholder_name(InputKind::TensorConstant, name), tensor_meta(sizes, dtype));
}

Value* GraphBuilder::user_input(const std::string& name, std::vector<int64_t> sizes, DType dtype) {
  return user_input(name, tensor_meta(sizes, dtype));
}

Value* GraphBuilder::user_input(const std::string& name, TensorMeta meta) {
  if (!ep_) builder_fail("user_input() on a builder of a bare graph; use input()");
  return add_input(InputSpec{InputKind::UserInput, "", true, {}}, ValueKind::Tensor, name, std::move(meta));
}

Value* GraphBuilder::sym_int_input(const std::string& name, SymExpr expr) {
  Value* v = add_input(InputSpec{InputKind::UserInput, "", true, {}}, ValueKind::SymInt, name, std::nullopt);
  v->set_sym(SymDim(std::move(expr)));
  return v;
}

Value* GraphBuilder::input(const std::string& name, TensorMeta meta) {
  return add_input(InputSpec{InputKind::UserInput, "", true, {}}, ValueKind::Tensor, name, std::move(meta));
}

Node* GraphBuilder::make_node(const std::string& op, std::vector<Arg> args) {
  std::vector<NamedArgument> inputs;
  inputs.reserve(args.size());
  for (auto& a : args) inputs.push_back(NamedArgument{std::move(a.name), std::move(a.value), a.kind});
  last_node_ = assembler_.create_node(full_target(op), std::move(inputs));
  return last_node_;
}

Value* GraphBuilder::call(const std::string& op, std::vector<Arg> args, std::vector<int64_t> sizes, DType dtype,
                          const std::string& name) {
  return call(op, std::move(args), tensor_meta(sizes, dtype), name);
}

Value* GraphBuilder::call(const std::string& op, std::vector<Arg> args, TensorMeta meta, const std::string& name) {
  Node* n = make_node(op, std::move(args));
  Value* v = assembler_.add_node_output(n, ValueKind::Tensor, name.empty() ? op_base_name(op) : name);
  v->set_meta(std::move(meta));
  return v;
}

std::vector<Value*> GraphBuilder::call(const std::string& op, std::vector<Arg> args,
                                       std::initializer_list<TensorMeta> outputs, std::vector<std::string> names) {
  return call_multi(op, std::move(args), std::vector<TensorMeta>(outputs), std::move(names));
}

std::vector<Value*> GraphBuilder::call_outputs(const std::string& op, std::vector<Arg> args,
                                               std::vector<TensorMeta> outputs, std::vector<std::string> names, bool list) {
  Node* n = make_node(op, std::move(args));
  std::vector<Value*> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = i < names.size() ? names[i] : "getitem";
    Value* v = list ? assembler_.new_node_value(n, ValueKind::Tensor, name)
                    : assembler_.add_node_output(n, ValueKind::Tensor, name);
    v->set_meta(std::move(outputs[i]));
    out.push_back(v);
  }
  if (list) assembler_.set_node_outputs(n, {TensorList{out}});
  return out;
}

std::vector<Value*> GraphBuilder::call_multi(const std::string& op, std::vector<Arg> args,
                                             std::vector<TensorMeta> outputs, std::vector<std::string> names) {
  return call_outputs(op, std::move(args), std::move(outputs), std::move(names), false);
}

std::vector<Value*> GraphBuilder::call_list(const std::string& op, std::vector<Arg> args,
                                            std::vector<TensorMeta> outputs, std::vector<std::string> names) {
  return call_outputs(op, std::move(args), std::move(outputs), std::move(names), true);
}

Value* GraphBuilder::call_sym_int(const std::string& op, std::vector<Arg> args, SymDim sym, const std::string& name) {
  Node* n = make_node(op, std::move(args));
  Value* v = assembler_.add_node_output(n, ValueKind::SymInt, name.empty() ? op_base_name(op) : name);
  v->set_sym(std::move(sym));
  return v;
}

void GraphBuilder::user_output(Value* value) { user_output(value_arg(value)); }

void GraphBuilder::user_output(Argument arg) {
  assembler_.insert_output(std::move(arg));
  if (ep_) ep_->output_specs.push_back(OutputSpec{OutputKind::UserOutput, ""});
}

void GraphBuilder::insert_mutation_output(Value* value, OutputSpec spec) {
  if (!ep_) builder_fail("mutation outputs need an ExportedProgram");
  const size_t pos = output_insert_position(*ep_, spec.kind);
  assembler_.insert_output(value_arg(value), pos);
  ep_->output_specs.insert(ep_->output_specs.begin() + static_cast<std::ptrdiff_t>(pos), std::move(spec));
}

void GraphBuilder::buffer_mutation(Value* value, const std::string& buffer_name) {
  insert_mutation_output(value, OutputSpec{OutputKind::BufferMutation, buffer_name});
}

void GraphBuilder::user_input_mutation(Value* value, const std::string& user_input_name) {
  insert_mutation_output(value, OutputSpec{OutputKind::UserInputMutation, user_input_name});
}

SimpleLinear build_simple_linear(ExportedProgram& ep) {
  GraphBuilder b(ep);
  SimpleLinear s{};
  s.weight = b.parameter("linear.weight", {3, 3});
  s.bias = b.parameter("linear.bias", {3});
  s.arg = b.user_input("arg", {2, 3});
  s.permute = b.call("aten.permute_copy.default", {{"self", s.weight}, {"dims", IntList{{1, 0}}}}, {3, 3});
  s.addmm = b.call("aten.addmm.default", {{"self", s.bias}, {"mat1", s.arg}, {"mat2", s.permute}}, {2, 3});
  b.user_output(s.addmm);
  return s;
}

}  // namespace lathe
