// The compute shaders the Vulkan backend dispatches (shaders/*.comp),
// compiled to SPIR-V by glslc at build time and carried in the library.
// Every one uses the same interface: set 0, bindings 0-3 storage buffers
// of float, and at most 128 bytes of push constants (Vulkan's guaranteed
// minimum), so one pipeline layout serves them all.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace lathe {

enum class VulkanShader : uint8_t { Linear, Conv2d, ChannelAffine, Binary, Unary, Softmax, LayerNorm, Mean, Pool2d, Copy };
inline constexpr size_t kVulkanShaderCount = 10;
inline constexpr uint32_t kVulkanWorkgroupSize = 64;  // local_size_x in shaders/common.glsl
inline constexpr uint32_t kVulkanBindings = 4;
inline constexpr uint32_t kVulkanPushWords = 32;

std::span<const uint32_t> vulkan_shader_spirv(VulkanShader shader);
std::string_view vulkan_shader_name(VulkanShader shader);

}  // namespace lathe
