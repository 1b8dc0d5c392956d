#include "lathe/backends/vulkan/vulkan_device.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <vector>

#include "lathe/backends/vulkan/vulkan_backend.h"

namespace lathe {

namespace {

std::string result_name(VkResult r) {
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

// Default preference: discrete, integrated, virtual, CPU, other.
int preference(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

constexpr const char* kNoDriver =
    "vulkan: no Vulkan device: the Vulkan loader found no driver (ICD); install one (Debian's mesa-vulkan-drivers "
    "provides lavapipe, which runs on the CPU)";

Result<VkInstance> create_instance() {
  LATHE_RETURN_IF_ERROR(vulkan_load_loader());  // libvulkan.so.1, opened now (vulkan_loader.h)
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "lathe";
  app.apiVersion = VK_API_VERSION_1_0;
  auto info = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  info.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = vkCreateInstance(&info, nullptr, &instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) return Error(kNoDriver);
  if (r != VK_SUCCESS) return vulkan_error("vkCreateInstance", r);
  LATHE_RETURN_IF_ERROR(vulkan_load_instance(instance));
  return instance;
}

// The one VkInstance of the process, created on first use and never
// destroyed. Destroying the last instance makes the loader unload the driver
// (dlclose), and a driver's own globals go with it: lavapipe (Mesa 22.3)
// loses memory it still owns on every unload, and drivers with threads of
// their own are a known hazard to tear down during exit. Probing for devices
// and opening the shared device both use it, so the driver loads once.
Result<VkInstance> process_instance() {
  static std::mutex mu;
  static std::optional<Result<VkInstance>> instance;
  std::lock_guard<std::mutex> lock(mu);
  if (!instance) instance = create_instance();
  return *instance;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance instance) {
  uint32_t n = 0;
  if (vkEnumeratePhysicalDevices(instance, &n, nullptr) != VK_SUCCESS) return {};
  std::vector<VkPhysicalDevice> devices(n);
  if (vkEnumeratePhysicalDevices(instance, &n, devices.data()) != VK_SUCCESS) return {};
  devices.resize(n);
  return devices;
}

std::string describe(VkPhysicalDevice d) {
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(d, &p);
  return std::string(p.deviceName) + " [" + type_name(p.deviceType) + "]";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// LATHE_VULKAN_DEVICE: an index ("1") or part of a name ("llvmpipe").
Result<VkPhysicalDevice> choose_device(const std::vector<VkPhysicalDevice>& devices) {
  std::string list;
  for (size_t i = 0; i < devices.size(); ++i) list += (i ? ", " : "") + std::to_string(i) + ": " + describe(devices[i]);
  const char* want = std::getenv("LATHE_VULKAN_DEVICE");
  if (want && *want) {
    const std::string w = want;
    const bool index = std::all_of(w.begin(), w.end(), [](unsigned char c) { return std::isdigit(c); });
    for (size_t i = 0; i < devices.size(); ++i) {
      if (index ? std::to_string(i) == w : lower(describe(devices[i])).find(lower(w)) != std::string::npos) return devices[i];
    }
    return Error("vulkan: LATHE_VULKAN_DEVICE='" + w + "' names no Vulkan device (devices: " + list + ")");
  }
  auto best = std::min_element(devices.begin(), devices.end(), [](VkPhysicalDevice a, VkPhysicalDevice b) {
    VkPhysicalDeviceProperties pa, pb;
    vkGetPhysicalDeviceProperties(a, &pa);
    vkGetPhysicalDeviceProperties(b, &pb);
    return preference(pa.deviceType) < preference(pb.deviceType);
  });
  return *best;
}

}  // namespace

Error vulkan_error(std::string_view call, VkResult r) {
  std::string c(call);
  if (auto p = c.find('('); p != std::string::npos) c.resize(p);
  return Error("vulkan: " + c + " failed (" + result_name(r) + ")");
}

Result<std::shared_ptr<VulkanContext>> VulkanContext::shared() {
  static std::mutex mu;
  static std::shared_ptr<VulkanContext> context;
  static std::optional<Error> failure;
  std::lock_guard<std::mutex> lock(mu);
  if (context) return context;
  if (failure) return *failure;
  auto opened = open();
  if (!opened.ok()) {
    failure = opened.error();
    return *failure;
  }
  context = *opened;
  return context;
}

Result<std::shared_ptr<VulkanContext>> VulkanContext::open() {
  std::shared_ptr<VulkanContext> c(new VulkanContext());
  LATHE_ASSIGN_OR_RETURN(c->instance_, process_instance());
  const std::vector<VkPhysicalDevice> devices = physical_devices(c->instance_);
  if (devices.empty()) return Error(kNoDriver);
  LATHE_ASSIGN_OR_RETURN(c->physical_, choose_device(devices));
  vkGetPhysicalDeviceProperties(c->physical_, &c->props_);
  vkGetPhysicalDeviceMemoryProperties(c->physical_, &c->memory_);
  LATHE_RETURN_IF_ERROR(c->create_device());
  LATHE_RETURN_IF_ERROR(c->create_layouts());
  return c;
}

Status VulkanContext::create_device() {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, families.data());
  auto it = std::find_if(families.begin(), families.end(), [](const VkQueueFamilyProperties& f) { return (f.queueFlags & VK_QUEUE_COMPUTE_BIT) != 0; });
  if (it == families.end()) return Error("vulkan: device " + describe(physical_) + " has no compute queue");
  queue_family_ = static_cast<uint32_t>(it - families.begin());
  const float priority = 1.0f;
  auto queue = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue.queueFamilyIndex = queue_family_;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  auto info = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  LATHE_VK(vkCreateDevice(physical_, &info, nullptr, &device_));
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  return Status::Ok();
}

Status VulkanContext::create_layouts() {
  std::array<VkDescriptorSetLayoutBinding, kVulkanBindings> bindings{};
  for (uint32_t b = 0; b < kVulkanBindings; ++b) {
    bindings[b].binding = b;
    bindings[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[b].descriptorCount = 1;
    bindings[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  auto set = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  set.bindingCount = kVulkanBindings;
  set.pBindings = bindings.data();
  LATHE_VK(vkCreateDescriptorSetLayout(device_, &set, nullptr, &set_layout_));
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kVulkanPushWords * 4};
  auto layout = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &set_layout_;
  layout.pushConstantRangeCount = 1;
  layout.pPushConstantRanges = &push;
  LATHE_VK(vkCreatePipelineLayout(device_, &layout, nullptr, &pipeline_layout_));
  return Status::Ok();
}

VulkanContext::~VulkanContext() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    for (VkPipeline p : pipelines_) {
      if (p) vkDestroyPipeline(device_, p, nullptr);
    }
    if (pipeline_layout_) vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
    if (set_layout_) vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  // instance_ is the process's (process_instance): never destroyed here.
}

std::string VulkanContext::description() const { return describe(physical_); }

Result<VkPipeline> VulkanContext::pipeline(VulkanShader shader) {
  std::lock_guard<std::mutex> lock(mu_);
  VkPipeline& p = pipelines_[static_cast<size_t>(shader)];
  if (p) return p;
  const std::span<const uint32_t> words = vulkan_shader_spirv(shader);
  auto module_info = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  module_info.codeSize = words.size_bytes();
  module_info.pCode = words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  LATHE_VK(vkCreateShaderModule(device_, &module_info, nullptr, &module));
  auto info = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.layout = pipeline_layout_;
  VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &p);
  vkDestroyShaderModule(device_, module, nullptr);
  if (r != VK_SUCCESS) {
    p = VK_NULL_HANDLE;
    return vulkan_error("vkCreateComputePipelines (" + std::string(vulkan_shader_name(shader)) + ")", r);
  }
  return p;
}

Status VulkanContext::submit(VkCommandBuffer cb, VkFence fence) {
  auto info = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  info.commandBufferCount = 1;
  info.pCommandBuffers = &cb;
  std::lock_guard<std::mutex> lock(mu_);
  LATHE_VK(vkQueueSubmit(queue_, 1, &info, fence));
  return Status::Ok();
}

// ---- what the backend header promises ----------------------------------------------------

VulkanProbe probe_vulkan() {
  VulkanProbe probe;
  auto instance = process_instance();
  if (!instance.ok()) {
    probe.message = instance.error().message();
    // A driver that fails is not a missing one; no loader at all is.
    probe.driver_installed = probe.message != kNoDriver && !is_vulkan_no_loader_error(instance.error());
    return probe;
  }
  for (VkPhysicalDevice d : physical_devices(*instance)) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(d, &p);
    probe.devices.push_back(VulkanDeviceInfo{p.deviceName, type_name(p.deviceType)});
  }
  probe.driver_installed = !probe.devices.empty();
  if (!probe.driver_installed) probe.message = kNoDriver;
  return probe;
}

Result<std::string> vulkan_device_description() {
  LATHE_ASSIGN_OR_RETURN(std::shared_ptr<VulkanContext> c, VulkanContext::shared());
  return c->description();
}

Status VulkanBackend::available() const {
  auto d = vulkan_device_description();
  if (!d.ok()) return d.error();
  return Status::Ok();
}

}  // namespace lathe
