#include "lathe/ir/verify.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace lathe {

int input_kind_order(InputKind kind) {
  switch (kind) {
    case InputKind::Token: return 0;
    case InputKind::Parameter: return 1;
    case InputKind::Buffer: return 2;
    case InputKind::TensorConstant:
    case InputKind::CustomObj: return 3;
    case InputKind::UserInput:
    case InputKind::ConstantInput: return 4;
  }
  return 4;
}

int output_kind_order(OutputKind kind) {
  switch (kind) {
    case OutputKind::Token: return 0;
    case OutputKind::BufferMutation:
    case OutputKind::ParameterMutation:
    case OutputKind::UserInputMutation: return 1;
    case OutputKind::UserOutput:
    case OutputKind::LossOutput: return 2;
    case OutputKind::GradientToParameter:
    case OutputKind::GradientToUserInput: return 3;
  }
  return 2;
}

namespace {

std::vector<Value*> values_of(const Argument& arg) {
  std::vector<Value*> out;
  arg.for_each_value([&](Value* v) { out.push_back(v); });
  return out;
}

// Every graph reachable from the top one (through GraphArgs), with the
// values and nodes each owns. Pointers are compared against these sets
// before they are ever dereferenced.
struct Universe {
  std::unordered_map<const Graph*, std::unordered_set<const Value*>> graph_values;
  std::unordered_set<const Value*> values;
  std::unordered_set<const Node*> nodes;
  std::vector<const Graph*> graphs;  // discovery order

  void collect(const Graph& g) {
    if (graph_values.count(&g)) return;  // a subgraph shared by several nodes
    graphs.push_back(&g);
    auto& mine = graph_values[&g];
    for (Value* v : g.placeholders()) mine.insert(v);
    for (Node* n : g.nodes()) {
      nodes.insert(n);
      for (Value* v : n->defined_values()) mine.insert(v);
    }
    values.insert(mine.begin(), mine.end());
    for (Node* n : g.nodes()) {
      for (const auto& in : n->inputs()) {
        if (auto* ga = in.arg.get_if<GraphArg>(); ga && ga->graph) collect(*ga->graph);
      }
    }
  }
  bool live(const Value* v) const { return values.count(v) != 0; }
};

// A graph's values in a stable order (placeholders, then node outputs), so
// the first error reported does not depend on hashing.
std::vector<const Value*> ordered_values(const Graph& g) {
  std::vector<const Value*> vals;
  for (Value* v : g.placeholders()) vals.push_back(v);
  for (Node* n : g.nodes())
    for (Value* v : n->defined_values()) vals.push_back(v);
  return vals;
}

class Checker {
 public:
  explicit Checker(const Graph& top) { u_.collect(top); }

  // %name for a value known to be live; never follows unknown pointers.
  std::string name_of(const Value* v) const {
    if (!v) return "None";
    return u_.live(v) ? "%" + v->name() : "<dangling value>";
  }
  std::string arg_desc(const Argument& arg) const {
    std::vector<Value*> vals = values_of(arg);
    if (vals.empty()) return "a literal";
    std::string s;
    for (Value* v : vals) s += (s.empty() ? "" : ", ") + name_of(v);
    return s;
  }
  // The single live value an argument references, or nullptr.
  const Value* single_value(const Argument& arg) const {
    std::vector<Value*> vals = values_of(arg);
    return vals.size() == 1 && u_.live(vals[0]) ? vals[0] : nullptr;
  }

  // What an enclosing graph offers a subgraph: the values defined before
  // the node that holds the subgraph, and all of that graph's values.
  struct Scope {
    const std::unordered_set<const Value*>* defined;
    const std::unordered_set<const Value*>* all;
  };
  Status check_graph(const Graph& g, const std::string& where, std::vector<Scope> outer);
  Status check_use_lists(const std::string& where) const;

