// Ordering ops: sort (stable; NaN sorts as the largest value, as in torch),
// argsort, topk, flip, and nonzero (whose output size depends on the data).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

namespace {

// a before b in ascending order, NaN last.
template <typename T>
bool less_nan_last(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// Sorts every lane of `dim`: values and int64 indices into contiguous outs.
// A stable sort: equal values keep their order (descending too).
Status sort_lanes(const Tensor& self, int64_t dim, bool descending, int64_t keep, Tensor& values, Tensor* indices) {
  const Tensor x = as_contiguous(self);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.sizes[d];
  for (size_t d = dim + 1; d < x.sizes.size(); ++d) inner *= x.sizes[d];
  const int64_t len = x.sizes.empty() ? 1 : x.sizes[dim];
  return dispatch<Types::Numeric>(x.dtype, "sort", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* px = cdata<T>(x);
    T* pv = mdata<T>(values);
    int64_t* pi = indices ? mdata<int64_t>(*indices) : nullptr;
    std::vector<int64_t> order(static_cast<size_t>(len));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* lane = px + o * len * inner + i;
        std::iota(order.begin(), order.end(), int64_t{0});
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          return descending ? less_nan_last(lane[b * inner], lane[a * inner]) : less_nan_last(lane[a * inner], lane[b * inner]);
        });
        for (int64_t k = 0; k < keep; ++k) {
          const int64_t at = (o * keep + k) * inner + i;
          pv[at] = lane[order[k] * inner];
          if (pi) pi[at] = order[k];
        }
      }
    }
    return Status::Ok();
  });
}

Result<int64_t> sort_dim(KernelCall& c, const Tensor& self, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(self, op, "self"));
  LATHE_ASSIGN_OR_RETURN(int64_t raw, c.int_arg("dim", -1));
  return normalize_dim(raw, static_cast<int64_t>(self.sizes.size()));
}

// sort / sort.stable: (values, indices).
Status sort_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, sort_dim(c, *self, "sort"));
  LATHE_ASSIGN_OR_RETURN(bool descending, c.bool_arg("descending", false));
  LATHE_ASSIGN_OR_RETURN(Tensor * v, c.alloc_output(0, self->dtype, self->sizes));
  LATHE_ASSIGN_OR_RETURN(Tensor * idx, c.alloc_output(1, DType::Int64, self->sizes));
  const int64_t len = self->sizes.empty() ? 1 : self->sizes[dim];
  return sort_lanes(*self, dim, descending, len, *v, idx);
}

Status argsort_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, sort_dim(c, *self, "argsort"));
  LATHE_ASSIGN_OR_RETURN(bool descending, c.bool_arg("descending", false));
  LATHE_ASSIGN_OR_RETURN(Tensor * idx, c.alloc_output(0, DType::Int64, self->sizes));
  Tensor values = Tensor::empty(self->dtype, self->sizes);
  const int64_t len = self->sizes.empty() ? 1 : self->sizes[dim];
  return sort_lanes(*self, dim, descending, len, values, idx);
}

// topk: the k largest (or smallest), sorted. With sorted=False torch leaves
// the order unspecified; sorted is one such order.
Status topk_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, sort_dim(c, *self, "topk"));
  LATHE_ASSIGN_OR_RETURN(int64_t k, c.int_arg("k"));
  LATHE_ASSIGN_OR_RETURN(bool largest, c.bool_arg("largest", true));
  const int64_t len = self->sizes.empty() ? 1 : self->sizes[dim];
  if (k < 0 || k > len) {
    return c.arg_error("k", "selected index k (" + std::to_string(k) + ") is out of range for a dimension of size " + std::to_string(len));
  }
  std::vector<int64_t> sizes = self->sizes;
  if (!sizes.empty()) sizes[dim] = k;
  LATHE_ASSIGN_OR_RETURN(Tensor * v, c.alloc_output(0, self->dtype, sizes));
  LATHE_ASSIGN_OR_RETURN(Tensor * idx, c.alloc_output(1, DType::Int64, sizes));
  return sort_lanes(*self, dim, largest, k, *v, idx);
}

// flip: out[..., i, ...] = in[..., n - 1 - i, ...] for every dim in dims.
Status flip_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, "flip", "self"));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, c.int_list("dims"));
  const int64_t rank = static_cast<int64_t>(self->sizes.size());
  std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(rank, 1)), false);
  for (int64_t d : dims) {
    LATHE_ASSIGN_OR_RETURN(int64_t nd, normalize_dim(d, rank));
    if (flipped[nd]) return c.arg_error("dims", "dim " + std::to_string(nd) + " appears multiple times in the list of dims");
    flipped[nd] = true;
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  if (out->numel() == 0) return Status::Ok();
  // Walk the output in order with a counter per dim; the source index of a
  // flipped dim runs backwards (strided views take no negative strides).
  const Tensor x = as_contiguous(*self);
  const size_t width = dtype_size(x.dtype);
  const std::byte* src = x.data();
  std::byte* dst = out->storage->mutable_data() + out->storage_offset * static_cast<int64_t>(width);
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (int64_t n = 0, total = x.numel(); n < total; ++n, dst += width) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d) at += (flipped[d] ? x.sizes[d] - 1 - idx[d] : idx[d]) * x.strides[d];
    std::memcpy(dst, src + at * static_cast<int64_t>(width), width);
    for (int64_t d = rank - 1; d >= 0 && ++idx[d] == x.sizes[d]; --d) idx[d] = 0;
  }
  return Status::Ok();
}

// nonzero: [count, rank] int64, the indices of every non-zero element in
// row-major order.
Status nonzero_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, "nonzero", "self"));
  const Tensor x = as_contiguous(as_dtype(*self, DType::Bool));
  const bool* p = cdata<bool>(x);
  const int64_t n = x.numel(), rank = static_cast<int64_t>(self->sizes.size());
  const int64_t count = std::count(p, p + n, true);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, DType::Int64, {count, rank}));
  int64_t* o = mdata<int64_t>(*out);
  for (int64_t i = 0; i < n; ++i) {
    if (!p[i]) continue;
    int64_t rest = i;
    for (int64_t d = rank - 1; d >= 0; --d) {
      o[d] = rest % self->sizes[d];
      rest /= self->sizes[d];
    }
    o += rank;
  }
  return Status::Ok();
}

}  // namespace

void register_sort_kernels(KernelRegistry& r) {
  register_overloads(r, "sort", {"default", "stable"}, sort_kernel);
  register_overloads(r, "argsort", {"default", "stable"}, argsort_kernel);
  register_overloads(r, "topk", {"default"}, topk_kernel);
  register_overloads(r, "flip", {"default"}, flip_kernel);
  register_overloads(r, "nonzero", {"default"}, nonzero_kernel);
}

}  // namespace lathe::kernels
