#include "lathe/backends/node_args.h"

namespace lathe::node_args {

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

}  // namespace lathe::node_args
