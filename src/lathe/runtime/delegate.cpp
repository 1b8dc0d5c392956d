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

}  // namespace lathe
