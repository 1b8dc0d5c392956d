// Built instead of the Vulkan backend when LATHE_WITH_VULKAN is OFF (no
// libvulkan-dev or glslc at configure time): the backend is an
// UnbuiltBackend (backend.h), so `lathe lower --backend vulkan` and
// `lathe run` on a lowered archive say why it cannot run instead of
// "unknown backend".
#include "lathe/backends/vulkan/vulkan_backend.h"

namespace lathe {

namespace {
const char* const kNotBuilt =
    "vulkan: this Lathe was built without the Vulkan backend (LATHE_WITH_VULKAN=OFF; it needs libvulkan-dev "
    "and glslc at configure time: bash scripts/setup-deps.sh, then reconfigure)";
}  // namespace

const Backend& vulkan_backend() {
  static const UnbuiltBackend backend("vulkan", kNotBuilt);
  return backend;
}

VulkanProbe probe_vulkan() { return VulkanProbe{false, kNotBuilt, {}}; }
Result<std::string> vulkan_device_description() { return Error(kNotBuilt); }

}  // namespace lathe