 private:
  // One graph being checked: what is visible where.
  struct GraphScope {
    const Graph& g;
    const std::unordered_set<const Value*>& mine;  // every value the graph defines
    std::vector<Scope> outer;
    std::unordered_set<const Value*> defined;  // so far, in node order
    bool visible(const Value* v) const;
  };
  std::string why_not_visible(const GraphScope& sc, const Value* v) const;
  Status check_graph_inputs(GraphScope& sc, const std::string& where) const;
  Status check_node(GraphScope& sc, Node* n, const std::string& at);
  Status check_node_outputs(GraphScope& sc, Node* n, const std::string& at) const;
  Status check_graph_outputs(const GraphScope& sc, const std::string& where) const;
  static Status check_names(const Graph& g, const std::string& where);
  Status check_arg_kinds(const Argument& arg, const std::string& where) const;
  std::string node_desc(size_t index, const Node* n) const {
    return "node " + std::to_string(index) + " '" + n->name() + "' (" + n->op_name() + ")";
  }

  Universe u_;
};

bool kind_fits(ValueKind k, bool tensor_slot) {
  return tensor_slot ? (k == ValueKind::Tensor || k == ValueKind::Token) : true;
}

// An argument's shape must agree with the kinds of the values it holds:
// a TensorRef to a SymInt, say, would be written as as_tensor and misread.
Status Checker::check_arg_kinds(const Argument& arg, const std::string& where) const {
  auto bad = [&](const Value* v, std::string_view slot) -> Status {
    return make_error(where + ": " + std::string(slot) + " argument refers to " + name_of(v) + ", a " +
                      std::string(value_kind_name(v->kind())));
  };
  auto check = [&](const Value* v, ValueKind want, std::string_view slot) -> Status {
    if (!v || !u_.live(v)) return Status::Ok();  // reported by the scope check
    bool ok = want == ValueKind::Tensor ? kind_fits(v->kind(), true) : v->kind() == want;
    return ok ? Status::Ok() : bad(v, slot);
  };
  return std::visit(
      [&](const auto& a) -> Status {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, TensorRef> || std::is_same_v<T, OptionalTensor>) {
          return check(a.value, ValueKind::Tensor, "tensor");
        } else if constexpr (std::is_same_v<T, TensorList> || std::is_same_v<T, OptionalTensorList>) {
          for (Value* v : a.items) LATHE_RETURN_IF_ERROR(check(v, ValueKind::Tensor, "tensor list"));
        } else if constexpr (std::is_same_v<T, CustomObjRef>) {
          return check(a.value, ValueKind::CustomObj, "custom object");
        } else if constexpr (std::is_same_v<T, SymIntArg>) {
          if (a.is_value()) return check(a.value(), ValueKind::SymInt, "sym_int");
        } else if constexpr (std::is_same_v<T, SymIntList>) {
          for (const auto& s : a.items)
            if (s.is_value()) LATHE_RETURN_IF_ERROR(check(s.value(), ValueKind::SymInt, "sym_int list"));
        } else if constexpr (std::is_same_v<T, SymFloatArg>) {
          if (a.is_value()) return check(a.value(), ValueKind::SymFloat, "sym_float");
        } else if constexpr (std::is_same_v<T, SymBoolArg>) {
          if (a.is_value()) return check(a.value(), ValueKind::SymBool, "sym_bool");
        } else if constexpr (std::is_same_v<T, StringToArgument>) {
          for (const auto& [k, sub] : a.items) LATHE_RETURN_IF_ERROR(check_arg_kinds(sub, where));
        }
        return Status::Ok();
      },
      arg.v);
}

bool Checker::GraphScope::visible(const Value* v) const {
  if (defined.count(v)) return true;
  for (const Scope& s : outer)
    if (s.defined->count(v)) return true;
  return false;
}

std::string Checker::why_not_visible(const GraphScope& sc, const Value* v) const {
  if (sc.mine.count(v)) {
    if (v->producer()) return "uses " + name_of(v) + " before it is defined (by '" + v->producer()->name() + "')";
    return "uses placeholder " + name_of(v) + ", which is not among the graph's inputs";
  }
  for (const Scope& s : sc.outer)
    if (s.all->count(v)) return "uses " + name_of(v) + " from an enclosing graph before it is defined there";
  if (u_.live(v)) return "uses " + name_of(v) + ", which belongs to another graph";
  return "references a value that is not in the graph (erased or dangling)";
}

