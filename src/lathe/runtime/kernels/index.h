// Gathering and scattering by index: embedding, index_select, gather,
// advanced indexing (index.Tensor, index_put) and slice/select_scatter.
// Every index is bounds-checked; an out-of-range index is an error, never a
// read outside the tensor.
#pragma once

#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

Status embedding_out(const Tensor& weight, const Tensor& indices, Tensor& out);
Status index_select_out(const Tensor& self, int64_t dim, const Tensor& index, Tensor& out);
Status gather_out(const Tensor& self, int64_t dim, const Tensor& index, Tensor& out);

// self[indices] with NumPy advanced-indexing rules (None = full slice;
// bool masks select their true positions).
struct AdvancedIndex {
  std::vector<int64_t> shape;    // result shape
  std::vector<int64_t> offsets;  // element offset into self (relative to its data()) per result element, row-major
};
Result<AdvancedIndex> plan_advanced_index(const Tensor& self, const std::vector<const Tensor*>& indices);
Status index_out(const Tensor& self, const AdvancedIndex& plan, Tensor& out);
// out = self with out[indices] = values (or += with accumulate); `plan`
// must be made for a contiguous tensor of self's shape (out's layout).
Status index_put_out(const Tensor& self, const AdvancedIndex& plan, const Tensor& values, bool accumulate, Tensor& out);

}  // namespace lathe::kernels
