// Elementwise binary ops with broadcasting: arithmetic, comparisons,
// logical and bitwise ops, atan2/hypot/copysign, prelu, where and
// masked_fill.
#pragma once

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

enum class BinaryOp {
  Add, Sub, Mul, Div, DivTrunc, DivFloor, Pow, Maximum, Minimum, Remainder, Fmod,
  Eq, Ne, Lt, Le, Gt, Ge,                 // -> bool
  LogicalAnd, LogicalOr, LogicalXor,      // -> bool
  BitwiseAnd, BitwiseOr, BitwiseXor,
  Atan2, Hypot, Copysign,                 // floating (integer operands compute in float32)
  Prelu,                                  // a > 0 ? a : b * a (b: the broadcast weight)
};

bool is_comparison(BinaryOp op);  // comparisons and logical ops: bool out
bool is_floating_only(BinaryOp op);  // Atan2, Hypot, Copysign

// out = a <op> b, broadcasting a and b to out's shape. Both are converted
// to `compute` first (the promoted type the caller chose). out is `compute`,
// or bool for comparisons and logical ops. For Add/Sub, b is scaled by
// `alpha` (converted to `compute`, as ATen does).
Status binary_out(BinaryOp op, const Tensor& a, const Tensor& b, DType compute, Tensor& out,
                  Scalar alpha = Scalar::from_int(1));

// out = cond ? a : b (cond bool; a, b converted to out's dtype).
Status where_out(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out);

// A 0-d tensor holding `s` as `dtype`.
Tensor scalar_tensor(const Scalar& s, DType dtype);

}  // namespace lathe::kernels
