#include "lathe/runtime/kernels/view.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "lathe/core/int_arith.h"
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

namespace {
int64_t rank_of(const Tensor& t) { return static_cast<int64_t>(t.sizes.size()); }
}  // namespace

Result<Tensor> view_view(const Tensor& self, std::vector<int64_t> sizes) {
  LATHE_ASSIGN_OR_RETURN(sizes, infer_size(std::move(sizes), self.numel()));
  auto strides = view_strides(self, sizes);
  if (!strides) {
    return make_error("view size " + shape_string(sizes) + " is not compatible with input sizes " +
                      shape_string(self.sizes) + " and strides " + shape_string(self.strides) +
                      " (at least one dimension spans across two contiguous subspaces); use reshape");
  }
  return make_view(self, std::move(sizes), std::move(*strides), self.storage_offset);
}

Result<Tensor> permute_view(const Tensor& self, const std::vector<int64_t>& dims) {
  const int64_t r = rank_of(self);
  if (static_cast<int64_t>(dims.size()) != r) {
    return make_error("permute: " + std::to_string(dims.size()) + " dims for a tensor of rank " + std::to_string(r));
  }
  std::vector<int64_t> sizes(r), strides(r);
  std::vector<bool> seen(r, false);
  for (int64_t i = 0; i < r; ++i) {
    LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dims[i], r));
    if (seen[d]) return make_error("permute: repeated dim in " + shape_string(dims));
    seen[d] = true;
    sizes[i] = self.sizes[d];
    strides[i] = self.strides[d];
  }
  return make_view(self, std::move(sizes), std::move(strides), self.storage_offset);
}

Result<Tensor> transpose_view(const Tensor& self, int64_t dim0, int64_t dim1) {
  const int64_t r = rank_of(self);
  LATHE_ASSIGN_OR_RETURN(int64_t a, normalize_dim(dim0, r));
  LATHE_ASSIGN_OR_RETURN(int64_t b, normalize_dim(dim1, r));
  Tensor v = make_view(self, self.sizes, self.strides, self.storage_offset);
  if (r == 0) return v;
  std::swap(v.sizes[a], v.sizes[b]);
  std::swap(v.strides[a], v.strides[b]);
  return v;
}

Result<Tensor> t_view(const Tensor& self) {
  if (rank_of(self) > 2) return make_error("t: expects a tensor of at most 2 dims, got " + shape_string(self.sizes));
  if (rank_of(self) < 2) return make_view(self, self.sizes, self.strides, self.storage_offset);
  return transpose_view(self, 0, 1);
}

Result<Tensor> expand_view(const Tensor& self, const std::vector<int64_t>& sizes) {
  const int64_t r = rank_of(self), n = static_cast<int64_t>(sizes.size());
  if (n < r) {
    return make_error("expand: target " + shape_string(sizes) + " has fewer dims than " + shape_string(self.sizes));
  }
  std::vector<int64_t> out_sizes(n), out_strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t j = i - (n - r);
    if (j < 0) {
      if (sizes[i] < 0) return make_error("expand: -1 is not allowed in a new leading dim");
      out_sizes[i] = sizes[i];
      out_strides[i] = 0;
      continue;
    }
    const int64_t target = sizes[i] == -1 ? self.sizes[j] : sizes[i];
    if (self.sizes[j] == target) {
      out_sizes[i] = target;
      out_strides[i] = self.strides[j];
    } else if (self.sizes[j] == 1) {
      out_sizes[i] = target;
      out_strides[i] = 0;
    } else {
      return make_error("expand: size " + std::to_string(self.sizes[j]) + " of dim " + std::to_string(j) +
                        " cannot expand to " + std::to_string(target) + " (" + shape_string(self.sizes) + " -> " +
                        shape_string(sizes) + ")");
    }
  }
  return make_view(self, std::move(out_sizes), std::move(out_strides), self.storage_offset);
}

Result<Tensor> squeeze_view(const Tensor& self, const std::optional<std::vector<int64_t>>& dims) {
  const int64_t r = rank_of(self);
  std::vector<bool> drop(r, false);
  if (!dims) {
    for (int64_t i = 0; i < r; ++i) drop[i] = self.sizes[i] == 1;
  } else {
    for (int64_t d : *dims) {
      LATHE_ASSIGN_OR_RETURN(int64_t nd, normalize_dim(d, r));
      if (r > 0 && self.sizes[nd] == 1) drop[nd] = true;
    }
  }
  std::vector<int64_t> sizes, strides;
  for (int64_t i = 0; i < r; ++i) {
    if (drop[i]) continue;
    sizes.push_back(self.sizes[i]);
    strides.push_back(self.strides[i]);
  }
  return make_view(self, std::move(sizes), std::move(strides), self.storage_offset);
}

