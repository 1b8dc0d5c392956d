#include "lathe/analysis/constness.h"

#include <set>

#include "lathe/ir/in_place_writes.h"
#include "lathe/ir/op_catalogue.h"

namespace lathe {

namespace {

// A q/dq chain deeper than this is not a weight we can vouch for.
constexpr int kMaxDepth = 32;

}  // namespace

std::string_view origin_name(Origin origin) {
  switch (origin) {
    case Origin::UserInput: return "user_input";
    case Origin::Parameter: return "parameter";
    case Origin::ConstantBuffer: return "constant_buffer";
    case Origin::MutableBuffer: return "mutable_buffer";
    case Origin::LiftedConstant: return "lifted_constant";
    case Origin::Computed: return "computed";
    case Origin::Unknown: return "unknown";
  }
  return "?";
}

Constness::Constness(const Graph& graph) : graph_(&graph) {}

Constness::Constness(const ExportedProgram& program) : ep_(&program), graph_(&program.graph()) {
  for (const OutputSpec& os : program.output_specs) {
    if (os.kind == OutputKind::BufferMutation) mutated_buffers_.insert(os.target);
    if (os.kind == OutputKind::ParameterMutation) mutated_params_.insert(os.target);
  }
  // State the export IR writes in place is as mutable as state a mutation
  // output names (a lifted constant so written counts as a mutable buffer).
  for (const std::string& target : state_written_in_place(program)) {
    const InputSpec* spec = nullptr;
    for (const InputSpec& s : program.input_specs) {
      if (s.target == target) spec = &s;
    }
    if (!spec) continue;
    if (spec->kind == InputKind::Parameter) mutated_params_.insert(target);
    else mutated_buffers_.insert(target);
  }
  // A buffer that views the storage of a mutated one changes with it (a
  // delegate that prepacked it would keep stale values).
  if (mutated_buffers_.empty()) return;
  for (const InputSpec& s : program.input_specs) {
    if (s.kind != InputKind::Buffer || !mutated_buffers_.count(s.target)) continue;
    if (const Tensor* t = program.state_tensor(s); t && t->storage) mutated_storage_.emplace(t->storage.get(), &s.target);
  }
}

void Constness::build_origins() const {
  origins_.clear();
  stale_lookups_ = 0;
  origins_version_ = graph_->inputs_version();
  origins_.reserve(ep_->input_specs.size());
  for (const InputSpec& s : ep_->input_specs) origins_.push_back(spec_origin(s).origin);
}

Constness::Input Constness::classify(const Value* v) const {
  if (!ep_ || !v || v->graph() != graph_ || !v->is_placeholder()) return Input{};
  const uint32_t i = v->input_index();
  if (i == Value::kNotAnInput || i >= ep_->input_specs.size()) return Input{};
  if (origins_.empty() || origins_version_ != graph_->inputs_version()) {
    // First use, or the inputs changed since the sweep.
    if (!origins_.empty() && ++stale_lookups_ <= origins_.size() / 8 + 8) return classify_spec(v);
    build_origins();
  }
  if (i >= origins_.size()) return classify_spec(v);
  const Origin origin = origins_[i];
  // What only some parameters and buffers need (is it mutated, whose
  // storage does it share) comes from the spec.
  if (origin == Origin::MutableBuffer || (origin == Origin::Parameter && !mutated_params_.empty()))
    return classify_spec(v);
  Input in;
  in.origin = origin;
  in.spec = &ep_->input_specs[i];  // its address only: the spec is not read here
  return in;
}

Constness::Input Constness::classify_spec(const Value* v) const {
  Input in;
  // A bare graph, a value of another graph, or a broken signature (more
  // inputs than specs): classify nothing.
  if (!ep_ || !v || v->graph() != graph_ || !v->is_placeholder()) return in;
  const uint32_t i = v->input_index();
  if (i == Value::kNotAnInput || i >= ep_->input_specs.size()) return in;
  return spec_origin(ep_->input_specs[i]);
}

Constness::Input Constness::spec_origin(const InputSpec& s) const {
  Input in;
  in.spec = &s;
  switch (s.kind) {
    case InputKind::Parameter:
      in.origin = Origin::Parameter;
      in.mutated = !mutated_params_.empty() && mutated_params_.count(s.target) != 0;
      break;
    case InputKind::Buffer: {
      in.origin = Origin::ConstantBuffer;
      if (mutated_buffers_.empty()) break;
      if (mutated_buffers_.count(s.target)) {
        in.origin = Origin::MutableBuffer;
      } else if (const Tensor* t = ep_->state_tensor(s); t && t->storage) {
        auto it = mutated_storage_.find(t->storage.get());
        if (it != mutated_storage_.end()) {
          in.origin = Origin::MutableBuffer;
          in.shares_with = it->second;
        }
      }
      break;
    }
    case InputKind::TensorConstant:
      in.origin = !mutated_buffers_.empty() && mutated_buffers_.count(s.target) ? Origin::MutableBuffer : Origin::LiftedConstant;
      break;
    case InputKind::UserInput:
    case InputKind::Token: in.origin = Origin::UserInput; break;
    case InputKind::CustomObj:
    case InputKind::ConstantInput: in.origin = Origin::Unknown; break;
  }
  return in;
}

const InputSpec* Constness::input_spec(const Value* placeholder) const { return classify(placeholder).spec; }

Origin Constness::origin(const Value* v) const {
  if (!v || v->graph() != graph_) return Origin::Unknown;
  if (!v->is_placeholder()) return Origin::Computed;
  return classify(v).origin;
}

bool Constness::is_compile_time_constant(const Value* v) const {
  if (!v || v->graph() != graph_ || !v->is_placeholder()) return false;
  const Input in = classify(v);
  switch (in.origin) {
    case Origin::Parameter: return !in.mutated;
    case Origin::ConstantBuffer:
    case Origin::LiftedConstant: return true;
    default: return false;
  }
}

bool Constness::is_constant_weight(const Value* v) const { return weight(v, 0); }

bool Constness::weight(const Value* v, int depth) const {
  if (!v || v->graph() != graph_) return false;
  if (v->is_placeholder()) return is_compile_time_constant(v);
  if (auto it = weight_memo_.find(v); it != weight_memo_.end()) return it->second;
  const Node* p = v->producer();
  bool result = depth < kMaxDepth && ops::is_quantize(p->target());
  if (result) {
    for (const auto& in : p->inputs()) {
      in.arg.for_each_value([&](Value* u) { result = result && weight(u, depth + 1); });
      if (!result) break;
    }
  }
  weight_memo_[v] = result;
  return result;
}

std::string Constness::explain(const Value* v) const { return weight(v, 0) ? "" : explain(v, 0); }

std::string Constness::explain(const Value* v, int depth) const {
  if (!v) return "is None";
  if (v->graph() != graph_) return "is a value of another graph";
  const std::string name = "'" + v->name() + "'";
  if (v->is_placeholder()) {
    if (!ep_) return "is graph input " + name + ", which cannot be classified without a program";
    const Input in = classify(v);
    if (!in.spec) return "is graph input " + name + ", which has no input spec";
    const std::string target = "'" + in.spec->target + "'";
    switch (in.origin) {
      case Origin::UserInput: return "is user input " + name;
      case Origin::MutableBuffer:
        if (in.shares_with)
          return "reads buffer " + target + ", which shares storage with mutable buffer '" + *in.shares_with + "'";
        return "reads mutable buffer " + target;
      case Origin::Parameter: return "reads parameter " + target + ", which the program mutates";
      case Origin::Unknown:
        return "is " + std::string(input_kind_name(in.spec->kind)) + " input " + name + ", which is not a tensor constant";
      default: return "";  // a constant
    }
  }
  const Node* p = v->producer();
  std::string by = "is computed at run time by '" + p->name() + "'";
  if (!ops::is_quantize(p->target()) || depth >= kMaxDepth) return by;
  // A q/dq is constant when its operands are: name the one that is not.
  for (const auto& in : p->inputs()) {
    const Value* culprit = nullptr;
    in.arg.for_each_value([&](Value* u) {
      if (!culprit && !weight(u, depth + 1)) culprit = u;
    });
    if (culprit) return by + ": its input '" + culprit->name() + "' " + explain(culprit, depth + 1);
  }
  return by;
}

std::string Constness::describe(const Value* v) const {
  if (!v) return "None";
  if (v->is_placeholder()) {
    const InputSpec* s = input_spec(v);
    std::string what(origin_name(origin(v)));
    for (char& c : what)
      if (c == '_') c = ' ';
    return s && !s->target.empty() ? what + " '" + s->target + "'" : what + " '" + v->name() + "'";
  }
  const Node* p = v->producer();
  const ops::TargetParts op = ops::split_target(p->target());
  const std::string_view name = op.ns == "quantized_decomposed" ? op.name : std::string_view();
  return "'" + p->name() + "' (" + std::string(name) + " of constants)";
}

}  // namespace lathe
