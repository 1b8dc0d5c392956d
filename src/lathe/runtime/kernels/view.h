// View ops: new sizes/strides/offset over the input's storage, no copy.
// Each returns the view; the registered *_copy forms materialise it, and
// reshape-like ops fall back to a copy only when strides do not allow a
// view (like ATen's reshape).
#pragma once

#include <optional>
#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// `view`: errors (as ATen does) when the layout does not allow it.
Result<Tensor> view_view(const Tensor& self, std::vector<int64_t> sizes);
Result<Tensor> permute_view(const Tensor& self, const std::vector<int64_t>& dims);
Result<Tensor> transpose_view(const Tensor& self, int64_t dim0, int64_t dim1);
// 0-D and 1-D tensors come back unchanged; 2-D are transposed.
Result<Tensor> t_view(const Tensor& self);
// -1 keeps a size; new leading dims are broadcast (stride 0).
Result<Tensor> expand_view(const Tensor& self, const std::vector<int64_t>& sizes);
// nullopt: every size-1 dim; otherwise the listed dims that have size 1.
Result<Tensor> squeeze_view(const Tensor& self, const std::optional<std::vector<int64_t>>& dims);
Result<Tensor> unsqueeze_view(const Tensor& self, int64_t dim);
// Python slicing semantics: out-of-range bounds clamp; step >= 1.
Result<Tensor> slice_view(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                          int64_t step);
Result<Tensor> select_view(const Tensor& self, int64_t dim, int64_t index);
Result<std::vector<Tensor>> split_view(const Tensor& self, int64_t split_size, int64_t dim);
Result<std::vector<Tensor>> split_with_sizes_view(const Tensor& self, const std::vector<int64_t>& sizes, int64_t dim);
Result<std::vector<Tensor>> unbind_view(const Tensor& self, int64_t dim);
Result<Tensor> as_strided_view(const Tensor& self, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                               std::optional<int64_t> storage_offset);

}  // namespace lathe::kernels