Result<Tensor> unsqueeze_view(const Tensor& self, int64_t dim) {
  const int64_t r = rank_of(self);
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, r + 1));
  std::vector<int64_t> sizes = self.sizes, strides = self.strides;
  const int64_t stride = d >= r ? 1 : sizes[d] * strides[d];
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return make_view(self, std::move(sizes), std::move(strides), self.storage_offset);
}

Result<Tensor> slice_view(const Tensor& self, int64_t dim, std::optional<int64_t> start_in,
                          std::optional<int64_t> end_in, int64_t step) {
  if (rank_of(self) == 0) return make_error("slice: cannot slice a 0-d tensor");
  if (step <= 0) return make_error("slice: step must be positive, got " + std::to_string(step));
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, rank_of(self)));
  const int64_t size = self.sizes[d];
  int64_t start = start_in.value_or(0), end = end_in.value_or(std::numeric_limits<int64_t>::max());
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Tensor v = make_view(self, self.sizes, self.strides, self.storage_offset + start * self.strides[d]);
  v.sizes[d] = end == start ? 0 : (end - start - 1) / step + 1;  // ceil((end - start) / step) without overflow
  if (v.sizes[d] > 1) v.strides[d] *= step;  // one element: any stride reads it, and a huge step would overflow
  return v;
}

Result<Tensor> select_view(const Tensor& self, int64_t dim, int64_t index) {
  if (rank_of(self) == 0) return make_error("select: cannot select from a 0-d tensor");
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, rank_of(self)));
  const int64_t size = self.sizes[d];
  if (index < -size || index >= size) {
    return make_error("select: index " + std::to_string(index) + " out of range for dim " + std::to_string(d) +
                      " of size " + std::to_string(size));
  }
  if (index < 0) index += size;
  Tensor v = make_view(self, self.sizes, self.strides, self.storage_offset + index * self.strides[d]);
  v.sizes.erase(v.sizes.begin() + d);
  v.strides.erase(v.strides.begin() + d);
  return v;
}

Result<std::vector<Tensor>> split_with_sizes_view(const Tensor& self, const std::vector<int64_t>& sizes, int64_t dim) {
  if (rank_of(self) == 0) return make_error("split: cannot split a 0-d tensor");
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, rank_of(self)));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return make_error("split: negative split size in " + shape_string(sizes));
    total = saturating_add(total, s);  // sizes from a file may sum past int64
  }
  if (total != self.sizes[d]) {
    return make_error("split_with_sizes: sizes " + shape_string(sizes) + " do not sum to dim size " +
                      std::to_string(self.sizes[d]));
  }
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    LATHE_ASSIGN_OR_RETURN(Tensor v, slice_view(self, d, start, start + s, 1));
    out.push_back(std::move(v));
    start += s;
  }
  return out;
}

Result<std::vector<Tensor>> split_view(const Tensor& self, int64_t split_size, int64_t dim) {
  if (rank_of(self) == 0) return make_error("split: cannot split a 0-d tensor");
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, rank_of(self)));
  const int64_t size = self.sizes[d];
  if (split_size < 0 || (split_size == 0 && size != 0)) {
    return make_error("split: split_size must be positive, got " + std::to_string(split_size));
  }
  std::vector<int64_t> sizes;
  if (size == 0) {
    sizes.push_back(0);
  } else {
    for (int64_t s = 0; s < size; s += split_size) sizes.push_back(std::min(split_size, size - s));
  }
  return split_with_sizes_view(self, sizes, d);
}

Result<std::vector<Tensor>> unbind_view(const Tensor& self, int64_t dim) {
  if (rank_of(self) == 0) return make_error("unbind: cannot unbind a 0-d tensor");
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, rank_of(self)));
  std::vector<Tensor> out;
  for (int64_t i = 0; i < self.sizes[d]; ++i) {
    LATHE_ASSIGN_OR_RETURN(Tensor v, select_view(self, d, i));
    out.push_back(std::move(v));
  }
  return out;
}

