// VulkanBackend::preprocess's helpers shared with support(): how a node's
// arguments read when both must agree.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "lathe/ir/graph.h"

namespace lathe {

// A pool's stride: absent, None or [] mean the kernel size (PyTorch's
// default); nullopt when symbolic.
std::optional<std::vector<int64_t>> vulkan_pool_stride(const Node& n, const std::vector<int64_t>& kernel);

}  // namespace lathe
