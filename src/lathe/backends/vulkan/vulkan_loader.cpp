#include "lathe/backends/vulkan/vulkan_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

namespace lathe {

#define LATHE_VK_DEFINE(name) PFN_##name name = nullptr;
LATHE_VK_GLOBAL_FUNCTIONS(LATHE_VK_DEFINE)
LATHE_VK_INSTANCE_FUNCTIONS(LATHE_VK_DEFINE)
#undef LATHE_VK_DEFINE

namespace {

constexpr std::string_view kNoLoader = "vulkan: no Vulkan loader (";

PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;

Status open_loader() {
  const char* override_path = std::getenv("LATHE_VULKAN_LOADER");
  const std::string path = override_path && *override_path ? override_path : "libvulkan.so.1";
  // RTLD_LOCAL: the loader's symbols stay out of the global namespace; it is
  // never closed (drivers it loads keep state until exit).
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = ::dlerror();
    return Error(std::string(kNoLoader) + path + ") found: install the Vulkan loader and your GPU's Vulkan driver "
                 "(Debian: libvulkan1 and mesa-vulkan-drivers, whose lavapipe runs on the CPU)" +
                 (why ? std::string(" [") + why + "]" : std::string()));
  }
  get_instance_proc_addr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(::dlsym(lib, "vkGetInstanceProcAddr"));
  if (!get_instance_proc_addr) {
    return Error("vulkan: " + path + " is not a Vulkan loader (it has no vkGetInstanceProcAddr)");
  }
#define LATHE_VK_GLOBAL(name)                                                                  \
  name = reinterpret_cast<PFN_##name>(get_instance_proc_addr(VK_NULL_HANDLE, #name));        \
  if (!name) return Error("vulkan: the Vulkan loader " + path + " has no " #name);
  LATHE_VK_GLOBAL_FUNCTIONS(LATHE_VK_GLOBAL)
#undef LATHE_VK_GLOBAL
  return Status::Ok();
}

}  // namespace

Status vulkan_load_loader() {
  static std::once_flag once;
  static std::optional<Status> status;
  std::call_once(once, [] { status = open_loader(); });
  return *status;
}

Status vulkan_load_instance(VkInstance instance) {
  LATHE_RETURN_IF_ERROR(vulkan_load_loader());
#define LATHE_VK_INSTANCE(name)                                                                \
  name = reinterpret_cast<PFN_##name>(get_instance_proc_addr(instance, #name));              \
  if (!name) return Error("vulkan: the Vulkan loader has no " #name);
  LATHE_VK_INSTANCE_FUNCTIONS(LATHE_VK_INSTANCE)
#undef LATHE_VK_INSTANCE
  return Status::Ok();
}

bool is_vulkan_no_loader_error(const Error& e) { return e.message().starts_with(kNoLoader); }

}  // namespace lathe
