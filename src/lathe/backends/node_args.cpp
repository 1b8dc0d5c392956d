#include "lathe/backends/node_args.h"

namespace lathe::node_args {

std::string_view short_op(const Node& n) {
  std::string_view t = n.target();
  if (t.starts_with("torch.ops.")) t.remove_prefix(10);
  return t;
}

std::optional<int64_t> lit_int(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return std::nullopt;
  if (auto* i = a->get_if<int64_t>()) return *i;
  if (auto* s = a->get_if<SymIntArg>(); s && !s->is_value()) return s->literal();
  if (auto* b = a->get_if<bool>()) return *b ? 1 : 0;
  return std::nullopt;
}

// Like lit_int, but an argument the node omits is at its schema default
// (exported graphs leave defaulted arguments out, e.g. conv2d's groups=1).
std::optional<int64_t> lit_int_or(const Node& n, std::string_view name, int64_t dflt) {
  return n.input(name) ? lit_int(n, name) : std::optional<int64_t>(dflt);
}

std::optional<double> lit_number(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return std::nullopt;
  if (auto* d = a->get_if<double>()) return *d;
  if (auto* f = a->get_if<SymFloatArg>(); f && !f->is_value()) return f->literal();
  if (auto i = lit_int(n, name)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> lit_bool(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return std::nullopt;
  if (auto* b = a->get_if<bool>()) return *b;
  return std::nullopt;
}

bool is_none_arg(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  return !a || a->is_none() || (a->is<OptionalTensor>() && !a->as<OptionalTensor>().value);
}

// int[] argument, with a single int broadcast to `len` items; nullopt if symbolic.
std::optional<std::vector<int64_t>> lit_ints(const Node& n, std::string_view name, size_t len,
                                             std::vector<int64_t> dflt) {
  const Argument* a = n.input(name);
  std::vector<int64_t> v;
  if (!a || a->is_none()) v = std::move(dflt);
  else if (auto* l = a->get_if<IntList>()) v = l->items;
  else if (auto* s = a->get_if<SymIntList>()) {
    for (const auto& x : s->items) {
      if (x.is_value()) return std::nullopt;
      v.push_back(x.literal());
    }
  } else if (auto i = lit_int(n, name)) v = {*i};
  else return std::nullopt;
  if (v.size() == 1 && len > 1) v.assign(len, v[0]);
  if (v.size() != len) return std::nullopt;
  return v;
}

// int[] argument of any length (no broadcast); nullopt if absent or symbolic.
std::optional<std::vector<int64_t>> lit_int_list(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a || a->is_none()) return std::nullopt;
  if (auto* l = a->get_if<IntList>()) return l->items;
  if (auto* s = a->get_if<SymIntList>()) {
    std::vector<int64_t> v;
    for (const auto& x : s->items) {
      if (x.is_value()) return std::nullopt;
      v.push_back(x.literal());
    }
    return v;
  }
  if (auto i = lit_int(n, name)) return std::vector<int64_t>{*i};
  return std::nullopt;
}

const Value* tensor_arg(const Node& n, std::string_view name) {
  const Argument* a = n.input(name);
  if (!a) return nullptr;
  if (Value* v = a->tensor()) return v;
  if (auto* o = a->get_if<OptionalTensor>()) return o->value;
  return nullptr;
}

std::vector<int64_t> sizes_of(const Value* v) { return *v->meta()->concrete_sizes(); }

// "" if every tensor the node reads or defines is float32 with concrete sizes.
std::string check_tensors(const Node& n) {
  auto bad = [](const Value* v) -> std::string {
    if (v->kind() != ValueKind::Tensor) return "";
    if (!v->meta()) return "'" + v->name() + "' has no metadata";
    if (v->meta()->dtype != DType::Float32) return "'" + v->name() + "' is " + std::string(dtype_name(v->meta()->dtype)) + ", not float32";
    if (!v->meta()->concrete_sizes()) return "'" + v->name() + "' has symbolic sizes";
    return "";
  };
  for (const Value* v : n.operand_values()) {
    if (std::string b = bad(v); !b.empty()) return b;
  }
  for (const Value* v : n.defined_values()) {
    if (v->has_uses() || v == n.defined_values().front()) {
      if (std::string b = bad(v); !b.empty()) return b;
    }
  }
  return "";
}

// Why `v` (operand `role`) cannot be prepacked, or "" (see node_args.h).
std::string needs_constant(const Value* v, std::string_view role, const Constness& c, std::string_view note) {
  if (!v) return "";
  if (c.is_compile_time_constant(v)) return "";
  std::string why = c.explain(v);
  if (why.empty()) why = "is computed at run time by '" + (v->producer() ? v->producer()->name() : v->name()) + "'";
  return std::string(role) + " '" + v->name() + "' " + why + std::string(note);
}

bool only_user_is(const Value* v, const Node& user) {
  return v->uses().size() == 1 && v->uses()[0].user == &user;
}

bool is_batch_norm_op(std::string_view op) {
  return op == "aten.native_batch_norm.default" || op == "aten.batch_norm.default" ||
         op == "aten._native_batch_norm_legit_no_training.default";
}

bool is_reshape_op(std::string_view op) {
  return op == "aten.view.default" || op == "aten._unsafe_view.default" || op == "aten.reshape.default" ||
         op == "aten.flatten.using_ints" || op == "aten.unsqueeze.default" || op == "aten.squeeze.dim" ||
         op == "aten.squeeze.dims" || op == "aten.clone.default" || op == "aten.contiguous.default";
}

}  // namespace lathe::node_args
