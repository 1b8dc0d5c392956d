#include "lathe/ir/rewriter.h"

#include <algorithm>

#include "lathe/ir/verify.h"

namespace lathe {

namespace {

bool same_view(const Tensor& a, const Tensor& b) {
  return a.storage && a.storage == b.storage && a.dtype == b.dtype && a.sizes == b.sizes && a.strides == b.strides &&
         a.storage_offset == b.storage_offset;
}

std::string users_text(const Value* v) {
  std::string s;
  size_t shown = 0;
  for (const Use& u : v->uses()) {
    if (shown == 3) {
      s += ", ...";
      break;
    }
    s += (shown++ ? ", " : "") + (u.user ? "'" + u.user->name() + "'" : std::string("the graph outputs"));
  }
  return s;
}

// Does output spec `os` refer to the input described by `spec` (whose
// placeholder is called `name`)?
bool output_names_input(const OutputSpec& os, const InputSpec& spec, const std::string& name) {
  switch (os.kind) {
    case OutputKind::BufferMutation: return spec.kind == InputKind::Buffer && os.target == spec.target;
    case OutputKind::ParameterMutation:
    case OutputKind::GradientToParameter: return spec.kind == InputKind::Parameter && os.target == spec.target;
    case OutputKind::UserInputMutation:
    case OutputKind::GradientToUserInput: return spec.kind == InputKind::UserInput && os.target == name;
    default: return false;
  }
}

}  // namespace

Rewriter::Rewriter(ExportedProgram& program) : ep_(&program), graph_(&program.graph()) {}
Rewriter::Rewriter(Graph& graph) : graph_(&graph) {}

// ---- positions ---------------------------------------------------------------
// Node order as doubles with a per-node lower bound, so an insertion is O(1):
// a node inserted before B gets the midpoint between B's lower bound and B,
// and becomes B's new lower bound. Precision runs out only after ~50
// insertions before one node; then everything is renumbered.

void Rewriter::build_positions() {
  positions_.clear();
  positions_.reserve(graph_->node_count());
  double i = 0;
  for (const Node* n : graph_->nodes()) {
    positions_.emplace(n, Pos{i, i - 1});
    i += 1;
  }
  last_pos_ = i - 1;
  positions_valid_ = true;
}

const Rewriter::Pos* Rewriter::position(const Node* n) {
  if (!positions_valid_ || positions_.size() != graph_->node_count()) build_positions();
  auto it = positions_.find(n);
  if (it == positions_.end()) {
    build_positions();  // a node inserted behind our back
    it = positions_.find(n);
    if (it == positions_.end()) return nullptr;
  }
  return &it->second;
}

void Rewriter::note_inserted(const Node* n, const Node* before) {
  if (!positions_valid_) return;
  if (!before) {
    last_pos_ += 1;
    positions_.emplace(n, Pos{last_pos_, last_pos_ - 1});
    return;
  }
  auto it = positions_.find(before);
  if (it == positions_.end()) {
    positions_valid_ = false;
    return;
  }
  double lo = it->second.floor, hi = it->second.pos;
  double mid = lo + (hi - lo) / 2;
  if (!(mid > lo && mid < hi)) {
    positions_valid_ = false;
    return;
  }
  it->second.floor = mid;
  positions_.emplace(n, Pos{mid, lo});
}

bool Rewriter::obviously_before(const Value* v, const Node* n) const {
  bool found = false;
  for (const auto& in : n->inputs()) {
    in.arg.for_each_value([&](Value* o) {
      if (found || o == v) {
        found = true;
        return;
      }
      if (const Node* q = o->producer()) {
        for (const auto& qin : q->inputs()) qin.arg.for_each_value([&](Value* p) { found = found || p == v; });
      }
    });
    if (found) return true;
  }
  return false;
}

bool Rewriter::defined_before(const Value* value, const Node* node) {
  if (!value || value->graph() != graph_) return false;
  if (value->is_placeholder() || !node) return true;
  if (obviously_before(value, node)) return true;
  const Pos* p = position(value->producer());
  const Pos* n = position(node);
  return p && n && p->pos < n->pos;
}

template <class Where>
Status Rewriter::check_visible(const Argument& arg, const Node* before, const Where& where) {
  Status status;
  arg.for_each_value([&](Value* v) {
    if (!status.ok()) return;
    if (v->graph() != graph_) {
      status = make_error(where() + ": value '" + v->name() + "' belongs to another graph");
    } else if (!defined_before(v, before)) {
      status = make_error(where() + ": value '" + v->name() + "' is not defined before node '" + before->name() + "'");
    }
  });
  return status;
}

// ---- nodes ---------------------------------------------------------------------

Result<Node*> Rewriter::create_node(std::string target, std::vector<NamedArgument> inputs,
                                    std::vector<NewOutput> outputs, Node* before) {
  auto where = [&] { return "create node " + target; };
  if (target.empty()) return make_error("create node: empty target");
  if (before && before->graph() != graph_) return make_error(where() + ": insertion point is in another graph");
  for (const auto& in : inputs)
    LATHE_RETURN_IF_ERROR(check_visible(in.arg, before, [&] { return where() + ", argument '" + in.name + "'"; }));
  for (const auto& o : outputs) {
    if (o.name.empty()) return make_error(where() + ": an output has no name");
    if (o.kind == ValueKind::Tensor && !o.meta)
      return make_error(where() + ": new tensor value '" + o.name + "' has no metadata");
  }
  Node* n = graph_->create_node(std::move(target), std::move(inputs), before);
  note_inserted(n, before);
  for (auto& o : outputs) {
    Value* v = graph_->add_node_output(n, o.kind, o.name);
    if (o.meta) v->set_meta(std::move(*o.meta));
  }
  return n;
}

Result<Value*> Rewriter::create_call(std::string target, std::vector<NamedArgument> inputs, TensorMeta meta,
                                     const std::string& name, Node* before) {
  std::vector<NewOutput> outs;
  outs.push_back(NewOutput{ValueKind::Tensor, name, std::move(meta)});
  LATHE_ASSIGN_OR_RETURN(Node * n, create_node(std::move(target), std::move(inputs), std::move(outs), before));
  return n->output();
}

Result<Value*> Rewriter::replace_node(Node* old, std::string target, std::vector<NamedArgument> inputs,
                                      const std::string& name) {
  if (!old || old->graph() != graph_) return make_error("replace node: the node is not in this graph");
  std::vector<Value*> defs = old->defined_values();
  if (defs.size() != 1)
    return make_error("replace node '" + old->name() + "': it defines " + std::to_string(defs.size()) +
                      " values; replace_node handles exactly one");
  Value* from = defs[0];
  if (from->kind() == ValueKind::Tensor && !from->meta())
    return make_error("replace node '" + old->name() + "': its value has no metadata to carry over");
  // Inputs must be visible at `old`; that also refuses a new node reading
  // the value it replaces (a cycle).
  auto where = [&] { return "replace node '" + old->name() + "' by " + target; };
  for (const auto& in : inputs)
    LATHE_RETURN_IF_ERROR(check_visible(in.arg, old, [&] { return where() + ", argument '" + in.name + "'"; }));
  if (name.empty()) return make_error(where() + ": empty name");

  Node* n = graph_->create_node(std::move(target), std::move(inputs), old);
  note_inserted(n, old);
  Value* to = graph_->add_node_output(n, from->kind(), name);
  if (from->meta()) to->set_meta(*from->meta());
  if (from->sym()) to->set_sym(*from->sym());
  // Safe by construction: `to` sits right before `old`, and every user of
  // `from` comes after `old`.
  graph_->replace_all_uses(from, to);
  Status erased = graph_->erase_node(old);
  if (!erased.ok()) return erased.error();  // unreachable: `from` has no uses left
  if (positions_valid_) positions_.erase(old);
  return to;
}

Status Rewriter::retarget(Node* node, std::string_view target, std::vector<NamedArgument> inputs) {
  return retarget(node, OpTarget(target), std::move(inputs));
}

Status Rewriter::retarget(Node* node, OpTarget target, std::vector<NamedArgument> inputs) {
  if (!node || node->graph() != graph_) return make_error("retarget: the node is not in this graph");
  if (target.empty()) return make_error("retarget '" + node->name() + "': empty target");
  // Inputs must be visible at the node itself, which also refuses the node
  // reading its own values.
  for (const auto& in : inputs) {
    LATHE_RETURN_IF_ERROR(check_visible(in.arg, node, [&] {
      return "retarget '" + node->name() + "' to " + target.str() + ", argument '" + in.name + "'";
    }));
  }
  node->target_ = target;
  node->set_inputs(std::move(inputs));
  return Status::Ok();
}

Status Rewriter::replace_all_uses(Value* from, Value* to) {
  static const std::unordered_set<const Node*> kNone;
  return replace_all_uses(from, to, kNone);
}

Status Rewriter::replace_all_uses(Value* from, Value* to, const std::unordered_set<const Node*>& leaving) {
  if (!from || !to) return make_error("replace all uses: null value");
  if (from == to) return Status::Ok();
  auto where = [&] { return "replace all uses of '" + from->name() + "' with '" + to->name() + "'"; };
  if (from->graph() != graph_ || to->graph() != graph_) return make_error(where() + ": values of another graph");
  if (from->kind() != to->kind())
    return make_error(where() + ": a " + std::string(value_kind_name(from->kind())) + " cannot be replaced by a " +
                      std::string(value_kind_name(to->kind())));
  if (to->kind() == ValueKind::Tensor && !to->meta()) return make_error(where() + ": '" + to->name() + "' has no metadata");
  for (const Use& u : from->uses()) {
    if (u.user && !leaving.count(u.user) && !defined_before(to, u.user))
      return make_error(where() + ": '" + to->name() + "' is not defined before its new user '" + u.user->name() + "'" +
                        (u.user == to->producer() ? " (it would read itself)" : ""));
  }
  graph_->replace_all_uses(from, to, leaving.empty() ? nullptr : &leaving);
  return Status::Ok();
}

Status Rewriter::erase_node(Node* node) {
  if (!node || node->graph() != graph_) return make_error("erase node: the node is not in this graph");
  LATHE_RETURN_IF_ERROR(graph_->erase_node(node));
  if (positions_valid_) positions_.erase(node);
  return Status::Ok();
}

Status Rewriter::reorder(const std::vector<Node*>& order) {
  if (order.size() != graph_->node_count()) {
    return make_error("reorder: " + std::to_string(order.size()) + " nodes given, the graph has " +
                      std::to_string(graph_->node_count()));
  }
  std::unordered_map<const Node*, size_t> at;
  at.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (!order[i] || order[i]->graph() != graph_) return make_error("reorder: a node is not in this graph");
    if (!at.emplace(order[i], i).second) return make_error("reorder: '" + order[i]->name() + "' is listed twice");
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (const Value* v : order[i]->operand_values()) {
      auto p = v->producer() ? at.find(v->producer()) : at.end();
      if (p != at.end() && p->second > i) {
        return make_error("reorder: '" + order[i]->name() + "' would come before '" + v->name() + "', which it reads");
      }
    }
  }
  for (Node* n : order) graph_->move_before(n, nullptr);
  positions_valid_ = false;
  return Status::Ok();
}

