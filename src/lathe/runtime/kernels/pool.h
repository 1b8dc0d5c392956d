// Pooling: 2-D max (with indices), average, adaptive average and adaptive
// max over [N, C, H, W] or [C, H, W]; 3-D max (with indices), average and
// adaptive average over [N, C, D, H, W] or [C, D, H, W]; col2im (the
// inverse of unfold: sums sliding blocks back into an image).
#pragma once

#include <optional>
#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

struct PoolParams {
  std::vector<int64_t> kernel, stride, padding, dilation;  // 1 or 2 (3-D: 3) values; empty stride = kernel
  bool ceil_mode = false;
  bool count_include_pad = true;           // avg only
  std::optional<int64_t> divisor_override;  // avg only
};

Result<std::vector<int64_t>> pool2d_shape(const Tensor& input, const PoolParams& p);
// indices (optional, int64) hold h * W + w of each maximum within its plane.
Status max_pool2d_out(const Tensor& input, const PoolParams& p, Tensor& out, Tensor* indices);
Status avg_pool2d_out(const Tensor& input, const PoolParams& p, Tensor& out);
Status adaptive_avg_pool2d_out(const Tensor& input, const std::vector<int64_t>& output_size, Tensor& out);
// indices hold h * W + w of each window's maximum within its plane.
Status adaptive_max_pool2d_out(const Tensor& input, const std::vector<int64_t>& output_size, Tensor& out, Tensor& indices);

// `op` names the caller in errors.
Result<std::vector<int64_t>> pool3d_shape(const Tensor& input, const PoolParams& p, const char* op = "pool3d");
// indices (optional, int64) hold (d * H + h) * W + w within each plane.
Status max_pool3d_out(const Tensor& input, const PoolParams& p, Tensor& out, Tensor* indices);
Status avg_pool3d_out(const Tensor& input, const PoolParams& p, Tensor& out);
Status adaptive_avg_pool3d_out(const Tensor& input, const std::vector<int64_t>& output_size, Tensor& out);

// col2im: input [N, C * kH * kW, L] or [C * kH * kW, L], L the number of
// blocks the sliding kernel makes over the padded output_size image;
// output [N, C, H, W] (or [C, H, W]), overlapping taps summed.
struct Col2imParams {
  std::vector<int64_t> output_size, kernel, dilation, padding, stride;  // 2 values each
};
Result<std::vector<int64_t>> col2im_shape(const Tensor& input, const Col2imParams& p);
Status col2im_out(const Tensor& input, const Col2imParams& p, Tensor& out);

}  // namespace lathe::kernels
