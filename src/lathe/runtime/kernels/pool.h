// 2-D pooling: max (with indices), average, adaptive average. Inputs are
// [N, C, H, W] or [C, H, W].
#pragma once

#include <optional>
#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

struct PoolParams {
  std::vector<int64_t> kernel, stride, padding, dilation;  // 1 or 2 values; empty stride = kernel
  bool ceil_mode = false;
  bool count_include_pad = true;           // avg only
  std::optional<int64_t> divisor_override;  // avg only
};

Result<std::vector<int64_t>> pool2d_shape(const Tensor& input, const PoolParams& p);
// indices (optional, int64) hold h * W + w of each maximum within its plane.
Status max_pool2d_out(const Tensor& input, const PoolParams& p, Tensor& out, Tensor* indices);
Status avg_pool2d_out(const Tensor& input, const PoolParams& p, Tensor& out);
Status adaptive_avg_pool2d_out(const Tensor& input, const std::vector<int64_t>& output_size, Tensor& out);

}  // namespace lathe::kernels
