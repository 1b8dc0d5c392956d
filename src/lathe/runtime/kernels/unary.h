// Elementwise unary ops and activations.
#pragma once

#include <optional>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

enum class UnaryOp {
  // keep the input dtype
  Neg, Abs, Relu, Sign, Floor, Ceil, Round, Trunc, LogicalNot, BitwiseNot, LeakyRelu, Hardtanh, Relu6,
  // bool results (integers are never nan or inf)
  IsNan, IsInf, IsFinite,
  // floating results (integer inputs compute in float32)
  Exp, Log, Log2, Log1p, Expm1, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Erf, Sigmoid, Tanh, Silu, Gelu, GeluTanh,
  Hardswish, Hardsigmoid, Elu, Softplus, Mish,
  Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Log10, Exp2, Erfinv,
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