Status Checker::check_graph(const Graph& g, const std::string& where, std::vector<Scope> outer) {
  GraphScope sc{g, u_.graph_values.at(&g), std::move(outer), {}};
  LATHE_RETURN_IF_ERROR(check_graph_inputs(sc, where));
  size_t index = 0;
  for (Node* n : g.nodes()) LATHE_RETURN_IF_ERROR(check_node(sc, n, where + ": " + node_desc(index++, n)));
  LATHE_RETURN_IF_ERROR(check_graph_outputs(sc, where));
  return check_names(g, where);
}

Status Checker::check_graph_inputs(GraphScope& sc, const std::string& where) const {
  std::unordered_map<const Value*, size_t> input_pos;
  for (size_t i = 0; i < sc.g.inputs().size(); ++i) {
    for (Value* v : values_of(sc.g.inputs()[i])) {
      std::string at = where + ": graph input " + std::to_string(i) + " (" + name_of(v) + ")";
      if (v->producer()) return make_error(at + ": is defined by a node, not a placeholder");
      if (v->graph() != &sc.g) return make_error(at + ": belongs to another graph");
      if (auto [it, fresh] = input_pos.emplace(v, i); !fresh)
        return make_error(at + ": appears twice among the inputs (also input " + std::to_string(it->second) + ")");
      LATHE_RETURN_IF_ERROR(check_arg_kinds(sc.g.inputs()[i], at));
      if (v->kind() == ValueKind::Tensor && !v->meta()) return make_error(at + ": tensor has no metadata");
      sc.defined.insert(v);
    }
  }
  return Status::Ok();
}

// Its arguments (and subgraphs, each checked as a graph of its own that
// sees what is defined before this node), then its outputs.
Status Checker::check_node(GraphScope& sc, Node* n, const std::string& at) {
  if (n->graph() != &sc.g) return make_error(at + ": node's graph pointer names another graph");
  for (const auto& in : n->inputs()) {
    std::string arg_at = at + ": argument '" + in.name + "'";
    for (Value* v : values_of(in.arg)) {
      if (!sc.visible(v)) return make_error(arg_at + " " + why_not_visible(sc, v));
    }
    LATHE_RETURN_IF_ERROR(check_arg_kinds(in.arg, arg_at));
    if (auto* ga = in.arg.get_if<GraphArg>()) {
      if (!ga->graph) return make_error(arg_at + ": subgraph '" + ga->name + "' is null");
      auto inner = sc.outer;
      inner.push_back(Scope{&sc.defined, &sc.mine});
      LATHE_RETURN_IF_ERROR(check_graph(*ga->graph, at + ", subgraph '" + ga->name + "'", inner));
    }
  }
  return check_node_outputs(sc, n, at);
}

Status Checker::check_node_outputs(GraphScope& sc, Node* n, const std::string& at) const {
  std::vector<Value*> defs = n->defined_values();
  std::set<const Value*> listed;
  for (const auto& out : n->outputs()) {
    for (Value* v : values_of(out)) {
      if (std::find(defs.begin(), defs.end(), v) == defs.end())
        return make_error(at + ": lists " + name_of(v) + " as an output but does not define it");
      listed.insert(v);
    }
    LATHE_RETURN_IF_ERROR(check_arg_kinds(out, at + ": output"));
  }
  for (Value* v : defs) {
    std::string vat = at + ": value %" + v->name();
    if (v->producer() != n) return make_error(vat + ": producer is another node");
    if (v->graph() != &sc.g) return make_error(vat + ": belongs to another graph");
    if (!listed.count(v)) return make_error(vat + ": is defined but not listed among the node's outputs");
    if (v->kind() == ValueKind::Tensor && !v->meta()) return make_error(vat + ": tensor has no metadata");
    sc.defined.insert(v);
  }
  return Status::Ok();
}

