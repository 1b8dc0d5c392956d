#include "lathe/backends/replanned_delegate.h"

#include <list>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "lathe/ir/rewriter.h"
#include "lathe/ir/specialize_shapes.h"
#include "lathe/ir/sym_expr.h"
#include "lathe/serde/program_json.h"

namespace lathe {

namespace {

bool symbolic(const Value& v) {
  if (v.meta()) return !shape_symbols(*v.meta()).empty();
  const auto* d = v.sym() ? std::get_if<SymDim>(&*v.sym()) : nullptr;
  return d && !d->is_concrete();
}

std::string fresh_name(const Graph& g, const std::string& base) {
  std::string name = base + "_in";
  for (int k = 1; g.find_value(name); ++k) name = base + "_in_" + std::to_string(k);
  return name;
}

// The copy's value for `v`, which is read outside the group in the copy:
// a placeholder of the subprogram (a new user input when it is computed
// outside the group).
Result<Value*> as_input(ExportedProgram& c, Rewriter& rw, const Value& v, const std::unordered_set<const Node*>& members) {
  Value* cv = c.graph().find_value(v.name());
  if (!cv) return make_error("value '" + v.name() + "' is missing from the copy");
  if (cv->is_placeholder()) return cv;
  Result<Value*> input = Error("");
  if (v.kind() == ValueKind::Tensor && v.meta()) {
    input = rw.add_user_input(fresh_name(c.graph(), v.name()), *v.meta());
  } else if (v.kind() == ValueKind::SymInt && v.sym() && std::holds_alternative<SymDim>(*v.sym())) {
    input = rw.add_sym_int_input(fresh_name(c.graph(), v.name()), std::get<SymDim>(*v.sym()));
  } else {
    return make_error("value '" + v.name() + "' is neither a tensor with metadata nor a symbolic int");
  }
  if (!input.ok()) return input.error();
  std::unordered_set<const Node*> leaving;
  for (const Use& u : cv->uses()) {
    if (u.user && !members.count(u.user)) leaving.insert(u.user);
  }
  LATHE_RETURN_IF_ERROR(rw.replace_all_uses(cv, *input, leaving));
  return *input;
}

// The group as a program of its own: a copy of the whole program with
// every other node, output and unread input taken out. `tensor_inputs`
// gets the placeholder each tensor input of the group became.
Result<std::unique_ptr<ExportedProgram>> extract_group(const DelegateSubgraph& sub, std::vector<std::string>& tensor_inputs) {
  std::unique_ptr<ExportedProgram> c = sub.program.clone();
  const std::vector<Node*> original = sub.program.graph().nodes_snapshot();
  const std::vector<Node*> copy = c->graph().nodes_snapshot();
  std::unordered_map<const Node*, Node*> copy_of;
  for (size_t i = 0; i < original.size() && i < copy.size(); ++i) copy_of[original[i]] = copy[i];
  std::unordered_set<const Node*> members;
  for (const Node* n : sub.nodes) members.insert(copy_of.at(n));
  Rewriter rw(*c);
  for (const Value* v : sub.inputs) {
    LATHE_ASSIGN_OR_RETURN(Value * in, as_input(*c, rw, *v, members));
    if (v->kind() == ValueKind::Tensor) tensor_inputs.push_back(in->name());
  }
  while (!c->output_specs.empty()) LATHE_RETURN_IF_ERROR(rw.remove_output(c->output_specs.size() - 1));
  for (const Value* v : sub.outputs) {
    Value* cv = c->graph().find_value(v->name());
    if (!cv) return make_error("output '" + v->name() + "' is missing from the copy");
    LATHE_RETURN_IF_ERROR(rw.add_output(cv, OutputSpec{OutputKind::UserOutput, ""}));
  }
  for (auto it = copy.rbegin(); it != copy.rend(); ++it) {
    if (!members.count(*it)) LATHE_RETURN_IF_ERROR(rw.erase_node(*it));
  }
  for (Value* p : c->graph().placeholders()) {
    if (!p->has_uses()) LATHE_RETURN_IF_ERROR(rw.remove_input(p));
  }
  return c;
}

}  // namespace

bool group_has_symbolic_shapes(const DelegateSubgraph& sub) {
  for (const Value* v : sub.inputs) {
    if (symbolic(*v)) return true;
  }
  for (const Node* n : sub.nodes) {
    for (const Value* v : n->defined_values()) {
      if (symbolic(*v)) return true;
    }
  }
  return false;
}

std::vector<std::string> unbindable_symbols(const DelegateSubgraph& sub) {
  std::set<std::string> used, bound;
  auto note = [&](const Value& v) {
    if (v.meta()) {
      for (const std::string& s : shape_symbols(*v.meta())) used.insert(s);
    }
  };
  for (const Value* v : sub.inputs) {
    note(*v);
    if (v->kind() != ValueKind::Tensor || !v->meta()) continue;
    for (const SymDim& d : v->meta()->sizes) {
      if (d.is_concrete()) continue;
      auto e = SymExpression::parse(d.expr().expr);
      if (auto s = e ? e->plain_symbol() : std::nullopt) bound.insert(*s);
    }
  }
  for (const Node* n : sub.nodes) {
    for (const Value* v : n->defined_values()) note(*v);
  }
  std::vector<std::string> out;
  for (const std::string& s : used) {
    if (!bound.count(s)) out.push_back(s);
  }
  return out;
}

Result<std::vector<std::byte>> replanned_payload(const DelegateSubgraph& sub, std::string_view backend) {
  ReplannedPayload record;
  record.backend = std::string(backend);
  auto program = extract_group(sub, record.inputs);
  if (!program.ok()) return program.error().context("the group as a program of its own");
  LATHE_ASSIGN_OR_RETURN(record.program_json, encode_program_json(**program, JsonWriteOptions{}));
  return encode_replanned_payload(record);
}

namespace {

class ReplanningHandle final : public DelegateHandle {
 public:
  ReplanningHandle(const Backend& backend, const Node& node) : backend_(backend), node_(node) {}
  Status init(const DelegateInitArgs& args);
  Status execute(KernelCall& call) override;

