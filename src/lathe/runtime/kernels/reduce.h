// Reductions over a set of dims: sum, prod, mean, amax/amin, max/min (values
// and indices), argmax/argmin, var/var_mean/std, any/all, vector norms and
// logsumexp. Floating sums accumulate
// in double, so the portable result is at least as accurate as ATen's.
#pragma once

#include <optional>
#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

enum class ReduceOp { Sum, Mean, Amax, Amin, Any, All, Prod };

// Output shape of reducing `dims` (nullopt or empty: all dims).
Result<std::vector<int64_t>> reduce_shape(const Tensor& in, const std::optional<std::vector<int64_t>>& dims, bool keepdim);
// out's dtype selects the accumulation result type (sum of int32 -> int64...).
Status reduce_out(ReduceOp op, const Tensor& in, const std::optional<std::vector<int64_t>>& dims, bool keepdim, Tensor& out);
// values and int64 indices along one dim (first occurrence; NaN wins).
Status max_min_dim_out(bool is_max, const Tensor& in, int64_t dim, bool keepdim, Tensor& values, Tensor& indices);
// var with `correction` (1: unbiased); mean optional.
Status var_mean_out(const Tensor& in, const std::optional<std::vector<int64_t>>& dims, double correction, bool keepdim,
                    Tensor& var, Tensor* mean);

// out = ||in||_ord over `dims` (nullopt or empty: all): ord inf / -inf (max /
// min |x|), 0 (count of non-zeros), else (sum |x|^ord)^(1/ord); computed in
// double, in is converted to out's (floating) dtype first.
Status vector_norm_out(const Tensor& in, double ord, const std::optional<std::vector<int64_t>>& dims, bool keepdim,
                       Tensor& out);
// out = log(sum(exp(in))) over `dims`, shifted by the max (an infinite max
// is not subtracted, so all--inf rows give -inf and +inf rows +inf).
Status logsumexp_out(const Tensor& in, const std::vector<int64_t>& dims, bool keepdim, Tensor& out);

}  // namespace lathe::kernels
