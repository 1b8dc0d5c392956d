// Scattering along a dim and by mask: scatter / scatter_add /
// scatter_reduce, index_copy / index_add / index_fill, masked_scatter,
// _embedding_bag, and the diagonal view.
//
// The *_into functions write into `dst`, which already holds self's values
// (a fresh copy for the functional ops, self itself for the in-place ones);
// every index is checked before the first write, so a refused call leaves
// `dst` untouched. `dst` may have any layout; the operands read from must not
// share its storage (the in-place adapters copy them first when they do).
#pragma once

#include <optional>
#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// How scatter combines a src element with the element it lands on. None:
// replaces it (scatter.src); the others are scatter_reduce's reductions
// (add/multiply of scatter.reduce are Sum/Prod).
enum class ScatterReduce { None, Sum, Prod, Mean, Amax, Amin };

// dst[..., index[p], ...] (op)= src[p] along `dim` for every position p of
// index. With include_self false, each element that receives a value starts
// from the reduction's identity instead of its own value; Mean divides by
// the number of values (plus one for self), rounding down for integers.
// `op` names the caller in errors ("scatter", "scatter_add_"...).
Status scatter_into(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce,
                    bool include_self, const char* op);

// dst.select(dim, index[i]) = source.select(dim, i) (index_copy: int64
// index) or += alpha * source.select(dim, i) (index_add: int64 or int32).
Status index_copy_into(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& source, const char* op);
Status index_add_into(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha,
                      const char* op);
// dst.select(dim, index[i]) = value (a 0-d tensor); negative indices wrap.
Status index_fill_into(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& value, const char* op);

// The true positions of `mask` (bool, broadcast to dst's shape), in
// row-major order, take source's elements in its row-major order; source
// must hold at least as many elements as the mask has true positions.
Status masked_scatter_into(Tensor& dst, const Tensor& mask, const Tensor& source, const char* op);

// self.diagonal(offset, dim1, dim2): dims dim1 and dim2 removed, the
// diagonal appended as the last dim; shares self's storage.
Result<Tensor> diagonal_view(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2);

enum class EmbeddingBagMode { Sum = 0, Mean = 1, Max = 2 };

struct EmbeddingBagArgs {
  EmbeddingBagMode mode = EmbeddingBagMode::Sum;
  const Tensor* per_sample_weights = nullptr;  // Sum only
  bool include_last_offset = false;
  int64_t padding_idx = -1;  // < 0: none
};

// The four outputs of aten._embedding_bag, with the shapes and values
// PyTorch's CPU kernel gives them (the last three are int64 if either of
// indices/offsets is, else int32):
//   output      [bags, D]: per bag the sum / mean / max of its weight rows
//               (padding_idx rows skipped; an empty bag is zeros). Bag b
//               runs from offsets[b] to the next bag's start, the last one
//               to the end of indices, except on PyTorch's fast path (Sum or
//               Mean, 32/16-bit float weight with unit row stride, no
//               padding_idx) with include_last_offset: there it ends at the
//               last offset (and Mean still divides by bag_size)
//   offset2bag  [n]: the bag of each index; [0] (not computed) for Sum on
//               the fast path
//   bag_size    [bags]: indices per bag without padding for Mean/Max;
//               zeros for Sum
//   max_indices [bags, D] for Max: the weight row each maximum came from
//               (first one on ties, 0 for an empty bag); for Mean a copy of
//               bag_size, for Sum zeros, both [bags]
struct EmbeddingBagOutputs {
  std::vector<int64_t> output_shape, offset2bag_shape, bag_size_shape, max_indices_shape;
  DType index_dtype = DType::Int64;
};
Result<EmbeddingBagOutputs> embedding_bag_shapes(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                                                 const EmbeddingBagArgs& args);
Status embedding_bag_out(const Tensor& weight, const Tensor& indices, const Tensor& offsets, const EmbeddingBagArgs& args,
                         Tensor& output, Tensor& offset2bag, Tensor& bag_size, Tensor& max_indices);

}  // namespace lathe::kernels
