// Elementwise unary ops and activations.
#pragma once

#include <optional>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// The rows of unary_ops.def.
enum class UnaryOp {
#define LATHE_UNARY_OP(name, aten_name, result) name,
#define LATHE_UNARY_VARIANT(name, result) name,
#include "lathe/runtime/kernels/unary_ops.def"
};

struct UnaryParams {
  double negative_slope = 0.01;        // leaky_relu
  double min_val = -1.0, max_val = 1.0;  // hardtanh
  double alpha = 1.0, scale = 1.0, input_scale = 1.0;  // elu (selu decomposes to elu with scales)
  double beta = 1.0, threshold = 20.0;  // softplus
};

// The dtype `op` produces for an input of `dtype`.
DType unary_result_dtype(UnaryOp op, DType dtype);
Status unary_out(UnaryOp op, const Tensor& in, Tensor& out, const UnaryParams& params = {});
// clamp with optional scalar bounds; NaN stays NaN. out's dtype is the
// promoted type of in and the bounds.
Status clamp_out(const Tensor& in, std::optional<Scalar> min, std::optional<Scalar> max, Tensor& out);

}  // namespace lathe::kernels