Result<Tensor> as_strided_view(const Tensor& self, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                               std::optional<int64_t> storage_offset) {
  if (sizes.size() != strides.size()) {
    return make_error("as_strided: sizes " + shape_string(sizes) + " and strides " + shape_string(strides) +
                      " differ in rank");
  }
  Tensor v = make_view(self, std::move(sizes), std::move(strides), storage_offset.value_or(self.storage_offset));
  Status fits = v.check_fits();
  if (!fits.ok()) return fits.error().context("as_strided");
  return v;
}

// ---- adapters ------------------------------------------------------------------
namespace {

using ViewFn = Result<Tensor> (*)(KernelCall&, const Tensor&);

// A view's element count must be an int64, as every later loop counts in
// one: expand([1, 8] -> [2^62, 2^62, 8]) makes no memory, but summing it
// would count 2^127 elements in a wrapped (wrong) int64.
Status check_element_count(const Tensor& v) {
  if (checked_numel(v.sizes)) return Status::Ok();
  if (std::any_of(v.sizes.begin(), v.sizes.end(), [](int64_t d) { return d < 0; })) {
    return make_error("the view " + shape_string(v.sizes) + " has a negative size");
  }
  return make_error("the view " + shape_string(v.sizes) + " has more elements than an int64 counts");
}

// One kernel body for a view op and its *_copy twin.
template <ViewFn f, bool kCopy>
Status view_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(Tensor v, f(c, *self));
  LATHE_RETURN_IF_ERROR(check_element_count(v));
  if constexpr (!kCopy) {
    return c.set_output(0, std::move(v));
  } else {
    LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, v.dtype, v.sizes));
    return copy_into(v, *out);
  }
}

using ListViewFn = Result<std::vector<Tensor>> (*)(KernelCall&, const Tensor&);

template <ListViewFn f, bool kCopy>
Status list_view_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(std::vector<Tensor> parts, f(c, *self));
  if (parts.size() != c.output_count()) {
    return make_error("produces " + std::to_string(parts.size()) + " tensors but the graph expects " +
                      std::to_string(c.output_count()));
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if constexpr (!kCopy) {
      LATHE_RETURN_IF_ERROR(c.set_output(i, std::move(parts[i])));
    } else {
      LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(i, parts[i].dtype, parts[i].sizes));
      LATHE_RETURN_IF_ERROR(copy_into(parts[i], *out));
    }
  }
  return Status::Ok();
}

