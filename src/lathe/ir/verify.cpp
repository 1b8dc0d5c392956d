#include "lathe/ir/verify.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "lathe/ir/flat_map.h"
#include "lathe/ir/input_shapes.h"

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

template <typename Specs, typename Order>
size_t group_end(const Specs& specs, Order order, int wanted) {
  for (size_t i = 0; i < specs.size(); ++i) {
    if (order(specs[i].kind) > wanted) return i;
  }
  return specs.size();
}

}  // namespace

size_t input_insert_position(const ExportedProgram& ep, InputKind kind) {
  return group_end(ep.input_specs, input_kind_order, input_kind_order(kind));
}

size_t output_insert_position(const ExportedProgram& ep, OutputKind kind) {
  return group_end(ep.output_specs, output_kind_order, output_kind_order(kind));
}

namespace {

// Every value an argument references (None slots skipped), into `out`.
void collect_values(const Argument& arg, std::vector<Value*>& out) {
  out.clear();
  arg.for_each_value([&](Value* v) { out.push_back(v); });
}

std::vector<Value*> values_of(const Argument& arg) {
  std::vector<Value*> out;
  collect_values(arg, out);
  return out;
}

// Where a value of the program lives: its graph (an index into
// Universe::graphs), the position from which it is defined (0 for a
// placeholder, k + 1 for an output of the graph's node k), and its number
// among all values.
struct ValueInfo {
  uint32_t graph = 0;
  uint32_t def = 0;
  uint32_t ordinal = 0;
};

// Every graph reachable from the top one (through GraphArgs), with the
// values and nodes each owns. Pointers are looked up here before they are
// ever dereferenced. Flat tables: on a program of a million values, node-
// based sets cost more than all the checks together.
class Universe {
 public:
  // Sized for the top graph's values and nodes up front: growing to them
  // would build and drop every smaller table on the way.
  explicit Universe(const Graph& top)
      : values_(top.inputs().size() + top.node_count()), nodes_(top.node_count()) {
    collect(top);
  }

  const ValueInfo* info(const Value* v) const { return values_.find(v); }
  bool live(const Value* v) const { return values_.contains(v); }
  bool has_node(const Node* n) const { return nodes_.contains(n); }
  uint32_t graph_index(const Graph* g) const { return *graph_index_.find(g); }
  const std::vector<const Graph*>& graphs() const { return graphs_; }
  size_t value_count() const { return values_.size(); }

 private:
  void collect(const Graph& g) {
    if (graph_index_.contains(&g)) return;  // a subgraph shared by several nodes
    const auto gi = static_cast<uint32_t>(graphs_.size());
    graph_index_.emplace(&g, gi);
    graphs_.push_back(&g);
    auto add = [&](const Value* v, uint32_t def) {
      values_.emplace(v, ValueInfo{gi, def, static_cast<uint32_t>(values_.size())});
    };
    for (const Argument& in : g.inputs()) in.for_each_value([&](Value* v) { add(v, 0); });
    uint32_t k = 0;
    for (const Node* n : g.nodes()) {
      nodes_.insert(n);
      ++k;
      for (const Value* v : n->defined_values()) add(v, k);
    }
    for (const Node* n : g.nodes()) {
      for (const auto& in : n->inputs()) {
        if (auto* ga = in.arg.get_if<GraphArg>(); ga && ga->graph) collect(*ga->graph);
      }
    }
  }

  FlatMap<const Value*, ValueInfo> values_;
  FlatSet<const Node*> nodes_;
  FlatMap<const Graph*, uint32_t> graph_index_;
  std::vector<const Graph*> graphs_;  // discovery order
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

// Messages are built only when a check fails: where a check is (a node, an
// argument, a spec) is described by a function, called only then. Where
// refers to the lambda it is made from, never copying it (std::function
// would allocate for each node): make it from an argument or a named lambda.
class Where {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Where>>>
  Where(const F& describe)  // NOLINT(google-explicit-constructor)
      : describe_(&describe), call_([](const void* d) { return (*static_cast<const F*>(d))(); }) {}
  std::string operator()() const { return call_(describe_); }

