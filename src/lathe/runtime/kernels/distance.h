// Pairwise distances: _cdist_forward (between the rows of two batched
// matrices) and _pdist_forward (between the rows of one matrix).
#pragma once

#include <optional>
#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// x1 [B..., P, M], x2 [B..., R, M] (batch dims broadcast) -> [B..., P, R].
// compute_mode as torch: nullopt/0 uses the matrix-product form of the
// Euclidean distance when p == 2 and P or R exceeds 25, 1 whenever p == 2,
// 2 never.
Result<std::vector<int64_t>> cdist_shape(const Tensor& x1, const Tensor& x2);
Status cdist_out(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode, Tensor& out);

// self [N, M] -> [N * (N - 1) / 2]: distances of rows (i, j), i < j, in
// row-major order.
Status pdist_out(const Tensor& self, double p, Tensor& out);

}  // namespace lathe::kernels