Result<Tensor> do_view(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(auto size, c.int_list("size"));
  return view_view(s, std::move(size));
}
Result<Tensor> do_permute(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(auto dims, c.int_list("dims"));
  return permute_view(s, dims);
}
Result<Tensor> do_transpose(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(int64_t d0, c.int_arg("dim0"));
  LATHE_ASSIGN_OR_RETURN(int64_t d1, c.int_arg("dim1"));
  return transpose_view(s, d0, d1);
}
Result<Tensor> do_t(KernelCall&, const Tensor& s) { return t_view(s); }
Result<Tensor> do_expand(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(auto size, c.int_list("size"));
  return expand_view(s, size);
}
Result<Tensor> do_squeeze(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(auto dims, c.optional_int_list("dim"));
  return squeeze_view(s, dims);
}
Result<Tensor> do_unsqueeze(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(int64_t d, c.int_arg("dim"));
  return unsqueeze_view(s, d);
}
Result<Tensor> do_slice(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(int64_t d, c.int_arg("dim", 0));
  LATHE_ASSIGN_OR_RETURN(auto start, c.optional_int("start"));
  LATHE_ASSIGN_OR_RETURN(auto end, c.optional_int("end"));
  LATHE_ASSIGN_OR_RETURN(int64_t step, c.int_arg("step", 1));
  return slice_view(s, d, start, end, step);
}
Result<Tensor> do_narrow(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(int64_t d, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(int64_t start, c.int_arg("start"));
  LATHE_ASSIGN_OR_RETURN(int64_t length, c.int_arg("length"));
  LATHE_ASSIGN_OR_RETURN(int64_t nd, normalize_dim(d, rank_of(s)));
  if (s.sizes.empty()) return make_error("narrow: cannot narrow a 0-d tensor");
  if (start < 0) start += s.sizes[nd];
  if (start < 0 || length < 0 || start > s.sizes[nd] || length > s.sizes[nd] - start) {  // no start + length: it can overflow
    return make_error("narrow: start " + std::to_string(start) + " + length " + std::to_string(length) +
                      " exceeds dim size " + std::to_string(s.sizes[nd]));
  }
  return slice_view(s, nd, start, start + length, 1);
}
Result<Tensor> do_select(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(int64_t d, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(int64_t i, c.int_arg("index"));
  return select_view(s, d, i);
}
Result<Tensor> do_identity(KernelCall&, const Tensor& s) { return make_view(s, s.sizes, s.strides, s.storage_offset); }
Result<Tensor> do_reshape_alias(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(auto size, c.int_list("size"));
  LATHE_ASSIGN_OR_RETURN(auto stride, c.int_list("stride"));
  return as_strided_view(s, std::move(size), std::move(stride), std::nullopt);
}
Result<Tensor> do_as_strided(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(auto size, c.int_list("size"));
  LATHE_ASSIGN_OR_RETURN(auto stride, c.int_list("stride"));
  LATHE_ASSIGN_OR_RETURN(auto offset, c.optional_int("storage_offset"));
  return as_strided_view(s, std::move(size), std::move(stride), offset);
}
Result<std::vector<Tensor>> do_split(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(int64_t size, c.int_arg("split_size"));
  LATHE_ASSIGN_OR_RETURN(int64_t d, c.int_arg("dim", 0));
  return split_view(s, size, d);
}
Result<std::vector<Tensor>> do_split_with_sizes(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(auto sizes, c.int_list("split_sizes"));
  LATHE_ASSIGN_OR_RETURN(int64_t d, c.int_arg("dim", 0));
  return split_with_sizes_view(s, sizes, d);
}
Result<std::vector<Tensor>> do_unbind(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(int64_t d, c.int_arg("dim", 0));
  return unbind_view(s, d);
}
Result<std::vector<Tensor>> do_chunk(KernelCall& c, const Tensor& s) {
  LATHE_ASSIGN_OR_RETURN(int64_t chunks, c.int_arg("chunks"));
  LATHE_ASSIGN_OR_RETURN(int64_t d, c.int_arg("dim", 0));
  if (chunks <= 0) return c.arg_error("chunks", "must be positive");
  LATHE_ASSIGN_OR_RETURN(int64_t nd, normalize_dim(d, rank_of(s)));
  if (s.sizes.empty()) return make_error("chunk: cannot chunk a 0-d tensor");
  const int64_t size = s.sizes[nd];
  return split_view(s, std::max<int64_t>((size + chunks - 1) / chunks, size == 0 ? 0 : 1), nd);
}

// reshape-like: a view when the strides allow, else a contiguous copy
// into the planned output.
Status reshape_to(KernelCall& c, const Tensor& self, std::vector<int64_t> shape) {
  LATHE_ASSIGN_OR_RETURN(shape, infer_size(std::move(shape), self.numel()));
  if (auto st = view_strides(self, shape)) {
    return c.set_output(0, make_view(self, shape, std::move(*st), self.storage_offset));
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self.dtype, shape));
  // Write self's elements in row-major order: a view of out shaped like self.
  Tensor as_self = make_view(*out, self.sizes, Tensor::contiguous_strides(self.sizes), out->storage_offset);
  return copy_into(self, as_self);
}

Status reshape_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto shape, c.int_list("shape"));
  return reshape_to(c, *self, std::move(shape));
}

Status flatten_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t start, c.int_arg("start_dim", 0));
  LATHE_ASSIGN_OR_RETURN(int64_t end, c.int_arg("end_dim", -1));
  const int64_t r = rank_of(*self);
  if (r == 0) return reshape_to(c, *self, {1});
  LATHE_ASSIGN_OR_RETURN(start, normalize_dim(start, r));
  LATHE_ASSIGN_OR_RETURN(end, normalize_dim(end, r));
  if (start > end) return make_error("flatten: start_dim cannot come after end_dim");
  std::vector<int64_t> shape(self->sizes.begin(), self->sizes.begin() + start);
  int64_t n = 1;
  for (int64_t i = start; i <= end; ++i) n *= self->sizes[i];
  shape.push_back(n);
  shape.insert(shape.end(), self->sizes.begin() + end + 1, self->sizes.end());
  return reshape_to(c, *self, std::move(shape));
}

