#pragma once

#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// constant_pad_nd: `pad` holds (before, after) pairs from the last dimension
// backwards, as torch.nn.functional.pad takes them; negative amounts crop.
Result<std::vector<int64_t>> constant_pad_shape(const Tensor& self, const std::vector<int64_t>& pad);
Status constant_pad_out(const Tensor& self, const std::vector<int64_t>& pad, const Scalar& value, Tensor& out);

// reflection_pad{1,2,3}d / replication_pad{1,2,3}d over the last
// `spatial` dims: `pad` holds (before, after) pairs from the last dim
// backwards. Reflection mirrors without repeating the edge element (so each
// amount must be smaller than its dim); replication repeats the edge;
// circular (aten.pad's mode) wraps around, at most once.
enum class PadMode { Reflect, Replicate, Circular };
Result<std::vector<int64_t>> index_pad_shape(const Tensor& self, const std::vector<int64_t>& pad, size_t spatial,
                                             PadMode mode, const char* op);
Status index_pad_out(const Tensor& self, const std::vector<int64_t>& pad, size_t spatial, PadMode mode, const char* op,
                     Tensor& out);

// out[b..., o0, .., ok] = self[b..., idx[0][o0], .., idx[k][ok]] for the
// last idx.size() dims (any dtype, any input strides; out contiguous, its
// last dims sized by the tables). Every index must lie inside its dim.
Status gather_last_dims(const Tensor& self, const std::vector<std::vector<int64_t>>& idx, Tensor& out, const char* op);

// roll: each dims[i] rotated by shifts[i] (elements pushed past the end
// come back at the start); with no dims, the flattened tensor is rolled.
Status roll_out(const Tensor& self, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims, Tensor& out);

}  // namespace lathe::kernels
