// Resampling: upsample_{nearest,nearest_exact,linear,bilinear,trilinear,
// bicubic} over 1-3 spatial dims of an [N, C, spatial...] input, and
// grid_sampler_2d.
#pragma once

#include <optional>
#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

enum class UpsampleMode { Nearest, NearestExact, Linear, Cubic };

struct UpsampleParams {
  UpsampleMode mode = UpsampleMode::Nearest;
  bool align_corners = false;                 // linear/cubic only
  std::vector<std::optional<double>> scales;  // per spatial dim; empty = none
};

// output_size has one entry per spatial dim; with a scale for a dim, the
// source index follows 1/scale instead of in/out (as torch does when the
// caller gave scale_factors).
Result<std::vector<int64_t>> upsample_shape(const Tensor& input, const std::vector<int64_t>& output_size, const char* op);
Status upsample_out(const Tensor& input, const std::vector<int64_t>& output_size, const UpsampleParams& p, Tensor& out,
                    const char* op);

// interpolation 0/1/2 = bilinear/nearest/bicubic; padding 0/1/2 =
// zeros/border/reflection. input [N, C, H, W], grid [N, Ho, Wo, 2] of
// (x, y) in [-1, 1]; out [N, C, Ho, Wo].
Status grid_sampler_2d_out(const Tensor& input, const Tensor& grid, int64_t interpolation, int64_t padding,
                           bool align_corners, Tensor& out);

}  // namespace lathe::kernels
