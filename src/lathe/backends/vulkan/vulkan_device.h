// The process-wide Vulkan device the backend's delegates share: instance,
// the chosen physical device, a logical device with one compute queue, the
// one descriptor-set and pipeline layout every shader uses, and the
// shaders' pipelines (each created on first use). Opened on first use and
// kept while any delegate holds it; queue submissions are serialised here.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>

#include "lathe/backends/vulkan/vulkan_loader.h"
#include "lathe/backends/vulkan/vulkan_shaders.h"
#include "lathe/core/result.h"

namespace lathe {

// A Vulkan info struct, zeroed, with its sType.
template <class T>
T vk_struct(VkStructureType type) {
  T s{};
  s.sType = type;
  return s;
}

// "vulkan: vkCreateBuffer failed (VK_ERROR_OUT_OF_DEVICE_MEMORY)".
Error vulkan_error(std::string_view call, VkResult r);
#define LATHE_VK(call)                                                     \
  do {                                                                     \
    VkResult vk_r_ = (call);                                               \
    if (vk_r_ != VK_SUCCESS) return ::lathe::vulkan_error(#call, vk_r_);   \
  } while (0)

class VulkanContext {
 public:
  // The shared device, opened the first time (its error is kept: the
  // drivers and LATHE_VULKAN_DEVICE do not change while the process runs).
  static Result<std::shared_ptr<VulkanContext>> shared();
  ~VulkanContext();
  VulkanContext(const VulkanContext&) = delete;
  VulkanContext& operator=(const VulkanContext&) = delete;

  VkDevice device() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  uint32_t queue_family() const { return queue_family_; }
  const VkPhysicalDeviceProperties& properties() const { return props_; }
  const VkPhysicalDeviceMemoryProperties& memory() const { return memory_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  VkPipelineLayout pipeline_layout() const { return pipeline_layout_; }
  // "llvmpipe (LLVM 15.0.6, 256 bits) [CPU]"
  std::string description() const;

  Result<VkPipeline> pipeline(VulkanShader shader);
  // vkQueueSubmit of one command buffer signalling `fence`, under the queue's lock.
  Status submit(VkCommandBuffer cb, VkFence fence);

 private:
  VulkanContext() = default;
  static Result<std::shared_ptr<VulkanContext>> open();
  Status create_device();
  Status create_layouts();

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkPhysicalDeviceProperties props_{};
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  std::mutex mu_;  // pipelines_ and the queue
  std::array<VkPipeline, kVulkanShaderCount> pipelines_{};
};

}  // namespace lathe
