#pragma once

#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// constant_pad_nd: `pad` holds (before, after) pairs from the last dimension
// backwards, as torch.nn.functional.pad takes them; negative amounts crop.
Result<std::vector<int64_t>> constant_pad_shape(const Tensor& self, const std::vector<int64_t>& pad);
Status constant_pad_out(const Tensor& self, const std::vector<int64_t>& pad, const Scalar& value, Tensor& out);

// roll: each dims[i] rotated by shifts[i] (elements pushed past the end
// come back at the start); with no dims, the flattened tensor is rolled.
Status roll_out(const Tensor& self, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims, Tensor& out);

}  // namespace lathe::kernels
