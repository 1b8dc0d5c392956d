#include "lathe/runtime/in_place_state.h"

#include "lathe/ir/op_catalogue.h"

namespace lathe {

namespace {

const Value* first_tensor_input(const Node& n) {
  for (const NamedArgument& a : n.inputs()) {
    if (Value* v = a.arg.tensor()) return v;
  }
  return nullptr;
}

// The placeholder `v` is a view of, following producers whose kernels may
// alias their first input; nullptr when `v` is fresh memory.
const Value* alias_root(const Value* v, const KernelRegistry& kernels) {
  while (v && !v->is_placeholder()) {
    const Node& n = *v->producer();
    const KernelInfo* k = kernels.find(n.op_name());
    const bool aliases = is_in_place_op(n) || (k && k->alias != OutputAlias::None);
    if (!aliases) return nullptr;
    v = first_tensor_input(n);
  }
  return v;
}

}  // namespace

bool is_in_place_op(const Node& n) {
  const std::string name = n.op_name();  // "aten.index_put_.default"
  if (!name.starts_with("aten.")) return false;
  const size_t dot = name.find('.', 5);
  return dot != std::string::npos && dot > 6 && name[dot - 1] == '_' && name[5] != '_';
}

std::set<std::string> state_written_in_place(const ExportedProgram& ep, const KernelRegistry& kernels) {
  std::set<std::string> out;
  for (const Node* n : ep.graph().nodes()) {
    if (!is_in_place_op(*n)) continue;
    const Value* root = alias_root(first_tensor_input(*n), kernels);
    if (!root || root->input_index() >= ep.input_specs.size()) continue;
    const InputSpec& spec = ep.input_specs[root->input_index()];
    if (spec.kind == InputKind::Buffer || spec.kind == InputKind::Parameter) out.insert(spec.target);
  }
  return out;
}

}  // namespace lathe