Status Rewriter::move_before(Node* node, Node* before) {
  if (!node || node->graph() != graph_ || (before && before->graph() != graph_))
    return make_error("move: the node is not in this graph");
  if (node == before || node->next_node() == before) return Status::Ok();
  auto where = [&] { return "move '" + node->name() + "' before " + (before ? "'" + before->name() + "'" : "the end"); };
  for (const Value* v : node->operand_values()) {
    if (!defined_before(v, before)) return make_error(where() + ": it reads '" + v->name() + "', defined after there");
  }
  for (const Value* v : node->defined_values()) {
    for (const Use& u : v->uses()) {
      if (!u.user || u.user == before) continue;
      const Pos* user = position(u.user);
      const Pos* at = before ? position(before) : nullptr;
      if (!at || !user || user->pos < at->pos) {
        return make_error(where() + ": '" + u.user->name() + "', which reads '" + v->name() + "', would come first");
      }
    }
  }
  graph_->move_before(node, before);
  positions_valid_ = false;
  return Status::Ok();
}

Status Rewriter::rename(Value* value, const std::string& name) {
  if (!value || value->graph() != graph_) return make_error("rename: the value is not in this graph");
  if (name.empty()) return make_error("rename '" + value->name() + "': empty name");
  std::string old = value->name();
  if (old == name) return Status::Ok();
  LATHE_RETURN_IF_ERROR(graph_->rename(value, name));
  // user_input_mutation / gradient_to_user_input specs name the user input
  // by its placeholder name: follow the rename.
  if (ep_ && value->is_placeholder()) {
    int idx = ep_->input_index(value);
    if (idx >= 0 && static_cast<size_t>(idx) < ep_->input_specs.size() &&
        ep_->input_specs[idx].kind == InputKind::UserInput) {
      for (auto& os : ep_->output_specs) {
        if (output_names_input(os, ep_->input_specs[idx], old)) os.target = name;
      }
    }
  }
  return Status::Ok();
}

