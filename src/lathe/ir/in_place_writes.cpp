#include "lathe/ir/in_place_writes.h"

#include "lathe/ir/op_catalogue.h"

namespace lathe {

namespace {

const Value* first_tensor_input(const Node& n) {
  for (const NamedArgument& a : n.inputs()) {
    if (Value* v = a.arg.tensor()) return v;
  }
  return nullptr;
}

// The placeholder `v` may alias, following producers that may return a view
// of their first input; nullptr when `v` is fresh memory.
const Value* alias_root(const Value* v) {
  while (v && !v->is_placeholder()) {
    const Node& n = *v->producer();
    if (!is_in_place_op(n) && !ops::is_layout_only(n.target())) return nullptr;
    v = first_tensor_input(n);
  }
  return v;
}

}  // namespace

bool is_in_place_op(const Node& n) {
  // From the target as stored, with or without "torch.ops." (no string is
  // built: this runs on every node).
  std::string_view t = ops::strip_torch_ops(n.target());
  if (!t.starts_with("aten.")) return false;
  t.remove_prefix(5);
  const std::string_view name = t.substr(0, t.find('.'));  // "index_put_"
  const bool dunder = name.size() > 4 && name.starts_with("__") && name.ends_with("__");  // __and__: not in place
  return name.size() > 1 && name.back() == '_' && !dunder;
}

std::set<std::string> state_written_in_place(const ExportedProgram& ep) {
  std::set<std::string> out;
  for (const Node* n : ep.graph().nodes()) {
    if (!is_in_place_op(*n)) continue;
    const Value* root = alias_root(first_tensor_input(*n));
    if (!root || root->input_index() >= ep.input_specs.size()) continue;
    const InputSpec& spec = ep.input_specs[root->input_index()];
    if (spec.kind == InputKind::Buffer || spec.kind == InputKind::Parameter || spec.kind == InputKind::TensorConstant) {
      out.insert(spec.target);
    }
  }
  return out;
}

}  // namespace lathe