Status Checker::check_graph_outputs(const GraphScope& sc, const std::string& where) const {
  for (size_t i = 0; i < sc.g.outputs().size(); ++i) {
    for (Value* v : values_of(sc.g.outputs()[i])) {
      if (!sc.visible(v)) return make_error(where + ": graph output " + std::to_string(i) + " " + why_not_visible(sc, v));
    }
    LATHE_RETURN_IF_ERROR(check_arg_kinds(sc.g.outputs()[i], where + ": graph output " + std::to_string(i)));
  }
  return Status::Ok();
}

// Names: unique, non-empty, and the graph's name index agrees.
Status Checker::check_names(const Graph& g, const std::string& where) {
  std::unordered_map<std::string, const Value*> names;
  for (const Value* v : ordered_values(g)) {
    if (v->name().empty())
      return make_error(where + ": a " + std::string(value_kind_name(v->kind())) + " value has no name");
    if (auto [it, fresh] = names.emplace(v->name(), v); !fresh)
      return make_error(where + ": two values are named '" + v->name() + "'");
    if (g.find_value(v->name()) != v)
      return make_error(where + ": name index does not map '" + v->name() + "' to its value");
  }
  return Status::Ok();
}

// A use-list must mirror the arguments exactly: for each (value, user) the
// number of Use entries equals the number of references in that user's
// arguments (graph outputs for user == nullptr). Rewriter bugs that edit
// arguments behind the graph's back show up here.
Status Checker::check_use_lists(const std::string& where) const {
  std::unordered_map<const Value*, std::map<const Node*, size_t>> expected;
  for (const Graph* g : u_.graphs) {
    for (Node* n : g->nodes())
      for (const auto& in : n->inputs())
        for (Value* v : values_of(in.arg)) ++expected[v][n];
    for (const auto& out : g->outputs())
      for (Value* v : values_of(out)) ++expected[v][nullptr];
  }
  for (const Graph* g : u_.graphs) {
    for (const Value* v : ordered_values(*g)) {
      std::map<const Node*, size_t> actual;
      for (const Use& use : v->uses()) {
        if (use.user && !u_.nodes.count(use.user))
          return make_error(where + ": use-list of %" + v->name() + " names a node that is not in the graph (erased?)");
        ++actual[use.user];
      }
      auto it = expected.find(v);
      const std::map<const Node*, size_t> none;
      const auto& want = it == expected.end() ? none : it->second;
      if (actual == want) continue;
      std::set<const Node*> users;
      for (const auto& [n, c] : actual) users.insert(n);
      for (const auto& [n, c] : want) users.insert(n);
      for (const Node* n : users) {
        size_t a = actual.count(n) ? actual.at(n) : 0, w = want.count(n) ? want.at(n) : 0;
        if (a == w) continue;
        std::string who = n ? "node '" + n->name() + "'" : std::string("the graph outputs");
        return make_error(where + ": use-list of %" + v->name() + " is inconsistent: it records " + std::to_string(a) +
                          " use(s) by " + who + ", whose arguments reference it " + std::to_string(w) + " time(s)");
      }
    }
  }
  return Status::Ok();
}

std::string input_desc(size_t i, const InputSpec& s, const std::string& value_desc) {
  std::string d = "input spec " + std::to_string(i) + " (" + std::string(input_kind_name(s.kind));
  if (!s.target.empty()) d += " '" + s.target + "'";
  if (s.kind == InputKind::Buffer && !s.persistent) d += " non-persistent";
  if (!value_desc.empty()) d += ", " + value_desc;
  return d + ")";
}

std::string output_desc(size_t i, const OutputSpec& s, const std::string& value_desc) {
  std::string d = "output spec " + std::to_string(i) + " (" + std::string(output_kind_name(s.kind));
  if (!s.target.empty()) d += " '" + s.target + "'";
  return d + ", " + value_desc + ")";
}

