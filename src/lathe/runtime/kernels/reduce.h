// Reductions over a set of dims: sum, mean, amax/amin, max/min (values and
// indices), argmax/argmin, var/var_mean, any/all. Floating sums accumulate
// in double, so the portable result is at least as accurate as ATen's.
#pragma once

#include <optional>
#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

enum class ReduceOp { Sum, Mean, Amax, Amin, Any, All };

// Output shape of reducing `dims` (nullopt or empty: all dims).
Result<std::vector<int64_t>> reduce_shape(const Tensor& in, const std::optional<std::vector<int64_t>>& dims, bool keepdim);
// out's dtype selects the accumulation result type (sum of int32 -> int64...).
Status reduce_out(ReduceOp op, const Tensor& in, const std::optional<std::vector<int64_t>>& dims, bool keepdim, Tensor& out);
// values and int64 indices along one dim (first occurrence; NaN wins).
Status max_min_dim_out(bool is_max, const Tensor& in, int64_t dim, bool keepdim, Tensor& values, Tensor& indices);
// var with `correction` (1: unbiased); mean optional.
Status var_mean_out(const Tensor& in, const std::optional<std::vector<int64_t>>& dims, double correction, bool keepdim,
                    Tensor& var, Tensor* mean);

}  // namespace lathe::kernels
