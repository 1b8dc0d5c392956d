#include "lathe/runtime/delegate.h"

#include "lathe/ir/op_catalogue.h"

namespace lathe {

std::string_view delegate_backend_name(std::string_view target) {
  target = ops::strip_torch_ops(target);
  if (!target.starts_with(kDelegateTargetPrefix)) return {};
  return target.substr(kDelegateTargetPrefix.size());
}

void DelegateRegistry::add(const DelegateRuntime* runtime) { runtimes_[std::string(runtime->name())] = runtime; }

const DelegateRuntime* DelegateRegistry::find(std::string_view name) const {
  auto it = runtimes_.find(name);
  return it == runtimes_.end() ? nullptr : it->second;
}

std::vector<std::string> DelegateRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, r] : runtimes_) out.push_back(n);
  return out;
}

Result<std::unique_ptr<DelegateHandle>> init_delegate_node(const DelegateRuntime& runtime, const ExportedProgram& program,
                                                           const Node& n) {
  auto bound_state = [&](const Value* v) -> const Tensor* {
    if (!v || !v->is_placeholder() || v->graph() != &program.graph()) return nullptr;
    const int k = program.input_index(v);
    if (k < 0 || program.input_specs[k].kind == InputKind::UserInput) return nullptr;
    return program.state_tensor(program.input_specs[k]);
  };
  const Argument* payload_arg = n.input("payload");
  const Tensor* payload = payload_arg ? bound_state(payload_arg->tensor()) : nullptr;
  if (!payload || payload->dtype != DType::UInt8 || !payload->is_contiguous() || !payload->check_fits().ok()) {
    return make_error("delegate node has no 'payload' argument bound to a contiguous uint8 constant of the program");
  }
  DelegateInitArgs args{program, n, std::span<const std::byte>(payload->data(), payload->nbytes()), {}};
  const Argument* list = n.input("inputs");
  if (list && !list->is<TensorList>()) return make_error("delegate node's 'inputs' is not a tensor list");
  if (list) {
    for (const Value* v : list->as<TensorList>().items) args.operands.push_back(DelegateOperand{v, bound_state(v)});
  }
  return runtime.init(args);
}

}  // namespace lathe