// ---- inputs ----------------------------------------------------------------------

bool Rewriter::state_name_taken(const std::string& name) const {
  if (ep_->parameters.contains(name) || ep_->buffers.contains(name) || ep_->constants.contains(name)) return true;
  for (const auto& s : ep_->input_specs) {
    if (s.kind != InputKind::UserInput && s.kind != InputKind::Token && s.target == name) return true;
  }
  for (const auto& [n, bytes] : ep_->opaque_constants)
    if (n == name) return true;
  return false;
}

Result<Value*> Rewriter::add_input(InputSpec spec, const std::string& name, std::optional<Tensor> state,
                                   std::optional<TensorMeta> meta) {
  std::string kind(input_kind_name(spec.kind));
  std::string where = "add " + kind + " input '" + (spec.target.empty() ? name : spec.target) + "'";
  if (!ep_) return make_error(where + ": a bare graph has no signature");
  if (graph_->inputs().size() != ep_->input_specs.size())
    return make_error(where + ": the signature is out of step with the graph (" +
                      std::to_string(graph_->inputs().size()) + " inputs, " +
                      std::to_string(ep_->input_specs.size()) + " input specs)");
  if (name.empty()) return make_error(where + ": empty placeholder name");
  bool stateful = spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer ||
                  spec.kind == InputKind::TensorConstant;
  if (stateful) {
    if (spec.target.empty()) return make_error(where + ": empty state name");
    if (state_name_taken(spec.target))
      return make_error(where + ": state name '" + spec.target + "' is already taken in this program");
    if (!state || !state->storage) return make_error(where + ": no tensor given");
    LATHE_RETURN_IF_ERROR(state->check_fits());
    TensorMeta m;
    m.dtype = state->dtype;
    for (int64_t s : state->sizes) m.sizes.emplace_back(s);
    std::vector<int64_t> strides = state->strides.empty() ? Tensor::contiguous_strides(state->sizes) : state->strides;
    for (int64_t s : strides) m.strides.emplace_back(s);
    m.requires_grad = spec.kind == InputKind::Parameter;
    if (meta) {
      if (meta->dtype != m.dtype || meta->concrete_sizes() != state->sizes)
        return make_error(where + ": metadata does not match the tensor (" + std::string(dtype_name(state->dtype)) +
                          shape_string(state->sizes) + ")");
    } else {
      meta = std::move(m);
    }
  } else if (spec.kind == InputKind::UserInput) {
    if (!meta) return make_error(where + ": a user input needs metadata");
  } else {
    return make_error(where + ": only parameters, buffers, constants and user inputs can be added");
  }

  const size_t pos = input_insert_position(*ep_, spec.kind);
  Value* v = graph_->insert_placeholder(ValueKind::Tensor, name, pos);
  v->set_meta(std::move(*meta));
  if (stateful) {
    bool to_constants = spec.kind == InputKind::TensorConstant || (spec.kind == InputKind::Buffer && !spec.persistent);
    NamedTensors& dict = spec.kind == InputKind::Parameter ? ep_->parameters
                         : to_constants                    ? ep_->constants
                                                           : ep_->buffers;
    dict.set(spec.target, std::move(*state));
  }
  ep_->input_specs.insert(ep_->input_specs.begin() + static_cast<std::ptrdiff_t>(pos), std::move(spec));
  return v;
}

