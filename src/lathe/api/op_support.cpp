// op_support: what `lathe ops` lists - the portable kernels, their cover of
// the core ATen opset, and each built-in backend's rules.
#include <algorithm>

#include "lathe/backends/backend.h"
#include "lathe/backends/lower.h"
#include "lathe/runtime/core_aten.h"
#include "lathe/runtime/kernel_registry.h"
#include "lathe/tools.h"

namespace lathe {

OpSupport op_support() {
  OpSupport s;
  const KernelRegistry& kernels = portable_kernels();
  s.portable = kernels.ops();
  std::sort(s.portable.begin(), s.portable.end());
  s.core_aten_torch = std::string(core_aten_torch_version());
  s.core_aten_ops = core_aten_ops().size();
  for (std::string_view op : core_aten_ops()) {
    if (kernels.find(op)) continue;
    std::string reason = "no kernel yet";
    for (const CoreAtenGap& g : core_aten_gaps()) {
      if (g.op == op) reason = std::string(g.reason);
    }
    s.core_aten_missing.emplace_back(std::string(op), std::move(reason));
  }
  for (const char* name : {"xnnpack", "vulkan"}) {
    const Backend* b = find_backend(name);
    s.backend_rules.emplace_back(name, b ? b->claimed_ops() : std::vector<std::string>{});
  }
  return s;
}

}  // namespace lathe
