// Normalisations: layer norm, batch norm (inference and training/functional
// forms), group norm, instance norm (as group norm with a group per channel,
// or batch norm on running statistics) and weight norm. Statistics accumulate in double; the affine transform
// runs in the element type in ATen's form (x * scale + shift).
#pragma once

#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// out = (x - mean) * rstd * weight + bias over the trailing
// `normalized_shape`; mean/rstd (optional) have the input's rank with the
// normalized dims set to 1.
Status layer_norm_out(const Tensor& input, const std::vector<int64_t>& normalized_shape, const Tensor* weight,
                      const Tensor* bias, double eps, Tensor& out, Tensor* mean, Tensor* rstd);

// Per-channel statistics of input [N, C, ...] over every dim but 1.
struct ChannelStats {
  std::vector<double> mean, var;  // var is biased (divided by the count)
  int64_t count = 0;              // elements per channel
};
Result<ChannelStats> batch_norm_stats(const Tensor& input);
// out = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c].
Status batch_norm_apply(const Tensor& input, const std::vector<double>& mean, const std::vector<double>& var,
                        const Tensor* weight, const Tensor* bias, double eps, Tensor& out);

Status group_norm_out(const Tensor& input, const Tensor* weight, const Tensor* bias, int64_t groups, double eps,
                      Tensor& out, Tensor* mean, Tensor* rstd);

// Weight normalisation: w = v * g / ||v||, the 2-norm taken over every dim
// of v but `dim` (dim -1: over all of v). g holds one value per slice of v
// along dim (any shape with that many elements; one element for dim -1);
// norm (optional) gets the norms, g's shape.
Status weight_norm_out(const Tensor& v, const Tensor& g, int64_t dim, Tensor& w, Tensor* norm);

}  // namespace lathe::kernels
