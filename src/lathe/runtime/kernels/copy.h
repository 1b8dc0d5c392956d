// Copies and concatenation: clone, contiguous, _to_copy / to, copy,
// copy_, cat, stack, and dropout in eval mode.
#pragma once

#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// cat's result shape and dtype (legacy rule: 1-D empty tensors are skipped).
Result<std::vector<int64_t>> cat_shape(const std::vector<const Tensor*>& tensors, int64_t dim);
DType cat_dtype(const std::vector<const Tensor*>& tensors);
Status cat_out(const std::vector<const Tensor*>& tensors, int64_t dim, Tensor& out);
Status stack_out(const std::vector<const Tensor*>& tensors, int64_t dim, Tensor& out);

}  // namespace lathe::kernels