Result<Value*> Rewriter::add_parameter(const std::string& fqn, Tensor tensor) {
  return add_input(InputSpec{InputKind::Parameter, fqn, true, {}}, lifted_placeholder_name(InputKind::Parameter, fqn),
                   std::move(tensor), std::nullopt);
}

Result<Value*> Rewriter::add_buffer(const std::string& fqn, Tensor tensor, bool persistent) {
  return add_input(InputSpec{InputKind::Buffer, fqn, persistent, {}}, lifted_placeholder_name(InputKind::Buffer, fqn),
                   std::move(tensor), std::nullopt);
}

Result<Value*> Rewriter::add_constant(const std::string& name, Tensor tensor) {
  return add_input(InputSpec{InputKind::TensorConstant, name, true, {}},
                   lifted_placeholder_name(InputKind::TensorConstant, name), std::move(tensor), std::nullopt);
}

Result<Value*> Rewriter::add_user_input(const std::string& name, TensorMeta meta) {
  return add_input(InputSpec{InputKind::UserInput, "", true, {}}, name, std::nullopt, std::move(meta));
}

Result<Value*> Rewriter::add_sym_int_input(const std::string& name, SymDim value) {
  const std::string where = "add user input '" + name + "'";
  if (!ep_) return make_error(where + ": a bare graph has no signature");
  if (graph_->inputs().size() != ep_->input_specs.size()) return make_error(where + ": the signature is out of step with the graph");
  if (name.empty()) return make_error(where + ": empty placeholder name");
  if (graph_->find_value(name)) return make_error(where + ": the name is taken");
  const size_t pos = input_insert_position(*ep_, InputKind::UserInput);
  Value* v = graph_->insert_placeholder(ValueKind::SymInt, name, pos);
  v->set_sym(std::move(value));
  ep_->input_specs.insert(ep_->input_specs.begin() + static_cast<std::ptrdiff_t>(pos), InputSpec{InputKind::UserInput, "", true, {}});
  return v;
}

