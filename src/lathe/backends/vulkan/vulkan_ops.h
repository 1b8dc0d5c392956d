// From a Vulkan payload op (layouts in vulkan_backend.h) to what the device
// runs: the dispatches (shader, buffers, push constants, workgroups) and
// the weights it prepacks. Validates every parameter against the payload's
// value sizes first, so a hand-made record is an error here, never an
// out-of-bounds read in a shader. No Vulkan calls: vulkan_runtime.cpp
// turns a plan into buffers, descriptor sets and a command buffer.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "lathe/backends/payload.h"
#include "lathe/backends/vulkan/vulkan_shaders.h"
#include "lathe/core/result.h"

namespace lathe {

// A buffer a dispatch binds: a payload value's, one prepacked for this op, or none.
struct VulkanSlot {
  enum Kind : uint8_t { None, Value, Packed };
  Kind kind = None;
  uint32_t index = 0;
};

struct VulkanDispatch {
  VulkanShader shader = VulkanShader::Copy;
  std::array<VulkanSlot, kVulkanBindings> bind{};
  std::array<uint32_t, kVulkanPushWords> push{};
  uint32_t groups = 0;  // workgroups along x (the shaders stride over the rest)
};

struct VulkanOpPlan {
  std::vector<VulkanDispatch> dispatches;
  std::vector<std::vector<float>> packed;  // uploaded once, at init
  std::optional<uint32_t> alias;           // a view: the output shares this value's buffer
};

// Reads a prepacked operand's floats (its constness already checked).
using VulkanPrepackReader = std::function<Result<std::vector<float>>(uint32_t value, int64_t numel, std::string_view role)>;

// The payload's op kinds (vulkan_ops.def), shared by the lowering and the planner.
enum class VulkanKind : uint8_t {
#define LATHE_VULKAN_OP(name, payload_name) name,
#include "lathe/backends/vulkan/vulkan_ops.def"
#undef LATHE_VULKAN_OP
};
// The name a payload record stores ("linear"), and back (nullopt: unknown).
std::string_view vulkan_kind_name(VulkanKind kind);
std::optional<VulkanKind> vulkan_kind_named(std::string_view name);

// Operands the backend prepacks at init: they must be compile-time constants.
bool vulkan_prepacked_role(VulkanKind kind, std::string_view role);

// Elementwise op codes of unary.comp: the rows of shaders/unary_ops.def.
enum class VulkanUnary : int64_t {
#define LATHE_VULKAN_UNARY_CODE(name, code, expression) name = code,
#define LATHE_VULKAN_UNARY(name, code, aten_op, expression) name = code,
#include "lathe/backends/vulkan/shaders/unary_ops.def"
#undef LATHE_VULKAN_UNARY
#undef LATHE_VULKAN_UNARY_CODE
};
// How many rows unary_ops.def has (codes are 0 .. count - 1).
inline constexpr int64_t kVulkanUnaryCount = 0
#define LATHE_VULKAN_UNARY_CODE(name, code, expression) +1
#define LATHE_VULKAN_UNARY(name, code, aten_op, expression) +1
#include "lathe/backends/vulkan/shaders/unary_ops.def"
#undef LATHE_VULKAN_UNARY
#undef LATHE_VULKAN_UNARY_CODE
    ;
// Op codes of binary.comp.
enum class VulkanBinary : int64_t { Add, Sub, Mul, Div };
inline constexpr size_t kVulkanMaxRank = 6;

Result<VulkanOpPlan> plan_vulkan_op(const PayloadOp& op, const std::vector<PayloadValue>& values, const VulkanPrepackReader& read);

}  // namespace lathe