 private:
  using Sizes = std::vector<std::vector<int64_t>>;
  struct Plan {
    Sizes sizes;
    std::unique_ptr<ExportedProgram> program;  // what the handle was made from: kept as long as it
    std::vector<std::byte> payload;
    std::unique_ptr<DelegateHandle> handle;
  };
  Result<Plan> plan(const Sizes& sizes) const;
  Result<SymbolValues> bind(const Sizes& sizes) const;

  const Backend& backend_;
  const Node& node_;
  std::unique_ptr<ExportedProgram> template_;
  std::vector<std::string> inputs_;      // the template's placeholder per delegate input
  std::vector<const Tensor*> states_;    // per delegate input: its bound state, or nullptr
  std::mutex mu_;
  std::list<Plan> plans_;  // most recently used first
};

Status ReplanningHandle::init(const DelegateInitArgs& args) {
  LATHE_ASSIGN_OR_RETURN(ReplannedPayload record, decode_replanned_payload(args.payload));
  if (record.backend != backend_.name()) {
    return make_error("the re-planned record is for backend '" + record.backend + "', not '" + std::string(backend_.name()) + "'");
  }
  if (record.inputs.size() != args.operands.size()) {
    return make_error("the re-planned record binds " + std::to_string(record.inputs.size()) + " inputs, the node passes " +
                      std::to_string(args.operands.size()));
  }
  auto program = decode_program_json(record.program_json);
  if (!program.ok()) return program.error().context("the re-planned record's program");
  template_ = std::move(program).value();
  for (const std::string& name : record.inputs) {
    const Value* p = template_->graph().find_value(name);
    if (!p || !p->is_placeholder() || p->kind() != ValueKind::Tensor || !p->meta()) {
      return make_error("the re-planned record's input '" + name + "' is not a tensor input of its program");
    }
  }
  inputs_ = std::move(record.inputs);
  for (const DelegateOperand& d : args.operands) states_.push_back(d.state);
  return Status::Ok();
}

Result<SymbolValues> ReplanningHandle::bind(const Sizes& sizes) const {
  SymbolValues symbols;
  for (size_t k = 0; k < inputs_.size(); ++k) {
    const Value* p = template_->graph().find_value(inputs_[k]);
    Status s = bind_symbols(*p->meta(), sizes[k], symbols);
    if (!s.ok()) return s.error().context("delegate input " + std::to_string(k) + " ('" + inputs_[k] + "')");
  }
  return symbols;
}

Result<ReplanningHandle::Plan> ReplanningHandle::plan(const Sizes& sizes) const {
  LATHE_ASSIGN_OR_RETURN(SymbolValues symbols, bind(sizes));
  Plan plan{sizes, template_->clone(), {}, nullptr};
  ExportedProgram& p = *plan.program;
  LATHE_RETURN_IF_ERROR(specialize_shapes(p, symbols));
  DelegateInitArgs args{p, node_, {}, {}};
  std::vector<const Value*> ins;
  for (size_t k = 0; k < inputs_.size(); ++k) {
    const Value* v = p.graph().find_value(inputs_[k]);
    const int spec = p.input_index(v);
    if (states_[k] && spec >= 0 && p.input_specs[spec].kind != InputKind::UserInput) {
      const InputSpec& s = p.input_specs[spec];
      NamedTensors& dict = s.kind == InputKind::Parameter ? p.parameters : s.kind == InputKind::Buffer && s.persistent ? p.buffers : p.constants;
      dict.set(s.target, *states_[k]);
    }
    ins.push_back(v);
    args.operands.push_back(DelegateOperand{v, states_[k]});
  }
  const Constness constness(p);
  DelegateSubgraph sub{p, constness, {}, ins, {}};
  for (const Node* n : p.graph().nodes()) sub.nodes.push_back(n);
  for (const Argument& a : p.graph().outputs()) a.for_each_value([&](Value* v) { sub.outputs.push_back(v); });
  LATHE_ASSIGN_OR_RETURN(plan.payload, backend_.preprocess(sub));
  args.payload = plan.payload;
  LATHE_ASSIGN_OR_RETURN(plan.handle, backend_.init(args));
  return plan;
}

std::string sizes_text(const std::vector<std::vector<int64_t>>& sizes) {
  std::string out;
  for (const auto& s : sizes) {
    out += out.empty() ? "[" : ", [";
    for (size_t d = 0; d < s.size(); ++d) out += (d ? ", " : "") + std::to_string(s[d]);
    out += "]";
  }
  return out;
}

Status ReplanningHandle::execute(KernelCall& call) {
  LATHE_ASSIGN_OR_RETURN(std::vector<const Tensor*> ins, call.tensor_list("inputs"));
  if (ins.size() != inputs_.size()) {
    return make_error("the node passes " + std::to_string(ins.size()) + " inputs, the re-planned record binds " + std::to_string(inputs_.size()));
  }
  Sizes sizes;
  sizes.reserve(ins.size());
  for (const Tensor* t : ins) sizes.push_back(t->sizes);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(plans_.begin(), plans_.end(), [&](const Plan& p) { return p.sizes == sizes; });
  if (it == plans_.end()) {
    auto made = plan(sizes);
    if (!made.ok()) return made.error().context(std::string(backend_.name()) + ": planning for input sizes " + sizes_text(sizes));
    plans_.push_front(std::move(made).value());
    if (plans_.size() > kReplannedPlansKept) plans_.pop_back();
  } else if (it != plans_.begin()) {
    plans_.splice(plans_.begin(), plans_, it);
  }
  return plans_.front().handle->execute(call);
}

}  // namespace

Result<std::unique_ptr<DelegateHandle>> ReplanningRuntime::init(const DelegateInitArgs& args) const {
  if (!is_replanned_payload(args.payload)) return backend_.init(args);
  auto h = std::make_unique<ReplanningHandle>(backend_, args.node);
  LATHE_RETURN_IF_ERROR(h->init(args));
  return std::unique_ptr<DelegateHandle>(std::move(h));
}

}  // namespace lathe
