// Lists the Vulkan devices the loader sees, one per line as
//   <index> <type> <name>      (type: cpu, discrete, integrated, virtual, other)
// for scripts/bench_vulkan.sh, which times lavapipe (the CPU device) and any
// GPU it finds. Prints nothing, and exits 0, when no driver is installed.
#include <cstdio>

#include "lathe/backends/vulkan/vulkan_backend.h"

int main() {
  const lathe::VulkanProbe probe = lathe::probe_vulkan();
  if (!probe.driver_installed) {
    std::fprintf(stderr, "%s\n", probe.message.c_str());
    return 0;
  }
  for (size_t i = 0; i < probe.devices.size(); ++i) {
    const std::string& t = probe.devices[i].type;
    const char* kind = t == "CPU" ? "cpu" : t == "discrete GPU" ? "discrete" : t == "integrated GPU" ? "integrated" : t == "virtual GPU" ? "virtual" : "other";
    std::printf("%zu %s %s\n", i, kind, probe.devices[i].name.c_str());
  }
  return 0;
}