Status Rewriter::remove_input(Value* placeholder) {
  if (!ep_) return make_error("remove input: a bare graph has no signature");
  if (!placeholder || placeholder->graph() != graph_) return make_error("remove input: the value is not in this graph");
  std::string name = placeholder->name();
  std::string where = "remove input '" + name + "'";
  if (graph_->inputs().size() != ep_->input_specs.size())
    return make_error(where + ": the signature is out of step with the graph");
  int idx = ep_->input_index(placeholder);
  if (idx < 0) return make_error(where + ": it is not an input of this program");
  if (placeholder->has_uses())
    return make_error(where + ": it still has " + std::to_string(placeholder->user_count()) + " use(s) (" +
                      users_text(placeholder) + ")");
  const InputSpec spec = ep_->input_specs[idx];
  for (size_t i = 0; i < ep_->output_specs.size(); ++i) {
    const OutputSpec& os = ep_->output_specs[i];
    if (output_names_input(os, spec, name))
      return make_error(where + ": output spec " + std::to_string(i) + " (" + std::string(output_kind_name(os.kind)) +
                        " '" + os.target + "') still names it");
  }

  LATHE_RETURN_IF_ERROR(graph_->remove_input(static_cast<size_t>(idx)));
  ep_->input_specs.erase(ep_->input_specs.begin() + idx);

  // State: which dictionary a spec's entry lives in.
  auto dict_of = [&](const InputSpec& s) -> NamedTensors* {
    switch (s.kind) {
      case InputKind::Parameter: return &ep_->parameters;
      case InputKind::Buffer: return s.persistent ? &ep_->buffers : &ep_->constants;
      case InputKind::TensorConstant: return &ep_->constants;
      default: return nullptr;
    }
  };
  if (spec.kind == InputKind::CustomObj) {
    bool still = std::any_of(ep_->input_specs.begin(), ep_->input_specs.end(),
                             [&](const InputSpec& s) { return s.kind == InputKind::CustomObj && s.target == spec.target; });
    if (!still) {
      auto& oc = ep_->opaque_constants;
      oc.erase(std::remove_if(oc.begin(), oc.end(), [&](const auto& e) { return e.first == spec.target; }), oc.end());
    }
    return Status::Ok();
  }
  NamedTensors* dict = dict_of(spec);
  if (!dict) return Status::Ok();
  std::vector<std::string> named;  // entries of `dict` some remaining spec names
  for (const auto& s : ep_->input_specs)
    if (dict_of(s) == dict) named.push_back(s.target);
  if (std::find(named.begin(), named.end(), spec.target) != named.end()) return Status::Ok();
  const Tensor* t = dict->find(spec.target);
  if (!t) return Status::Ok();
  Tensor gone = *t;
  dict->erase(spec.target);
  // Tied aliases this entry alone kept alive would now be orphans.
  std::vector<std::string> orphans;
  for (const auto& [n, e] : *dict) {
    if (std::find(named.begin(), named.end(), n) != named.end() || !same_view(e, gone)) continue;
    // An init-capture: clang 14 cannot capture a structured binding.
    bool other_anchor = std::any_of(named.begin(), named.end(), [&, &e = e](const std::string& k) {
      const Tensor* o = dict->find(k);
      return o && same_view(e, *o);
    });
    if (!other_anchor) orphans.push_back(n);
  }
  for (const auto& n : orphans) dict->erase(n);
  return Status::Ok();
}