 private:
  const void* describe_;
  std::string (*call_)(const void*);
};

class Checker {
 public:
  explicit Checker(const Graph& top) : u_(top) {}

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
  // The single live value an argument references, or nullptr; `count` gets
  // how many values it references.
  const Value* single_value(const Argument& arg, size_t* count = nullptr) const {
    const Value* only = nullptr;
    size_t n = 0;
    arg.for_each_value([&](Value* v) {
      only = v;
      ++n;
    });
    if (count) *count = n;
    return n == 1 && u_.live(only) ? only : nullptr;
  }

  // What an enclosing graph offers a subgraph: the values defined before
  // position `position` (the node that holds the subgraph).
  struct Scope {
    uint32_t graph;
    uint32_t position;
  };
  Status check_graph(const Graph& g, const std::string& where, const std::vector<Scope>& outer);
  Status check_use_lists(const std::string& where) const;

 private:
  bool visible(const Value* v, uint32_t gi, uint32_t position, const std::vector<Scope>& outer) const;
  std::string why_not_visible(const Value* v, uint32_t gi, const std::vector<Scope>& outer) const;
  Status check_inputs(const Graph& g, const std::string& where);
  Status check_node(const Graph& g, const Node* n, uint32_t index, const std::string& where,
                    const std::vector<Scope>& outer);
  Status check_node_outputs(const Graph& g, const Node* n, const Where& at);
  Status check_names(const Graph& g, const std::string& where) const;
  Status use_list_error(const Value* v, std::vector<const Node*> expected, const std::string& where) const;
  Status check_arg_kinds(const Argument& arg, const Where& where) const;
  std::string node_desc(size_t index, const Node* n) const {
    return "node " + std::to_string(index) + " '" + n->name() + "' (" + n->op_name() + ")";
  }