std::string_view output_group(int order) {
  static constexpr std::string_view kOut[] = {"tokens", "mutation outputs", "user outputs", "gradients"};
  return kOut[order];
}

// The signature against the graph and the state (ARCHITECTURE invariant 3),
// one check per member function. Inputs are checked first: the output
// checks need the names they collect.
class SignatureChecker {
 public:
  SignatureChecker(const ExportedProgram& ep, const Checker& c, const std::string& where)
      : ep_(ep), g_(ep.graph()), c_(c), where_(where) {}

  Status run() {
    LATHE_RETURN_IF_ERROR(check_counts());
    // Inputs may come in any order: torch.export lifts state in module
    // attribute order (a tensor constant can sit between two buffers), and
    // PyTorch's verifier (_verify_exported_program_signature) and unlifting
    // match inputs to specs by position and kind, never by an order of kinds.
    for (size_t i = 0; i < ep_.input_specs.size(); ++i) LATHE_RETURN_IF_ERROR(check_input(i));
    LATHE_RETURN_IF_ERROR(check_no_orphan_state());
    // PyTorch does rely on the order of outputs: it takes the mutations from
    // the front of the output list (after the tokens), by count.
    for (size_t i = 0; i < ep_.output_specs.size(); ++i) LATHE_RETURN_IF_ERROR(check_output(i));
    return Status::Ok();
  }

 private:
  Status check_counts() const {
    if (g_.inputs().size() != ep_.input_specs.size())
      return make_error(where_ + ": the graph has " + std::to_string(g_.inputs().size()) + " input(s) but the signature " +
                        std::to_string(ep_.input_specs.size()) + " input spec(s)");
    if (g_.outputs().size() != ep_.output_specs.size())
      return make_error(where_ + ": the graph has " + std::to_string(g_.outputs().size()) +
                        " output(s) but the signature " + std::to_string(ep_.output_specs.size()) + " output spec(s)");
    return Status::Ok();
  }

  // ---- inputs ----

  Status check_input(size_t i) {
    const InputSpec& s = ep_.input_specs[i];
    const Argument& in = g_.inputs()[i];
    const Value* v = c_.single_value(in);
    const std::string at = where_ + ": " + input_desc(i, s, values_of(in).empty() ? "" : c_.arg_desc(in));
    LATHE_RETURN_IF_ERROR(check_input_kind(s, in, v, at));
    if (s.kind == InputKind::UserInput) user_inputs_.insert(v->name());
    const bool stateful = s.kind == InputKind::Parameter || s.kind == InputKind::Buffer ||
                          s.kind == InputKind::TensorConstant || s.kind == InputKind::CustomObj;
    if (!stateful) return Status::Ok();
    if (s.target.empty()) return make_error(at + ": names no state entry (empty target)");
    if (auto [it, fresh] = state_names_.emplace(s.target, i); !fresh)
      return make_error(at + ": names '" + s.target + "', already named by input spec " + std::to_string(it->second));
    LATHE_ASSIGN_OR_RETURN(const Tensor* t, state_of(s, at));
    return t && v && v->meta() ? check_state_matches(*t, *v->meta(), s, at) : Status::Ok();
  }

  static Status check_input_kind(const InputSpec& s, const Argument& in, const Value* v, const std::string& at) {
    auto want = [&](bool ok, std::string_view what) -> Status {
      if (ok) return Status::Ok();
      std::string got = values_of(in).empty() ? "a literal"
                        : v                   ? std::string(value_kind_name(v->kind()))
                                              : "not a single live value";
      return make_error(at + ": expects " + std::string(what) + " graph input, but it is " + got);
    };
    switch (s.kind) {
      case InputKind::Parameter:
      case InputKind::Buffer:
      case InputKind::TensorConstant: return want(v && v->kind() == ValueKind::Tensor, "a tensor");
      case InputKind::CustomObj: return want(v && v->kind() == ValueKind::CustomObj, "a custom object");
      case InputKind::Token:
        // PyTorch 2.13 writes tokens as empty tensors that the spec calls tokens.
        return want(v && (v->kind() == ValueKind::Token || v->kind() == ValueKind::Tensor), "a token (or tensor)");
      case InputKind::ConstantInput: return want(values_of(in).empty(), "a literal");
      case InputKind::UserInput:
        // Tensors, symbolic scalars, and script objects passed by the caller.
        return want(v && v->kind() != ValueKind::Token, "a non-token");
    }
    return Status::Ok();
  }

