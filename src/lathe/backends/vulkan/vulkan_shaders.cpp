#include "lathe/backends/vulkan/vulkan_shaders.h"

namespace lathe {

namespace {

// glslc -mfmt=c writes each module as a brace-enclosed list of words.
constexpr uint32_t kLinear[] =
#include "lathe/backends/vulkan/shaders/linear.spv.inc"
    ;
constexpr uint32_t kConv2d[] =
#include "lathe/backends/vulkan/shaders/conv2d.spv.inc"
    ;
constexpr uint32_t kChannelAffine[] =
#include "lathe/backends/vulkan/shaders/channel_affine.spv.inc"
    ;
constexpr uint32_t kBinary[] =
#include "lathe/backends/vulkan/shaders/binary.spv.inc"
    ;
constexpr uint32_t kUnary[] =
#include "lathe/backends/vulkan/shaders/unary.spv.inc"
    ;
constexpr uint32_t kSoftmax[] =
#include "lathe/backends/vulkan/shaders/softmax.spv.inc"
    ;
constexpr uint32_t kLayerNorm[] =
#include "lathe/backends/vulkan/shaders/layer_norm.spv.inc"
    ;
constexpr uint32_t kMean[] =
#include "lathe/backends/vulkan/shaders/mean.spv.inc"
    ;
constexpr uint32_t kPool2d[] =
#include "lathe/backends/vulkan/shaders/pool2d.spv.inc"
    ;
constexpr uint32_t kCopy[] =
#include "lathe/backends/vulkan/shaders/copy.spv.inc"
    ;

struct Entry {
  std::string_view name;
  std::span<const uint32_t> words;
};

// In VulkanShader's order.
constexpr Entry kShaders[kVulkanShaderCount] = {
    {"linear", kLinear},   {"conv2d", kConv2d},         {"channel_affine", kChannelAffine}, {"binary", kBinary},
    {"unary", kUnary},     {"softmax", kSoftmax},       {"layer_norm", kLayerNorm},         {"mean", kMean},
    {"pool2d", kPool2d},   {"copy", kCopy}};

}  // namespace

std::span<const uint32_t> vulkan_shader_spirv(VulkanShader shader) { return kShaders[static_cast<size_t>(shader)].words; }
std::string_view vulkan_shader_name(VulkanShader shader) { return kShaders[static_cast<size_t>(shader)].name; }

}  // namespace lathe
