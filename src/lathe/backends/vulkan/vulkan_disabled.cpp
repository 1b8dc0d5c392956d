// Built instead of the Vulkan backend when LATHE_WITH_VULKAN is OFF (no
// libvulkan-dev or glslc at configure time): the backend still has its
// name, so `lathe lower --backend vulkan` and `lathe run` on a lowered
// archive say why it cannot run instead of "unknown backend".
#include "lathe/backends/vulkan/vulkan_backend.h"

namespace lathe {

namespace {
Error disabled() {
  return Error("vulkan: this Lathe was built without the Vulkan backend (LATHE_WITH_VULKAN=OFF; it needs libvulkan-dev "
               "and glslc at configure time: bash scripts/setup-deps.sh, then reconfigure)");
}
}  // namespace

Status VulkanBackend::available() const { return disabled(); }
NodeSupport VulkanBackend::support(const Node&, const Constness&) const { return NodeSupport::no("Lathe was built without Vulkan"); }
std::vector<std::string> VulkanBackend::ops_to_keep() const { return {}; }
Result<std::vector<std::byte>> VulkanBackend::preprocess(const DelegateSubgraph&) const { return disabled(); }
Result<std::unique_ptr<DelegateHandle>> VulkanBackend::init(const DelegateInitArgs&) const { return disabled(); }

const VulkanBackend& vulkan_backend() {
  static const VulkanBackend backend;
  return backend;
}

VulkanProbe probe_vulkan() { return VulkanProbe{false, disabled().message(), {}}; }
Result<std::string> vulkan_device_description() { return disabled(); }

}  // namespace lathe
