// Convolution (1-D, 2-D and 3-D; groups, stride, padding, dilation;
// transposed with output_padding). float32 forward convs run im2col +
// GEMM, with a direct loop for 1-D/2-D depthwise convs (one input channel
// per group) where a GEMM would be a matrix-vector product; float32
// transposed convs run GEMM + col2im; other dtypes a direct loop.
#pragma once

#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

struct ConvParams {
  std::vector<int64_t> stride, padding, dilation, output_padding;  // one per spatial dim
  bool transposed = false;
  int64_t groups = 1;
};

Result<std::vector<int64_t>> conv_output_shape(const Tensor& input, const Tensor& weight, const ConvParams& p);
Status convolution_out(const Tensor& input, const Tensor& weight, const Tensor* bias, const ConvParams& p, Tensor& out);

}  // namespace lathe::kernels