  // The state entry a stateful spec names (nullptr for a custom object,
  // kept as opaque bytes); records the name for the orphan and output checks.
  Result<const Tensor*> state_of(const InputSpec& s, const std::string& at) {
    const Tensor* t = nullptr;
    switch (s.kind) {
      case InputKind::Parameter:
        params_.insert(s.target);
        named_params_.insert(s.target);
        t = ep_.parameters.find(s.target);
        if (!t) return make_error(at + ": parameter '" + s.target + "' is not in the program's parameters");
        return t;
      case InputKind::Buffer:
        buffers_.insert(s.target);
        (s.persistent ? named_buffers_ : named_constants_).insert(s.target);
        t = s.persistent ? ep_.buffers.find(s.target) : ep_.constants.find(s.target);
        if (!t)
          return make_error(at + ": " +
                            (s.persistent ? "persistent buffer '" + s.target + "' is not in the program's buffers"
                                          : "non-persistent buffer '" + s.target + "' is not in the program's constants"));
        return t;
      case InputKind::TensorConstant:
        named_constants_.insert(s.target);
        t = ep_.constants.find(s.target);
        if (!t) return make_error(at + ": tensor constant '" + s.target + "' is not in the program's constants");
        return t;
      default: {
        bool found = false;
        for (const auto& [name, bytes] : ep_.opaque_constants) found = found || name == s.target;
        if (!found) return make_error(at + ": custom object '" + s.target + "' is not in the program's opaque constants");
        return t;
      }
    }
  }

  static Status check_state_matches(const Tensor& t, const TensorMeta& m, const InputSpec& s, const std::string& at) {
    if (t.dtype != m.dtype)
      return make_error(at + ": state tensor '" + s.target + "' is " + std::string(dtype_name(t.dtype)) +
                        " but the placeholder is " + std::string(dtype_name(m.dtype)));
    if (auto sizes = m.concrete_sizes(); sizes && *sizes != t.sizes)
      return make_error(at + ": state tensor '" + s.target + "' has shape " + shape_string(t.sizes) +
                        " but the placeholder has " + shape_string(*sizes));
    return Status::Ok();
  }

  // Orphans: state nobody feeds into the graph is silently dropped or, worse,
  // shadows a renamed entry; refuse it. The exception is a tied alias:
  // torch.export lifts a tied weight once but keeps every name it is
  // reachable by in the state dict, all viewing the same storage.
  Status check_no_orphan_state() const {
    auto alias_of_named = [](const NamedTensors& dict, const std::set<std::string>& named, const Tensor& t) {
      if (!t.storage) return false;
      for (const std::string& other : named) {
        const Tensor* o = dict.find(other);
        if (o && o->storage == t.storage && o->dtype == t.dtype && o->sizes == t.sizes && o->strides == t.strides &&
            o->storage_offset == t.storage_offset)
          return true;
      }
      return false;
    };
    for (const auto& [name, t] : ep_.parameters)
      if (!named_params_.count(name) && !alias_of_named(ep_.parameters, named_params_, t))
        return make_error(where_ + ": parameter '" + name + "' is named by no input spec (orphan state)");
    for (const auto& [name, t] : ep_.buffers)
      if (!named_buffers_.count(name) && !alias_of_named(ep_.buffers, named_buffers_, t))
        return make_error(where_ + ": buffer '" + name + "' is named by no persistent buffer input spec (orphan state)");
    for (const auto& [name, t] : ep_.constants)
      if (!named_constants_.count(name) && !alias_of_named(ep_.constants, named_constants_, t))
        return make_error(where_ + ": constant '" + name +
                          "' is named by no tensor_constant or non-persistent buffer input spec (orphan state)");
    return Status::Ok();
  }