Status unflatten_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(auto sizes, c.int_list("sizes"));
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, rank_of(*self)));
  if (self->sizes.empty()) return make_error("unflatten: cannot unflatten a 0-d tensor");
  LATHE_ASSIGN_OR_RETURN(sizes, infer_size(std::move(sizes), self->sizes[d]));
  std::vector<int64_t> shape(self->sizes.begin(), self->sizes.begin() + d);
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  shape.insert(shape.end(), self->sizes.begin() + d + 1, self->sizes.end());
  return reshape_to(c, *self, std::move(shape));
}

}  // namespace

void register_view_kernels(KernelRegistry& r) {
  const auto V = OutputAlias::View;
  register_overloads(r, "view", {"default"}, view_kernel<do_view, false>, V);
  register_overloads(r, "_unsafe_view", {"default"}, view_kernel<do_view, false>, V);
  register_overloads(r, "view_copy", {"default"}, view_kernel<do_view, true>);
  register_overloads(r, "permute", {"default"}, view_kernel<do_permute, false>, V);
  register_overloads(r, "permute_copy", {"default"}, view_kernel<do_permute, true>);
  register_overloads(r, "transpose", {"int"}, view_kernel<do_transpose, false>, V);
  register_overloads(r, "transpose_copy", {"int"}, view_kernel<do_transpose, true>);
  register_overloads(r, "t", {"default"}, view_kernel<do_t, false>, V);
  register_overloads(r, "t_copy", {"default"}, view_kernel<do_t, true>);
  register_overloads(r, "expand", {"default"}, view_kernel<do_expand, false>, V);
  register_overloads(r, "expand_copy", {"default"}, view_kernel<do_expand, true>);
  register_overloads(r, "squeeze", {"default", "dim", "dims"}, view_kernel<do_squeeze, false>, V);
  register_overloads(r, "squeeze_copy", {"default", "dim", "dims"}, view_kernel<do_squeeze, true>);
  register_overloads(r, "unsqueeze", {"default"}, view_kernel<do_unsqueeze, false>, V);
  register_overloads(r, "unsqueeze_copy", {"default"}, view_kernel<do_unsqueeze, true>);
  register_overloads(r, "slice", {"Tensor"}, view_kernel<do_slice, false>, V);
  register_overloads(r, "slice_copy", {"Tensor"}, view_kernel<do_slice, true>);
  register_overloads(r, "narrow", {"default"}, view_kernel<do_narrow, false>, V);
  register_overloads(r, "narrow_copy", {"default"}, view_kernel<do_narrow, true>);
  register_overloads(r, "select", {"int"}, view_kernel<do_select, false>, V);
  register_overloads(r, "select_copy", {"int"}, view_kernel<do_select, true>);
  register_overloads(r, "alias", {"default"}, view_kernel<do_identity, false>, V);
  register_overloads(r, "alias_copy", {"default"}, view_kernel<do_identity, true>);
  register_overloads(r, "detach", {"default"}, view_kernel<do_identity, false>, V);
  register_overloads(r, "detach_copy", {"default"}, view_kernel<do_identity, true>);
  register_overloads(r, "_reshape_alias", {"default"}, view_kernel<do_reshape_alias, false>, V);
  register_overloads(r, "_reshape_alias_copy", {"default"}, view_kernel<do_reshape_alias, true>);
  register_overloads(r, "as_strided", {"default"}, view_kernel<do_as_strided, false>, V);
  register_overloads(r, "as_strided_copy", {"default"}, view_kernel<do_as_strided, true>);
  register_overloads(r, "split", {"Tensor"}, list_view_kernel<do_split, false>, V);
  register_overloads(r, "split_copy", {"Tensor"}, list_view_kernel<do_split, true>);
  register_overloads(r, "split_with_sizes", {"default"}, list_view_kernel<do_split_with_sizes, false>, V);
  register_overloads(r, "split_with_sizes_copy", {"default"}, list_view_kernel<do_split_with_sizes, true>);
  register_overloads(r, "unbind", {"int"}, list_view_kernel<do_unbind, false>, V);
  register_overloads(r, "unbind_copy", {"int"}, list_view_kernel<do_unbind, true>);
  register_overloads(r, "chunk", {"default"}, list_view_kernel<do_chunk, false>, V);
  register_overloads(r, "reshape", {"default"}, reshape_kernel, OutputAlias::MaybeView);
  register_overloads(r, "flatten", {"using_ints"}, flatten_kernel, OutputAlias::MaybeView);
  register_overloads(r, "unflatten", {"int"}, unflatten_kernel, OutputAlias::MaybeView);
}

}  // namespace lathe::kernels
