// The Vulkan API without linking the loader: libvulkan.so.1 is opened with
// dlopen the first time the backend is used, so a program (or the Python
// extension) that never asks for Vulkan loads and runs on a machine without
// it, and one that does gets a clear error instead of failing to start.
//
// Every vk* function the backend calls is a function pointer of the same
// name in namespace lathe (VK_NO_PROTOTYPES hides the loader's own
// declarations), so code inside namespace lathe calls vkCreateBuffer(...)
// as before. vkCreateInstance is resolved when the loader is opened; the
// rest from the instance (vulkan_load_instance), which also serves the
// device-level ones through the loader's dispatch.
//
// LATHE_VULKAN_LOADER names another file to open instead of libvulkan.so.1
// (a test points it at one that does not exist).
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include "lathe/core/result.h"

// Global-level: resolved with vkGetInstanceProcAddr(nullptr, ...).
#define LATHE_VK_GLOBAL_FUNCTIONS(X) X(vkCreateInstance)

// Instance- and device-level: resolved with vkGetInstanceProcAddr(instance, ...).
#define LATHE_VK_INSTANCE_FUNCTIONS(X)                                                                     \
  X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties) X(vkGetPhysicalDeviceMemoryProperties)   \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkCreateDevice) X(vkDestroyDevice) X(vkGetDeviceQueue)     \
  X(vkDeviceWaitIdle) X(vkQueueSubmit) X(vkCreateBuffer) X(vkDestroyBuffer)                               \
  X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory)              \
  X(vkMapMemory) X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers)               \
  X(vkFreeCommandBuffers) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdCopyBuffer)                \
  X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch)                  \
  X(vkCmdPipelineBarrier) X(vkCreateFence) X(vkDestroyFence) X(vkResetFences) X(vkWaitForFences)          \
  X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets)                        \
  X(vkUpdateDescriptorSets) X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout)                \
  X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateShaderModule) X(vkDestroyShaderModule)   \
  X(vkCreateComputePipelines) X(vkDestroyPipeline)

namespace lathe {

#define LATHE_VK_DECLARE(name) extern PFN_##name name;
LATHE_VK_GLOBAL_FUNCTIONS(LATHE_VK_DECLARE)
LATHE_VK_INSTANCE_FUNCTIONS(LATHE_VK_DECLARE)
#undef LATHE_VK_DECLARE

// Opens the loader and resolves the global-level functions, once per process
// (the outcome is kept). The error when there is none:
// "vulkan: no Vulkan loader (libvulkan.so.1) found: ...".
Status vulkan_load_loader();

// Resolves the instance- and device-level functions from `instance` (the
// process's one instance; call before using any of them).
Status vulkan_load_instance(VkInstance instance);

// The message of the error above, to tell "no loader" apart from a loader
// that found no driver.
bool is_vulkan_no_loader_error(const Error& e);

}  // namespace lathe