  // ---- outputs ----

  Status check_output(size_t i) {
    const OutputSpec& s = ep_.output_specs[i];
    const Argument& out = g_.outputs()[i];
    const Value* v = c_.single_value(out);
    const std::string at = where_ + ": " + output_desc(i, s, c_.arg_desc(out));
    const int order = output_kind_order(s.kind);
    if (order < max_order_)
      return make_error(at + ": " + std::string(output_group(order)) + " must come before " +
                        std::string(output_group(max_order_)) + ", but output spec " + std::to_string(max_at_) +
                        " is a " + std::string(output_kind_name(ep_.output_specs[max_at_].kind)));
    if (order > max_order_) {
      max_order_ = order;
      max_at_ = i;
    }
    if (s.kind == OutputKind::Token) {
      if (!v || (v->kind() != ValueKind::Token && v->kind() != ValueKind::Tensor))
        return make_error(at + ": must be a token (or tensor) value");
      return Status::Ok();
    }
    if (s.kind != OutputKind::UserOutput && (!v || v->kind() != ValueKind::Tensor))
      return make_error(at + ": must be a single tensor value");
    LATHE_RETURN_IF_ERROR(check_output_target(s, at));
    if (order == 1) {
      if (auto [it, fresh] = mutated_.emplace(std::make_pair(s.kind, s.target), i); !fresh)
        return make_error(at + ": '" + s.target + "' is already mutated by output spec " + std::to_string(it->second));
    }
    return Status::Ok();
  }

  // A mutation or gradient names an input of its kind.
  Status check_output_target(const OutputSpec& s, const std::string& at) const {
    auto names = [&](bool ok, std::string_view what) -> Status {
      if (ok) return Status::Ok();
      return make_error(at + ": names '" + s.target + "', which is not " + std::string(what));
    };
    switch (s.kind) {
      case OutputKind::BufferMutation: return names(buffers_.count(s.target), "a buffer input");
      case OutputKind::ParameterMutation:
      case OutputKind::GradientToParameter: return names(params_.count(s.target), "a parameter input");
      case OutputKind::UserInputMutation:
      case OutputKind::GradientToUserInput: return names(user_inputs_.count(s.target), "a user input");
      default: return Status::Ok();
    }
  }

  const ExportedProgram& ep_;
  const Graph& g_;
  const Checker& c_;
  const std::string& where_;
  std::unordered_map<std::string, size_t> state_names_;  // params and buffers share one state namespace
  std::set<std::string> params_, buffers_, user_inputs_;
  std::set<std::string> named_params_, named_buffers_, named_constants_;
  int max_order_ = 0;  // of the outputs so far
  size_t max_at_ = 0;
  std::map<std::pair<OutputKind, std::string>, size_t> mutated_;
};

}  // namespace

Status verify_graph(const Graph& graph, const std::string& where) {
  Checker c(graph);
  LATHE_RETURN_IF_ERROR(c.check_graph(graph, where, {}));
  return c.check_use_lists(where);
}

Status verify(const ExportedProgram& ep, const std::string& method_name) {
  std::string where = "method '" + method_name + "'";
  Checker c(ep.graph());
  LATHE_RETURN_IF_ERROR(SignatureChecker(ep, c, where).run());
  LATHE_RETURN_IF_ERROR(c.check_graph(ep.graph(), where, {}));
  return c.check_use_lists(where);
}

Status verify(const Program& program) {
  if (program.methods.empty()) return make_error("program has no methods");
  std::set<std::string> seen;
  for (const Method& m : program.methods) {
    if (!seen.insert(m.name).second) return make_error("program has two methods named '" + m.name + "'");
    if (!m.program) return make_error("method '" + m.name + "' has no program");
    LATHE_RETURN_IF_ERROR(verify(*m.program, m.name));
  }
  return Status::Ok();
}

}  // namespace lathe