  Universe u_;
  std::vector<Value*> scratch_;  // values of one argument
};

bool kind_fits(ValueKind k, bool tensor_slot) {
  return tensor_slot ? (k == ValueKind::Tensor || k == ValueKind::Token) : true;
}

// An argument's shape must agree with the kinds of the values it holds:
// a TensorRef to a SymInt, say, would be written as as_tensor and misread.
Status Checker::check_arg_kinds(const Argument& arg, const Where& where) const {
  auto bad = [&](const Value* v, std::string_view slot) -> Status {
    return make_error(where() + ": " + std::string(slot) + " argument refers to " + name_of(v) + ", a " +
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

// Defined before `position` in graph `gi`, or before the enclosing node in
// an enclosing graph.
bool Checker::visible(const Value* v, uint32_t gi, uint32_t position, const std::vector<Scope>& outer) const {
  const ValueInfo* info = u_.info(v);
  if (!info) return false;
  if (info->graph == gi && info->def <= position) return true;
  for (const Scope& s : outer) {
    if (info->graph == s.graph && info->def <= s.position) return true;
  }
  return false;
}

std::string Checker::why_not_visible(const Value* v, uint32_t gi, const std::vector<Scope>& outer) const {
  const ValueInfo* info = u_.info(v);
  if (info && info->graph == gi) {
    if (v->producer()) return "uses " + name_of(v) + " before it is defined (by '" + v->producer()->name() + "')";
    return "uses placeholder " + name_of(v) + ", which is not among the graph's inputs";
  }
  for (const Scope& s : outer)
    if (info && info->graph == s.graph) return "uses " + name_of(v) + " from an enclosing graph before it is defined there";
  if (info) return "uses " + name_of(v) + ", which belongs to another graph";
  return "references a value that is not in the graph (erased or dangling)";
}

Status Checker::check_inputs(const Graph& g, const std::string& where) {
  FlatMap<const Value*, size_t> input_pos(g.inputs().size());
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    for (Value* v : values_of(g.inputs()[i])) {
      auto at = [&] { return where + ": graph input " + std::to_string(i) + " (" + name_of(v) + ")"; };
      if (v->producer()) return make_error(at() + ": is defined by a node, not a placeholder");
      if (v->graph() != &g) return make_error(at() + ": belongs to another graph");
      if (auto [first, fresh] = input_pos.emplace(v, i); !fresh)
        return make_error(at() + ": appears twice among the inputs (also input " + std::to_string(*first) + ")");
      LATHE_RETURN_IF_ERROR(check_arg_kinds(g.inputs()[i], at));
      if (v->kind() == ValueKind::Tensor && !v->meta()) return make_error(at() + ": tensor has no metadata");
    }
  }
  return Status::Ok();
}

Status Checker::check_node(const Graph& g, const Node* n, uint32_t index, const std::string& where,
                           const std::vector<Scope>& outer) {
  auto at = [&] { return where + ": " + node_desc(index, n); };
  if (n->graph() != &g) return make_error(at() + ": node's graph pointer names another graph");
  const uint32_t gi = u_.graph_index(&g);
  for (const auto& in : n->inputs()) {
    auto arg_at = [&] { return at() + ": argument '" + in.name + "'"; };
    collect_values(in.arg, scratch_);
    for (Value* v : scratch_) {
      if (!visible(v, gi, index, outer)) return make_error(arg_at() + " " + why_not_visible(v, gi, outer));
    }
    LATHE_RETURN_IF_ERROR(check_arg_kinds(in.arg, arg_at));
    if (auto* ga = in.arg.get_if<GraphArg>()) {
      if (!ga->graph) return make_error(arg_at() + ": subgraph '" + ga->name + "' is null");
      auto inner = outer;
      inner.push_back(Scope{gi, index});
      LATHE_RETURN_IF_ERROR(check_graph(*ga->graph, at() + ", subgraph '" + ga->name + "'", inner));
    }
  }
  return check_node_outputs(g, n, at);
}

// What a node lists as outputs is exactly what it defines, each with the
// node as producer, tensors with metadata.
Status Checker::check_node_outputs(const Graph& g, const Node* n, const Where& at) {
  std::vector<Value*> defs = n->defined_values();
  std::vector<const Value*> listed;
  for (const auto& out : n->outputs()) {
    collect_values(out, scratch_);
    for (Value* v : scratch_) {
      if (std::find(defs.begin(), defs.end(), v) == defs.end())
        return make_error(at() + ": lists " + name_of(v) + " as an output but does not define it");
      listed.push_back(v);
    }
    LATHE_RETURN_IF_ERROR(check_arg_kinds(out, [&] { return at() + ": output"; }));
  }
  for (Value* v : defs) {
    auto vat = [&] { return at() + ": value %" + v->name(); };
    if (v->producer() != n) return make_error(vat() + ": producer is another node");
    if (v->graph() != &g) return make_error(vat() + ": belongs to another graph");
    if (std::find(listed.begin(), listed.end(), v) == listed.end())
      return make_error(vat() + ": is defined but not listed among the node's outputs");
    if (v->kind() == ValueKind::Tensor && !v->meta()) return make_error(vat() + ": tensor has no metadata");
  }
  return Status::Ok();
}

// Names are non-empty and the graph's name index maps each to its value
// (which also makes them unique: an index maps a name to one value).
Status Checker::check_names(const Graph& g, const std::string& where) const {
  for (const Value* v : ordered_values(g)) {
    if (v->name().empty())
      return make_error(where + ": a " + std::string(value_kind_name(v->kind())) + " value has no name");
    const Value* indexed = g.find_value(v->name());
    if (indexed == v) continue;
    // The index maps the name to an earlier value of this graph: a second
    // value has the same name.
    const ValueInfo* mine = u_.info(v);
    const ValueInfo* other = indexed ? u_.info(indexed) : nullptr;
    if (mine && other && other->graph == mine->graph && other->ordinal < mine->ordinal &&
        indexed->name() == v->name())
      return make_error(where + ": two values are named '" + v->name() + "'");
    return make_error(where + ": name index does not map '" + v->name() + "' to its value");
  }
  return Status::Ok();
}

Status Checker::check_graph(const Graph& g, const std::string& where, const std::vector<Scope>& outer) {
  LATHE_RETURN_IF_ERROR(check_inputs(g, where));
  uint32_t index = 0;
  for (const Node* n : g.nodes()) LATHE_RETURN_IF_ERROR(check_node(g, n, index++, where, outer));
  const uint32_t gi = u_.graph_index(&g);
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    for (Value* v : values_of(g.outputs()[i])) {
      if (!visible(v, gi, index, outer))
        return make_error(where + ": graph output " + std::to_string(i) + " " + why_not_visible(v, gi, outer));
    }
    LATHE_RETURN_IF_ERROR(
        check_arg_kinds(g.outputs()[i], [&] { return where + ": graph output " + std::to_string(i); }));
  }
  return check_names(g, where);
}

// A use-list must mirror the arguments exactly: for each (value, user) the
// number of Use entries equals the number of references in that user's
// arguments (graph outputs for user == nullptr). Rewriter bugs that edit
// arguments behind the graph's back show up here.
//
// Every reference is listed once, grouped by value (a counting sort), and
// each value's users are compared with its use-list; only a value whose
// lists differ is looked at closely, to say how.
Status Checker::check_use_lists(const std::string& where) const {
  std::vector<uint32_t> start(u_.value_count() + 1, 0);
  auto for_each_reference = [&](auto&& fn) {
    for (const Graph* g : u_.graphs()) {
      for (const Node* n : g->nodes())
        for (const auto& in : n->inputs())
          in.arg.for_each_value([&](Value* v) {
            if (const ValueInfo* info = u_.info(v)) fn(info->ordinal, n);
          });
      for (const auto& out : g->outputs())
        out.for_each_value([&](Value* v) {
          if (const ValueInfo* info = u_.info(v)) fn(info->ordinal, nullptr);
        });
    }
  };
  for_each_reference([&](uint32_t ordinal, const Node*) { ++start[ordinal + 1]; });
  for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  std::vector<const Node*> users(start.back());
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  for_each_reference([&](uint32_t ordinal, const Node* n) { users[next[ordinal]++] = n; });

  std::vector<const Node*> actual, expected;
  for (const Graph* g : u_.graphs()) {
    for (const Value* v : ordered_values(*g)) {
      const uint32_t ord = u_.info(v)->ordinal;
      const auto first = users.begin() + start[ord], last = users.begin() + start[ord + 1];
      const auto& uses = v->uses();
      if (uses.size() != static_cast<size_t>(last - first)) return use_list_error(v, {first, last}, where);
      bool same = std::equal(uses.begin(), uses.end(), first, [](const Use& u, const Node* n) { return u.user == n; });
      if (same) continue;
      actual.clear();
      for (const Use& use : uses) actual.push_back(use.user);
      expected.assign(first, last);
      std::sort(actual.begin(), actual.end());
      std::sort(expected.begin(), expected.end());
      if (actual != expected) return use_list_error(v, {first, last}, where);
    }
  }
  return Status::Ok();
}

// Says how `v`'s use-list differs from the references to it (`expected`:
// the user of each).
Status Checker::use_list_error(const Value* v, std::vector<const Node*> expected, const std::string& where) const {
  std::map<const Node*, size_t> actual, want;
  for (const Use& use : v->uses()) {
    if (use.user && !u_.has_node(use.user))
      return make_error(where + ": use-list of %" + v->name() + " names a node that is not in the graph (erased?)");
    ++actual[use.user];
  }
  for (const Node* n : expected) ++want[n];
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
  return make_error(where + ": use-list of %" + v->name() + " is inconsistent");
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

// The names input specs give, by kind, for the orphan and output checks.
// Views of the specs' own strings, which outlive the check.
struct SpecNames {
  // Each table sized for the specs of its kind: sized for all of them, the
  // empty ones alone cost megabytes on a deep network.
  explicit SpecNames(const decltype(ExportedProgram::input_specs)& specs)
      : SpecNames(count(specs, InputKind::Parameter), count(specs, InputKind::Buffer),
                  count(specs, InputKind::UserInput), specs.size()) {}
  FlatMap<std::string_view, size_t> state;  // params and buffers share one state namespace
  FlatSet<std::string_view> buffers;  // every buffer spec's target (mutation outputs name them)
  FlatSet<std::string_view> user_inputs;
  // The state each kind of spec names: the orphan check (and gradients,
  // which name parameters).
  FlatSet<std::string_view> named_params, named_buffers, named_constants;

 private:
  SpecNames(size_t params_n, size_t buffers_n, size_t user_n, size_t all)
      : state(all - user_n), buffers(buffers_n), user_inputs(user_n), named_params(params_n) {}
  static size_t count(const decltype(ExportedProgram::input_specs)& specs, InputKind kind) {
    return static_cast<size_t>(std::count_if(specs.begin(), specs.end(), [kind](const InputSpec& s) { return s.kind == kind; }));
  }
};

// The graph input a spec describes is of the kind the spec needs.
Status check_input_kind(const InputSpec& s, const Argument& in, const Checker& c, const Where& at,
                        SpecNames& names) {
  size_t count = 0;
  const Value* v = c.single_value(in, &count);
  auto want = [&](bool ok, std::string_view what) -> Status {
    if (ok) return Status::Ok();
    std::string got = count == 0 ? "a literal" : v ? std::string(value_kind_name(v->kind())) : "not a single live value";
    return make_error(at() + ": expects " + std::string(what) + " graph input, but it is " + got);
  };
  switch (s.kind) {
    case InputKind::Parameter:
    case InputKind::Buffer:
    case InputKind::TensorConstant: return want(v && v->kind() == ValueKind::Tensor, "a tensor");
    case InputKind::CustomObj: return want(v && v->kind() == ValueKind::CustomObj, "a custom object");
    case InputKind::Token:
      // PyTorch 2.13 writes tokens as empty tensors that the spec calls tokens.
      return want(v && (v->kind() == ValueKind::Token || v->kind() == ValueKind::Tensor), "a token (or tensor)");
    case InputKind::ConstantInput: return want(count == 0, "a literal");
    case InputKind::UserInput:
      // Tensors, symbolic scalars, and script objects passed by the caller.
      LATHE_RETURN_IF_ERROR(want(v && v->kind() != ValueKind::Token, "a non-token"));
      names.user_inputs.insert(v->name());
      return Status::Ok();
  }
  return Status::Ok();
}

// The state entry a parameter, buffer, constant or custom object spec names
// exists, and agrees with its placeholder's dtype and shape.
Status check_state_entry(const ExportedProgram& ep, size_t i, const Value* v, const Where& at, SpecNames& names) {
  const InputSpec& s = ep.input_specs[i];
  if (s.target.empty()) return make_error(at() + ": names no state entry (empty target)");
  if (auto [first, fresh] = names.state.emplace(s.target, i); !fresh)
    return make_error(at() + ": names '" + s.target + "', already named by input spec " + std::to_string(*first));
  const Tensor* t = nullptr;
  switch (s.kind) {
    case InputKind::Parameter:
      names.named_params.insert(s.target);
      t = ep.parameters.find(s.target);
      if (!t) return make_error(at() + ": parameter '" + s.target + "' is not in the program's parameters");
      break;
    case InputKind::Buffer:
      names.buffers.insert(s.target);
      (s.persistent ? names.named_buffers : names.named_constants).insert(s.target);
      t = s.persistent ? ep.buffers.find(s.target) : ep.constants.find(s.target);
      if (!t)
        return make_error(at() + ": " +
                          (s.persistent ? "persistent buffer '" + s.target + "' is not in the program's buffers"
                                        : "non-persistent buffer '" + s.target + "' is not in the program's constants"));
      break;
    case InputKind::TensorConstant:
      names.named_constants.insert(s.target);
      t = ep.constants.find(s.target);
      if (!t) return make_error(at() + ": tensor constant '" + s.target + "' is not in the program's constants");
      break;
    default: {  // custom object: kept as opaque bytes
      bool found = false;
      for (const auto& [name, bytes] : ep.opaque_constants) found = found || name == s.target;
      if (!found) return make_error(at() + ": custom object '" + s.target + "' is not in the program's opaque constants");
      break;
    }
  }
  if (t && v && v->meta()) {
    if (Status st = check_state_matches_placeholder(s.target, *t, *v->meta()); !st.ok())
      return st.error().context(at());
  }
  return Status::Ok();
}

// Inputs may come in any order: torch.export lifts state in module
// attribute order (a tensor constant can sit between two buffers), and
// PyTorch's verifier (_verify_exported_program_signature) and unlifting
// match inputs to specs by position and kind, never by an order of kinds.
Status check_input_specs(const ExportedProgram& ep, const Checker& c, const std::string& where, SpecNames& names) {
  const Graph& g = ep.graph();
  for (size_t i = 0; i < ep.input_specs.size(); ++i) {
    const InputSpec& s = ep.input_specs[i];
    const Argument& in = g.inputs()[i];
    auto at = [&] { return where + ": " + input_desc(i, s, values_of(in).empty() ? "" : c.arg_desc(in)); };
    LATHE_RETURN_IF_ERROR(check_input_kind(s, in, c, at, names));
    bool stateful = s.kind == InputKind::Parameter || s.kind == InputKind::Buffer ||
                    s.kind == InputKind::TensorConstant || s.kind == InputKind::CustomObj;
    if (stateful) LATHE_RETURN_IF_ERROR(check_state_entry(ep, i, c.single_value(in), at, names));
  }
  return Status::Ok();
}

// Orphans: state nobody feeds into the graph is silently dropped or, worse,
// shadows a renamed entry; refuse it. The exception is a tied alias:
// torch.export lifts a tied weight once but keeps every name it is
// reachable by in the state dict, all viewing the same storage.
Status check_orphans(const ExportedProgram& ep, const std::string& where, const SpecNames& names) {
  auto alias_of_named = [](const NamedTensors& dict, const FlatSet<std::string_view>& named, const Tensor& t) {
    if (!t.storage) return false;
    for (const auto& [other, o] : dict) {
      if (named.contains(other) && o.storage == t.storage && o.dtype == t.dtype && o.sizes == t.sizes &&
          o.strides == t.strides && o.storage_offset == t.storage_offset)
        return true;
    }
    return false;
  };
  for (const auto& [name, t] : ep.parameters)
    if (!names.named_params.contains(name) && !alias_of_named(ep.parameters, names.named_params, t))
      return make_error(where + ": parameter '" + name + "' is named by no input spec (orphan state)");
  for (const auto& [name, t] : ep.buffers)
    if (!names.named_buffers.contains(name) && !alias_of_named(ep.buffers, names.named_buffers, t))
      return make_error(where + ": buffer '" + name + "' is named by no persistent buffer input spec (orphan state)");
  for (const auto& [name, t] : ep.constants)
    if (!names.named_constants.contains(name) && !alias_of_named(ep.constants, names.named_constants, t))
      return make_error(where + ": constant '" + name +
                        "' is named by no tensor_constant or non-persistent buffer input spec (orphan state)");
  return Status::Ok();
}

// PyTorch does rely on this order: it takes the mutations from the front
// of the output list (after the tokens), by count.
Status check_output_specs(const ExportedProgram& ep, const Checker& c, const std::string& where,
                          const SpecNames& names) {
  const Graph& g = ep.graph();
  int max_order = 0;
  size_t max_at = 0;
  std::map<std::pair<OutputKind, std::string>, size_t> mutated;
  for (size_t i = 0; i < ep.output_specs.size(); ++i) {
    const OutputSpec& s = ep.output_specs[i];
    const Argument& out = g.outputs()[i];
    const Value* v = c.single_value(out);
    auto at = [&] { return where + ": " + output_desc(i, s, c.arg_desc(out)); };
    int order = output_kind_order(s.kind);
    if (order < max_order)
      return make_error(at() + ": " + std::string(output_group(order)) + " must come before " +
                        std::string(output_group(max_order)) + ", but output spec " + std::to_string(max_at) +
                        " is a " + std::string(output_kind_name(ep.output_specs[max_at].kind)));
    if (order > max_order) {
      max_order = order;
      max_at = i;
    }
    if (s.kind == OutputKind::Token) {
      if (!v || (v->kind() != ValueKind::Token && v->kind() != ValueKind::Tensor))
        return make_error(at() + ": must be a token (or tensor) value");
      continue;
    }
    if (s.kind != OutputKind::UserOutput && (!v || v->kind() != ValueKind::Tensor))
      return make_error(at() + ": must be a single tensor value");
    auto named = [&](bool ok, std::string_view what) -> Status {
      if (ok) return Status::Ok();
      return make_error(at() + ": names '" + s.target + "', which is not " + std::string(what));
    };
    switch (s.kind) {
      case OutputKind::BufferMutation: LATHE_RETURN_IF_ERROR(named(names.buffers.contains(s.target), "a buffer input")); break;
      case OutputKind::ParameterMutation:
      case OutputKind::GradientToParameter:
        LATHE_RETURN_IF_ERROR(named(names.named_params.contains(s.target), "a parameter input"));
        break;
      case OutputKind::UserInputMutation:
      case OutputKind::GradientToUserInput:
        LATHE_RETURN_IF_ERROR(named(names.user_inputs.contains(s.target), "a user input"));
        break;
      default: break;
    }
    if (order == 1) {
      if (auto [it, fresh] = mutated.emplace(std::make_pair(s.kind, s.target), i); !fresh)
        return make_error(at() + ": '" + s.target + "' is already mutated by output spec " + std::to_string(it->second));
    }
  }
  return Status::Ok();
}

Status check_signature(const ExportedProgram& ep, const Checker& c, const std::string& where) {
  const Graph& g = ep.graph();
  if (g.inputs().size() != ep.input_specs.size())
    return make_error(where + ": the graph has " + std::to_string(g.inputs().size()) + " input(s) but the signature " +
                      std::to_string(ep.input_specs.size()) + " input spec(s)");
  if (g.outputs().size() != ep.output_specs.size())
    return make_error(where + ": the graph has " + std::to_string(g.outputs().size()) +
                      " output(s) but the signature " + std::to_string(ep.output_specs.size()) + " output spec(s)");
  SpecNames names(ep.input_specs);
  LATHE_RETURN_IF_ERROR(check_input_specs(ep, c, where, names));
  LATHE_RETURN_IF_ERROR(check_orphans(ep, where, names));
  return check_output_specs(ep, c, where, names);
}

}  // namespace

Status verify_graph(const Graph& graph, const std::string& where) {
  Checker c(graph);
  LATHE_RETURN_IF_ERROR(c.check_graph(graph, where, {}));
  return c.check_use_lists(where);
}

Status verify(const ExportedProgram& ep, const std::string& method_name) {
  std::string where = "method '" + method_name + "'";
  Checker c(ep.graph());
  LATHE_RETURN_IF_ERROR(check_signature(ep, c, where));
  LATHE_RETURN_IF_ERROR(c.check_graph(ep.graph(), where, {}));
  LATHE_RETURN_IF_ERROR(c.check_use_lists(where));
  // What a loader refuses, for programs built in memory (a file never
  // reaches here with it).
  Status shapes = check_input_shapes(ep);
  return shapes.ok() ? shapes : Status(shapes.error().context(where));
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

Status check_state_matches_placeholder(const std::string& target, const Tensor& t, const TensorMeta& meta) {
  if (t.dtype != meta.dtype)
    return make_error("state tensor '" + target + "' is " + std::string(dtype_name(t.dtype)) +
                      " but the placeholder is " + std::string(dtype_name(meta.dtype)));
  if (auto sizes = meta.concrete_sizes(); sizes && *sizes != t.sizes)
    return make_error("state tensor '" + target + "' has shape " + shape_string(t.sizes) +
                      " but the placeholder has " + shape_string(*sizes));
  return Status::Ok();
}

}  // namespace lathe