// ---- outputs -----------------------------------------------------------------------

Status Rewriter::add_output(Value* value, OutputSpec spec) {
  if (!value || value->graph() != graph_) return make_error("add output: the value is not in this graph");
  std::string where = "add " + std::string(output_kind_name(spec.kind)) + " output '" + value->name() + "'";
  if (!ep_) {
    if (spec.kind != OutputKind::UserOutput) return make_error(where + ": a bare graph has no signature");
    graph_->insert_output(value_argument(value));
    return Status::Ok();
  }
  if (graph_->outputs().size() != ep_->output_specs.size())
    return make_error(where + ": the signature is out of step with the graph");

  auto find_input = [&](InputKind kind, const std::string& target) {
    for (size_t i = 0; i < ep_->input_specs.size(); ++i) {
      const InputSpec& s = ep_->input_specs[i];
      if (s.kind != kind) continue;
      if (kind == InputKind::UserInput) {
        Value* p = nullptr;
        graph_->inputs()[i].for_each_value([&](Value* v) { p = v; });
        if (p && p->name() == target) return true;
      } else if (s.target == target) {
        return true;
      }
    }
    return false;
  };
  switch (spec.kind) {
    case OutputKind::Token:
      if (value->kind() != ValueKind::Token) return make_error(where + ": a token output must be a token value");
      break;
    case OutputKind::BufferMutation:
      if (!find_input(InputKind::Buffer, spec.target))
        return make_error(where + ": '" + spec.target + "' is not a buffer input");
      break;
    case OutputKind::ParameterMutation:
    case OutputKind::GradientToParameter:
      if (!find_input(InputKind::Parameter, spec.target))
        return make_error(where + ": '" + spec.target + "' is not a parameter input");
      break;
    case OutputKind::UserInputMutation:
    case OutputKind::GradientToUserInput:
      if (!find_input(InputKind::UserInput, spec.target))
        return make_error(where + ": '" + spec.target + "' is not a user input");
      break;
    default: break;
  }
  int order = output_kind_order(spec.kind);
  if (order == 1 || order == 3) {
    if (value->kind() != ValueKind::Tensor) return make_error(where + ": must be a tensor value");
    for (size_t i = 0; i < ep_->output_specs.size(); ++i) {
      if (ep_->output_specs[i].kind == spec.kind && ep_->output_specs[i].target == spec.target)
        return make_error(where + ": output spec " + std::to_string(i) + " already " +
                          (order == 1 ? "mutates '" : "is the gradient of '") + spec.target + "'");
    }
  }
  const size_t pos = output_insert_position(*ep_, spec.kind);
  graph_->insert_output(value_argument(value), pos);
  ep_->output_specs.insert(ep_->output_specs.begin() + static_cast<std::ptrdiff_t>(pos), std::move(spec));
  return Status::Ok();
}

Status Rewriter::remove_output(size_t index) {
  if (index >= graph_->outputs().size())
    return make_error("remove output " + std::to_string(index) + ": out of range (" +
                      std::to_string(graph_->outputs().size()) + " outputs)");
  if (ep_ && graph_->outputs().size() != ep_->output_specs.size())
    return make_error("remove output " + std::to_string(index) + ": the signature is out of step with the graph");
  graph_->remove_output(index);
  if (ep_) ep_->output_specs.erase(ep_->output_specs.begin() + static_cast<std::ptrdiff_t>(index));
  return Status::Ok();
}

}  // namespace lathe
